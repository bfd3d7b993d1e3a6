/*
 * exceptions.c — Java exceptions across the core, in both directions.
 *
 * After every upcall the glue checks for an exception. If there is one, it clears it and
 * returns an error to the core. When a Java caller (a native method of
 * io.diffuser.internal.Native) is waiting on the same thread, the Throwable is kept in a
 * thread-local slot (the first one of the call wins, matching the core, which reports
 * the first failure; where the core goes on after a failure, as a dispose does with the
 * rest of its sources, later Throwables are added to it as suppressed); when the core
 * call returns
 * DFS_ERR_CALLBACK, that same Throwable is thrown to the Java caller, unchanged. Other
 * statuses become IllegalStateException, NullPointerException, IllegalArgumentException
 * or OutOfMemoryError carrying dfs_last_error(). A callback reached from C code with no
 * Java caller below it (a C source emitting on its own thread) only sets dfs_set_error()
 * to the exception's text (the only case where the glue calls the Throwable's toString()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jni_glue.h"

jclass dfsj_c_npe, dfsj_c_oome, dfsj_c_ise;
static jclass c_iae, c_reported, c_thread, c_uncaught_handler;
static jmethodID m_object_to_string, m_add_suppressed, m_current_thread, m_get_uncaught_handler,
    m_uncaught_exception;

int dfsj_exceptions_load(JNIEnv *env) {
    if (!(dfsj_c_npe = dfsj_global_class(env, "java/lang/NullPointerException")) ||
        !(dfsj_c_ise = dfsj_global_class(env, "java/lang/IllegalStateException")) ||
        !(c_iae = dfsj_global_class(env, "java/lang/IllegalArgumentException")) ||
        !(dfsj_c_oome = dfsj_global_class(env, "java/lang/OutOfMemoryError")) ||
        !(c_reported = dfsj_global_class(env, "io/diffuser/internal/ReportedFailure")) ||
        !(c_thread = dfsj_global_class(env, "java/lang/Thread")) ||
        !(c_uncaught_handler = dfsj_global_class(env, "java/lang/Thread$UncaughtExceptionHandler")))
        return -1;
    if (!(m_current_thread = (*env)->GetStaticMethodID(env, c_thread, "currentThread", "()Ljava/lang/Thread;")) ||
        !(m_get_uncaught_handler = (*env)->GetMethodID(env, c_thread, "getUncaughtExceptionHandler",
                                                       "()Ljava/lang/Thread$UncaughtExceptionHandler;")) ||
        !(m_uncaught_exception = (*env)->GetMethodID(env, c_uncaught_handler, "uncaughtException",
                                                     "(Ljava/lang/Thread;Ljava/lang/Throwable;)V")))
        return -1;
    jclass object = (*env)->FindClass(env, "java/lang/Object");
    if (object == NULL) return -1;
    m_object_to_string = (*env)->GetMethodID(env, object, "toString", "()Ljava/lang/String;");
    (*env)->DeleteLocalRef(env, object);
    jclass throwable = (*env)->FindClass(env, "java/lang/Throwable");
    if (throwable == NULL) return -1;
    m_add_suppressed = (*env)->GetMethodID(env, throwable, "addSuppressed", "(Ljava/lang/Throwable;)V");
    (*env)->DeleteLocalRef(env, throwable);
    return m_object_to_string && m_add_suppressed ? 0 : -1;
}

/* ------------------------------------------------------------------------------------
 * Text across the C ABI
 *
 * The core's text (dfs_set_error, dfs_last_error, a trace's error) is standard UTF-8 in
 * a C string. JNI's *UTF* functions (GetStringUTFChars, NewStringUTF, ThrowNew) use
 * Java's modified UTF-8 instead, which writes a character outside the BMP as two
 * 3-byte surrogates and U+0000 as two bytes: the core would take those for invalid
 * UTF-8. So text is converted here, from and to UTF-16. A lone surrogate becomes
 * U+FFFD; so does U+0000, which a C string cannot hold (the Java side keeps the exact
 * text where it has the Throwable: see Bridges.InspectorBridge).
 * ------------------------------------------------------------------------------------ */

/* Sets dfs_set_error() to `text` as standard UTF-8; 0, or -1 (an exception pending, or
 * no memory) with nothing set. */
int dfsj_set_error_text(JNIEnv *env, jstring text) {
    jsize length = (*env)->GetStringLength(env, text);
    const jchar *units = (*env)->GetStringChars(env, text, NULL);
    if (units == NULL) return -1;
    /* At most 3 bytes per UTF-16 unit: a surrogate pair (2 units) takes 4. */
    char *out = malloc((size_t)length * 3 + 1);
    if (out == NULL) {
        (*env)->ReleaseStringChars(env, text, units);
        return -1;
    }
    size_t n = 0;
    for (jsize i = 0; i < length; i++) {
        uint32_t c = units[i];
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < length && units[i + 1] >= 0xDC00 && units[i + 1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (units[i + 1] - 0xDC00);
            i++;
        } else if ((c >= 0xD800 && c <= 0xDFFF) || c == 0) {
            c = 0xFFFD;
        }
        if (c < 0x80) {
            out[n++] = (char)c;
        } else if (c < 0x800) {
            out[n++] = (char)(0xC0 | (c >> 6));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[n++] = (char)(0xE0 | (c >> 12));
            out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[n++] = (char)(0xF0 | (c >> 18));
            out[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[n] = '\0';
    (*env)->ReleaseStringChars(env, text, units);
    dfs_set_error(out);
    free(out);
    return 0;
}

/* A new String of the standard UTF-8 `utf8` (an ill-formed sequence becomes U+FFFD);
 * NULL with an exception pending if it cannot be made. */
jstring dfsj_new_string(JNIEnv *env, const char *utf8) {
    const unsigned char *s = (const unsigned char *)utf8;
    size_t size = strlen(utf8);
    /* At most one UTF-16 unit per byte. */
    jchar *units = malloc((size + 1) * sizeof *units);
    if (units == NULL) {
        (*env)->ThrowNew(env, dfsj_c_oome, "out of memory");
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < size;) {
        unsigned char b = s[i];
        uint32_t c;
        size_t more;
        uint32_t min;
        if (b < 0x80) {
            units[n++] = b;
            i++;
            continue;
        } else if (b >= 0xC2 && b <= 0xDF) {
            c = b & 0x1F, more = 1, min = 0x80;
        } else if (b >= 0xE0 && b <= 0xEF) {
            c = b & 0x0F, more = 2, min = 0x800;
        } else if (b >= 0xF0 && b <= 0xF4) {
            c = b & 0x07, more = 3, min = 0x10000;
        } else {
            units[n++] = 0xFFFD;
            i++;
            continue;
        }
        size_t j = 1;
        for (; j <= more && i + j < size && (s[i + j] & 0xC0) == 0x80; j++) c = (c << 6) | (s[i + j] & 0x3F);
        if (j <= more || c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
            units[n++] = 0xFFFD; /* the lead byte and the continuation bytes read */
            i += j;
            continue;
        }
        i += j;
        if (c >= 0x10000) {
            units[n++] = (jchar)(0xD800 + ((c - 0x10000) >> 10));
            units[n++] = (jchar)(0xDC00 + ((c - 0x10000) & 0x3FF));
        } else {
            units[n++] = (jchar)c;
        }
    }
    jstring string = (*env)->NewString(env, units, (jsize)n);
    free(units);
    return string;
}

/* Throws a new `cls` (a Throwable class with a constructor taking a String) whose
 * message is the standard UTF-8 `utf8`. */
void dfsj_throw_text(JNIEnv *env, jclass cls, const char *utf8) {
    jmethodID init = (*env)->GetMethodID(env, cls, "<init>", "(Ljava/lang/String;)V");
    if (init == NULL) return;
    jstring message = dfsj_new_string(env, utf8);
    if (message == NULL) return;
    jthrowable ex = (jthrowable)(*env)->NewObject(env, cls, init, message);
    (*env)->DeleteLocalRef(env, message);
    if (ex == NULL) return;
    (*env)->Throw(env, ex);
    (*env)->DeleteLocalRef(env, ex);
}

/* Sets dfs_set_error() to the Throwable's toString(), best effort. */
static void describe(JNIEnv *env, jthrowable ex) {
    jstring text = (jstring)(*env)->CallObjectMethod(env, ex, m_object_to_string);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        dfs_set_error("a Java callback threw (toString() failed too)");
        return;
    }
    if (text == NULL) {
        dfs_set_error("a Java callback threw");
        return;
    }
    if (dfsj_set_error_text(env, text)) {
        (*env)->ExceptionClear(env);
        dfs_set_error("a Java callback threw");
    }
    (*env)->DeleteLocalRef(env, text);
}

/* After an upcall: 0 if it returned normally. Otherwise clears the exception, keeps it
 * for the Java caller (if any; as suppressed by the one kept already, if there is one)
 * and returns 1. With no Java caller to rethrow it, its text becomes dfs_last_error()
 * instead. An io.diffuser.internal.ReportedFailure, whose cause the binding reported
 * already, is not kept: it only fails the callback. */
int dfsj_upcall_failed(JNIEnv *env) {
    if (!(*env)->ExceptionCheck(env)) return 0;
    jthrowable ex = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    dfsj_thread_state *ts = &dfsj_thread;
    if ((*env)->IsInstanceOf(env, ex, c_reported)) {
        dfs_set_error("a callback failed (reported already: to the thread's uncaught exception handler, or to the loop's inspector)");
    } else if (ts->depth == 0) {
        describe(env, ex);
    } else if (ts->pending == NULL) {
        ts->pending = (jthrowable)(*env)->NewGlobalRef(env, ex);
        if (ts->pending == NULL) {
            (*env)->ExceptionClear(env);
            dfs_set_error("diffuser JNI: cannot keep a callback's Throwable (no global reference)");
        }
    } else if (!(*env)->IsSameObject(env, ts->pending, ex)) {
        (*env)->CallVoidMethod(env, ts->pending, m_add_suppressed, ex);
        (*env)->ExceptionClear(env);
    }
    (*env)->DeleteLocalRef(env, ex);
    return 1;
}

/* dfsj_upcall_failed after a Source.connect: under a native method, also keeps the
 * Throwable as the thread's refusal, which a loop's inspector takes when the core
 * reports the refused connection (dfsj_take_refusal). With no native method below, the
 * Throwable's text is the error the inspector gets (dfsj_upcall_failed), and nothing is
 * kept: nothing would delete it. */
int dfsj_connect_failed(JNIEnv *env) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->depth > 0 && (*env)->ExceptionCheck(env)) {
        jthrowable ex = (*env)->ExceptionOccurred(env);
        (*env)->ExceptionClear(env);
        if (ts->refusal != NULL) (*env)->DeleteGlobalRef(env, ts->refusal);
        ts->refusal = (jthrowable)(*env)->NewGlobalRef(env, ex);
        (*env)->ExceptionClear(env); /* no global reference: the inspector goes without */
        (*env)->Throw(env, ex);
        (*env)->DeleteLocalRef(env, ex);
    }
    return dfsj_upcall_failed(env);
}

/* dfsj_upcall_failed after a source's Disposable.dispose(), which the core's disconnect
 * cannot report: the Throwable is kept under a native method that throws it
 * (dfsj_collect_disconnects), or added as suppressed to a failure the native method
 * keeps already (the refusal of another source of the same connect, whose cleanup this
 * disconnect is: Fuser.connect throws it, a loop's inspector takes it). Otherwise it
 * goes to the current thread's uncaught exception handler (which prints it, by
 * default), since nothing would throw it: the disconnect ran inside other work, such
 * as a loop's turn, run by a dispatch, that finished connecting a source whose
 * registration was disposed meanwhile. A handler that throws has nowhere to report to. */
int dfsj_disconnect_failed(JNIEnv *env) {
    if (!(*env)->ExceptionCheck(env)) return 0;
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->depth > 0 && (ts->collects_disconnects || ts->pending != NULL)) return dfsj_upcall_failed(env);
    jthrowable ex = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    jobject thread = (*env)->CallStaticObjectMethod(env, c_thread, m_current_thread);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        thread = NULL;
    }
    jobject handler = NULL;
    if (thread != NULL) {
        handler = (*env)->CallObjectMethod(env, thread, m_get_uncaught_handler);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            handler = NULL;
        }
    }
    if (handler != NULL) {
        (*env)->CallVoidMethod(env, handler, m_uncaught_exception, thread, ex);
        if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    }
    if (handler != NULL) (*env)->DeleteLocalRef(env, handler);
    if (thread != NULL) (*env)->DeleteLocalRef(env, thread);
    (*env)->DeleteLocalRef(env, ex);
    return 1;
}

/* The thread's refusal as a local reference (NULL if none); the thread keeps none. Call
 * with no exception pending. A refusal that is also the native method's pending
 * Throwable (the first failure of the call) stops being pending: the loop reports it to
 * its inspector, and no Java caller is waiting for it (a loop's calls do not throw what
 * its sources throw); it would otherwise collect later failures as suppressed, and a
 * later failure of the call's own would not be the one thrown. */
jthrowable dfsj_take_refusal(JNIEnv *env) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->refusal != NULL && ts->pending != NULL && (*env)->IsSameObject(env, ts->pending, ts->refusal)) {
        (*env)->DeleteGlobalRef(env, ts->pending);
        ts->pending = NULL;
    }
    return (jthrowable)dfsj_take_kept(env, &ts->refusal);
}

/* Makes a Throwable of class `cls` the pending upcall failure, as if a callback threw it. */
void dfsj_fail_with(JNIEnv *env, jclass cls, const char *message) {
    (*env)->ThrowNew(env, cls, message);
    dfsj_upcall_failed(env);
}

void dfsj_throw_status(JNIEnv *env, dfs_status status) {
    jclass cls;
    switch (status) {
    case DFS_ERR_NULL: cls = dfsj_c_npe; break;
    case DFS_ERR_ARGUMENT:
    case DFS_ERR_TYPE: cls = c_iae; break;
    case DFS_ERR_MEMORY: cls = dfsj_c_oome; break;
    default: cls = dfsj_c_ise; break;
    }
    char message[1024];
    snprintf(message, sizeof message, "%s: %s", dfs_status_name(status), dfs_last_error());
    dfsj_throw_text(env, cls, message);
}

/* Turns the outcome of a core call into the Java outcome of the native method: nothing,
 * the callback's own Throwable, or an exception for the status. `thrown` is what
 * dfsj_leave() returned. With rethrow_on_ok, a Throwable kept although the core call
 * succeeded is thrown too (a Disposable.dispose() that failed during a dispose or an
 * emission, which the core cannot report). */
void dfsj_finish(JNIEnv *env, dfs_status status, jthrowable thrown, int rethrow_on_ok) {
    if (thrown != NULL && (status == DFS_ERR_CALLBACK || (status == DFS_OK && rethrow_on_ok))) {
        (*env)->Throw(env, thrown);
        (*env)->DeleteGlobalRef(env, thrown);
        return;
    }
    if (thrown != NULL) (*env)->DeleteGlobalRef(env, thrown);
    if (status != DFS_OK) dfsj_throw_status(env, status);
}

/* dfsj_finish for a native method whose Java side reads a loop's refusal as a value:
 * DFS_ERR_STOPPED and DFS_ERR_DISPOSED come back as the status, anything else throws as
 * dfsj_finish does. */
jint dfsj_finish_refusable(JNIEnv *env, dfs_status status, jthrowable thrown) {
    if (status == DFS_ERR_STOPPED || status == DFS_ERR_DISPOSED) {
        if (thrown != NULL) (*env)->DeleteGlobalRef(env, thrown);
        return (jint)status;
    }
    dfsj_finish(env, status, thrown, 0);
    return (jint)status;
}
