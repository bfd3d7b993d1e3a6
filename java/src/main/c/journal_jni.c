/*
 * journal_jni.c — the JNI glue of journals (io.diffuser.loop.Journal): its native
 * methods over the "Journals" subsection of diffuser.h.
 *
 * Like the rest of the glue it only translates: recording is the core loop's
 * (dfs_loop_record), replay is the core's (dfs_journal_replay), through the loop's own
 * update callback (dfsj_update_cb, loop_jni.c) over a Bridges.UpdateBridge. Java objects
 * are values of dfsj_type (values.c). The natives are found by name; Journal.load()
 * resolves the classes and methods once.
 */
#include <stdint.h>

#include "jni_glue.h"

static jclass c_journal, c_list;
static jmethodID m_collect, m_list_add;

/* The update bridge's method is resolved by LoopNative.load(), which Journal's class
 * initializer runs first. */
JNIEXPORT void JNICALL Java_io_diffuser_loop_Journal_load(JNIEnv *env, jclass cls) {
    if (!(c_journal = (jclass)(*env)->NewGlobalRef(env, cls)) ||
        !(c_list = dfsj_global_class(env, "java/util/List")))
        return;
    if (!(m_collect = (*env)->GetStaticMethodID(env, cls, "collect", "(Ljava/util/List;ZLjava/lang/Object;)V")))
        return;
    m_list_add = (*env)->GetMethodID(env, c_list, "add", "(Ljava/lang/Object;)Z");
}

JNIEXPORT jlong JNICALL Java_io_diffuser_loop_Journal_create(JNIEnv *env, jclass cls) {
    (void)cls;
    dfs_journal *out = NULL;
    dfs_status status = dfs_journal_new(dfsj_type, dfsj_type, &out);
    if (status != DFS_OK) dfsj_throw_status(env, status);
    return DFSJ_LONG(out);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_Journal_record(JNIEnv *env, jclass cls, jlong loop, jlong journal) {
    (void)cls;
    /* May run the loop's queue on this thread (the caller's executor). */
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_loop_record(DFSJ_HANDLE(dfs_loop, loop), DFSJ_HANDLE(dfs_journal, journal));
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

/* dfs_journal_visit_fn: Journal.collect(list, start, value). */
static int collect_entry(dfs_journal_entry kind, const void *value, void *ctx) {
    JNIEnv *env = dfsj_thread.env;
    (*env)->CallStaticVoidMethod(env, c_journal, m_collect, (jobject)ctx, (jboolean)(kind == DFS_JOURNAL_START),
                                 (jobject)value);
    return dfsj_upcall_failed(env);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_Journal_entries(JNIEnv *env, jclass cls, jlong journal, jobject out) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_journal_entries(DFSJ_HANDLE(dfs_journal, journal), collect_entry, out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_Journal_clear(JNIEnv *env, jclass cls, jlong journal) {
    (void)cls;
    dfs_status status = dfs_journal_clear(DFSJ_HANDLE(dfs_journal, journal));
    if (status != DFS_OK) dfsj_throw_status(env, status);
}

/* dfs_effect_fn visiting the replayed models: List.add(model). */
static int add_model(const void *model, void *ctx) {
    JNIEnv *env = dfsj_thread.env;
    (*env)->CallBooleanMethod(env, (jobject)ctx, m_list_add, (jobject)model);
    return dfsj_upcall_failed(env);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_Journal_replay(JNIEnv *env, jclass cls, jlong journal, jobject update,
                                                             jobject models) {
    (void)cls;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status =
        dfs_journal_replay(DFSJ_HANDLE(dfs_journal, journal), dfsj_type, dfsj_update_cb, update, add_model, models);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
}

JNIEXPORT void JNICALL Java_io_diffuser_loop_Journal_release(JNIEnv *env, jclass cls, jlong journal) {
    (void)cls;
    dfs_status status = dfs_journal_release(DFSJ_HANDLE(dfs_journal, journal));
    if (status != DFS_OK) dfsj_throw_status(env, status);
}
