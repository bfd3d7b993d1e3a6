/* Value-type callbacks of the built-in types whose values need C to handle. */
#include "CDiffuserFFI.h"

#include <stdlib.h>
#include <string.h>

int dfsi_cstring_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    if (a == b) return 1;
    if (a == NULL || b == NULL) return 0;
    return strcmp(a, b) == 0;
}

const void *dfsi_cstring_retain(const void *value, void *ctx) {
    (void)ctx;
    return value == NULL ? NULL : strdup(value);
}

void dfsi_cstring_release(const void *value, void *ctx) {
    (void)ctx;
    free((void *)value);
}

static int value_equal(const dfs_ffi_value *a, const dfs_ffi_value *b) {
    if (a->type != b->type) return 0;
    switch (a->type) {
    case DFS_FFI_FLOAT:
    case DFS_FFI_DOUBLE: return a->as.d == b->as.d;
    case DFS_FFI_STRING: return dfsi_cstring_equal(a->as.s, b->as.s, NULL);
    case DFS_FFI_POINTER: return a->as.p == b->as.p;
    default: return a->as.u == b->as.u;
    }
}

int dfsi_ffi_event_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    const dfs_ffi_event *x = a, *y = b;
    if (x == y) return 1;
    if (x == NULL || y == NULL || x->count != y->count) return 0;
    for (size_t i = 0; i < x->count; i++) {
        if (!value_equal(&x->args[i], &y->args[i])) return 0;
    }
    return 1;
}

/* One allocation: the event, then its arguments, then the bytes of its strings. */
const void *dfsi_ffi_event_retain(const void *value, void *ctx) {
    (void)ctx;
    const dfs_ffi_event *e = value;
    if (e == NULL) return NULL;
    size_t bytes = sizeof(dfs_ffi_event) + e->count * sizeof(dfs_ffi_value);
    for (size_t i = 0; i < e->count; i++) {
        if (e->args[i].type == DFS_FFI_STRING && e->args[i].as.s != NULL) bytes += strlen(e->args[i].as.s) + 1;
    }
    char *block = malloc(bytes);
    if (block == NULL) return NULL;
    dfs_ffi_event *copy = (dfs_ffi_event *)block;
    dfs_ffi_value *args = (dfs_ffi_value *)(block + sizeof(dfs_ffi_event));
    char *strings = (char *)(args + e->count);
    copy->count = e->count;
    copy->args = args;
    for (size_t i = 0; i < e->count; i++) {
        args[i] = e->args[i];
        if (e->args[i].type == DFS_FFI_STRING && e->args[i].as.s != NULL) {
            size_t n = strlen(e->args[i].as.s) + 1;
            memcpy(strings, e->args[i].as.s, n);
            args[i].as.s = strings;
            strings += n;
        }
    }
    return copy;
}

void dfsi_ffi_event_release(const void *value, void *ctx) {
    (void)ctx;
    free((void *)value);
}
