/*
 * list_jni.h — what list_jni.c (the list diff and intoList) shares with
 * list_sections_jni.c (the sections diff): the layout of one diff as int[]s, and the
 * helpers that build it and throw.
 */
#ifndef DFSJ_LIST_JNI_H
#define DFSJ_LIST_JNI_H

#include <jni.h>

#include "diffuser.h"

/* The layout of the int[][] of one diff (ListNative.java reads the same indices). */
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

/* A dfs_list_reader's context: an io.diffuser.internal.ListReader (a weak global
 * reference for a node, which its Java Diffuser holds; a local one for a native method's
 * own argument) and its methods. `items` is ListReader.items, for a reader of sections. */
typedef struct {
    jobject reader;
    jmethodID count, key, same_key, same_content, items;
} dfsj_list_reader_ctx;

/* Resolves the methods of io.diffuser.internal.ListReader into `r`: 0, or -1 with an
 * exception pending. */
int dfsj_list_reader_methods(JNIEnv *env, dfsj_list_reader_ctx *r);

/* The dfs_list_reader whose functions call the ListReader of their dfsj_list_reader_ctx
 * (same_key only if its keys are objects): upcalls through jni_glue.h, a Throwable kept
 * for the native method to rethrow. */
dfs_list_reader dfsj_list_reader_functions(int key_objects);

/* Throws a new `class_name` with `message`. */
void dfsj_list_throw(JNIEnv *env, const char *class_name, const char *message);

/* Throws the exception of a failed status (NullPointerException for DFS_ERR_NULL,
 * IllegalArgumentException, OutOfMemoryError, else IllegalStateException), with
 * dfs_last_error(). */
void dfsj_list_throw_status(JNIEnv *env, dfs_status status);

/* The arrays of `d` as a new int[][] laid out as OUT_*: the batch's only with a batch
 * flag and the script's only with DFS_LIST_SCRIPT (null otherwise). NULL with an
 * exception pending if the JVM is out of memory. `int_array` is the class of int[]. */
jobjectArray dfsj_list_arrays(JNIEnv *env, const dfs_list_diff *d, int flags, jclass int_array);

/* The elements of a long[] (NULL for a null array), and its length in *count. */
jlong *dfsj_list_longs(JNIEnv *env, jlongArray array, jsize *count);

#endif
