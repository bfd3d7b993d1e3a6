/*
 * job_jni.c — the JNI glue of jobs and executors (io.diffuser.loop.Job, the executors of
 * io.diffuser.loop): the native methods of LoopNative over the job, executor and work
 * functions of diffuser.h, and the C callbacks through which the core hands work to a
 * Java Executor and runs a job's on-cancel action.
 *
 * Like the rest of the glue it only translates; when work runs and what a cancelled job
 * drops is the core's business.
 */
#include "jni_glue.h"

#define H DFSJ_HANDLE
#define J DFSJ_LONG

static jmethodID m_execute, m_runnable_run;

/* ------------------------------------------------------------------------------------
 * Callbacks
 * ------------------------------------------------------------------------------------ */

/* dfs_execute_fn: ExecutorBridge.execute(work). */
static void execute_cb(dfs_work *work, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->CallVoidMethod(u.env, (jobject)ctx, m_execute, J(work));
    dfsj_upcall_failed(u.env);
    dfsj_env_leave(&u);
}

/* dfs_action_fn: Runnable.run() (the bridge's wrapper, which cannot throw). */
static void action_cb(void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->CallVoidMethod(u.env, (jobject)ctx, m_runnable_run);
    dfsj_upcall_failed(u.env);
    dfsj_env_leave(&u);
}

/* ------------------------------------------------------------------------------------
 * Native methods
 * ------------------------------------------------------------------------------------ */

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_loadJobs(JNIEnv *env, jclass cls) {
    (void)cls;
    jclass executor = (*env)->FindClass(env, "io/diffuser/loop/Bridges$ExecutorBridge");
    if (executor == NULL) return;
    m_execute = (*env)->GetMethodID(env, executor, "execute", "(J)V");
    (*env)->DeleteLocalRef(env, executor);
    if (m_execute == NULL) return;
    jclass runnable = (*env)->FindClass(env, "java/lang/Runnable");
    if (runnable == NULL) return;
    m_runnable_run = (*env)->GetMethodID(env, runnable, "run", "()V");
    (*env)->DeleteLocalRef(env, runnable);
}

JNIEXPORT jint JNICALL Java_io_diffuser_loop_LoopNative_jobSend(JNIEnv *env, jclass cls, jlong job, jobject event) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_job_send(H(dfs_job, job), event);
    return dfsj_finish_refusable(env, status, dfsj_leave(&e));
}

typedef dfs_status (*job_call)(dfs_job *);

static void call_job(JNIEnv *env, job_call call, jlong job) {
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = call(H(dfs_job, job));
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_jobFinish(JNIEnv *env, jclass cls, jlong job) {
    (void)cls;
    call_job(env, dfs_job_finish, job);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_jobCancel(JNIEnv *env, jclass cls, jlong job) {
    (void)cls;
    call_job(env, dfs_job_cancel, job);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_jobRetain(JNIEnv *env, jclass cls, jlong job) {
    (void)cls;
    call_job(env, dfs_job_retain, job);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_jobRelease(JNIEnv *env, jclass cls, jlong job) {
    (void)cls;
    call_job(env, dfs_job_release, job);
}

JNIEXPORT jboolean JNICALL Java_io_diffuser_loop_LoopNative_jobIsCancelled(JNIEnv *env, jclass cls, jlong job) {
    (void)cls;
    int cancelled = dfs_job_is_cancelled(H(dfs_job, job));
    if (cancelled < 0) dfsj_throw_status(env, (dfs_status)-cancelled);
    return cancelled == 1;
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_jobOnCancel(JNIEnv *env, jclass cls, jlong job,
                                                                    jobject action) {
    (void)cls;
    jobject ref = dfsj_hold(env, action);
    if (ref == NULL) return;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_job_on_cancel(H(dfs_job, job), action_cb, ref, dfsj_destroy_ref);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_executorNew(JNIEnv *env, jclass cls, jobject bridge,
                                                                     jint steps_per_run) {
    (void)cls;
    jobject ref = dfsj_hold(env, bridge);
    if (ref == NULL) return 0;
    dfs_executor *out = NULL;
    dfs_status status = dfs_executor_new(execute_cb, ref, dfsj_destroy_ref,
                                         steps_per_run == INT32_MAX ? 0 : (size_t)steps_per_run, &out);
    if (status != DFS_OK) dfsj_throw_status(env, status);
    return J(out);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_executorRelease(JNIEnv *env, jclass cls, jlong executor) {
    (void)cls;
    dfs_status status = dfs_executor_release(H(dfs_executor, executor));
    if (status != DFS_OK) dfsj_throw_status(env, status);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_workRun(JNIEnv *env, jclass cls, jlong work) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_work_run(H(dfs_work, work));
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_setError(JNIEnv *env, jclass cls, jstring message) {
    (void)cls;
    if (message == NULL) {
        dfs_set_error(NULL);
        return;
    }
    if (dfsj_set_error_text(env, message) && !(*env)->ExceptionCheck(env))
        dfs_set_error("a Java callback failed (no memory for its message)");
}

/* Keeps `failure` (a Bridges.Failure, or null for none) as the thread's failure for the
 * inspector's trace that follows (see dfsj_thread_state), in place of the one kept so far. */
JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_keepFailure(JNIEnv *env, jclass cls, jobject failure) {
    (void)cls;
    dfsj_thread_state *ts = &dfsj_thread;
    dfsj_drop_kept(env, &ts->failure);
    ts->failure = failure == NULL ? NULL : (*env)->NewGlobalRef(env, failure);
    if (ts->failure == NULL) (*env)->ExceptionClear(env); /* the inspector goes without */
}
