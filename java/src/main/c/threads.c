/*
 * threads.c — the JNIEnv of the thread a callback runs on.
 *
 * Callbacks may run on any thread: under a native method of this glue (the usual case,
 * whose JNIEnv the per-thread state already holds), on another thread the JVM knows, or
 * on one it does not know (a C source emitting on its own thread). That last one is
 * attached for the duration of the callback and detached again before it returns. Every
 * callback of values.c and upcalls.c goes through dfsj_env_enter and dfsj_env_leave.
 */
#include "jni_glue.h"

JavaVM *dfsj_vm;

__thread __attribute__((tls_model("initial-exec"))) dfsj_thread_state dfsj_thread;

static uint64_t last_uid;

uint64_t dfsj_next_uid(void) {
    return __atomic_add_fetch(&last_uid, 1, __ATOMIC_RELAXED);
}

int dfsj_env_enter(dfsj_upcall_env *u) {
    dfsj_thread_state *ts = &dfsj_thread;
    u->attached = 0;
    if (ts->depth > 0) {
        u->env = ts->env;
        return 0;
    }
    u->env = NULL;
    jint r = (*dfsj_vm)->GetEnv(dfsj_vm, (void **)&u->env, DFSJ_JNI_VERSION);
    if (r == JNI_OK) return 0;
    if (r == JNI_EDETACHED) {
        JavaVMAttachArgs args = {DFSJ_JNI_VERSION, (char *)"diffuser-native-callback", NULL};
        if ((*dfsj_vm)->AttachCurrentThreadAsDaemon(dfsj_vm, (void **)&u->env, &args) == JNI_OK) {
            u->attached = 1;
            return 0;
        }
    }
    dfs_set_error("diffuser JNI: cannot attach the calling thread to the JVM");
    return -1;
}

void dfsj_env_leave(dfsj_upcall_env *u) {
    if (u->attached) (*dfsj_vm)->DetachCurrentThread(dfsj_vm);
}
