/*
 * list_sections_jni.c — the JNI glue of the sections diff (io.diffuser.list.
 * ListSectionsDiff): io.diffuser.internal.ListNative.sectionsDiff calls
 * dfs_list_sections_diff_compute once and returns every array of the result as one
 * int[][] (ListSectionsDiff.ofKeys: keys only, no content); ListNative.sectionsDiffRead calls
 * dfs_list_sections_diff_read once on two Java lists of sections read through two
 * ListReaders (ListSectionsDiff.of), whose functions are then upcalls under that native
 * method, in the core's order, a Throwable of theirs reaching the caller unchanged. It
 * only translates; the diff and its batch are libdiffuser.so's.
 *
 * For sectionsDiff, each list of sections arrives as flat arrays: section keys, the
 * number of items of each section, and the keys of all items, section after section.
 *
 * The result (ListNative.java reads the same indices):
 *   [0]                    {has_duplicates, item_diff_count}
 *   [1 .. 10]              the batch (null without a batch flag): section deletes,
 *                          inserts, moves, reloads, reloads after moves; item deletes,
 *                          inserts, moves, reloads, reloads after moves
 *   [11 .. 11 + OUT_COUNT) the sections' own diff, laid out as list_jni.c lays one out
 *   then OUT_COUNT arrays per new section: the diff of its items
 */
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "jni_glue.h"
#include "list_jni.h"

enum { SECTIONS_HEADER, SECTIONS_BATCH, SECTIONS_BATCH_COUNT = 10, SECTIONS_DIFFS = SECTIONS_BATCH + SECTIONS_BATCH_COUNT };

/* One list of sections: the Java arrays' elements, pinned or copied, until release. */
typedef struct side {
    jlongArray arrays[4]; /* section keys, section contents, item keys, item contents */
    jlong *values[4];
    jsize lengths[4];
    size_t *item_counts;
    dfs_list_sections_side c;
} side;

/* Reads one side; 0, or -1 with an exception pending. */
static int side_read(JNIEnv *env, side *s, jlongArray section_keys, jlongArray section_contents, jintArray item_counts,
                     jlongArray item_keys, jlongArray item_contents, const char *name) {
    char message[160];
    if (section_keys == NULL || item_counts == NULL || item_keys == NULL) {
        snprintf(message, sizeof message, "%s: %s", name,
                 section_keys == NULL ? "section keys" : item_counts == NULL ? "item counts" : "item keys");
        dfsj_list_throw(env, "java/lang/NullPointerException", message);
        return -1;
    }
    jlongArray arrays[4] = {section_keys, section_contents, item_keys, item_contents};
    for (int k = 0; k < 4; k++) {
        s->arrays[k] = arrays[k];
        s->values[k] = dfsj_list_longs(env, arrays[k], &s->lengths[k]);
        if (s->lengths[k] > 0 && s->values[k] == NULL) {
            if (!(*env)->ExceptionCheck(env)) dfsj_list_throw(env, "java/lang/OutOfMemoryError", "list keys");
            return -1;
        }
    }
    jsize sections = (*env)->GetArrayLength(env, item_counts);
    const char *wrong = NULL;
    if (sections != s->lengths[0]) wrong = "one item count per section is needed";
    else if (section_contents != NULL && s->lengths[1] != sections) wrong = "one content fingerprint per section is needed";
    else if (item_contents != NULL && s->lengths[3] != s->lengths[2]) wrong = "one content fingerprint per item is needed";
    if (wrong == NULL) {
        s->item_counts = malloc(sizeof(size_t) * (size_t)(sections > 0 ? sections : 1));
        if (s->item_counts == NULL) {
            dfsj_list_throw(env, "java/lang/OutOfMemoryError", "item counts");
            return -1;
        }
        jint count = 0;
        long long total = 0;
        for (jsize k = 0; k < sections && wrong == NULL; k++) {
            (*env)->GetIntArrayRegion(env, item_counts, k, 1, &count);
            if (count < 0) wrong = "an item count is negative";
            s->item_counts[k] = (size_t)count;
            total += count;
        }
        if (wrong == NULL && total != s->lengths[2]) wrong = "the item counts do not add up to the number of item keys";
    }
    if (wrong != NULL) {
        snprintf(message, sizeof message, "%s: %s", name, wrong);
        dfsj_list_throw(env, "java/lang/IllegalArgumentException", message);
        return -1;
    }
    /* jlong and uint64_t have the same size and representation. */
    s->c = (dfs_list_sections_side){(const uint64_t *)s->values[0], (const uint64_t *)s->values[1], s->item_counts,
                                    (const uint64_t *)s->values[2], (const uint64_t *)s->values[3], (size_t)sections};
    return 0;
}

static void side_release(JNIEnv *env, side *s) {
    for (int k = 0; k < 4; k++)
        if (s->values[k] != NULL) (*env)->ReleaseLongArrayElements(env, s->arrays[k], s->values[k], JNI_ABORT);
    free(s->item_counts);
}

/* Stores `count` values as a new int[] at `index` of `out`. 0 if an exception is pending. */
static int put(JNIEnv *env, jobjectArray out, jsize index, const int32_t *values, int32_t count) {
    jintArray array = (*env)->NewIntArray(env, count);
    if (array == NULL) return 0;
    if (count > 0) (*env)->SetIntArrayRegion(env, array, 0, count, (const jint *)values);
    (*env)->SetObjectArrayElement(env, out, index, array);
    (*env)->DeleteLocalRef(env, array);
    return !(*env)->ExceptionCheck(env);
}

/* Stores the arrays of one diff at `index` ... `index + OUT_COUNT`. */
static int put_diff(JNIEnv *env, jobjectArray out, jsize index, const dfs_list_diff *d, int flags, jclass int_array) {
    jobjectArray arrays = dfsj_list_arrays(env, d, flags, int_array);
    if (arrays == NULL) return 0;
    for (jsize k = 0; k < OUT_COUNT; k++) {
        jobject array = (*env)->GetObjectArrayElement(env, arrays, k);
        (*env)->SetObjectArrayElement(env, out, index + k, array);
        if (array != NULL) (*env)->DeleteLocalRef(env, array);
    }
    (*env)->DeleteLocalRef(env, arrays);
    return !(*env)->ExceptionCheck(env);
}

static jobjectArray result_of(JNIEnv *env, const dfs_list_sections_diff *d, int flags) {
    jclass int_array = (*env)->FindClass(env, "[I");
    if (int_array == NULL) return NULL;
    jsize total = SECTIONS_DIFFS + OUT_COUNT * (1 + d->item_diff_count);
    jobjectArray out = (*env)->NewObjectArray(env, total, int_array, NULL);
    if (out == NULL) goto fail;
    int32_t header[2] = {d->has_duplicates, d->item_diff_count};
    int stored = put(env, out, SECTIONS_HEADER, header, 2);
    if (stored && (flags & (DFS_LIST_BATCH | DFS_LIST_BATCH_MOVE_THEN_RELOAD))) {
        jsize b = SECTIONS_BATCH;
        stored = put(env, out, b, d->batch_section_deletes, d->batch_section_delete_count) &&
                 put(env, out, b + 1, d->batch_section_inserts, d->batch_section_insert_count) &&
                 put(env, out, b + 2, d->batch_section_moves, 2 * d->batch_section_move_count) &&
                 put(env, out, b + 3, d->batch_section_reloads, d->batch_section_reload_count) &&
                 put(env, out, b + 4, d->batch_section_reloads_after_moves, d->batch_section_reload_after_move_count) &&
                 put(env, out, b + 5, d->batch_item_deletes, 2 * d->batch_item_delete_count) &&
                 put(env, out, b + 6, d->batch_item_inserts, 2 * d->batch_item_insert_count) &&
                 put(env, out, b + 7, d->batch_item_moves, 4 * d->batch_item_move_count) &&
                 put(env, out, b + 8, d->batch_item_reloads, 2 * d->batch_item_reload_count) &&
                 put(env, out, b + 9, d->batch_item_reloads_after_moves, 2 * d->batch_item_reload_after_move_count);
    }
    /* The sub-diffs carry only their script: their batch is the one above. */
    int script = flags & DFS_LIST_SCRIPT;
    if (stored) stored = put_diff(env, out, SECTIONS_DIFFS, &d->sections, script, int_array);
    for (int32_t j = 0; stored && j < d->item_diff_count; j++)
        stored = put_diff(env, out, SECTIONS_DIFFS + OUT_COUNT * (1 + j), &d->items[j], script, int_array);
    if (stored) {
        (*env)->DeleteLocalRef(env, int_array);
        return out;
    }
fail:
    if (out != NULL) (*env)->DeleteLocalRef(env, out);
    (*env)->DeleteLocalRef(env, int_array);
    if (!(*env)->ExceptionCheck(env)) dfsj_list_throw(env, "java/lang/OutOfMemoryError", "the arrays of a sections diff");
    return NULL;
}

JNIEXPORT jobjectArray JNICALL Java_io_diffuser_internal_ListNative_sectionsDiff(
    JNIEnv *env, jclass cls, jlongArray old_section_keys, jlongArray old_section_contents, jintArray old_item_counts,
    jlongArray old_item_keys, jlongArray old_item_contents, jlongArray new_section_keys,
    jlongArray new_section_contents, jintArray new_item_counts, jlongArray new_item_keys,
    jlongArray new_item_contents, jint flags) {
    (void)cls;
    side o = {0}, n = {0};
    jobjectArray out = NULL;
    if (side_read(env, &o, old_section_keys, old_section_contents, old_item_counts, old_item_keys, old_item_contents,
                  "old sections") ||
        side_read(env, &n, new_section_keys, new_section_contents, new_item_counts, new_item_keys, new_item_contents,
                  "new sections"))
        goto done;

    dfs_list_sections_diff d;
    dfs_status status = dfs_list_sections_diff_compute(&o.c, &n.c, NULL, NULL, (unsigned int)flags, &d);
    if (status != DFS_OK) dfsj_list_throw_status(env, status);
    else out = result_of(env, &d, flags);
    dfs_list_sections_diff_free(&d);

done:
    side_release(env, &o);
    side_release(env, &n);
    return out;
}

/* A section's items: ListReader.items(sections, index) of the sections' reader, a local
 * reference of the native method's frame until sections_items_release deletes it. */
static int sections_items(const void *sections, int32_t index, const void **items, void *ctx) {
    dfsj_list_reader_ctx *r = ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    jobject list = (*u.env)->CallObjectMethod(u.env, r->reader, r->items, (jobject)sections, (jint)index);
    int failed = dfsj_upcall_failed(u.env);
    dfsj_env_leave(&u);
    *items = failed ? NULL : list;
    return failed;
}

static void sections_items_release(const void *items, void *ctx) {
    (void)ctx;
    dfsj_upcall_env u;
    if (items != NULL && dfsj_env_enter(&u) == 0) {
        (*u.env)->DeleteLocalRef(u.env, (jobject)items);
        dfsj_env_leave(&u);
    }
}

JNIEXPORT jobjectArray JNICALL Java_io_diffuser_internal_ListNative_sectionsDiffRead(
    JNIEnv *env, jclass cls, jobject sections_reader, jboolean section_key_objects, jobject items_reader,
    jboolean item_key_objects, jobject old_list, jobject new_list, jint flags) {
    (void)cls;
    if (sections_reader == NULL || items_reader == NULL) {
        dfsj_list_throw(env, "java/lang/NullPointerException", sections_reader == NULL ? "sections reader" : "items reader");
        return NULL;
    }
    dfsj_list_reader_ctx sections = {sections_reader, NULL, NULL, NULL, NULL, NULL};
    dfsj_list_reader_ctx items = {items_reader, NULL, NULL, NULL, NULL, NULL};
    if (dfsj_list_reader_methods(env, &sections) || dfsj_list_reader_methods(env, &items)) return NULL;
    dfs_list_sections_reader reader = {dfsj_list_reader_functions(section_key_objects), &sections,
                                       sections_items, sections_items_release, &sections,
                                       dfsj_list_reader_functions(item_key_objects), &items};
    dfs_list_sections_diff d;
    dfsj_entry e;
    dfsj_enter(&e, env);
    dfs_status status = dfs_list_sections_diff_read(&reader, old_list, new_list, (unsigned int)flags, &d);
    dfsj_finish(env, status, dfsj_leave(&e), 0);
    jobjectArray out = status == DFS_OK ? result_of(env, &d, flags) : NULL;
    dfs_list_sections_diff_free(&d);
    return out;
}
