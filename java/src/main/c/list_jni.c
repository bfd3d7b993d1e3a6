/*
 * list_jni.c — the JNI glue of the keyed list diff (package io.diffuser.list) and of the
 * intoList node (Diffuser.intoList).
 *
 * io.diffuser.internal.ListNative.diff calls dfs_list_diff_compute once on keys and
 * content fingerprints given as long[] (ListDiff.ofKeys), and ListNative.diffRead calls
 * dfs_list_diff_read once on two Java lists read through a ListReader (ListDiff.of and
 * byLongKey, whose key and content functions are then upcalls under that native
 * method, a Throwable of theirs reaching the caller unchanged). Each returns every array
 * of the result (the diff, and the batch and the script when asked for) as one int[][].
 * They only translate: the pairing, the moves, the batch and the script are all
 * computed by libdiffuser.so. Failing statuses become NullPointerException,
 * IllegalArgumentException, OutOfMemoryError or IllegalStateException with
 * dfs_last_error().
 *
 * ListNative.intoList makes a dfs_diffuser_into_list node over Java lists (values of the
 * binding's dfs_type, values.c). Its dfs_list_reader calls the methods of an
 * io.diffuser.internal.ListReader (count, key, sameKey for key objects, sameContent) and
 * its sink builds the io.diffuser.list.ListDiff of the changes (the same int[][], through
 * ListDiff's constructor) and calls ListSink.apply(changes, newList, isFirst). The node is run by
 * Native.diffuserRun like any other, so these callbacks are upcalls of that run: they go
 * through threads.c and exceptions.c (jni_glue.h) like those of upcalls.c, and a Throwable
 * reaches the caller of run unchanged. When they are called and what the node keeps is
 * the core's business.
 *
 * The natives are found by the JVM under their JNI names (JNIEXPORT); JNI_OnLoad
 * (diffuser_jni.c) loads the library and makes the value type. The method IDs of the
 * intoList callbacks are resolved when a node is made and kept in its contexts.
 */
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "jni_glue.h"
#include "list_jni.h"

void dfsj_list_throw(JNIEnv *env, const char *class_name, const char *message) {
    jclass cls = (*env)->FindClass(env, class_name);
    if (cls == NULL) return;
    dfsj_throw_text(env, cls, message);
    (*env)->DeleteLocalRef(env, cls);
}

void dfsj_list_throw_status(JNIEnv *env, dfs_status status) {
    const char *cls;
    switch (status) {
    case DFS_ERR_NULL: cls = "java/lang/NullPointerException"; break;
    case DFS_ERR_ARGUMENT:
    case DFS_ERR_TYPE: cls = "java/lang/IllegalArgumentException"; break;
    case DFS_ERR_MEMORY: cls = "java/lang/OutOfMemoryError"; break;
    default: cls = "java/lang/IllegalStateException"; break;
    }
    char message[1024];
    snprintf(message, sizeof message, "%s: %s", dfs_status_name(status), dfs_last_error());
    dfsj_list_throw(env, cls, message);
}

/* Stores `count` values as a new int[] at `index` of `out`; an empty array for none.
 * Returns 0 if an exception is pending. */
static int put(JNIEnv *env, jobjectArray out, jsize index, const int32_t *values, int32_t count) {
    jintArray array = (*env)->NewIntArray(env, count);
    if (array == NULL) return 0;
    if (count > 0) (*env)->SetIntArrayRegion(env, array, 0, count, (const jint *)values);
    (*env)->SetObjectArrayElement(env, out, index, array);
    (*env)->DeleteLocalRef(env, array);
    return !(*env)->ExceptionCheck(env);
}

/* The arrays of `d` as a new int[][] laid out as OUT_*: the batch's only with a batch flag
 * and the script's only with DFS_LIST_SCRIPT (null otherwise). NULL with an exception
 * pending if the JVM is out of memory. `int_array` is the class of int[]. */
jobjectArray dfsj_list_arrays(JNIEnv *env, const dfs_list_diff *d, int flags, jclass int_array) {
    jobjectArray out = (*env)->NewObjectArray(env, OUT_COUNT, int_array, NULL);
    if (out == NULL) return NULL;
    int32_t header[3] = {d->old_count, d->new_count, d->has_duplicates};
    int batch = (flags & (DFS_LIST_BATCH | DFS_LIST_BATCH_MOVE_THEN_RELOAD)) != 0;
    int stored = put(env, out, OUT_HEADER, header, 3) && put(env, out, OUT_DELETES, d->deletes, d->delete_count) &&
                 put(env, out, OUT_INSERTS, d->inserts, d->insert_count) &&
                 put(env, out, OUT_MOVES, d->moves, 2 * d->move_count) &&
                 put(env, out, OUT_UPDATES, d->updates, 2 * d->update_count) &&
                 put(env, out, OUT_OLD_TO_NEW, d->old_to_new, d->old_count) &&
                 put(env, out, OUT_NEW_TO_OLD, d->new_to_old, d->new_count);
    if (stored && batch) {
        stored = put(env, out, OUT_BATCH_DELETES, d->batch_deletes, d->batch_delete_count) &&
                 put(env, out, OUT_BATCH_INSERTS, d->batch_inserts, d->batch_insert_count) &&
                 put(env, out, OUT_BATCH_MOVES, d->batch_moves, 2 * d->batch_move_count) &&
                 put(env, out, OUT_BATCH_RELOADS, d->batch_reloads, d->batch_reload_count) &&
                 put(env, out, OUT_BATCH_RELOADS_AFTER_MOVES, d->batch_reloads_after_moves,
                     d->batch_reload_after_move_count);
    }
    if (stored && (flags & DFS_LIST_SCRIPT)) stored = put(env, out, OUT_SCRIPT, d->script, 3 * d->script_count);
    if (!stored) {
        (*env)->DeleteLocalRef(env, out);
        return NULL;
    }
    return out;
}

/* The elements of a long[] (NULL for a null array), and its length in *count. */
jlong *dfsj_list_longs(JNIEnv *env, jlongArray array, jsize *count) {
    *count = 0;
    if (array == NULL) return NULL;
    *count = (*env)->GetArrayLength(env, array);
    return (*env)->GetLongArrayElements(env, array, NULL);
}

JNIEXPORT jobjectArray JNICALL Java_io_diffuser_internal_ListNative_diff(
    JNIEnv *env, jclass cls, jlongArray old_keys, jlongArray old_contents, jlongArray new_keys,
    jlongArray new_contents, jint flags) {
    (void)cls;
    if (old_keys == NULL || new_keys == NULL) {
        dfsj_list_throw(env, "java/lang/NullPointerException", "keys");
        return NULL;
    }
    jsize old_count, new_count, old_content_count, new_content_count;
    jlong *ok = dfsj_list_longs(env, old_keys, &old_count);
    jlong *nk = dfsj_list_longs(env, new_keys, &new_count);
    jlong *oc = dfsj_list_longs(env, old_contents, &old_content_count);
    jlong *nc = dfsj_list_longs(env, new_contents, &new_content_count);
    jobjectArray out = NULL;
    if ((old_count > 0 && ok == NULL) || (new_count > 0 && nk == NULL) ||
        (old_content_count > 0 && oc == NULL) || (new_content_count > 0 && nc == NULL)) {
        if (!(*env)->ExceptionCheck(env)) dfsj_list_throw(env, "java/lang/OutOfMemoryError", "list keys");
        goto done;
    }
    if ((old_contents != NULL && old_content_count != old_count) ||
        (new_contents != NULL && new_content_count != new_count)) {
        dfsj_list_throw(env, "java/lang/IllegalArgumentException", "one content fingerprint per key is needed");
        goto done;
    }

    /* jlong and uint64_t have the same size and representation. */
    dfs_list_side o = {(const uint64_t *)ok, (const uint64_t *)oc, (size_t)old_count};
    dfs_list_side n = {(const uint64_t *)nk, (const uint64_t *)nc, (size_t)new_count};
    dfs_list_diff d;
    dfs_status status = dfs_list_diff_compute(&o, &n, NULL, NULL, (unsigned int)flags, &d);
    if (status != DFS_OK) {
        dfsj_list_throw_status(env, status);
        dfs_list_diff_free(&d);
        goto done;
    }

    jclass int_array = (*env)->FindClass(env, "[I");
    if (int_array != NULL) {
        out = dfsj_list_arrays(env, &d, flags, int_array);
        (*env)->DeleteLocalRef(env, int_array);
    }
    dfs_list_diff_free(&d);

done:
    if (ok != NULL) (*env)->ReleaseLongArrayElements(env, old_keys, ok, JNI_ABORT);
    if (nk != NULL) (*env)->ReleaseLongArrayElements(env, new_keys, nk, JNI_ABORT);
    if (oc != NULL) (*env)->ReleaseLongArrayElements(env, old_contents, oc, JNI_ABORT);
    if (nc != NULL) (*env)->ReleaseLongArrayElements(env, new_contents, nc, JNI_ABORT);
    return out;
}

/* ------------------------------------------------------------------------------------
 * The intoList node: ListNative.intoList
 * ------------------------------------------------------------------------------------ */

typedef dfsj_list_reader_ctx reader_ctx;

/* The sink's context: the io.diffuser.list.ListSink, and what makes a ListDiff. */
typedef struct {
    jobject sink;        /* weak global reference: the Java Diffuser holds the sink */
    jmethodID apply;
    jclass list_diff;    /* global reference */
    jmethodID list_diff_init;
    jclass int_array;    /* global reference */
    int flags;
} sink_ctx;

static int reader_count(const void *list, size_t *count, void *ctx) {
    reader_ctx *r = ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    jobject reader = dfsj_target(u.env, r->reader);
    jint n = reader == NULL ? 0 : (*u.env)->CallIntMethod(u.env, reader, r->count, (jobject)list);
    int failed = reader == NULL || dfsj_upcall_failed(u.env);
    if (reader != NULL) (*u.env)->DeleteLocalRef(u.env, reader);
    dfsj_env_leave(&u);
    if (failed) return 1;
    if (n < 0) {
        dfs_set_error("diffuser JNI: a list's size() is negative");
        return 1;
    }
    *count = (size_t)n;
    return 0;
}

static int reader_key(const void *list, int32_t index, uint64_t *key, void *ctx) {
    reader_ctx *r = ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    jobject reader = dfsj_target(u.env, r->reader);
    jlong k = reader == NULL ? 0 : (*u.env)->CallLongMethod(u.env, reader, r->key, (jobject)list, (jint)index);
    int failed = reader == NULL || dfsj_upcall_failed(u.env);
    if (reader != NULL) (*u.env)->DeleteLocalRef(u.env, reader);
    dfsj_env_leave(&u);
    *key = (uint64_t)k;
    return failed;
}

static int reader_same_key(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    reader_ctx *r = ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    jobject reader = dfsj_target(u.env, r->reader);
    jboolean same = reader == NULL ? JNI_FALSE
                                   : (*u.env)->CallBooleanMethod(u.env, reader, r->same_key, (jobject)a, (jint)i, (jobject)b, (jint)j);
    int result = reader == NULL || dfsj_upcall_failed(u.env) ? -1 : (same ? 1 : 0);
    if (reader != NULL) (*u.env)->DeleteLocalRef(u.env, reader);
    dfsj_env_leave(&u);
    return result;
}

static int reader_same_content(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    reader_ctx *r = ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    jobject reader = dfsj_target(u.env, r->reader);
    jboolean same = reader == NULL ? JNI_FALSE
                                   : (*u.env)->CallBooleanMethod(u.env, reader, r->same_content, (jobject)a, (jint)i, (jobject)b, (jint)j);
    int result = reader == NULL || dfsj_upcall_failed(u.env) ? -1 : (same ? 1 : 0);
    if (reader != NULL) (*u.env)->DeleteLocalRef(u.env, reader);
    dfsj_env_leave(&u);
    return result;
}

dfs_list_reader dfsj_list_reader_functions(int key_objects) {
    dfs_list_reader functions = {reader_count, reader_key, key_objects ? reader_same_key : NULL, reader_same_content,
                                 NULL};
    return functions;
}

/* The changes as a ListDiff (the arrays copied out of the borrowed diff), then
 * sink.apply(changes, newList). Every local reference made here is deleted: the run's
 * native frame holds only what the core lends. */
static int sink_apply(const dfs_list_diff *changes, const void *new_list, int is_first, void *ctx) {
    sink_ctx *k = ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    int failed = 1;
    jobject diff = NULL;
    jobject sink = dfsj_target(env, k->sink);
    if (sink == NULL) goto done;
    jobjectArray arrays = dfsj_list_arrays(env, changes, k->flags, k->int_array);
    if (arrays == NULL) {
        if (!dfsj_upcall_failed(env)) dfsj_fail_with(env, dfsj_c_oome, "cannot make the arrays of a list diff");
        goto done;
    }
    diff = (*env)->NewObject(env, k->list_diff, k->list_diff_init, arrays,
                             (jboolean)((k->flags & DFS_LIST_BATCH_MOVE_THEN_RELOAD) != 0));
    (*env)->DeleteLocalRef(env, arrays);
    if (dfsj_upcall_failed(env)) goto done;
    (*env)->CallVoidMethod(env, sink, k->apply, diff, (jobject)new_list, (jboolean)(is_first != 0));
    failed = dfsj_upcall_failed(env);
done:
    if (diff != NULL) (*env)->DeleteLocalRef(env, diff);
    if (sink != NULL) (*env)->DeleteLocalRef(env, sink);
    dfsj_env_leave(&u);
    return failed;
}

static void reader_destroy(void *ctx) {
    reader_ctx *r = ctx;
    dfsj_destroy_weak(r->reader);
    free(r);
}

static void sink_destroy(void *ctx) {
    sink_ctx *k = ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u) == 0) {
        if (k->sink) (*u.env)->DeleteWeakGlobalRef(u.env, k->sink);
        if (k->list_diff) (*u.env)->DeleteGlobalRef(u.env, k->list_diff);
        if (k->int_array) (*u.env)->DeleteGlobalRef(u.env, k->int_array);
        dfsj_env_leave(&u);
    }
    free(k);
}

/* A global reference to the class `name`; NULL with an exception pending if none. */
static jclass global_class(JNIEnv *env, const char *name) {
    jclass local = (*env)->FindClass(env, name);
    if (local == NULL) return NULL;
    jclass global = (jclass)(*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    if (global == NULL && !(*env)->ExceptionCheck(env)) dfsj_list_throw(env, "java/lang/OutOfMemoryError", "global reference");
    return global;
}

int dfsj_list_reader_methods(JNIEnv *env, dfsj_list_reader_ctx *r) {
    jclass reader_class = (*env)->FindClass(env, "io/diffuser/internal/ListReader");
    if (reader_class == NULL) return -1;
    r->count = (*env)->GetMethodID(env, reader_class, "count", "(Ljava/lang/Object;)I");
    if (r->count) r->key = (*env)->GetMethodID(env, reader_class, "key", "(Ljava/lang/Object;I)J");
    if (r->key) r->same_key = (*env)->GetMethodID(env, reader_class, "sameKey", "(Ljava/lang/Object;ILjava/lang/Object;I)Z");
    if (r->same_key)
        r->same_content = (*env)->GetMethodID(env, reader_class, "sameContent", "(Ljava/lang/Object;ILjava/lang/Object;I)Z");
    if (r->same_content)
        r->items = (*env)->GetMethodID(env, reader_class, "items", "(Ljava/lang/Object;I)Ljava/lang/Object;");
    (*env)->DeleteLocalRef(env, reader_class);
    return r->items == NULL ? -1 : 0;
}

/* Fills the contexts of a node: 0, or -1 with an exception pending. */
static int contexts(JNIEnv *env, jobject reader, jobject sink, jint flags, reader_ctx *r, sink_ctx *k) {
    if (dfsj_list_reader_methods(env, r)) return -1;

    jclass sink_class = (*env)->FindClass(env, "io/diffuser/list/ListSink");
    if (sink_class == NULL) return -1;
    k->apply = (*env)->GetMethodID(env, sink_class, "apply", "(Lio/diffuser/list/ListDiff;Ljava/util/List;Z)V");
    (*env)->DeleteLocalRef(env, sink_class);
    if (k->apply == NULL) return -1;
    if (!(k->list_diff = global_class(env, "io/diffuser/list/ListDiff"))) return -1;
    /* ListDiff's own (private) constructor from the arrays: JNI may call it. */
    if (!(k->list_diff_init = (*env)->GetMethodID(env, k->list_diff, "<init>", "([[IZ)V"))) return -1;
    if (!(k->int_array = global_class(env, "[I"))) return -1;
    k->flags = (int)flags;

    if (!(r->reader = (*env)->NewWeakGlobalRef(env, reader)) || !(k->sink = (*env)->NewWeakGlobalRef(env, sink))) {
        if (!(*env)->ExceptionCheck(env)) dfsj_list_throw(env, "java/lang/OutOfMemoryError", "weak global reference");
        return -1;
    }
    return 0;
}

JNIEXPORT jlong JNICALL Java_io_diffuser_internal_ListNative_intoList(JNIEnv *env, jclass cls, jobject reader,
                                                                    jboolean key_objects, jobject sink, jint flags) {
    (void)cls;
    if (reader == NULL || sink == NULL) {
        dfsj_list_throw(env, "java/lang/NullPointerException", reader == NULL ? "reader" : "sink");
        return 0;
    }
    reader_ctx *r = calloc(1, sizeof *r);
    sink_ctx *k = calloc(1, sizeof *k);
    if (r == NULL || k == NULL || contexts(env, reader, sink, flags, r, k)) {
        if (!(*env)->ExceptionCheck(env)) dfsj_list_throw(env, "java/lang/OutOfMemoryError", "intoList");
        /* Nothing was handed to the core yet: drop what was made, keeping the exception. */
        jthrowable pending = (*env)->ExceptionOccurred(env);
        (*env)->ExceptionClear(env);
        if (r) reader_destroy(r);
        if (k) sink_destroy(k);
        (*env)->Throw(env, pending);
        (*env)->DeleteLocalRef(env, pending);
        return 0;
    }

    dfs_list_reader functions = dfsj_list_reader_functions(key_objects);
    dfs_diffuser *out = NULL;
    dfsj_entry e;
    dfsj_enter(&e, env);
    /* Owns both contexts from here: a failure runs both destroys. */
    dfs_status status = dfs_diffuser_into_list(dfsj_type, &functions, r, reader_destroy, (unsigned int)flags,
                                               sink_apply, k, sink_destroy, &out);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    return (jlong)(intptr_t)out;
}

/* ListNative.diffRead: dfs_list_diff_read over two Java lists, through the same reader
 * functions as the node's. The reader is the method's own argument, a local reference
 * valid for the call; its functions are upcalls under this native method, so a
 * Throwable of the user's key or content function reaches the caller unchanged. */
JNIEXPORT jobjectArray JNICALL Java_io_diffuser_internal_ListNative_diffRead(JNIEnv *env, jclass cls, jobject reader,
                                                                           jboolean key_objects, jobject old_list,
                                                                           jobject new_list, jint flags) {
    (void)cls;
    if (reader == NULL) {
        dfsj_list_throw(env, "java/lang/NullPointerException", "reader");
        return NULL;
    }
    reader_ctx r = {reader, NULL, NULL, NULL, NULL, NULL};
    if (dfsj_list_reader_methods(env, &r)) return NULL;
    dfs_list_reader functions = dfsj_list_reader_functions(key_objects);
    dfs_list_diff d;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_list_diff_read(&functions, &r, old_list, new_list, (unsigned int)flags, &d);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    if (status != DFS_OK) return NULL;
    jobjectArray out = NULL;
    jclass int_array = (*env)->FindClass(env, "[I");
    if (int_array != NULL) {
        out = dfsj_list_arrays(env, &d, flags, int_array);
        (*env)->DeleteLocalRef(env, int_array);
    }
    dfs_list_diff_free(&d);
    return out;
}
