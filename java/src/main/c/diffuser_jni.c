/*
 * diffuser_jni.c — the native methods of io.diffuser.internal.Native, and the loading.
 *
 * The JNI glue of the Java binding (package io.diffuser) turns Java objects into C ABI
 * values and callbacks, and C ABI statuses back into Java exceptions. It has no
 * behaviour of its own: caching, gating, ordering, locking and dispatch all happen in
 * libdiffuser.so, reached only through diffuser.h. Its files, one idea each:
 *
 *   diffuser_jni.c  the native methods, their table, and JNI_OnLoad (IDs resolved once)
 *   values.c        the dfs_type of Java objects: Objects.equals, global references
 *   upcalls.c       the callbacks that call Effect, Function, DidChange and Source
 *   pins.c          the diffusers and fusers kept for work queued during a native method
 *   exceptions.c    Java exceptions as callback failures, and statuses as exceptions
 *   threads.c       the JNIEnv of a callback's thread, attaching unknown threads
 *   jni_glue.h      what they share (dfsj_ names, hidden) and the per-thread state
 *
 * The glue of the other packages, over the same helpers:
 *
 *   list_jni.c           io.diffuser.list: the list diff, and the intoList node, whose
 *                        callbacks are upcalls of a run like those of upcalls.c
 *   list_sections_jni.c  the sections diff
 *   list_jni.h           what the two list files share
 *   loop_jni.c           io.diffuser.loop: loops and their callbacks
 *   job_jni.c            jobs, executors and work
 *   gear_jni.c           gears and gear feedbacks
 *   journal_jni.c        journals
 *
 * Every native method here brackets its core call with dfsj_enter and dfsj_leave, so that
 * the callbacks it causes find its JNIEnv and keep their Throwable for it, and ends with
 * dfsj_finish, which throws that Throwable or the exception for the status.
 *
 * One file although over 400 lines: the native methods of Native and the table that
 * registers each of them are read against each other, next to JNI_OnLoad, which
 * registers them and resolves what values.c, upcalls.c and exceptions.c call.
 *
 * Maps. Every Diffuser.map is one dfs_diffuser_map_borrowed node with its own transform:
 * the core calls each transform at its turn in the tree, so transforms, equals,
 * predicates and effects reach Java in the same order as in Swift and C.
 */
#include <stdint.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "jni_glue.h"

#define NATIVE_CLASS "io/diffuser/internal/Native"

/* ------------------------------------------------------------------------------------
 * Native methods of io.diffuser.internal.Native
 * ------------------------------------------------------------------------------------ */

#define H DFSJ_HANDLE
#define J DFSJ_LONG

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
        (*env)->ThrowNew(env, dfsj_c_oome, "out of memory");
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
    jobject ref = dfsj_hold_weak(env, effect);
    if (ref == NULL) return 0;
    dfs_diffuser *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = ctor(dfsj_type, dfsj_effect_cb, ref, dfsj_destroy_weak, &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
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
    jobject ref = dfsj_hold_weak(env, did_change);
    if (ref == NULL) return 0;
    dfs_diffuser *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_diffuser_into_when(dfsj_did_change_cb, ref, dfsj_destroy_weak, H(dfs_diffuser, child), &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

static jlong n_diffuser_into_when_effect(JNIEnv *env, jclass cls, jobject did_change, jobject effect) {
    (void)cls;
    jobject predicate = dfsj_hold_weak(env, did_change);
    if (predicate == NULL) return 0;
    jobject action = dfsj_hold_weak(env, effect);
    if (action == NULL) {
        (*env)->DeleteWeakGlobalRef(env, predicate);
        return 0;
    }
    dfs_diffuser *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_diffuser_into_when_effect(dfsj_type, dfsj_did_change_cb, predicate, dfsj_destroy_weak,
                                                      dfsj_effect_cb, action, dfsj_destroy_weak, &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

/* The composites built from a Java array of child handles. */
typedef enum { DIFFUSER_INTO_ALL, DIFFUSER_INTO_ALWAYS_ALL, FUSER_FROM_ALL } composite_kind;

static jlong make_composite(JNIEnv *env, jlongArray children, composite_kind kind) {
    handle_list list;
    if (handles_of(env, children, &list)) return 0;
    dfs_diffuser *diffuser = NULL;
    dfs_fuser *fuser = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status;
    switch (kind) {
    case DIFFUSER_INTO_ALL:
        status = dfs_diffuser_into_all(dfsj_type, (dfs_diffuser *const *)list.items, list.count, &diffuser);
        break;
    case DIFFUSER_INTO_ALWAYS_ALL:
        status = dfs_diffuser_into_always_all(dfsj_type, (dfs_diffuser *const *)list.items, list.count, &diffuser);
        break;
    default:
        status = dfs_fuser_from_all(dfsj_type, (dfs_fuser *const *)list.items, list.count, &fuser);
        break;
    }
    dfsj_finish(env, status, dfsj_leave(&e), 0);
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
    dfsj_map_ctx *ref = dfsj_map_ctx_new(env, transform);
    if (ref == NULL) return 0;
    dfs_diffuser *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_diffuser_map_borrowed(dfsj_type, dfsj_part_cb, ref, dfsj_destroy_map, H(dfs_diffuser, child), &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

/* A run asked for from inside another native method of this thread (from an effect) may
 * be queued by the core until the run under way ends: `owner`, the Java diffuser, is
 * pinned until then, since it holds what the queued run calls (see dfsj_hold_weak). A
 * run the core did not queue (another graph's) is done when it returns, and drops the pin
 * it made, so that temporary diffusers run from an effect can be collected at once. */
static void n_diffuser_run(JNIEnv *env, jclass cls, jlong diffuser, jobject value, jobject owner) {
    (void)cls;
    int pinned = dfsj_thread.depth > 0 ? dfsj_pin(env, diffuser, owner) : 0;
    if (pinned < 0) return;
    dfsj_entry e;
    dfsj_enter(&e, env);
    int queued = 0;
    dfs_status status = dfs_diffuser_run_or_queue(H(dfs_diffuser, diffuser), value, &queued);
    /* A queued run may be one of several of this diffuser in the call: the pin made by
     * the first is then the one it relies on, and its graph may be joined with an outer
     * pass's, which runs it after the call that pinned it returned. */
    if (queued) dfsj_keep(diffuser);
    else if (pinned) dfsj_unpin(env, diffuser);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

/* Called from inside another native method of this thread (from a callback), pins
 * `object`, the Java object of handle `key`, until the outermost native method returns;
 * otherwise does nothing. For what the core may still call until then: a loop connection
 * disposed from inside its own delivery has its sources disconnected once the delivery
 * ends, and its Java fuser holds what they call. */
static void n_keep_until_return(JNIEnv *env, jclass cls, jlong key, jobject object) {
    (void)cls;
    if (dfsj_thread.depth > 0 && dfsj_pin(env, key, object) >= 0) dfsj_keep(key);
}

static void n_diffuser_release(JNIEnv *env, jclass cls, jlong diffuser) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_diffuser_release(H(dfs_diffuser, diffuser));
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

static jlong n_fuser_from(JNIEnv *env, jclass cls, jobject source) {
    (void)cls;
    jobject ref = dfsj_hold_weak(env, source);
    if (ref == NULL) return 0;
    dfs_fuser *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_fuser_from(dfsj_type, dfsj_source_connect_cb, dfsj_source_disconnect_cb, ref, dfsj_destroy_weak, &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

static jlong n_fuser_from_all(JNIEnv *env, jclass cls, jlongArray children) {
    (void)cls;
    return make_composite(env, children, FUSER_FROM_ALL);
}

typedef dfs_status (*extract_ctor)(dfs_type *, dfs_transform_fn, void *, dfs_destroy_fn, dfs_fuser *, dfs_fuser **);

static jlong make_extract(JNIEnv *env, extract_ctor ctor, jobject transform, jlong child) {
    jobject ref = dfsj_hold_weak(env, transform);
    if (ref == NULL) return 0;
    dfs_fuser *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = ctor(dfsj_type, dfsj_transform_cb, ref, dfsj_destroy_weak, H(dfs_fuser, child), &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
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
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_fuser_extract_constant(dfsj_type, constant, H(dfs_fuser, child), &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

static jlong n_fuser_connect(JNIEnv *env, jclass cls, jlong fuser, jobject effect) {
    (void)cls;
    jobject ref = dfsj_hold(env, effect);
    if (ref == NULL) return 0;
    dfs_disposable *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_fuser_connect(H(dfs_fuser, fuser), dfsj_effect_cb, ref, dfsj_destroy_ref, &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

static void n_fuser_release(JNIEnv *env, jclass cls, jlong fuser) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_fuser_release(H(dfs_fuser, fuser));
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

static void n_disposable_dispose(JNIEnv *env, jclass cls, jlong disposable) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfsj_collect_disconnects();
    dfs_status status = dfs_disposable_dispose(H(dfs_disposable, disposable));
    dfsj_finish(env, status, dfsj_leave(&e), 1);
}

static void n_disposable_release(JNIEnv *env, jclass cls, jlong disposable) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_disposable_release(H(dfs_disposable, disposable));
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

/* DispatchEffect.run: emits through the dispatch of a source connection. A dispatch
 * whose connection ended is no longer a valid handle (DFS_ERR_HANDLE): the event is
 * dropped, as events emitted after dispose are. A connection disposed from inside its
 * own effect disconnects its sources once that effect has returned, still inside this
 * emission: a Throwable a source's Disposable.dispose() threw then is rethrown here, to
 * the emitter, although the core reports DFS_OK (its disconnect cannot fail). */
static void n_dispatch_emit(JNIEnv *env, jclass cls, jlong dispatch, jobject event) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfsj_collect_disconnects();
    dfs_status status = dfs_dispatch_emit(H(dfs_dispatch, dispatch), event);
    jthrowable thrown = dfsj_leave(&e);
    if (status == DFS_ERR_HANDLE) status = DFS_OK;
    dfsj_finish(env, status, thrown, 1);
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
    return J(dfsj_type);
}

/* A diagnostic for the benchmark's native bytes per leaf: the bytes malloc has handed
 * out and not taken back. Reads a counter; changes nothing. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
static jlong n_heap_in_use(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return (jlong)mallinfo2().uordblks;
}
#else
static jlong n_heap_in_use(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return 0;
}
#endif

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
    {"diffuserRun", "(JLjava/lang/Object;Ljava/lang/Object;)V", (void *)n_diffuser_run},
    {"diffuserRelease", "(J)V", (void *)n_diffuser_release},
    {"keepUntilReturn", "(JLjava/lang/Object;)V", (void *)n_keep_until_return},
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
    {"heapInUse", "()J", (void *)n_heap_in_use},
    {"valueType", "()J", (void *)n_value_type},
};

/* ------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------ */

jclass dfsj_global_class(JNIEnv *env, const char *name) {
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
    dfsj_vm = vm;

    if (dfs_abi_version() != DFS_ABI_VERSION) {
        jclass error = (*env)->FindClass(env, "java/lang/UnsatisfiedLinkError");
        if (error != NULL)
            (*env)->ThrowNew(env, error, "libdiffuser.so has another ABI version than diffuser_jni was built for");
        return JNI_ERR;
    }

    /* The classes, methods and fields each file uses, resolved once. */
    if (dfsj_upcalls_load(env) || dfsj_exceptions_load(env) || dfsj_values_load(env)) return JNI_ERR;

    jclass natives = (*env)->FindClass(env, NATIVE_CLASS);
    if (natives == NULL) return JNI_ERR;
    jint registered = (*env)->RegisterNatives(env, natives, native_methods,
                                              (jint)(sizeof native_methods / sizeof native_methods[0]));
    (*env)->DeleteLocalRef(env, natives);
    if (registered != 0) return JNI_ERR;

    if (dfsj_values_create_type() != DFS_OK) {
        dfsj_throw_status(env, DFS_ERR_MEMORY);
        return JNI_ERR;
    }
    return DFSJ_JNI_VERSION;
}
