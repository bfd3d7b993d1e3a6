/*
 * upcalls.c — the C callbacks through which the core calls user objects.
 *
 * Every user object given to the core (Effect, Function, DidChange, Source) is held by a
 * reference, the callback's context, that the callback's destroy function deletes: a
 * weak global reference (dfsj_hold_weak, dfsj_destroy_weak) for the nodes of diffusers
 * and fusers, whose Java objects hold their user objects, a global one (dfsj_hold,
 * dfsj_destroy_ref) for what only the core holds (a connection's effect). Each callback gets its JNIEnv from
 * threads.c, reaches the object through dfsj_target, makes one upcall, and checks for an
 * exception right after it (exceptions.c): a Java exception becomes the callback's
 * failure, and nothing else of the callback runs after it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "jni_glue.h"

static jclass c_effect, c_function, c_did_change, c_source, c_disposable, c_dispatch_effect;
static jmethodID m_effect_run, m_function_apply, m_did_change_test, m_source_connect,
    m_disposable_dispose, m_dispatch_effect_init;

int dfsj_upcalls_load(JNIEnv *env) {
    if (!(c_effect = dfsj_global_class(env, "io/diffuser/Effect")) ||
        !(c_function = dfsj_global_class(env, "io/diffuser/Function")) ||
        !(c_did_change = dfsj_global_class(env, "io/diffuser/diffuser/DidChange")) ||
        !(c_source = dfsj_global_class(env, "io/diffuser/fuser/Source")) ||
        !(c_disposable = dfsj_global_class(env, "io/diffuser/fuser/Disposable")) ||
        !(c_dispatch_effect = dfsj_global_class(env, "io/diffuser/internal/DispatchEffect")))
        return -1;
    if (!(m_effect_run = (*env)->GetMethodID(env, c_effect, "run", "(Ljava/lang/Object;)V")) ||
        !(m_function_apply = (*env)->GetMethodID(env, c_function, "apply",
                                                 "(Ljava/lang/Object;)Ljava/lang/Object;")) ||
        !(m_did_change_test = (*env)->GetMethodID(env, c_did_change, "test",
                                                  "(Ljava/lang/Object;Ljava/lang/Object;)Z")) ||
        !(m_source_connect = (*env)->GetMethodID(env, c_source, "connect",
                                                 "(Lio/diffuser/Effect;)Lio/diffuser/fuser/Disposable;")) ||
        !(m_disposable_dispose = (*env)->GetMethodID(env, c_disposable, "dispose", "()V")) ||
        !(m_dispatch_effect_init = (*env)->GetMethodID(env, c_dispatch_effect, "<init>", "(J)V")))
        return -1;
    return 0;
}

/* destroy of a callback held by dfsj_hold: drops the global reference. */
void dfsj_destroy_ref(void *ctx) {
    if (ctx == NULL) return;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->DeleteGlobalRef(u.env, (jobject)ctx);
    dfsj_env_leave(&u);
}

/* destroy of a callback held by dfsj_hold_weak: drops the weak global reference (which
 * may have been cleared: nothing else may be asked of it then). */
void dfsj_destroy_weak(void *ctx) {
    if (ctx == NULL) return;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->DeleteWeakGlobalRef(u.env, (jweak)ctx);
    dfsj_env_leave(&u);
}

/* The user object of a callback's context as a new local reference, which the callback
 * deletes after its upcall. A weak context whose object was collected gives NULL, with
 * an IllegalStateException as the callback's failure: its node was run after every Java
 * object holding it had become unreachable, which the Java API rules out (the diffuser
 * being run holds its tree, a queued run is pinned, see dfsj_pin, a connection holds its
 * fuser until its sources are disconnected, a loop's update bridge holds the fusers it
 * connects, a loop connection disposed from a callback pins its fuser; a connection's
 * dispose waits for an event inside its transforms, after which none of them runs); this
 * check makes a way around those holds fail instead of crash. */
jobject dfsj_target(JNIEnv *env, void *ctx) {
    jobject target = (*env)->NewLocalRef(env, (jobject)ctx);
    if (target == NULL && !(*env)->ExceptionCheck(env))
        dfsj_fail_with(env, dfsj_c_ise, "a diffuser or fuser was run after it had been garbage collected");
    else if (target == NULL)
        dfsj_upcall_failed(env);
    return target;
}

/* The global reference the core will own for `local`, which is deleted. NULL if none
 * could be made; the failure is then pending like an upcall's (an OutOfMemoryError). */
static jobject promote(JNIEnv *env, jobject local) {
    jobject global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    if (global == NULL) {
        if ((*env)->ExceptionCheck(env)) dfsj_upcall_failed(env);
        else dfsj_fail_with(env, dfsj_c_oome, "cannot make a global reference");
    }
    return global;
}

int dfsj_effect_cb(const void *value, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    int failed = 1;
    jobject target = dfsj_target(u.env, ctx);
    if (target != NULL) {
        (*u.env)->CallVoidMethod(u.env, target, m_effect_run, (jobject)value);
        failed = dfsj_upcall_failed(u.env);
        (*u.env)->DeleteLocalRef(u.env, target);
    }
    dfsj_env_leave(&u);
    return failed;
}

int dfsj_did_change_cb(const void *old_value, const void *new_value, void *ctx) {
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    int result = -1;
    jobject target = dfsj_target(u.env, ctx);
    if (target != NULL) {
        jboolean changed = (*u.env)->CallBooleanMethod(u.env, target, m_did_change_test,
                                                       (jobject)old_value, (jobject)new_value);
        result = dfsj_upcall_failed(u.env) ? -1 : (changed ? 1 : 0);
        (*u.env)->DeleteLocalRef(u.env, target);
    }
    dfsj_env_leave(&u);
    return result;
}

/* Function.apply of the object `find` gives for `ctx`; the result goes to the core as a
 * new global reference (the core releases it through the value type). */
static int transform(const void *value, const void **out, void *ctx, jobject (*find)(JNIEnv *, void *)) {
    *out = NULL;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    int failed = 1;
    jobject target = find(env, ctx);
    if (target != NULL) {
        jobject result = (*env)->CallObjectMethod(env, target, m_function_apply, (jobject)value);
        (*env)->DeleteLocalRef(env, target);
        if (dfsj_upcall_failed(env)) {
            failed = 1;
        } else if (result != NULL && (*out = promote(env, result)) == NULL) {
            failed = 1;
        } else {
            failed = 0;
        }
    }
    dfsj_env_leave(&u);
    return failed;
}

/* Function.apply: a fuser's extract or extractUnlessNull, a feedback's request selector. */
int dfsj_transform_cb(const void *value, const void **out, void *ctx) {
    return transform(value, out, ctx, dfsj_target);
}

/* The parts of a diffuser's maps are borrowed (dfs_diffuser_map_borrowed): each is the
 * local reference the upcall returned, valid until the native method running the
 * diffuser returns, which is as long as the core may use a part it does not keep, or
 * until its map's transform is called again in that native method (a later pass, of a
 * run queued from an effect: see dfsj_map_ctx), when it is dead. A gate that caches a
 * part retains it (a global reference, value_retain in values.c); the others cost no
 * global reference at all, which is what most parts of a run are: compared with their
 * cache and dropped.
 *
 * They need that native method below them on the same thread. Diffusers of this binding
 * are only ever run from Java (Native.diffuserRun), so this always holds; were it not, the
 * part would die with the callback's attachment, so the transform fails instead. */
static int borrowing_caller(void) {
    if (dfsj_thread.depth > 0) return 1;
    dfs_set_error("diffuser JNI: a map's transform was called without a Java caller to lend its result");
    return 0;
}

/* How many lent parts one EnsureLocalCapacity makes room for: a run of a wide tree lends
 * thousands, and a call per part cost about 1% of such a run. */
enum { ROOM_CHUNK = 256 };

/* Makes room in the frame for one more lent part and a few temporaries: the frame's
 * capacity is the total it must hold, counted in dfsj_thread.lent. The part that finds
 * the room used up asks for ROOM_CHUNK more, so that each part of the chunk finds room
 * for itself and 16 temporaries. The JVM caps a frame (HotSpot at 65,536 references
 * unless -XX:MaxJNILocalCapacity says otherwise); once it refuses, the frame's later
 * parts are spilled (see spill). 1 if the part fits in the frame, 0 if it must be
 * spilled. */
static int make_room(JNIEnv *env) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->room < 0) return 0;
    if (ts->lent >= ts->room) {
        jint wanted = ts->lent < INT32_MAX - ROOM_CHUNK - 16 ? ts->lent + ROOM_CHUNK : -1;
        if (wanted < 0 || (*env)->EnsureLocalCapacity(env, wanted + 16) != 0) {
            /* A JVM may also throw an OutOfMemoryError here; spilling answers it. */
            (*env)->ExceptionClear(env);
            ts->room = -1;
            return 0;
        }
        ts->room = wanted;
    }
    ts->lent++;
    return 1;
}

/* The part `local` as a global reference the innermost native method deletes when it
 * returns (dfsj_drop_spilled), for a frame that has no room left; `local` is deleted.
 * It takes the place `*slot` names if that is free (SIZE_MAX: none), and *slot is set to
 * where it went. NULL with the failure pending (an OutOfMemoryError) if it cannot be
 * kept. */
static jobject spill(JNIEnv *env, jobject local, size_t *slot) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (*slot < ts->spilled && ts->spill[*slot] == NULL) {
        jobject global = promote(env, local);
        ts->spill[*slot] = global;
        return global;
    }
    if (ts->spilled == ts->spill_cap) {
        size_t cap = ts->spill_cap ? ts->spill_cap * 2 : ROOM_CHUNK;
        jobject *grown = cap <= SIZE_MAX / sizeof *grown ? realloc(ts->spill, cap * sizeof *grown) : NULL;
        if (grown == NULL) {
            (*env)->DeleteLocalRef(env, local);
            dfsj_fail_with(env, dfsj_c_oome, "too many parts lent in one run");
            return NULL;
        }
        ts->spill = grown;
        ts->spill_cap = cap;
    }
    jobject global = promote(env, local);
    if (global != NULL) {
        *slot = ts->spilled;
        ts->spill[ts->spilled++] = global;
    }
    return global;
}

void dfsj_drop_spilled(dfsj_thread_state *ts, size_t mark) {
    while (ts->spilled > mark) {
        jobject part = ts->spill[--ts->spilled];
        if (part != NULL) (*ts->env)->DeleteGlobalRef(ts->env, part); /* NULL: freed by its map */
    }
    if (ts->depth == 1) {
        /* The outermost native method returns: the thread may never run another. */
        free(ts->spill);
        ts->spill = NULL;
        ts->spill_cap = 0;
    }
}

dfsj_map_ctx *dfsj_map_ctx_new(JNIEnv *env, jobject function) {
    dfsj_map_ctx *m = calloc(1, sizeof *m);
    if (m == NULL) {
        (*env)->ThrowNew(env, dfsj_c_oome, "cannot make a map's context");
        return NULL;
    }
    if ((m->function = dfsj_hold_weak(env, function)) == NULL) {
        free(m);
        return NULL;
    }
    m->spill_slot = SIZE_MAX;
    return m;
}

void dfsj_destroy_map(void *ctx) {
    dfsj_map_ctx *m = ctx;
    if (m == NULL) return;
    dfsj_destroy_weak(m->function);
    free(m);
}

/* Frees the part `m` lent last if the innermost frame of this thread holds it (see
 * dfsj_map_ctx), and marks this call as the frame's: the map's place in the frame's
 * spill array stays reserved for its next spilled part. */
static void free_last_part(JNIEnv *env, dfsj_map_ctx *m) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (m->uid != ts->uid || m->frame != ts->frame) {
        /* Lent in another frame, which holds it or freed it; its spill slot is not ours. */
        m->spill_slot = SIZE_MAX;
        m->uid = ts->uid;
        m->frame = ts->frame;
    } else if (m->last != NULL && m->last_spilled) {
        (*env)->DeleteGlobalRef(env, m->last);
        ts->spill[m->spill_slot] = NULL;
    } else if (m->last != NULL) {
        (*env)->DeleteLocalRef(env, m->last);
        ts->lent--;
    }
    m->last = NULL;
    m->last_spilled = 0;
}

/* Function.apply for a map: the result is a borrowed part (see above). A part spilled
 * from a full frame is made in a frame of its own, so that the full one never holds more
 * than the JVM granted. */
int dfsj_part_cb(const void *value, const void **out, void *ctx) {
    *out = NULL;
    if (!borrowing_caller()) return -1;
    dfsj_map_ctx *m = ctx;
    JNIEnv *env = dfsj_thread.env;
    free_last_part(env, m);
    jobject result;
    if (make_room(env)) {
        jobject target = dfsj_target(env, m->function);
        result = target == NULL ? NULL : (*env)->CallObjectMethod(env, target, m_function_apply, (jobject)value);
        int failed = target == NULL || dfsj_upcall_failed(env);
        if (target != NULL) (*env)->DeleteLocalRef(env, target);
        if (failed || result == NULL) dfsj_thread.lent--; /* no part took the room */
        if (failed) return 1;
    } else {
        if ((*env)->PushLocalFrame(env, 16) != 0) {
            if (!dfsj_upcall_failed(env)) dfsj_fail_with(env, dfsj_c_oome, "cannot make a local frame for a part");
            return -1;
        }
        jobject target = dfsj_target(env, m->function);
        result = target == NULL ? NULL : (*env)->CallObjectMethod(env, target, m_function_apply, (jobject)value);
        int failed = target == NULL || dfsj_upcall_failed(env);
        if (!failed && result != NULL && (result = spill(env, result, &m->spill_slot)) == NULL) failed = 1;
        (*env)->PopLocalFrame(env, NULL);
        if (failed) return 1;
        m->last_spilled = result != NULL;
    }
    m->last = result;
    *out = result;
    return 0;
}

/* Source.connect(effect), with an io.diffuser.internal.DispatchEffect wrapping the
 * dispatch; the returned Disposable is the connection. */
int dfsj_source_connect_cb(dfs_dispatch *dispatch, void *ctx, void **connection) {
    *connection = NULL;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    int failed = 1;
    jobject effect = (*env)->NewObject(env, c_dispatch_effect, m_dispatch_effect_init,
                                       (jlong)(intptr_t)dispatch);
    if (dfsj_upcall_failed(env)) goto done;
    jobject target = dfsj_target(env, ctx);
    if (target == NULL) {
        (*env)->DeleteLocalRef(env, effect);
        goto done;
    }
    jobject disposable = (*env)->CallObjectMethod(env, target, m_source_connect, effect);
    (*env)->DeleteLocalRef(env, effect);
    (*env)->DeleteLocalRef(env, target);
    if (dfsj_connect_failed(env)) goto done;
    if (disposable == NULL) {
        (*env)->ThrowNew(env, dfsj_c_npe, "Source.connect returned null instead of a Disposable");
        dfsj_connect_failed(env);
        goto done;
    }
    if ((*connection = promote(env, disposable)) == NULL) goto done;
    failed = 0;
done:
    dfsj_env_leave(&u);
    return failed;
}

/* Disposable.dispose() of a source connection. The C ABI cannot report a failure here;
 * a Throwable is kept for the Java caller that throws it, or else handed to the thread's
 * uncaught exception handler (dfsj_disconnect_failed). */
void dfsj_source_disconnect_cb(void *connection, void *ctx) {
    (void)ctx;
    if (connection == NULL) return;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->CallVoidMethod(u.env, (jobject)connection, m_disposable_dispose);
    dfsj_disconnect_failed(u.env);
    (*u.env)->DeleteGlobalRef(u.env, (jobject)connection);
    dfsj_env_leave(&u);
}
