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

/* The settled path of dfs_diffuser_run (settled_run.c): a run of the value a
 * diffuser's root gate holds, checked without the handle table's lock, the diffuser
 * kept alive by a hazard record instead.
 *
 * The handle table calls publish (with the address of the diffuser's root gate) when a
 * diffuser handle is first run and retract when its slot is freed, both with its lock
 * held; after a retract that returned 1, quiesce (without the lock) before dropping
 * the diffuser. */
void dfsi_settled_publish(uintptr_t handle, void *gate);
int dfsi_settled_retract(uintptr_t handle);
void dfsi_settled_quiesce(uintptr_t handle);

#include <stdatomic.h>

enum {
    DFSI_CHUNK_BITS = 10,
    DFSI_CHUNK_SIZE = 1 << DFSI_CHUNK_BITS,
    DFSI_CHUNK_COUNT = 1 << 12,  /* 4M handle slots; runs of handles beyond take the lock */
};

/* What the settled path knows of one handle slot. generation 0: nothing published. */
typedef struct dfsi_settled_entry {
    _Atomic uint32_t generation;
    _Atomic(void *) gate;
} dfsi_settled_entry;

/* One per thread that ran a handle; never freed, reused after a thread ends. */
typedef struct dfsi_hazard {
    _Atomic uintptr_t handle;
    _Atomic int in_use;
    struct dfsi_hazard *next;
} dfsi_hazard;

extern _Atomic(dfsi_settled_entry *) dfsi_settled_chunks[DFSI_CHUNK_COUNT];

/* The entry of `handle`'s slot, or NULL if its chunk was never made. */
static inline dfsi_settled_entry *dfsi_settled_entry_of(uintptr_t handle) {
    size_t index = (size_t)(uint32_t)handle - 1; /* the slot's index + 1 is in the low half */
    if (index >= (size_t)DFSI_CHUNK_SIZE * DFSI_CHUNK_COUNT) return NULL;
    dfsi_settled_entry *chunk =
        atomic_load_explicit(&dfsi_settled_chunks[index >> DFSI_CHUNK_BITS], memory_order_acquire);
    return chunk == NULL ? NULL : &chunk[index & (DFSI_CHUNK_SIZE - 1)];
}

/* Whether `handle` is published already, so that dfsi_settled_publish would do nothing.
 * Call with the handle table's lock held, as publishing and retracting are. */
static inline int dfsi_settled_published(uintptr_t handle) {
    dfsi_settled_entry *e = dfsi_settled_entry_of(handle);
    return e != NULL && atomic_load_explicit(&e->generation, memory_order_relaxed) == (uint32_t)(handle >> 32);
}

/* Starts a settled check of `handle`: stores it in this thread's hazard record and
 * returns the record, or NULL when there is no settled path (then the run takes the
 * lock). While the record holds the handle, the diffuser of the gate that
 * dfsi_settled_gate finds stays alive. Reads no diffuser, takes no lock. A function of
 * its own, compiled as C: there the thread's record is read through a TLS descriptor
 * (see CMakeLists.txt), which Swift's code generation does not use. */
dfsi_hazard *dfsi_settled_enter(uintptr_t handle);

/* The root gate published for `handle`, or NULL; call between dfsi_settled_enter and
 * dfsi_settled_leave. */
static inline void *dfsi_settled_gate(uintptr_t handle) {
    dfsi_settled_entry *e = dfsi_settled_entry_of(handle);
    if (e == NULL || atomic_load_explicit(&e->generation, memory_order_acquire) != (uint32_t)(handle >> 32))
        return NULL;
    return atomic_load_explicit(&e->gate, memory_order_relaxed);
}

/* Ends a settled check: the diffuser may be dropped from now on. */
static inline void dfsi_settled_leave(dfsi_hazard *hazard) {
    atomic_store_explicit(&hazard->handle, 0, memory_order_release);
}

#endif
