/*
 * Private to libdiffuser: the C half of the C ABI. It gives the Swift exports the
 * types of the public header, and does the one job of libffi (making a plain function
 * pointer that packs its arguments into an event), which is C by nature.
 */
#ifndef CDIFFUSER_FFI_H
#define CDIFFUSER_FFI_H

#include "../../../include/diffuser.h"

/** Receives one call of a closure. Returns the dfs_status of the emission. */
typedef int (*dfsi_ffi_handler)(uintptr_t userdata, const dfs_ffi_event *event);

/** Makes a closure; *closure_out is what dfsi_ffi_closure_free takes. Returns 0 or a
 *  dfs_status (DFS_ERR_ARGUMENT for bad types, DFS_ERR_MEMORY). */
int dfsi_ffi_closure_make(dfs_ffi_type ret, const dfs_ffi_type *args, size_t count,
                         uintptr_t userdata, dfsi_ffi_handler handler,
                         void (**fn_out)(void), void **closure_out);

/** Frees a closure made by dfsi_ffi_closure_make. NULL is ignored. */
void dfsi_ffi_closure_free(void *closure);

/** The value-type callbacks of dfs_ffi_event values. */
int dfsi_ffi_event_equal(const void *a, const void *b, void *ctx);
const void *dfsi_ffi_event_retain(const void *value, void *ctx);
void dfsi_ffi_event_release(const void *value, void *ctx);

/** The value-type callbacks of C strings. */
int dfsi_cstring_equal(const void *a, const void *b, void *ctx);
const void *dfsi_cstring_retain(const void *value, void *ctx);
void dfsi_cstring_release(const void *value, void *ctx);

/** What a gate's comparison found when the equality answered DFS_EQUAL_SAME: the new
 *  value's pointer, and the cache it is the same value as (its pointer and owner, an
 *  unmanaged Swift object or NULL). The gate's next step is to keep the new value, and
 *  keeps that cache instead (CEquality in CallbackAdapters.swift). Per thread, so that
 *  a gate's comparison and its keep, which follow each other on one thread with no
 *  other gate between them, cost no lock; initial-exec, so that it is one load. */
typedef struct {
    const void *pointer;
    const void *cached_pointer;
    void *cached_owner;
    int armed;
} dfsi_same_value_note;

extern __thread __attribute__((tls_model("initial-exec"))) dfsi_same_value_note dfsi_same_value_storage;

/** The calling thread's note. */
static inline dfsi_same_value_note *dfsi_same_value(void) {
    return &dfsi_same_value_storage;
}

/** How many times dfs_set_error was called on this thread. The core reads it right
 *  before calling a callback, so that a callback that fails gets the message set while
 *  it ran, not one an earlier callback set before returning 0. Initial-exec, so that
 *  the read, made before every callback, is one load. */
extern __thread __attribute__((tls_model("initial-exec"))) uint64_t dfsi_error_serial_storage;

/** The calling thread's error serial. */
static inline uint64_t dfsi_error_serial(void) {
    return dfsi_error_serial_storage;
}

/** Counts one dfs_set_error on the calling thread. */
static inline void dfsi_error_serial_advance(void) {
    dfsi_error_serial_storage++;
}

/** The builder of the update in progress on the calling thread (a `NextBuilder` on the
 *  update's stack, in NextExports.swift), or NULL: what `dfs_next_model` and
 *  `dfs_next_effect` write to. Initial-exec, so that each access (three an update
 *  call written in C, and one a dfs_next_model or dfs_next_effect) is one load or
 *  store. */
extern __thread __attribute__((tls_model("initial-exec"))) void *dfsi_next_builder_storage;

/** The calling thread's current builder, or NULL. */
static inline void *dfsi_next_builder(void) {
    return dfsi_next_builder_storage;
}

/** Makes `builder` (or NULL) the calling thread's current builder. */
static inline void dfsi_set_next_builder(void *builder) {
    dfsi_next_builder_storage = builder;
}

/** Whether malloc gives a block of `bytes` now (which is freed at once): 1 or 0. The
 *  list diffs ask it for the memory they will need before they start, since an
 *  allocation of the Swift core that fails stops the process. */
int dfsi_can_allocate(size_t bytes);

#endif
