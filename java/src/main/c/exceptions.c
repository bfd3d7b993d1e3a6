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

#include "jni_glue.h"

jclass dfsj_c_npe, dfsj_c_oome, dfsj_c_ise;
static jclass c_iae, c_reported;
static jmethodID m_object_to_string, m_add_suppressed;

int dfsj_exceptions_load(JNIEnv *env) {
    if (!(dfsj_c_npe = dfsj_global_class(env, "java/lang/NullPointerException")) ||
        !(dfsj_c_ise = dfsj_global_class(env, "java/lang/IllegalStateException")) ||
        !(c_iae = dfsj_global_class(env, "java/lang/IllegalArgumentException")) ||
        !(dfsj_c_oome = dfsj_global_class(env, "java/lang/OutOfMemoryError")) ||
        !(c_reported = dfsj_global_class(env, "io/diffuser/internal/ReportedFailure")))
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
    const char *chars = (*env)->GetStringUTFChars(env, text, NULL);
    if (chars != NULL) {
        dfs_set_error(chars);
        (*env)->ReleaseStringUTFChars(env, text, chars);
    } else {
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
        dfs_set_error("a callback failed (reported to the thread's uncaught exception handler)");
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

/* The thread's refusal as a local reference (NULL if none); the thread keeps none. Call
 * with no exception pending. A refusal that is also the native method's pending
 * Throwable (the first failure of the call) stops being pending: the loop reports it to
 * its inspector, and no Java caller is waiting for it (a loop's calls do not throw what
 * its sources throw); it would otherwise collect later failures as suppressed, and a
 * later failure of the call's own would not be the one thrown. */
jthrowable dfsj_take_refusal(JNIEnv *env) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->refusal == NULL) return NULL;
    jthrowable local = (jthrowable)(*env)->NewLocalRef(env, ts->refusal);
    if (ts->pending != NULL && (*env)->IsSameObject(env, ts->pending, ts->refusal)) {
        (*env)->DeleteGlobalRef(env, ts->pending);
        ts->pending = NULL;
    }
    (*env)->DeleteGlobalRef(env, ts->refusal);
    ts->refusal = NULL;
    return local;
}

void dfsj_drop_refusal(dfsj_thread_state *ts) {
    (*ts->env)->DeleteGlobalRef(ts->env, ts->refusal);
    ts->refusal = NULL;
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
    (*env)->ThrowNew(env, cls, message);
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
