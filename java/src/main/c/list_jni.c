/*
 * list_jni.c — the JNI glue of the keyed list diff (package io.diffuser.list).
 *
 * One native method, io.diffuser.internal.ListNative.diff, calls dfs_list_diff_compute
 * once and returns every array of the result (the diff, and the batch and the script when
 * asked for) as one int[][]. It only translates: the pairing, the moves, the batch and the
 * script are all computed by libdiffuser.so.
 *
 * Keys and content fingerprints arrive as long[] (the Java side maps key objects to
 * longs). Content compared by a Java predicate reaches it through dfs_list_same_fn: the
 * callback calls ListNative.SameIndex.same(oldIndex, newIndex) on the calling thread,
 * inside this native method. If the predicate throws, the callback keeps the Throwable,
 * clears it and returns -1, so that the core stops and returns DFS_ERR_CALLBACK; the
 * native method then throws that same Throwable, unchanged. Other statuses become
 * NullPointerException, IllegalArgumentException, OutOfMemoryError or
 * IllegalStateException with dfs_last_error().
 *
 * The natives are found by the JVM under their JNI names (JNIEXPORT), so this file needs
 * nothing from diffuser_jni.c, whose JNI_OnLoad loads the library.
 */
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>

#include "diffuser.h"

/* The layout of the int[][] that diff returns (ListNative.java reads the same indices). */
enum {
    OUT_HEADER,       /* old_count, new_count, has_duplicates */
    OUT_DELETES,
    OUT_INSERTS,
    OUT_MOVES,        /* pairs: old, new, old, new... */
    OUT_UPDATES,      /* pairs */
    OUT_OLD_TO_NEW,
    OUT_NEW_TO_OLD,
    OUT_BATCH_DELETES,
    OUT_BATCH_INSERTS,
    OUT_BATCH_MOVES,  /* pairs */
    OUT_BATCH_RELOADS,
    OUT_BATCH_RELOADS_AFTER_MOVES,
    OUT_SCRIPT,       /* triples: kind, a, b */
    OUT_COUNT
};

/* The context of dfs_list_same_fn: the predicate and the Throwable it threw. */
typedef struct {
    JNIEnv *env;
    jobject same;
    jmethodID method;
    jthrowable thrown; /* a local reference of the native method's frame, or NULL */
} same_ctx;

static int same_content(int32_t old_index, int32_t new_index, void *ctx) {
    same_ctx *c = ctx;
    JNIEnv *env = c->env;
    jboolean same = (*env)->CallBooleanMethod(env, c->same, c->method, (jint)old_index, (jint)new_index);
    if ((*env)->ExceptionCheck(env)) {
        if (c->thrown == NULL) c->thrown = (*env)->ExceptionOccurred(env);
        (*env)->ExceptionClear(env);
        dfs_set_error("the content predicate threw");
        return -1;
    }
    return same ? 1 : 0;
}

static void throw_new(JNIEnv *env, const char *class_name, const char *message) {
    jclass cls = (*env)->FindClass(env, class_name);
    if (cls != NULL) (*env)->ThrowNew(env, cls, message);
}

static void throw_status(JNIEnv *env, dfs_status status) {
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
    throw_new(env, cls, message);
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

/* The elements of a long[] (NULL for a null array), and its length in *count. */
static jlong *longs(JNIEnv *env, jlongArray array, jsize *count) {
    *count = 0;
    if (array == NULL) return NULL;
    *count = (*env)->GetArrayLength(env, array);
    return (*env)->GetLongArrayElements(env, array, NULL);
}

JNIEXPORT jobjectArray JNICALL Java_io_diffuser_internal_ListNative_diff(
    JNIEnv *env, jclass cls, jlongArray old_keys, jlongArray old_contents, jlongArray new_keys,
    jlongArray new_contents, jobject same, jint flags) {
    (void)cls;
    if (old_keys == NULL || new_keys == NULL) {
        throw_new(env, "java/lang/NullPointerException", "keys");
        return NULL;
    }
    jsize old_count, new_count, old_content_count, new_content_count;
    jlong *ok = longs(env, old_keys, &old_count);
    jlong *nk = longs(env, new_keys, &new_count);
    jlong *oc = longs(env, old_contents, &old_content_count);
    jlong *nc = longs(env, new_contents, &new_content_count);
    jobjectArray out = NULL;
    if ((old_count > 0 && ok == NULL) || (new_count > 0 && nk == NULL) ||
        (old_content_count > 0 && oc == NULL) || (new_content_count > 0 && nc == NULL)) {
        if (!(*env)->ExceptionCheck(env)) throw_new(env, "java/lang/OutOfMemoryError", "list keys");
        goto done;
    }
    if ((old_contents != NULL && old_content_count != old_count) ||
        (new_contents != NULL && new_content_count != new_count)) {
        throw_new(env, "java/lang/IllegalArgumentException", "one content fingerprint per key is needed");
        goto done;
    }

    same_ctx ctx = {env, same, NULL, NULL};
    if (same != NULL) {
        jclass same_class = (*env)->GetObjectClass(env, same);
        ctx.method = (*env)->GetMethodID(env, same_class, "same", "(II)Z");
        (*env)->DeleteLocalRef(env, same_class);
        if (ctx.method == NULL) goto done;
    }
    /* jlong and uint64_t have the same size and representation. */
    dfs_list_side o = {(const uint64_t *)ok, (const uint64_t *)oc, (size_t)old_count};
    dfs_list_side n = {(const uint64_t *)nk, (const uint64_t *)nc, (size_t)new_count};
    dfs_list_diff d;
    dfs_status status = dfs_list_diff_compute(&o, &n, same != NULL ? same_content : NULL, &ctx,
                                              (unsigned int)flags, &d);
    if (status != DFS_OK) {
        if (status == DFS_ERR_CALLBACK && ctx.thrown != NULL) (*env)->Throw(env, ctx.thrown);
        else throw_status(env, status);
        dfs_list_diff_free(&d);
        goto done;
    }

    jclass int_array = (*env)->FindClass(env, "[I");
    if (int_array != NULL) out = (*env)->NewObjectArray(env, OUT_COUNT, int_array, NULL);
    if (out != NULL) {
        int32_t header[3] = {d.old_count, d.new_count, d.has_duplicates};
        int batch = (flags & (DFS_LIST_BATCH | DFS_LIST_BATCH_MOVE_THEN_RELOAD)) != 0;
        int stored = put(env, out, OUT_HEADER, header, 3) && put(env, out, OUT_DELETES, d.deletes, d.delete_count) &&
                     put(env, out, OUT_INSERTS, d.inserts, d.insert_count) &&
                     put(env, out, OUT_MOVES, d.moves, 2 * d.move_count) &&
                     put(env, out, OUT_UPDATES, d.updates, 2 * d.update_count) &&
                     put(env, out, OUT_OLD_TO_NEW, d.old_to_new, d.old_count) &&
                     put(env, out, OUT_NEW_TO_OLD, d.new_to_old, d.new_count);
        if (stored && batch) {
            stored = put(env, out, OUT_BATCH_DELETES, d.batch_deletes, d.batch_delete_count) &&
                     put(env, out, OUT_BATCH_INSERTS, d.batch_inserts, d.batch_insert_count) &&
                     put(env, out, OUT_BATCH_MOVES, d.batch_moves, 2 * d.batch_move_count) &&
                     put(env, out, OUT_BATCH_RELOADS, d.batch_reloads, d.batch_reload_count) &&
                     put(env, out, OUT_BATCH_RELOADS_AFTER_MOVES, d.batch_reloads_after_moves,
                         d.batch_reload_after_move_count);
        }
        if (stored && (flags & DFS_LIST_SCRIPT)) stored = put(env, out, OUT_SCRIPT, d.script, 3 * d.script_count);
        if (!stored) {
            (*env)->DeleteLocalRef(env, out);
            out = NULL;
        }
    }
    if (int_array != NULL) (*env)->DeleteLocalRef(env, int_array);
    dfs_list_diff_free(&d);

done:
    if (ok != NULL) (*env)->ReleaseLongArrayElements(env, old_keys, ok, JNI_ABORT);
    if (nk != NULL) (*env)->ReleaseLongArrayElements(env, new_keys, nk, JNI_ABORT);
    if (oc != NULL) (*env)->ReleaseLongArrayElements(env, old_contents, oc, JNI_ABORT);
    if (nc != NULL) (*env)->ReleaseLongArrayElements(env, new_contents, nc, JNI_ABORT);
    return out;
}
