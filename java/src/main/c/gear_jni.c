/*
 * gear_jni.c — the JNI glue of gears (io.diffuser.loop.Gear and the gear feedbacks of
 * io.diffuser.loop.Feedback): the native methods of LoopNative over the gear functions
 * of diffuser.h, and the C callback through which the core calls a PropagateBridge.
 *
 * Like the rest of the glue it only translates: gear events are Java objects (values of
 * dfsj_type), and what a loop does with them is the core's business.
 */
#include "jni_glue.h"

static jmethodID m_propagate;

/* dfs_propagate_fn: PropagateBridge.propagate(value) returns the value made, or null for
 * none (the bridge turns a Java exception into none). */
static int propagate_cb(const void *value, const void **out, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return 0;
    JNIEnv *env = u.env;
    int made = 0;
    jobject result = (*env)->CallObjectMethod(env, (jobject)ctx, m_propagate, (jobject)value);
    if (!dfsj_upcall_failed(env) && result != NULL) {
        *out = (*env)->NewGlobalRef(env, result);
        made = *out != NULL;
        if (!made) (*env)->ExceptionClear(env);
        (*env)->DeleteLocalRef(env, result);
    }
    dfsj_env_leave(&u);
    return made;
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_loadGears(JNIEnv *env, jclass cls) {
    (void)cls;
    jclass bridge = (*env)->FindClass(env, "io/diffuser/loop/Bridges$PropagateBridge");
    if (bridge == NULL) return;
    m_propagate = (*env)->GetMethodID(env, bridge, "propagate", "(Ljava/lang/Object;)Ljava/lang/Object;");
    (*env)->DeleteLocalRef(env, bridge);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_gearNew(JNIEnv *env, jclass cls) {
    (void)cls;
    dfs_gear *out = NULL;
    dfs_status status = dfs_gear_new(dfsj_type, &out);
    if (status != DFS_OK) dfsj_throw_status(env, status);
    return DFSJ_LONG(out);
}

/* Sending runs the attached loops' steps on this thread when they are idle. */
JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_gearSend(JNIEnv *env, jclass cls, jlong gear,
                                                                  jobject event) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_gear_send(DFSJ_HANDLE(dfs_gear, gear), event);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_LoopNative_gearRelease(JNIEnv *env, jclass cls, jlong gear) {
    (void)cls;
    dfs_status status = dfs_gear_release(DFSJ_HANDLE(dfs_gear, gear));
    if (status != DFS_OK) dfsj_throw_status(env, status);
}

typedef dfs_status (*gear_feedback_fn)(dfs_gear *, dfs_propagate_fn, void *, dfs_destroy_fn, dfs_feedback **);

/* A gear feedback's description (a dfs_feedback, which Java releases). */
static jlong gear_feedback(JNIEnv *env, gear_feedback_fn make, jlong gear, jobject bridge) {
    jobject ref = dfsj_hold(env, bridge);
    if (ref == NULL) return 0;
    dfs_feedback *out = NULL;
    dfs_status status = make(DFSJ_HANDLE(dfs_gear, gear), propagate_cb, ref, dfsj_destroy_ref, &out);
    if (status != DFS_OK) dfsj_throw_status(env, status);
    return DFSJ_LONG(out);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_feedbackPushing(JNIEnv *env, jclass cls, jlong gear,
                                                                         jobject bridge) {
    (void)cls;
    return gear_feedback(env, dfs_feedback_pushing, gear, bridge);
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_LoopNative_feedbackAttached(JNIEnv *env, jclass cls, jlong gear,
                                                                          jobject bridge) {
    (void)cls;
    return gear_feedback(env, dfs_feedback_attached, gear, bridge);
}
