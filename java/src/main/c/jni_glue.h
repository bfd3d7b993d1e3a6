/*
 * jni_glue.h — what the files of the JNI glue share, and nothing else.
 *
 * The glue of package io.diffuser is split by reason to change (diffuser_jni.c lists
 * the files). This header declares, per file, the few names the others use; each is
 * prefixed dfsj_ and hidden: libdiffuser_jni.so exports only JNI_OnLoad and the
 * JNIEXPORT natives, so these names cannot clash with anything loaded next to it.
 *
 * It also defines the per-thread state that ties the files together: the native method
 * running on the thread (diffuser_jni.c brackets every core call with dfsj_enter and
 * dfsj_leave), the Throwable a callback kept for it (exceptions.c), its JNIEnv
 * (threads.c), the parts lent in its frame (upcalls.c) and the objects pinned for work
 * queued during it (pins.c).
 */
#ifndef DFSJ_JNI_GLUE_H
#define DFSJ_JNI_GLUE_H

#include <jni.h>
#include <stddef.h>
#include <stdint.h>

#include "diffuser.h"

#define DFSJ_JNI_VERSION JNI_VERSION_1_8

#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------------------------
 * Per-thread state (defined in threads.c)
 * ------------------------------------------------------------------------------------ */

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
     *          innermost native method's frame (see borrowing_caller in upcalls.c);
     * room:    how many of them that frame was made room for (EnsureLocalCapacity), or
     *          -1 once the JVM refused it more: later parts are spilled;
     * spill:   the parts lent as global references instead (spilled of them, in an array
     *          of spill_cap), deleted when the native method that lent them returns. */
    jint lent;
    jint room;
    jobject *spill;
    size_t spilled, spill_cap;
    /* uid:     the thread's number, unique in the process (0 until its first native call);
     * frame:   the number of the innermost native method running on the thread (frames
     *          counts them), so that (uid, frame) names one frame: a map's transform
     *          frees the part it lent last only in the frame that holds it (see
     *          dfsj_map_ctx). */
    uint64_t uid;
    uint64_t frame, frames;
    /* pins:    the Java diffusers whose runs were asked for from inside another native
     *          method of the thread (a run from an effect, which the core may queue),
     *          and the Java fusers of loop connections disposed there (whose sources the
     *          core disconnects once the delivery under way ends), as global references
     *          in a table keyed by their handles (pinned of pin_cap slots, a power of
     *          two; each object once), deleted when the outermost native method returns:
     *          the queued runs and the disconnections are done by then, and each of
     *          these objects holds what its nodes call (see dfsj_hold_weak). A run that
     *          the core did not queue drops the pin it made as soon as it returns. */
    struct dfsj_pin *pins;
    size_t pinned, pin_cap;
    /* refusal: the Throwable of the last Source.connect that failed under a native
     *          method of the thread, as a global reference, for a loop's inspector: a
     *          source that refuses a loop's connection is reported on the same thread
     *          right after (DFS_TRACE_SOURCE_FAILED, see inspect_cb in loop_jni.c), which
     *          takes it. Deleted when the outermost native method returns, so that a
     *          refusal no inspector took (Fuser.connect's, a loop without one) is not
     *          kept. */
    jthrowable refusal;
    /* failure: the Bridges.Failure of the last loop callback that failed on the thread
     *          (LoopNative.keepFailure), as a global reference, for the inspector's trace
     *          of that failure, which the core reports on the same thread right after
     *          (inspect_cb in loop_jni.c takes it). Kept here and not in a Java
     *          ThreadLocal: on a thread the JVM does not know, each callback attaches
     *          the thread anew, as another java.lang.Thread, and the trace would not find
     *          it there. Deleted when the outermost native method returns, if not taken;
     *          on such a thread, by the next failure or the trace that takes it. */
    jobject failure;
    /* collects_disconnects: whether the innermost native method throws what a source's
     *          Disposable.dispose() threw during it (a loop's stop, dispose and release, a
     *          connection's dispose, an emission: see dfsj_collect_disconnects); under
     *          any other, or none, such a Throwable goes to the thread's uncaught
     *          exception handler at once (dfsj_source_disconnect_cb), since nothing would
     *          throw it. */
    int collects_disconnects;
} dfsj_thread_state;

/* A slot of the pin table: empty while ref is NULL. */
struct dfsj_pin {
    jlong key;
    jobject ref;
    /* kept: a queued run (or dfsj_keep's caller) needs the object until the outermost
     * native method returns: dfsj_unpin leaves it. */
    int kept;
};

/* initial-exec: the state is read on every callback, and the default model for a
 * shared library would look it up through __tls_get_addr each time. The block is a few
 * words, well within the static TLS that glibc reserves for libraries loaded later. */
extern __thread __attribute__((tls_model("initial-exec"))) dfsj_thread_state dfsj_thread;

/* A native method's bracket around core calls: it gets the Throwables of the callbacks
 * it causes, and leaves an outer call's Throwable (this is a nested call from inside an
 * upcall) untouched. */
typedef struct {
    jthrowable saved;
    jint saved_lent, saved_room;
    size_t saved_spilled;
    uint64_t saved_frame;
    int saved_collects;
} dfsj_entry;

/* The next thread number (threads.c). */
uint64_t dfsj_next_uid(void);

/* Deletes the parts spilled since `mark` (upcalls.c); the out-of-line half of dfsj_leave. */
void dfsj_drop_spilled(dfsj_thread_state *ts, size_t mark);
/* Deletes the pins (pins.c): dfsj_leave of the outermost native method. */
void dfsj_drop_pins(dfsj_thread_state *ts);
/* The global reference a slot of the thread keeps (its refusal, its failure) as a local
 * reference, or NULL if none; the slot keeps nothing after. */
static inline jobject dfsj_take_kept(JNIEnv *env, jobject *slot) {
    if (*slot == NULL) return NULL;
    jobject local = (*env)->NewLocalRef(env, *slot);
    (*env)->DeleteGlobalRef(env, *slot);
    *slot = NULL;
    return local;
}

/* Deletes the global reference a slot of the thread keeps, if any: dfsj_leave of the
 * outermost native method, for what nothing took. */
static inline void dfsj_drop_kept(JNIEnv *env, jobject *slot) {
    if (*slot == NULL) return;
    (*env)->DeleteGlobalRef(env, *slot);
    *slot = NULL;
}

static inline void dfsj_enter(dfsj_entry *e, JNIEnv *env) {
    dfsj_thread_state *ts = &dfsj_thread;
    e->saved = ts->pending;
    ts->pending = NULL;
    e->saved_lent = ts->lent;
    e->saved_room = ts->room;
    e->saved_spilled = ts->spilled;
    ts->lent = 0;
    ts->room = 0;
    ts->depth++;
    ts->env = env;
    if (ts->uid == 0) ts->uid = dfsj_next_uid();
    e->saved_frame = ts->frame;
    ts->frame = ++ts->frames;
    e->saved_collects = ts->collects_disconnects;
    ts->collects_disconnects = 0;
}

/* After dfsj_enter, for a native method whose Java caller gets what a source's
 * Disposable.dispose() threw during it (dfsj_finish with rethrow_on_ok). */
static inline void dfsj_collect_disconnects(void) { dfsj_thread.collects_disconnects = 1; }

static inline jthrowable dfsj_leave(dfsj_entry *e) {
    dfsj_thread_state *ts = &dfsj_thread;
    jthrowable mine = ts->pending;
    ts->pending = e->saved;
    if (ts->spilled != e->saved_spilled || (ts->spill != NULL && ts->depth == 1))
        dfsj_drop_spilled(ts, e->saved_spilled);
    if (ts->pins != NULL && ts->depth == 1) dfsj_drop_pins(ts);
    if (ts->depth == 1) {
        dfsj_drop_kept(ts->env, &ts->refusal);
        dfsj_drop_kept(ts->env, &ts->failure);
    }
    ts->lent = e->saved_lent;
    ts->room = e->saved_room;
    ts->frame = e->saved_frame;
    ts->collects_disconnects = e->saved_collects;
    ts->depth--;
    return mine;
}

/* ------------------------------------------------------------------------------------
 * threads.c: the calling thread's JNIEnv
 * ------------------------------------------------------------------------------------ */

extern JavaVM *dfsj_vm;

typedef struct {
    JNIEnv *env;
    int attached;
} dfsj_upcall_env;

/* Before a callback talks to Java: 0 with u->env set, or -1 (dfs_last_error set). */
int dfsj_env_enter(dfsj_upcall_env *u);
/* After it: detaches the thread again if dfsj_env_enter attached it. */
void dfsj_env_leave(dfsj_upcall_env *u);

/* ------------------------------------------------------------------------------------
 * exceptions.c: upcall failures, kept Throwables, statuses as exceptions
 * ------------------------------------------------------------------------------------ */

extern jclass dfsj_c_npe, dfsj_c_oome, dfsj_c_ise;

int dfsj_exceptions_load(JNIEnv *env);
int dfsj_upcall_failed(JNIEnv *env);
int dfsj_connect_failed(JNIEnv *env);
int dfsj_disconnect_failed(JNIEnv *env);
jthrowable dfsj_take_refusal(JNIEnv *env);
void dfsj_fail_with(JNIEnv *env, jclass cls, const char *message);
void dfsj_throw_status(JNIEnv *env, dfs_status status);
/* Text between Java Strings and the core's standard UTF-8 (never JNI's modified UTF-8):
 * every String the glue hands to the core, or makes of the core's text, goes through
 * these. */
int dfsj_set_error_text(JNIEnv *env, jstring text);
jstring dfsj_new_string(JNIEnv *env, const char *utf8);
void dfsj_throw_text(JNIEnv *env, jclass cls, const char *utf8);
void dfsj_finish(JNIEnv *env, dfs_status status, jthrowable thrown, int rethrow_on_ok);
jint dfsj_finish_refusable(JNIEnv *env, dfs_status status, jthrowable thrown);

/* ------------------------------------------------------------------------------------
 * values.c: the value type of Java objects
 * ------------------------------------------------------------------------------------ */

extern dfs_type *dfsj_type;

int dfsj_values_load(JNIEnv *env);
dfs_status dfsj_values_create_type(void);

/* ------------------------------------------------------------------------------------
 * pins.c: the Java objects a native method keeps for work the core queued during it
 * ------------------------------------------------------------------------------------ */

int dfsj_pin(JNIEnv *env, jlong key, jobject object);
void dfsj_unpin(JNIEnv *env, jlong key);
void dfsj_keep(jlong key);

/* ------------------------------------------------------------------------------------
 * upcalls.c: the callbacks that call user objects
 * ------------------------------------------------------------------------------------ */

int dfsj_upcalls_load(JNIEnv *env);
void dfsj_destroy_ref(void *ctx);
void dfsj_destroy_weak(void *ctx);
jobject dfsj_target(JNIEnv *env, void *ctx);
int dfsj_effect_cb(const void *value, void *ctx);
int dfsj_did_change_cb(const void *old_value, const void *new_value, void *ctx);
int dfsj_transform_cb(const void *value, const void **out, void *ctx);
int dfsj_part_cb(const void *value, const void **out, void *ctx);

/* The context of a map's transform (dfsj_part_cb): the Function, held weakly like every
 * user object of a node, and the part it lent last. A part is dead once the transform
 * is called again (the core lends a part to the map's child only, and a map never runs
 * inside its own child), so the transform frees its last part then, if that part is
 * still held by the innermost frame of the thread: the passes of runs queued from an
 * effect all lend into the frame of the outermost run, which would otherwise hold every
 * pass's parts until it returns. */
typedef struct {
    jweak function;
    jobject last;        /* a local reference of the frame, or a global one it spilled */
    int last_spilled;    /* whether `last` is in the spill array, at spill_slot */
    uint64_t uid, frame; /* the thread and the frame of the transform's last call */
    size_t spill_slot;   /* the place in that frame's spill array the map's parts take
                            (SIZE_MAX: none yet), free while `last` is not spilled */
} dfsj_map_ctx;

/* A map's context for `function` (made weak here): NULL with an exception pending if it
 * cannot be made. Its destroy is dfsj_destroy_map. */
dfsj_map_ctx *dfsj_map_ctx_new(JNIEnv *env, jobject function);
void dfsj_destroy_map(void *ctx);
int dfsj_source_connect_cb(dfs_dispatch *dispatch, void *ctx, void **connection);
void dfsj_source_disconnect_cb(void *connection, void *ctx);

/* ------------------------------------------------------------------------------------
 * loop_jni.c: the update of a loop, also a journal's replay
 * ------------------------------------------------------------------------------------ */

/* dfs_update_fn over a Bridges.UpdateBridge (resolved by LoopNative.load()). */
int dfsj_update_cb(const void *model, const void *event, dfs_next *next, void *ctx);

/* ------------------------------------------------------------------------------------
 * Handles and references, for every file of natives
 * ------------------------------------------------------------------------------------ */

/* A handle of diffuser.h as the Java long that holds it, and back. */
#define DFSJ_HANDLE(type, handle) ((type *)(intptr_t)(handle))
#define DFSJ_LONG(pointer) ((jlong)(intptr_t)(pointer))

/* A new global reference to a user object a callback context will hold; NULL with an
 * exception pending if none could be made. For what must stay reachable for as long as
 * the core holds it, whoever else holds it: a connection's effect, a loop's callbacks. */
static inline jobject dfsj_hold(JNIEnv *env, jobject object) {
    jobject ref = (*env)->NewGlobalRef(env, object);
    if (ref == NULL && !(*env)->ExceptionCheck(env))
        (*env)->ThrowNew(env, dfsj_c_oome, "cannot make a global reference");
    return ref;
}

/* A new weak global reference to a user object of a diffuser's or a fuser's node, whose
 * Java object holds the same user object (and its children's Java objects) strongly: a
 * node is run only through its Java object, so the Java objects decide reachability, as
 * in a library written in Java. A global reference would be a GC root: an effect that
 * captures the object holding its diffuser would keep both alive for good. Callbacks
 * reach the object through dfsj_target; their destroy is dfsj_destroy_weak. NULL with
 * an exception pending if none could be made. */
static inline jobject dfsj_hold_weak(JNIEnv *env, jobject object) {
    jobject ref = (*env)->NewWeakGlobalRef(env, object);
    if (ref == NULL && !(*env)->ExceptionCheck(env))
        (*env)->ThrowNew(env, dfsj_c_oome, "cannot make a weak global reference");
    return ref;
}

/* ------------------------------------------------------------------------------------
 * diffuser_jni.c: loading
 * ------------------------------------------------------------------------------------ */

/* A class as a global reference, for the *_load functions that JNI_OnLoad calls; NULL
 * (with the exception pending) if it cannot be found. */
jclass dfsj_global_class(JNIEnv *env, const char *name);

#pragma GCC visibility pop

#endif
