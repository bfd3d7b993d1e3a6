/*
 * loop_jni.c — the JNI glue of the loops (package io.diffuser.loop): the native methods
 * of io.diffuser.loop.LoopNative over the "Loops" section of diffuser.h, and the C
 * callbacks through which the core calls the bridges of io.diffuser.loop.Bridges.
 *
 * Like the rest of the glue it only translates. Java objects are values of dfsj_type
 * (values.c); every callback context is a global reference to a bridge object, deleted
 * by dfsj_destroy_ref (upcalls.c). The bridges catch the exceptions of user code
 * themselves (keeping each for the loop's inspector), so a callback here fails only when
 * a bridge says so. Every native method that may run the loop's steps on the calling
 * thread (dispatch, start, a job's send, a work item's run...) brackets the core call
 * with dfsj_enter and dfsj_leave, so the callbacks find its JNIEnv.
 *
 * The natives are found by name (Java_io_diffuser_loop_LoopNative_*), not registered in
 * JNI_OnLoad; LoopNative.load() resolves the classes and methods once. Jobs and
 * executors are in job_jni.c, gears in gear_jni.c.
 *
 * One file although over 400 lines: each callback here is the other half of a native
 * method here (the method hands the core the bridge the callback calls), and both follow
 * Bridges.java, whose methods are the ones these callbacks call.
 */
#include <stdint.h>
#include <stdlib.h>

#include "jni_glue.h"

#define H DFSJ_HANDLE
#define J DFSJ_LONG

static jclass c_object, c_update, c_handler, c_feedback, c_observer, c_key, c_restart, c_inspector;
static jmethodID m_update_next, m_handler_handle, m_feedback_start, m_observer_accept, m_key_key, m_key_done,
    m_restart, m_inspect;
static jobject no_model;

/* ------------------------------------------------------------------------------------
 * Callbacks
 * ------------------------------------------------------------------------------------ */

/* A new global reference to a Java value the core will own (NULL stays NULL); 0, or -1
 * if none could be made. */
static int own(JNIEnv *env, jobject local, const void **out) {
    *out = NULL;
    if (local == NULL) return 0;
    *out = (*env)->NewGlobalRef(env, local);
    if (*out == NULL) {
        (*env)->ExceptionClear(env);
        dfs_set_error("diffuser JNI: cannot make a global reference");
        return -1;
    }
    return 0;
}

/* Gives `next` what a bridge returned, {model or NO_MODEL, effects...} (Bridges.unpack),
 * each value as a global reference the core owns once given; deletes the local reference
 * `result`. 0, or 1 at the first value that could not be given (those given before stay
 * given; one the core refused is deleted, as it stays the caller's). */
static int fill_next(JNIEnv *env, jobjectArray result, dfs_next *next) {
    int failed = 0;
    jsize n = (*env)->GetArrayLength(env, result);
    for (jsize i = 0; i < n && !failed; i++) {
        jobject item = (*env)->GetObjectArrayElement(env, result, i);
        const void *owned = NULL;
        if (i == 0 && (*env)->IsSameObject(env, item, no_model)) {
            /* no model */
        } else if (own(env, item, &owned)) {
            failed = 1;
        } else if ((i == 0 ? dfs_next_model(next, owned) : dfs_next_effect(next, owned)) != DFS_OK) {
            if (owned != NULL) (*env)->DeleteGlobalRef(env, (jobject)owned);
            failed = 1;
        }
        if (item != NULL) (*env)->DeleteLocalRef(env, item);
    }
    (*env)->DeleteLocalRef(env, result);
    return failed;
}

/* dfs_update_fn: UpdateBridge.next(model, event) returns {model or NO_MODEL, effects...},
 * or null if the update failed. */
int dfsj_update_cb(const void *model, const void *event, dfs_next *next, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    jobjectArray result =
        (jobjectArray)(*env)->CallObjectMethod(env, (jobject)ctx, m_update_next, (jobject)model, (jobject)event);
    int failed = dfsj_upcall_failed(env) || result == NULL || fill_next(env, result, next);
    dfsj_env_leave(&u);
    return failed;
}

/* dfs_restart_fn: RestartBridge.restart(model) returns {model or NO_MODEL, effects...}, or
 * null for nothing (the kept model, no effect): a restart cannot fail, and the bridge has
 * reported what the user's threw. The core drops what `next` got if the restart stopped
 * or disposed the loop. */
static void restart_cb(const void *model, dfs_next *next, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    JNIEnv *env = u.env;
    jobjectArray result = (jobjectArray)(*env)->CallObjectMethod(env, (jobject)ctx, m_restart, (jobject)model);
    if (!dfsj_upcall_failed(env) && result != NULL) fill_next(env, result, next);
    dfsj_env_leave(&u);
}

/* dfs_handler_fn: HandlerBridge.handle(effect, job) returns false if the handler threw. */
static int handler_cb(const void *effect, dfs_job *job, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    jboolean ok = (*u.env)->CallBooleanMethod(u.env, (jobject)ctx, m_handler_handle, (jobject)effect, J(job));
    int failed = dfsj_upcall_failed(u.env) || !ok;
    dfsj_env_leave(&u);
    return failed;
}

/* dfs_feedback_fn: FeedbackBridge.start(value, job). */
static void feedback_cb(const void *value, dfs_job *job, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->CallVoidMethod(u.env, (jobject)ctx, m_feedback_start, (jobject)value, J(job));
    dfsj_upcall_failed(u.env);
    dfsj_env_leave(&u);
}

/* dfs_effect_fn of an observer: ObserverBridge.accept(model) returns false if it threw. */
static int observer_cb(const void *model, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    jboolean ok = (*u.env)->CallBooleanMethod(u.env, (jobject)ctx, m_observer_accept, (jobject)model);
    int failed = dfsj_upcall_failed(u.env) || !ok;
    dfsj_env_leave(&u);
    return failed;
}

/* dfs_key_fn: KeyBridge.key(event) returns Long.MIN_VALUE for none. */
static int key_cb(const void *event, uint64_t *key, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return 0;
    jlong k = (*u.env)->CallLongMethod(u.env, (jobject)ctx, m_key_key, (jobject)event);
    int has = !dfsj_upcall_failed(u.env) && k != INT64_MIN;
    dfsj_env_leave(&u);
    if (has) *key = (uint64_t)k;
    return has;
}

/* dfs_key_done_fn: KeyBridge.done(key), for each key key_cb gave. */
static void key_done_cb(uint64_t key, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->CallVoidMethod(u.env, (jobject)ctx, m_key_done, (jlong)key);
    dfsj_upcall_failed(u.env);
    dfsj_env_leave(&u);
}

/* dfs_inspect_fn: InspectorBridge.inspect(kind, event, model, hasNextModel, nextModel,
 * effects, effect, reason, error, refusal, kept): a refused source connection also hands
 * over the source's Throwable, if the thread kept it (dfsj_connect_failed), and a failed
 * update, handler, observer or feedback request the Bridges.Failure its bridge kept
 * (keepFailure). */
static void inspect_cb(const dfs_trace *trace, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    JNIEnv *env = u.env;
    jthrowable refusal = trace->kind == DFS_TRACE_SOURCE_FAILED ? dfsj_take_refusal(env) : NULL;
    jobject kept = trace->kind == DFS_TRACE_FAILED || trace->kind == DFS_TRACE_EFFECT_FAILED ||
                           trace->kind == DFS_TRACE_OBSERVER_FAILED || trace->kind == DFS_TRACE_FEEDBACK_FAILED
                       ? dfsj_take_kept(env, &dfsj_thread.failure)
                       : NULL;
    jobjectArray effects = NULL;
    if (trace->effect_count > 0) {
        effects = (*env)->NewObjectArray(env, (jsize)trace->effect_count, c_object, NULL);
        for (size_t i = 0; effects != NULL && i < trace->effect_count; i++)
            (*env)->SetObjectArrayElement(env, effects, (jsize)i, (jobject)trace->effects[i]);
    }
    jstring error = trace->error && !(*env)->ExceptionCheck(env) ? dfsj_new_string(env, trace->error) : NULL;
    if (!(*env)->ExceptionCheck(env)) {
        (*env)->CallVoidMethod(env, (jobject)ctx, m_inspect, (jint)trace->kind, (jobject)trace->event,
                               (jobject)trace->model, (jboolean)(trace->has_next_model != 0),
                               (jobject)trace->next_model, effects, (jobject)trace->effect, (jint)trace->reason,
                               error, refusal, kept);
    }
    dfsj_upcall_failed(env);
    if (effects != NULL) (*env)->DeleteLocalRef(env, effects);
    if (error != NULL) (*env)->DeleteLocalRef(env, error);
    if (refusal != NULL) (*env)->DeleteLocalRef(env, refusal);
    if (kept != NULL) (*env)->DeleteLocalRef(env, kept);
    dfsj_env_leave(&u);
}

/* ------------------------------------------------------------------------------------
 * Native methods
 * ------------------------------------------------------------------------------------ */

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_load(JNIEnv *env, jclass cls) {
    (void)cls;
    if (!(c_object = dfsj_global_class(env, "java/lang/Object")) ||
        !(c_update = dfsj_global_class(env, "io/diffuser/loop/Bridges$UpdateBridge")) ||
        !(c_handler = dfsj_global_class(env, "io/diffuser/loop/Bridges$HandlerBridge")) ||
        !(c_feedback = dfsj_global_class(env, "io/diffuser/loop/Bridges$FeedbackBridge")) ||
        !(c_observer = dfsj_global_class(env, "io/diffuser/loop/Bridges$ObserverBridge")) ||
        !(c_key = dfsj_global_class(env, "io/diffuser/loop/Bridges$KeyBridge")) ||
        !(c_restart = dfsj_global_class(env, "io/diffuser/loop/Bridges$RestartBridge")) ||
        !(c_inspector = dfsj_global_class(env, "io/diffuser/loop/Bridges$InspectorBridge")))
        return;
    if (!(m_update_next = (*env)->GetMethodID(env, c_update, "next",
                                              "(Ljava/lang/Object;Ljava/lang/Object;)[Ljava/lang/Object;")) ||
        !(m_handler_handle = (*env)->GetMethodID(env, c_handler, "handle", "(Ljava/lang/Object;J)Z")) ||
        !(m_feedback_start = (*env)->GetMethodID(env, c_feedback, "start", "(Ljava/lang/Object;J)V")) ||
        !(m_observer_accept = (*env)->GetMethodID(env, c_observer, "accept", "(Ljava/lang/Object;)Z")) ||
        !(m_key_key = (*env)->GetMethodID(env, c_key, "key", "(Ljava/lang/Object;)J")) ||
        !(m_key_done = (*env)->GetMethodID(env, c_key, "done", "(J)V")) ||
        !(m_restart = (*env)->GetMethodID(env, c_restart, "restart", "(Ljava/lang/Object;)[Ljava/lang/Object;")) ||
        !(m_inspect = (*env)->GetMethodID(env, c_inspector, "inspect",
                                          "(ILjava/lang/Object;Ljava/lang/Object;ZLjava/lang/Object;"
                                          "[Ljava/lang/Object;Ljava/lang/Object;ILjava/lang/String;"
                                          "Ljava/lang/Throwable;Ljava/lang/Object;)V")))
        return;
    jclass bridges = (*env)->FindClass(env, "io/diffuser/loop/Bridges");
    if (bridges == NULL) return;
    jfieldID f_no_model = (*env)->GetStaticFieldID(env, bridges, "NO_MODEL", "Ljava/lang/Object;");
    if (f_no_model == NULL) return;
    jobject sentinel = (*env)->GetStaticObjectField(env, bridges, f_no_model);
    no_model = sentinel ? (*env)->NewGlobalRef(env, sentinel) : NULL;
    (*env)->DeleteLocalRef(env, sentinel);
    (*env)->DeleteLocalRef(env, bridges);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_loopNew(
    JNIEnv *env, jclass cls, jobject model, jobjectArray start_effects, jobject update, jobjectArray handlers,
    jlongArray handler_executors, jlong executor, jobject coalesce, jobject restart, jobject inspector, jlong journal,
    jlongArray feedbacks, jboolean manual_start) {
    (void)cls;
    jsize effect_count = start_effects ? (*env)->GetArrayLength(env, start_effects) : 0;
    jsize handler_count = handlers ? (*env)->GetArrayLength(env, handlers) : 0;
    jsize feedback_count = feedbacks ? (*env)->GetArrayLength(env, feedbacks) : 0;
    const void **effects = calloc((size_t)effect_count + 1, sizeof *effects);
    dfs_handler *list = calloc((size_t)handler_count + 1, sizeof *list);
    jlong *executors = calloc((size_t)handler_count + 1, sizeof *executors);
    jlong *feedback_handles = calloc((size_t)feedback_count + 1, sizeof *feedback_handles);
    dfs_feedback **feedback_list = calloc((size_t)feedback_count + 1, sizeof *feedback_list);
    dfs_loop *out = NULL;
    if (effects == NULL || list == NULL || executors == NULL || feedback_handles == NULL || feedback_list == NULL) {
        (*env)->ThrowNew(env, dfsj_c_oome, "out of memory");
        goto done;
    }
    if (handler_count > 0) (*env)->GetLongArrayRegion(env, handler_executors, 0, handler_count, executors);
    if (feedback_count > 0) (*env)->GetLongArrayRegion(env, feedbacks, 0, feedback_count, feedback_handles);
    for (jsize i = 0; i < feedback_count; i++) feedback_list[i] = H(dfs_feedback, feedback_handles[i]);

    dfs_loop_config c = {0};
    c.model_type = dfsj_type;
    c.event_type = dfsj_type;
    c.effect_type = dfsj_type;
    c.model = model;
    c.manual_start = manual_start ? 1 : 0;
    c.journal = H(dfs_journal, journal);
    /* Contexts: each a global reference owned by the core once dfs_loop_new is called
     * (which destroys them all if it fails). */
    c.update = dfsj_update_cb;
    c.update_ctx = dfsj_hold(env, update);
    c.update_destroy = dfsj_destroy_ref;
    for (jsize i = 0; i < handler_count; i++) {
        jobject h = (*env)->GetObjectArrayElement(env, handlers, i);
        list[i].fn = handler_cb;
        list[i].ctx = h ? dfsj_hold(env, h) : NULL;
        list[i].destroy = dfsj_destroy_ref;
        list[i].executor = H(dfs_executor, executors[i]);
        if (h) (*env)->DeleteLocalRef(env, h);
    }
    c.handlers = list;
    c.handler_count = (size_t)handler_count;
    for (jsize i = 0; i < effect_count; i++) effects[i] = (*env)->GetObjectArrayElement(env, start_effects, i);
    c.start_effects = effects;
    c.start_effect_count = (size_t)effect_count;
    c.executor = H(dfs_executor, executor);
    /* Registered as the loop is made, before its start: the feedbacks stay Java's. */
    c.feedbacks = feedback_list;
    c.feedback_count = (size_t)feedback_count;
    if (coalesce != NULL) {
        c.coalesce = key_cb;
        c.coalesce_done = key_done_cb;
        c.coalesce_ctx = dfsj_hold(env, coalesce);
        c.coalesce_destroy = dfsj_destroy_ref;
    }
    if (restart != NULL) {
        c.restart = restart_cb;
        c.restart_ctx = dfsj_hold(env, restart);
        c.restart_destroy = dfsj_destroy_ref;
    }
    if (inspector != NULL) {
        c.inspect = inspect_cb;
        c.inspect_ctx = dfsj_hold(env, inspector);
        c.inspect_destroy = dfsj_destroy_ref;
    }
    if ((*env)->ExceptionCheck(env)) {
        /* A reference could not be made: give back those that were. */
        dfsj_destroy_ref(c.update_ctx);
        for (jsize i = 0; i < handler_count; i++) dfsj_destroy_ref(list[i].ctx);
        dfsj_destroy_ref(c.coalesce_ctx);
        dfsj_destroy_ref(c.restart_ctx);
        dfsj_destroy_ref(c.inspect_ctx);
    } else {
        dfsj_entry e;
        dfsj_enter(&e, env);
        dfs_status status = dfs_loop_new(&c, &out);
        dfsj_finish(env, status, dfsj_leave(&e), 0);
    }
    for (jsize i = 0; i < effect_count; i++)
        if (effects[i] != NULL) (*env)->DeleteLocalRef(env, (jobject)effects[i]);
done:
    free(effects);
    free(list);
    free(executors);
    free(feedback_handles);
    free(feedback_list);
    return J(out);
}

JNIEXPORT jint JNICALL Java_io_diffuser_loop_LoopNative_dispatch(JNIEnv *env, jclass cls, jlong loop, jobject event) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_loop_dispatch(H(dfs_loop, loop), event);
    return dfsj_finish_refusable(env, status, dfsj_leave(&e));
}

typedef struct {
    JNIEnv *env;
    jobject model;
} model_read;

static int read_model(const void *model, void *ctx) {
    model_read *r = ctx;
    r->model = model ? (*r->env)->NewLocalRef(r->env, (jobject)model) : NULL;
    return 0;
}

JNIEXPORT jobject JNICALL Java_io_diffuser_loop_LoopNative_model(JNIEnv *env, jclass cls, jlong loop) {
    (void)cls;
    model_read r = {env, NULL};
    dfs_status status = dfs_loop_model(H(dfs_loop, loop), read_model, &r);
    if (status != DFS_OK) dfsj_throw_status(env, status);
    return r.model;
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_observe(JNIEnv *env, jclass cls, jlong loop, jobject observer) {
    (void)cls;
    jobject ref = dfsj_hold(env, observer);
    if (ref == NULL) return 0;
    dfs_disposable *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_loop_observe(H(dfs_loop, loop), observer_cb, ref, dfsj_destroy_ref, &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_connect(JNIEnv *env, jclass cls, jlong loop, jlong fuser) {
    (void)cls;
    dfs_disposable *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_loop_connect(H(dfs_loop, loop), H(dfs_fuser, fuser), &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_feedbackWork(JNIEnv *env, jclass cls, jint overlap,
                                                                      jlong executor, jobject work) {
    (void)cls;
    jobject ref = dfsj_hold(env, work);
    if (ref == NULL) return 0;
    dfs_feedback *out = NULL;
    dfs_status status =
        dfs_feedback_work((dfs_overlap)overlap, H(dfs_executor, executor), feedback_cb, ref, dfsj_destroy_ref, &out);
    if (status != DFS_OK) dfsj_throw_status(env, status);
    return J(out);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_feedbackRequest(JNIEnv *env, jclass cls, jobject request,
                                                                         jint overlap, jlong executor, jobject work) {
    (void)cls;
    jobject select = dfsj_hold(env, request);
    if (select == NULL) return 0;
    jobject ref = dfsj_hold(env, work);
    if (ref == NULL) {
        (*env)->DeleteGlobalRef(env, select);
        return 0;
    }
    dfs_feedback *out = NULL;
    dfs_status status = dfs_feedback_request(dfsj_type, dfsj_transform_cb, select, dfsj_destroy_ref,
                                             (dfs_overlap)overlap, H(dfs_executor, executor), feedback_cb, ref,
                                             dfsj_destroy_ref, &out);
    if (status != DFS_OK) dfsj_throw_status(env, status);
    return J(out);
}

/* Registering runs the feedback on this thread when the loop is idle and running. */
JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_add(JNIEnv *env, jclass cls, jlong loop, jlong feedback) {
    (void)cls;
    dfs_disposable *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_loop_add(H(dfs_loop, loop), H(dfs_feedback, feedback), &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return J(out);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_feedbackRelease(JNIEnv *env, jclass cls, jlong feedback) {
    (void)cls;
    dfs_status status = dfs_feedback_release(H(dfs_feedback, feedback));
    if (status != DFS_OK) dfsj_throw_status(env, status);
}

JNIEXPORT jboolean JNICALL Java_io_diffuser_loop_LoopNative_start(JNIEnv *env, jclass cls, jlong loop) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_loop_start(H(dfs_loop, loop));
    return dfsj_finish_refusable(env, status, dfsj_leave(&e)) == DFS_OK;
}

/* stop, dispose and release: they wait for callbacks in progress and may run the last
 * steps of the loop on this thread. With `rethrow_on_ok`, a Throwable kept although the
 * core call succeeded is thrown once the close is complete: that of a source's
 * Disposable.dispose(), which the core's disconnect cannot report (later ones are
 * suppressed by it), as a Fuser connection's dispose throws it. The release, a Cleaner's
 * that disposes a loop collected while it ran, throws it too: its Java caller hands it
 * to the thread's uncaught exception handler (LoopNative.Release). */
typedef dfs_status (*loop_call)(dfs_loop *);

static void call_loop(JNIEnv *env, loop_call call, jlong loop, int rethrow_on_ok) {
    dfsj_entry e;
    dfsj_enter(&e, env);
    if (rethrow_on_ok) dfsj_collect_disconnects();
    dfs_status status = call(H(dfs_loop, loop));
    dfsj_finish(env, status, dfsj_leave(&e), rethrow_on_ok);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_stop(JNIEnv *env, jclass cls, jlong loop) {
    (void)cls;
    call_loop(env, dfs_loop_stop, loop, 1);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_dispose(JNIEnv *env, jclass cls, jlong loop) {
    (void)cls;
    call_loop(env, dfs_loop_dispose, loop, 1);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_release(JNIEnv *env, jclass cls, jlong loop) {
    (void)cls;
    call_loop(env, dfs_loop_release, loop, 1);
}

JNIEXPORT jboolean JNICALL Java_io_diffuser_loop_LoopNative_isRunning(JNIEnv *env, jclass cls, jlong loop) {
    (void)cls;
    int running = dfs_loop_is_running(H(dfs_loop, loop));
    if (running < 0) dfsj_throw_status(env, (dfs_status)-running);
    return running == 1;
}
