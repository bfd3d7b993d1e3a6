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

/* Handle slots the settled path serves: 1M; runs of handles beyond take the lock. */
#define DFSI_SETTLED_SLOTS ((uintptr_t)1 << 20)

/* What the settled path knows of one handle slot: the handle published there (0: none)
 * and the address of its diffuser's root gate. The whole handle, not only its
 * generation, so that a run finds its entry with a mask and no bounds test: a handle
 * beyond the slots the table serves is never published, and finds another's entry. */
typedef struct dfsi_settled_entry {
    _Atomic uintptr_t handle;
    _Atomic(void *) gate;
} dfsi_settled_entry;

/* One per thread that ran a handle; never freed, reused after a thread ends. */
typedef struct dfsi_hazard {
    _Atomic uintptr_t handle;
    _Atomic int in_use;
    struct dfsi_hazard *next;
} dfsi_hazard;

/* The entries, indexed by slot. A static array, so that a run finds its entry at an
 * address computed from the handle, with no load before it: 16 MiB of zero-filled
 * storage (.bss), of which only the pages holding published entries are ever written
 * and so given memory; any entry may be read at any time (an entry never written holds
 * handle 0: not published). */
extern dfsi_settled_entry dfsi_settled_entries[DFSI_SETTLED_SLOTS];

/* How runs order their hazard record against a release (settled_run.c): 0, no settled
 * path; 1, releases use membarrier and a run needs no fence; 2, a run fences. Set at
 * the first publish, before any thread claims a hazard record. */
extern _Atomic int dfsi_settled_mode;

/* This thread's hazard record, NULL until a run claims one (which it does only once
 * there is a settled path). Initial-exec: the library's thread-locals are a few words,
 * well within the static TLS that the dynamic loader keeps for libraries loaded later
 * (dlopen, as the JVM loads it), so a run reads its record at a fixed offset from the
 * thread pointer, with no call, whether the code is compiled as C or as Swift. */
extern __thread dfsi_hazard *dfsi_thread_hazard __attribute__((tls_model("initial-exec")));

/* The index of `handle`'s slot in the table (the slot's index + 1 is in the handle's
 * low half), wrapped to the table's size. */
static inline uintptr_t dfsi_settled_index(uintptr_t handle) {
    return (handle - 1) & (DFSI_SETTLED_SLOTS - 1);
}

/* The entry that is `handle`'s if anything of it is published, or NULL when the
 * handle's slot is beyond the table (it is then never published). For publishing and
 * retracting, with the handle table's lock held. */
static inline dfsi_settled_entry *dfsi_settled_entry_of(uintptr_t handle) {
    if ((uintptr_t)(uint32_t)handle - 1 >= DFSI_SETTLED_SLOTS) return NULL;
    return &dfsi_settled_entries[dfsi_settled_index(handle)];
}

/* Whether `handle` is published already, so that dfsi_settled_publish would do nothing.
 * Call with the handle table's lock held, as publishing and retracting are. */
static inline int dfsi_settled_published(uintptr_t handle) {
    dfsi_settled_entry *e = dfsi_settled_entry_of(handle);
    return e != NULL && atomic_load_explicit(&e->handle, memory_order_relaxed) == handle;
}

/* Gives the calling thread a hazard record if it has none and there is a settled path,
 * so that its next runs can take that path: called by runs that took the lock. */
void dfsi_settled_claim(void);

/* Stores `handle` in the hazard record `h`, visible to releases before the check reads
 * the diffuser: with membarrier, releases make it visible, so the compiler only must not
 * move it; otherwise a full fence. */
static inline dfsi_hazard *dfsi_settled_hold(dfsi_hazard *h, uintptr_t handle, int mode) {
    atomic_store_explicit(&h->handle, handle, memory_order_relaxed);
    if (mode == 1)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
    return h;
}

/* Starts a settled check of `handle`: stores it in this thread's hazard record and
 * returns the record, or NULL when the thread has none (then the run takes the lock,
 * and claims one for the next: dfsi_settled_claim). While the record holds the handle,
 * the diffuser of the gate that dfsi_settled_gate finds stays alive. Reads no diffuser,
 * takes no lock, calls nothing. */
static inline dfsi_hazard *dfsi_settled_enter(uintptr_t handle) {
    dfsi_hazard *h = dfsi_thread_hazard;
    if (__builtin_expect(h == NULL, 0)) return NULL;
    return dfsi_settled_hold(h, handle, atomic_load_explicit(&dfsi_settled_mode, memory_order_relaxed));
}

/* The root gate published for `handle`, or NULL; call between a dfsi_settled_enter that
 * returned a record and dfsi_settled_leave. */
static inline void *dfsi_settled_gate(uintptr_t handle) {
    dfsi_settled_entry *e = &dfsi_settled_entries[dfsi_settled_index(handle)];
    if (atomic_load_explicit(&e->handle, memory_order_acquire) != handle) return NULL;
    return atomic_load_explicit(&e->gate, memory_order_relaxed);
}

/* Ends a settled check: the diffuser may be dropped from now on. */
static inline void dfsi_settled_leave(dfsi_hazard *hazard) {
    atomic_store_explicit(&hazard->handle, 0, memory_order_release);
}

#endif
