/*
 * diffuser_jni.c — the JNI glue of the Java binding (package io.diffuser).
 *
 * It turns Java objects into C ABI values and callbacks, and C ABI statuses back into
 * Java exceptions. It has no behaviour of its own: caching, gating, ordering, locking
 * and dispatch all happen in libdiffuser.so, reached only through diffuser.h.
 *
 * Values. Java objects travel as jobject pointers described by one dfs_type, created in
 * JNI_OnLoad: equal answers what java.util.Objects.equals(a, b) would (the core passes
 * the cached value first and the new value second, so a user equals is called as
 * old.equals(new)), retain makes a global reference, release deletes it. Java null is the
 * NULL pointer. Equality of Strings, boxed primitives and enums is decided here without
 * calling into Java (an upcall costs about ten times more than these comparisons, and
 * their equals cannot be overridden); any other class has its equals() called. A value
 * passed to a run or an emission is the caller's local reference, borrowed for the call,
 * and so is every part a map's transform returns during a run (lent until the run
 * returns; see borrowing_caller); the core retains (as a global reference) whatever it
 * keeps longer, which for a run is only what a gate caches.
 *
 * Maps. Every Diffuser.map is one dfs_diffuser_map_borrowed node with its own transform:
 * the core calls each transform at its turn in the tree, so transforms, equals,
 * predicates and effects reach Java in the same order as in Swift and C.
 *
 * Callbacks. Every user object given to the core (Effect, Function, DidChange, Source)
 * is held by a global reference that the callback's destroy function deletes.
 * Callbacks may run on any thread: one the JVM does not know is attached for the
 * duration of the callback and detached again before it returns.
 *
 * Exceptions. After every upcall the glue checks for an exception. If there is one, it
 * clears it and returns an error to the core. When a Java caller (a native method of
 * io.diffuser.internal.Native) is waiting on the same thread, the Throwable is kept in a
 * thread-local slot (the first one of the call wins, matching the core, which reports
 * the first failure and calls nothing after it); when the core call returns
 * DFS_ERR_CALLBACK, that same Throwable is thrown to the Java caller, unchanged. Other
 * statuses become IllegalStateException, NullPointerException, IllegalArgumentException
 * or OutOfMemoryError carrying dfs_last_error(). A callback reached from C code with no
 * Java caller below it (a C source emitting on its own thread) only sets dfs_set_error()
 * to the exception's text (the only case where the glue calls the Throwable's toString()).
 */
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diffuser.h"

#define DFSJ_JNI_VERSION JNI_VERSION_1_8
#define NATIVE_CLASS "io/diffuser/internal/Native"

static JavaVM *g_vm;
/* The value type of Java objects. */
static dfs_type *g_type;

/* Classes, methods and fields, resolved once in JNI_OnLoad. */
static jclass c_effect, c_function, c_did_change, c_source, c_disposable,
    c_dispatch_effect, c_npe, c_ise, c_iae, c_oome;
static jmethodID m_object_equals, m_effect_run, m_function_apply, m_did_change_test,
    m_source_connect, m_disposable_dispose, m_dispatch_effect_init, m_object_to_string;

/* The classes whose equality value_equal decides natively (all final but Enum and
 * Number), and the `value` fields of the boxes. c_known is an interface that all of
 * them implement and that few other classes do: java.lang.constant.Constable (Java 12
 * and later), or Comparable on older JVMs. */
static jclass c_string, c_integer, c_long, c_double, c_float, c_short, c_byte, c_character,
    c_boolean, c_number, c_enum, c_known;
static jfieldID f_integer_value, f_long_value, f_double_value, f_float_value, f_short_value,
    f_byte_value, f_character_value, f_boolean_value;

/* Per thread, in one block so that a callback pays for one TLS lookup:
 *   pending: the Throwable of a failed upcall waiting for its Java caller;
 *   depth:   how many native methods of this glue are running on the thread (callbacks
 *            keep a Throwable only if one is, since only it can rethrow it);
 *   env:     the JNIEnv of the innermost of them, valid while depth > 0, so that
 *            callbacks under a Java caller need no GetEnv. */
typedef struct {
    jthrowable pending;
    int depth;
    JNIEnv *env;
    /* lent:    how many parts the callbacks lent to the core as local references of the
     *          innermost native method's frame (see borrowing_caller). */
    jint lent;
} thread_state;

/* initial-exec: the state is read on every callback, and the default model for a
 * shared library would look it up through __tls_get_addr each time. The block is a few
 * words, well within the static TLS that glibc reserves for libraries loaded later. */
static __thread __attribute__((tls_model("initial-exec"))) thread_state t_state;

/* ------------------------------------------------------------------------------------
 * Threads: the JNIEnv of the calling thread, attaching it if the JVM does not know it
 * ------------------------------------------------------------------------------------ */

typedef struct {
    JNIEnv *env;
    int attached;
} upcall_env;

static int env_enter(upcall_env *u) {
    thread_state *ts = &t_state;
    u->attached = 0;
    if (ts->depth > 0) {
        u->env = ts->env;
        return 0;
    }
    u->env = NULL;
    jint r = (*g_vm)->GetEnv(g_vm, (void **)&u->env, DFSJ_JNI_VERSION);
    if (r == JNI_OK) return 0;
    if (r == JNI_EDETACHED) {
        JavaVMAttachArgs args = {DFSJ_JNI_VERSION, (char *)"diffuser-native-callback", NULL};
        if ((*g_vm)->AttachCurrentThreadAsDaemon(g_vm, (void **)&u->env, &args) == JNI_OK) {
            u->attached = 1;
            return 0;
        }
    }
    dfs_set_error("diffuser JNI: cannot attach the calling thread to the JVM");
    return -1;
}

static void env_leave(upcall_env *u) {
    if (u->attached) (*g_vm)->DetachCurrentThread(g_vm);
}

/* ------------------------------------------------------------------------------------
 * Exceptions
 * ------------------------------------------------------------------------------------ */

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
 * for the Java caller (if any, and if none is kept already) and returns 1. With no Java
 * caller to rethrow it, its text becomes dfs_last_error() instead. */
static int upcall_failed(JNIEnv *env) {
    if (!(*env)->ExceptionCheck(env)) return 0;
    jthrowable ex = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    thread_state *ts = &t_state;
    if (ts->depth == 0) {
        describe(env, ex);
    } else if (ts->pending == NULL) {
        ts->pending = (jthrowable)(*env)->NewGlobalRef(env, ex);
        if (ts->pending == NULL) {
            (*env)->ExceptionClear(env);
            dfs_set_error("diffuser JNI: cannot keep a callback's Throwable (no global reference)");
        }
    }
    (*env)->DeleteLocalRef(env, ex);
    return 1;
}

/* Makes a Throwable of class `cls` the pending upcall failure, as if a callback threw it. */
static void fail_with(JNIEnv *env, jclass cls, const char *message) {
    (*env)->ThrowNew(env, cls, message);
    upcall_failed(env);
}

/* The global reference the core will own for `local`, which is deleted. NULL if none
 * could be made; the failure is then pending like an upcall's (an OutOfMemoryError). */
static jobject promote(JNIEnv *env, jobject local) {
    jobject global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    if (global == NULL) {
        if ((*env)->ExceptionCheck(env)) upcall_failed(env);
        else fail_with(env, c_oome, "cannot make a global reference");
    }
    return global;
}

/* A native method's bracket around core calls: it gets the Throwables of the callbacks
 * it causes, and leaves an outer call's Throwable (this is a nested call from inside an
 * upcall) untouched. */
typedef struct {
    jthrowable saved;
    jint saved_lent;
} entry;

static inline void enter(entry *e, JNIEnv *env) {
    thread_state *ts = &t_state;
    e->saved = ts->pending;
    ts->pending = NULL;
    e->saved_lent = ts->lent;
    ts->lent = 0;
    ts->depth++;
    ts->env = env;
}

static inline jthrowable leave(entry *e) {
    thread_state *ts = &t_state;
    jthrowable mine = ts->pending;
    ts->pending = e->saved;
    ts->lent = e->saved_lent;
    ts->depth--;
    return mine;
}

static void throw_status(JNIEnv *env, dfs_status status) {
    jclass cls;
    switch (status) {
    case DFS_ERR_NULL: cls = c_npe; break;
    case DFS_ERR_ARGUMENT:
    case DFS_ERR_TYPE: cls = c_iae; break;
    case DFS_ERR_MEMORY: cls = c_oome; break;
    default: cls = c_ise; break;
    }
    char message[1024];
    snprintf(message, sizeof message, "%s: %s", dfs_status_name(status), dfs_last_error());
    (*env)->ThrowNew(env, cls, message);
}

/* Turns the outcome of a core call into the Java outcome of the native method: nothing,
 * the callback's own Throwable, or an exception for the status. `thrown` is what
 * leave() returned. With rethrow_on_ok, a Throwable kept although the core call
 * succeeded is thrown too (a Disposable.dispose() that failed during a dispose or an
 * emission, which the core cannot report). */
static void finish(JNIEnv *env, dfs_status status, jthrowable thrown, int rethrow_on_ok) {
    if (thrown != NULL && (status == DFS_ERR_CALLBACK || (status == DFS_OK && rethrow_on_ok))) {
        (*env)->Throw(env, thrown);
        (*env)->DeleteGlobalRef(env, thrown);
        return;
    }
    if (thrown != NULL) (*env)->DeleteGlobalRef(env, thrown);
    if (status != DFS_OK) throw_status(env, status);
}

/* ------------------------------------------------------------------------------------
 * The value type of Java objects
 * ------------------------------------------------------------------------------------ */

/* value_equal's answer when it must ask the object's own equals(). */
#define ASK_EQUALS (-2)

/* Whether two Strings have the same characters: lengths first, then the UTF-16 contents
 * copied out in stack-sized chunks (GetStringRegion neither allocates nor pins, where
 * GetStringCritical would inflate a Latin-1 string into a fresh buffer). */
static int strings_equal(JNIEnv *env, jstring a, jstring b) {
    jsize length = (*env)->GetStringLength(env, a);
    if ((*env)->GetStringLength(env, b) != length) return 0;
    enum { CHUNK = 256 };
    jchar x[CHUNK], y[CHUNK];
    for (jsize start = 0; start < length; start += CHUNK) {
        jsize n = length - start < CHUNK ? length - start : CHUNK;
        (*env)->GetStringRegion(env, a, start, n, x);
        (*env)->GetStringRegion(env, b, start, n, y);
        if (memcmp(x, y, sizeof(jchar) * (size_t)n) != 0) return 0;
    }
    return 1;
}

/* Double.equals compares doubleToLongBits: every NaN is one value, and 0.0 differs from
 * -0.0. Float.equals does the same with floatToIntBits. */
static int doubles_equal(jdouble x, jdouble y) {
    if (x != x) return y != y;
    uint64_t bx, by;
    memcpy(&bx, &x, sizeof bx);
    memcpy(&by, &y, sizeof by);
    return bx == by;
}

static int floats_equal(jfloat x, jfloat y) {
    if (x != x) return y != y;
    uint32_t bx, by;
    memcpy(&bx, &x, sizeof bx);
    memcpy(&by, &y, sizeof by);
    return bx == by;
}

/* a.equals(b) for two distinct non-null objects, when the JDK's definition is known and
 * cannot be overridden: 1 or 0, or ASK_EQUALS for any other class. The boxes and String
 * are final, so `instanceof` is the exact-class test their equals() make (an Integer
 * never equals a Long). Enum.equals is final and is identity. None of these calls can
 * throw or create local references; each costs a JNI transition (~15 ns, against
 * ~150 ns for an upcall), so the common kinds are tested first and c_known turns most
 * other classes away after three tests. */
static int equal_natively(JNIEnv *env, jobject a, jobject b) {
#define IS(object, cls) ((*env)->IsInstanceOf(env, (object), (cls)))
#define SAME_FIELD(cls, Type, field)                                                    \
    (IS(b, cls) && (*env)->Get##Type##Field(env, a, field) == (*env)->Get##Type##Field(env, b, field))
    if (IS(a, c_string)) return IS(b, c_string) && strings_equal(env, (jstring)a, (jstring)b);
    if (IS(a, c_integer)) return SAME_FIELD(c_integer, Int, f_integer_value);
    if (!IS(a, c_known)) return ASK_EQUALS;
    if (IS(a, c_boolean)) return SAME_FIELD(c_boolean, Boolean, f_boolean_value);
    if (IS(a, c_enum)) return 0;
    if (IS(a, c_number)) {
        if (IS(a, c_long)) return SAME_FIELD(c_long, Long, f_long_value);
        if (IS(a, c_double))
            return IS(b, c_double) && doubles_equal((*env)->GetDoubleField(env, a, f_double_value),
                                                    (*env)->GetDoubleField(env, b, f_double_value));
        if (IS(a, c_float))
            return IS(b, c_float) && floats_equal((*env)->GetFloatField(env, a, f_float_value),
                                                  (*env)->GetFloatField(env, b, f_float_value));
        if (IS(a, c_short)) return SAME_FIELD(c_short, Short, f_short_value);
        if (IS(a, c_byte)) return SAME_FIELD(c_byte, Byte, f_byte_value);
        return ASK_EQUALS; /* BigDecimal, AtomicInteger, user subclasses of Number */
    }
    if (IS(a, c_character)) return SAME_FIELD(c_character, Char, f_character_value);
    return ASK_EQUALS;
#undef SAME_FIELD
#undef IS
}

/* Objects.equals(a, b). Identity and null first, then the native comparisons above,
 * and only for other classes an upcall to a.equals(b) (Objects.equals without its
 * extra frame), whose exception, if any, fails the comparison. */
static int value_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    if (a == b) return 1;
    if (a == NULL || b == NULL) return 0;
    upcall_env u;
    if (env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    int result;
    if ((*env)->IsSameObject(env, (jobject)a, (jobject)b)) {
        result = 1;
    } else if ((result = equal_natively(env, (jobject)a, (jobject)b)) == ASK_EQUALS) {
        jboolean same = (*env)->CallBooleanMethod(env, (jobject)a, m_object_equals, (jobject)b);
        result = upcall_failed(env) ? -1 : (same ? 1 : 0);
    }
    env_leave(&u);
    return result;
}

static const void *value_retain(const void *value, void *ctx) {
    (void)ctx;
    upcall_env u;
    if (env_enter(&u)) return NULL;
    jobject kept = (*u.env)->NewGlobalRef(u.env, (jobject)value);
    if (kept == NULL && (*u.env)->ExceptionCheck(u.env)) (*u.env)->ExceptionClear(u.env);
    env_leave(&u);
    return kept;
}

static void value_release(const void *value, void *ctx) {
    (void)ctx;
    upcall_env u;
    if (env_enter(&u)) return;
    (*u.env)->DeleteGlobalRef(u.env, (jobject)value);
    env_leave(&u);
}

/* destroy of every callback: drops the global reference to the Java object. */
static void destroy_ref(void *ctx) {
    if (ctx == NULL) return;
    upcall_env u;
    if (env_enter(&u)) return;
    (*u.env)->DeleteGlobalRef(u.env, (jobject)ctx);
    env_leave(&u);
}

/* ------------------------------------------------------------------------------------
 * Callbacks: upcalls into user objects
 * ------------------------------------------------------------------------------------ */

static int effect_cb(const void *value, void *ctx) {
    upcall_env u;
    if (env_enter(&u)) return -1;
    (*u.env)->CallVoidMethod(u.env, (jobject)ctx, m_effect_run, (jobject)value);
    int failed = upcall_failed(u.env);
    env_leave(&u);
    return failed;
}

static int did_change_cb(const void *old_value, const void *new_value, void *ctx) {
    upcall_env u;
    if (env_enter(&u)) return -1;
    jboolean changed = (*u.env)->CallBooleanMethod(u.env, (jobject)ctx, m_did_change_test,
                                                   (jobject)old_value, (jobject)new_value);
    int result = upcall_failed(u.env) ? -1 : (changed ? 1 : 0);
    env_leave(&u);
    return result;
}

/* Function.apply; the result goes to the core as a new global reference (the core
 * releases it through the value type). */
static int transform_cb(const void *value, const void **out, void *ctx) {
    *out = NULL;
    upcall_env u;
    if (env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    int failed = 0;
    jobject result = (*env)->CallObjectMethod(env, (jobject)ctx, m_function_apply, (jobject)value);
    if (upcall_failed(env)) {
        failed = 1;
    } else if (result != NULL && (*out = promote(env, result)) == NULL) {
        failed = 1;
    }
    env_leave(&u);
    return failed;
}

/* The parts of a diffuser's maps are borrowed (dfs_diffuser_map_borrowed): each is the
 * local reference the upcall returned, valid until the native method running the
 * diffuser returns, which is as long as the core may use a part it does not keep. A
 * gate that caches a part retains it (a global reference, value_retain); the others
 * cost no global reference at all, which is what most parts of a run are: compared with
 * their cache and dropped.
 *
 * They need that native method below them on the same thread. Diffusers of this binding
 * are only ever run from Java (Native.diffuserRun), so this always holds; were it not, the
 * part would die with the callback's attachment, so the transform fails instead. */
static int borrowing_caller(void) {
    if (t_state.depth > 0) return 1;
    dfs_set_error("diffuser JNI: a map's transform was called without a Java caller to lend its result");
    return 0;
}

/* Makes room in the frame for one more lent part and a few temporaries: the frame's
 * capacity is the total it must hold, counted in t_state.lent. 0, or -1 with the failure
 * pending (an OutOfMemoryError). */
static int make_room(JNIEnv *env) {
    thread_state *ts = &t_state;
    if (ts->lent >= INT32_MAX / 2) {
        fail_with(env, c_oome, "too many parts lent in one run");
        return -1;
    }
    ts->lent++;
    if ((*env)->EnsureLocalCapacity(env, ts->lent + 16) != 0) {
        upcall_failed(env);
        return -1;
    }
    return 0;
}

/* Function.apply for a map: the result is a borrowed part (see above). */
static int part_cb(const void *value, const void **out, void *ctx) {
    *out = NULL;
    if (!borrowing_caller()) return -1;
    JNIEnv *env = t_state.env;
    if (make_room(env)) return -1;
    jobject result = (*env)->CallObjectMethod(env, (jobject)ctx, m_function_apply, (jobject)value);
    if (upcall_failed(env)) return 1;
    *out = result;
    return 0;
}

/* Source.connect(effect), with an io.diffuser.internal.DispatchEffect wrapping the
 * dispatch; the returned Disposable is the connection. */
static int source_connect_cb(dfs_dispatch *dispatch, void *ctx, void **connection) {
    *connection = NULL;
    upcall_env u;
    if (env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    int failed = 1;
    jobject effect = (*env)->NewObject(env, c_dispatch_effect, m_dispatch_effect_init,
                                       (jlong)(intptr_t)dispatch);
    if (upcall_failed(env)) goto done;
    jobject disposable = (*env)->CallObjectMethod(env, (jobject)ctx, m_source_connect, effect);
    (*env)->DeleteLocalRef(env, effect);
    if (upcall_failed(env)) goto done;
    if (disposable == NULL) {
        fail_with(env, c_npe, "Source.connect returned null instead of a Disposable");
        goto done;
    }
    if ((*connection = promote(env, disposable)) == NULL) goto done;
    failed = 0;
done:
    env_leave(&u);
    return failed;
}

/* Disposable.dispose() of a source connection. The C ABI cannot report a failure here;
 * a Throwable is kept for the Java caller of the dispose (see Native.disposableDispose). */
static void source_disconnect_cb(void *connection, void *ctx) {
    (void)ctx;
    if (connection == NULL) return;
    upcall_env u;
    if (env_enter(&u)) return;
    (*u.env)->CallVoidMethod(u.env, (jobject)connection, m_disposable_dispose);
    upcall_failed(u.env);
    (*u.env)->DeleteGlobalRef(u.env, (jobject)connection);
    env_leave(&u);
}

/* ------------------------------------------------------------------------------------
 * Native methods of io.diffuser.internal.Native
 * ------------------------------------------------------------------------------------ */

#define H(type, handle) ((type *)(intptr_t)(handle))
#define J(pointer) ((jlong)(intptr_t)(pointer))

/* A global reference for a callback context; NULL (with an OutOfMemoryError thrown) if
 * none could be made. */
static jobject hold(JNIEnv *env, jobject object) {
    jobject ref = (*env)->NewGlobalRef(env, object);
    if (ref == NULL && !(*env)->ExceptionCheck(env))
        (*env)->ThrowNew(env, c_oome, "cannot make a global reference");
    return ref;
}

/* The handles of a Java long[] as a C array, for the composites. Small lists (the
 * usual case) live on the caller's stack; only longer ones are malloc'd. */
enum { SMALL_LIST = 64 };

typedef struct {
    void **items;
    size_t count;
    void *small[SMALL_LIST];
} handle_list;

/* Fills `list` from `array`; -1 with an OutOfMemoryError thrown if no memory. */
static int handles_of(JNIEnv *env, jlongArray array, handle_list *list) {
    jsize n = (*env)->GetArrayLength(env, array);
    list->count = (size_t)n;
    list->items = list->small;
    if (n > SMALL_LIST && !(list->items = malloc(sizeof(void *) * (size_t)n))) {
        (*env)->ThrowNew(env, c_oome, "out of memory");
        return -1;
    }
    jlong chunk[SMALL_LIST];
    for (jsize start = 0; start < n; start += SMALL_LIST) {
        jsize k = n - start < SMALL_LIST ? n - start : SMALL_LIST;
        (*env)->GetLongArrayRegion(env, array, start, k, chunk);
        for (jsize i = 0; i < k; i++) list->items[start + i] = (void *)(intptr_t)chunk[i];
    }
    return 0;
}

static void handles_free(handle_list *list) {
    if (list->items != list->small) free(list->items);
}

typedef dfs_status (*effect_ctor)(dfs_type *, dfs_effect_fn, void *, dfs_destroy_fn, dfs_diffuser **);

static jlong make_effect_diffuser(JNIEnv *env, effect_ctor ctor, jobject effect) {
    jobject ref = hold(env, effect);
    if (ref == NULL) return 0;
    dfs_diffuser *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = ctor(g_type, effect_cb, ref, destroy_ref, &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

static jlong n_diffuser_into_always(JNIEnv *env, jclass cls, jobject effect) {
    (void)cls;
    return make_effect_diffuser(env, dfs_diffuser_into_always, effect);
}

static jlong n_diffuser_into(JNIEnv *env, jclass cls, jobject effect) {
    (void)cls;
    return make_effect_diffuser(env, dfs_diffuser_into, effect);
}

static jlong n_diffuser_into_once(JNIEnv *env, jclass cls, jobject effect) {
    (void)cls;
    return make_effect_diffuser(env, dfs_diffuser_into_once, effect);
}

static jlong n_diffuser_into_when(JNIEnv *env, jclass cls, jobject did_change, jlong child) {
    (void)cls;
    jobject ref = hold(env, did_change);
    if (ref == NULL) return 0;
    dfs_diffuser *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_diffuser_into_when(did_change_cb, ref, destroy_ref, H(dfs_diffuser, child), &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

static jlong n_diffuser_into_when_effect(JNIEnv *env, jclass cls, jobject did_change, jobject effect) {
    (void)cls;
    jobject predicate = hold(env, did_change);
    if (predicate == NULL) return 0;
    jobject action = hold(env, effect);
    if (action == NULL) {
        (*env)->DeleteGlobalRef(env, predicate);
        return 0;
    }
    dfs_diffuser *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_diffuser_into_when_effect(g_type, did_change_cb, predicate, destroy_ref,
                                                      effect_cb, action, destroy_ref, &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

/* The composites built from a Java array of child handles. */
typedef enum { DIFFUSER_INTO_ALL, DIFFUSER_INTO_ALWAYS_ALL, FUSER_FROM_ALL } composite_kind;

static jlong make_composite(JNIEnv *env, jlongArray children, composite_kind kind) {
    handle_list list;
    if (handles_of(env, children, &list)) return 0;
    dfs_diffuser *diffuser = NULL;
    dfs_fuser *fuser = NULL;
    entry e;
    enter(&e, env);
    dfs_status status;
    switch (kind) {
    case DIFFUSER_INTO_ALL:
        status = dfs_diffuser_into_all(g_type, (dfs_diffuser *const *)list.items, list.count, &diffuser);
        break;
    case DIFFUSER_INTO_ALWAYS_ALL:
        status = dfs_diffuser_into_always_all(g_type, (dfs_diffuser *const *)list.items, list.count, &diffuser);
        break;
    default:
        status = dfs_fuser_from_all(g_type, (dfs_fuser *const *)list.items, list.count, &fuser);
        break;
    }
    finish(env, status, leave(&e), 0);
    handles_free(&list);
    return kind == FUSER_FROM_ALL ? J(fuser) : J(diffuser);
}

static jlong n_diffuser_into_all(JNIEnv *env, jclass cls, jlongArray children) {
    (void)cls;
    return make_composite(env, children, DIFFUSER_INTO_ALL);
}

static jlong n_diffuser_into_always_all(JNIEnv *env, jclass cls, jlongArray children) {
    (void)cls;
    return make_composite(env, children, DIFFUSER_INTO_ALWAYS_ALL);
}

static jlong n_diffuser_map(JNIEnv *env, jclass cls, jobject transform, jlong child) {
    (void)cls;
    jobject ref = hold(env, transform);
    if (ref == NULL) return 0;
    dfs_diffuser *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_diffuser_map_borrowed(g_type, part_cb, ref, destroy_ref, H(dfs_diffuser, child), &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

static void n_diffuser_run(JNIEnv *env, jclass cls, jlong diffuser, jobject value) {
    (void)cls;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_diffuser_run(H(dfs_diffuser, diffuser), value);
    finish(env, status, leave(&e), 0);
}

static void n_diffuser_release(JNIEnv *env, jclass cls, jlong diffuser) {
    (void)cls;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_diffuser_release(H(dfs_diffuser, diffuser));
    finish(env, status, leave(&e), 0);
}

static jlong n_fuser_from(JNIEnv *env, jclass cls, jobject source) {
    (void)cls;
    jobject ref = hold(env, source);
    if (ref == NULL) return 0;
    dfs_fuser *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_fuser_from(g_type, source_connect_cb, source_disconnect_cb, ref, destroy_ref, &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

static jlong n_fuser_from_all(JNIEnv *env, jclass cls, jlongArray children) {
    (void)cls;
    return make_composite(env, children, FUSER_FROM_ALL);
}

typedef dfs_status (*extract_ctor)(dfs_type *, dfs_transform_fn, void *, dfs_destroy_fn, dfs_fuser *, dfs_fuser **);

static jlong make_extract(JNIEnv *env, extract_ctor ctor, jobject transform, jlong child) {
    jobject ref = hold(env, transform);
    if (ref == NULL) return 0;
    dfs_fuser *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = ctor(g_type, transform_cb, ref, destroy_ref, H(dfs_fuser, child), &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

static jlong n_fuser_extract(JNIEnv *env, jclass cls, jobject transform, jlong child) {
    (void)cls;
    return make_extract(env, dfs_fuser_extract, transform, child);
}

static jlong n_fuser_extract_unless_null(JNIEnv *env, jclass cls, jobject transform, jlong child) {
    (void)cls;
    return make_extract(env, dfs_fuser_extract_unless_null, transform, child);
}

static jlong n_fuser_extract_constant(JNIEnv *env, jclass cls, jobject constant, jlong child) {
    (void)cls;
    dfs_fuser *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_fuser_extract_constant(g_type, constant, H(dfs_fuser, child), &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

static jlong n_fuser_connect(JNIEnv *env, jclass cls, jlong fuser, jobject effect) {
    (void)cls;
    jobject ref = hold(env, effect);
    if (ref == NULL) return 0;
    dfs_disposable *out = NULL;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_fuser_connect(H(dfs_fuser, fuser), effect_cb, ref, destroy_ref, &out);
    finish(env, status, leave(&e), 0);
    return J(out);
}

static void n_fuser_release(JNIEnv *env, jclass cls, jlong fuser) {
    (void)cls;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_fuser_release(H(dfs_fuser, fuser));
    finish(env, status, leave(&e), 0);
}

static void n_disposable_dispose(JNIEnv *env, jclass cls, jlong disposable) {
    (void)cls;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_disposable_dispose(H(dfs_disposable, disposable));
    finish(env, status, leave(&e), 1);
}

static void n_disposable_release(JNIEnv *env, jclass cls, jlong disposable) {
    (void)cls;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_disposable_release(H(dfs_disposable, disposable));
    finish(env, status, leave(&e), 0);
}

/* DispatchEffect.run: emits through the dispatch of a source connection. A dispatch
 * whose connection ended is no longer a valid handle (DFS_ERR_HANDLE): the event is
 * dropped, as events emitted after dispose are. A connection disposed from inside its
 * own effect disconnects its sources once that effect has returned, still inside this
 * emission: a Throwable a source's Disposable.dispose() threw then is rethrown here, to
 * the emitter, although the core reports DFS_OK (its disconnect cannot fail). */
static void n_dispatch_emit(JNIEnv *env, jclass cls, jlong dispatch, jobject event) {
    (void)cls;
    entry e;
    enter(&e, env);
    dfs_status status = dfs_dispatch_emit(H(dfs_dispatch, dispatch), event);
    if (status == DFS_ERR_HANDLE) status = DFS_OK;
    finish(env, status, leave(&e), 1);
}

static jstring n_version(JNIEnv *env, jclass cls) {
    (void)cls;
    return (*env)->NewStringUTF(env, dfs_version());
}

static jint n_abi_version(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return dfs_abi_version();
}

static jlong n_value_type(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return J(g_type);
}

static const JNINativeMethod native_methods[] = {
    {"diffuserIntoAlways", "(Lio/diffuser/Effect;)J", (void *)n_diffuser_into_always},
    {"diffuserInto", "(Lio/diffuser/Effect;)J", (void *)n_diffuser_into},
    {"diffuserIntoOnce", "(Lio/diffuser/Effect;)J", (void *)n_diffuser_into_once},
    {"diffuserIntoWhen", "(Lio/diffuser/diffuser/DidChange;J)J", (void *)n_diffuser_into_when},
    {"diffuserIntoWhenEffect", "(Lio/diffuser/diffuser/DidChange;Lio/diffuser/Effect;)J",
     (void *)n_diffuser_into_when_effect},
    {"diffuserIntoAll", "([J)J", (void *)n_diffuser_into_all},
    {"diffuserIntoAlwaysAll", "([J)J", (void *)n_diffuser_into_always_all},
    {"diffuserMap", "(Lio/diffuser/Function;J)J", (void *)n_diffuser_map},
    {"diffuserRun", "(JLjava/lang/Object;)V", (void *)n_diffuser_run},
    {"diffuserRelease", "(J)V", (void *)n_diffuser_release},
    {"fuserFrom", "(Lio/diffuser/fuser/Source;)J", (void *)n_fuser_from},
    {"fuserFromAll", "([J)J", (void *)n_fuser_from_all},
    {"fuserExtract", "(Lio/diffuser/Function;J)J", (void *)n_fuser_extract},
    {"fuserExtractConstant", "(Ljava/lang/Object;J)J", (void *)n_fuser_extract_constant},
    {"fuserExtractUnlessNull", "(Lio/diffuser/Function;J)J", (void *)n_fuser_extract_unless_null},
    {"fuserConnect", "(JLio/diffuser/Effect;)J", (void *)n_fuser_connect},
    {"fuserRelease", "(J)V", (void *)n_fuser_release},
    {"disposableDispose", "(J)V", (void *)n_disposable_dispose},
    {"disposableRelease", "(J)V", (void *)n_disposable_release},
    {"dispatchEmit", "(JLjava/lang/Object;)V", (void *)n_dispatch_emit},
    {"version", "()Ljava/lang/String;", (void *)n_version},
    {"abiVersion", "()I", (void *)n_abi_version},
    {"valueType", "()J", (void *)n_value_type},
};

/* ------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------ */

static jclass global_class(JNIEnv *env, const char *name) {
    jclass local = (*env)->FindClass(env, name);
    if (local == NULL) return NULL;
    jclass global = (jclass)(*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    (void)reserved;
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **)&env, DFSJ_JNI_VERSION) != JNI_OK) return JNI_ERR;
    g_vm = vm;

    if (dfs_abi_version() != DFS_ABI_VERSION) {
        jclass error = (*env)->FindClass(env, "java/lang/UnsatisfiedLinkError");
        if (error != NULL)
            (*env)->ThrowNew(env, error, "libdiffuser.so has another ABI version than diffuser_jni was built for");
        return JNI_ERR;
    }

    if (!(c_effect = global_class(env, "io/diffuser/Effect")) ||
        !(c_function = global_class(env, "io/diffuser/Function")) ||
        !(c_did_change = global_class(env, "io/diffuser/diffuser/DidChange")) ||
        !(c_source = global_class(env, "io/diffuser/fuser/Source")) ||
        !(c_disposable = global_class(env, "io/diffuser/fuser/Disposable")) ||
        !(c_dispatch_effect = global_class(env, "io/diffuser/internal/DispatchEffect")) ||
        !(c_npe = global_class(env, "java/lang/NullPointerException")) ||
        !(c_ise = global_class(env, "java/lang/IllegalStateException")) ||
        !(c_iae = global_class(env, "java/lang/IllegalArgumentException")) ||
        !(c_oome = global_class(env, "java/lang/OutOfMemoryError")) ||
        !(c_string = global_class(env, "java/lang/String")) ||
        !(c_integer = global_class(env, "java/lang/Integer")) ||
        !(c_long = global_class(env, "java/lang/Long")) ||
        !(c_double = global_class(env, "java/lang/Double")) ||
        !(c_float = global_class(env, "java/lang/Float")) ||
        !(c_short = global_class(env, "java/lang/Short")) ||
        !(c_byte = global_class(env, "java/lang/Byte")) ||
        !(c_character = global_class(env, "java/lang/Character")) ||
        !(c_boolean = global_class(env, "java/lang/Boolean")) ||
        !(c_number = global_class(env, "java/lang/Number")) ||
        !(c_enum = global_class(env, "java/lang/Enum")))
        return JNI_ERR;
    if (!(c_known = global_class(env, "java/lang/constant/Constable"))) {
        (*env)->ExceptionClear(env); /* Java 11: NoClassDefFoundError */
        if (!(c_known = global_class(env, "java/lang/Comparable"))) return JNI_ERR;
    }

    if (!(f_integer_value = (*env)->GetFieldID(env, c_integer, "value", "I")) ||
        !(f_long_value = (*env)->GetFieldID(env, c_long, "value", "J")) ||
        !(f_double_value = (*env)->GetFieldID(env, c_double, "value", "D")) ||
        !(f_float_value = (*env)->GetFieldID(env, c_float, "value", "F")) ||
        !(f_short_value = (*env)->GetFieldID(env, c_short, "value", "S")) ||
        !(f_byte_value = (*env)->GetFieldID(env, c_byte, "value", "B")) ||
        !(f_character_value = (*env)->GetFieldID(env, c_character, "value", "C")) ||
        !(f_boolean_value = (*env)->GetFieldID(env, c_boolean, "value", "Z")))
        return JNI_ERR;

    jclass object = (*env)->FindClass(env, "java/lang/Object");
    if (object == NULL) return JNI_ERR;
    m_object_to_string = (*env)->GetMethodID(env, object, "toString", "()Ljava/lang/String;");
    m_object_equals = (*env)->GetMethodID(env, object, "equals", "(Ljava/lang/Object;)Z");
    (*env)->DeleteLocalRef(env, object);
    if (!m_object_to_string || !m_object_equals ||
        !(m_effect_run = (*env)->GetMethodID(env, c_effect, "run", "(Ljava/lang/Object;)V")) ||
        !(m_function_apply = (*env)->GetMethodID(env, c_function, "apply",
                                                 "(Ljava/lang/Object;)Ljava/lang/Object;")) ||
        !(m_did_change_test = (*env)->GetMethodID(env, c_did_change, "test",
                                                  "(Ljava/lang/Object;Ljava/lang/Object;)Z")) ||
        !(m_source_connect = (*env)->GetMethodID(env, c_source, "connect",
                                                 "(Lio/diffuser/Effect;)Lio/diffuser/fuser/Disposable;")) ||
        !(m_disposable_dispose = (*env)->GetMethodID(env, c_disposable, "dispose", "()V")) ||
        !(m_dispatch_effect_init = (*env)->GetMethodID(env, c_dispatch_effect, "<init>", "(J)V")))
        return JNI_ERR;

    jclass natives = (*env)->FindClass(env, NATIVE_CLASS);
    if (natives == NULL) return JNI_ERR;
    jint registered = (*env)->RegisterNatives(env, natives, native_methods,
                                              (jint)(sizeof native_methods / sizeof native_methods[0]));
    (*env)->DeleteLocalRef(env, natives);
    if (registered != 0) return JNI_ERR;

    if (dfs_type_new("java.lang.Object", value_equal, value_retain, value_release, NULL, NULL, &g_type) != DFS_OK) {
        throw_status(env, DFS_ERR_MEMORY);
        return JNI_ERR;
    }
    return DFSJ_JNI_VERSION;
}
