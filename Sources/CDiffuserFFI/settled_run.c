/*
 * The settled path of dfs_diffuser_run: a run of the value the diffuser's root gate
 * holds, with no pass in progress, does nothing, and is answered without the handle
 * table's lock (dfsi_settled_enter, dfsi_settled_gate and dfsi_settled_leave in
 * CDiffuserFFI.h, called by dfs_diffuser_run in DiffuserExports.swift; this file keeps
 * what they read).
 *
 * The lock kept the diffuser alive while the check read it; it also made every such
 * run, on any thread, wait for every other. Here the diffuser is kept alive by a hazard
 * pointer instead:
 *
 *  - The handle table publishes a diffuser handle here the first time it is run (under
 *    its lock): an entry, indexed by the handle's slot, that holds the handle and the
 *    address of the diffuser's root gate. Entries live in a static array, so reading
 *    one is always safe.
 *  - A run stores its handle in its thread's hazard record, then reads the entry; if it
 *    holds the handle, it checks the gate, then clears its hazard record.
 *  - Releasing the last reference to a published handle clears the entry (under the
 *    table's lock), then makes every thread's hazard store visible (membarrier, or a
 *    full fence where membarrier is not available, in which case runs fence too) and
 *    waits until no hazard record holds the handle. Only then does it drop the diffuser.
 *
 * A run whose hazard store came before the release's barrier is seen by the release,
 * which waits for it; a run whose store came after it reads the cleared entry. Either
 * way no run reads a diffuser that was dropped.
 *
 * Anything this path does not answer (not published, not settled, a stale or NULL
 * handle, no hazard record) goes to the locked path, which reports errors.
 */
#include "CDiffuserFFI.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

enum {
    SETTLED_OFF = 0,        /* no settled path: every run takes the lock */
    SETTLED_MEMBARRIER = 1, /* releases order hazard records with membarrier */
    SETTLED_FENCE = 2,      /* runs order their hazard record with a fence */
};

dfsi_settled_entry dfsi_settled_entries[DFSI_SETTLED_SLOTS];
_Atomic int dfsi_settled_mode = SETTLED_OFF;
__thread dfsi_hazard *dfsi_thread_hazard;

static _Atomic(dfsi_hazard *) hazards;
static pthread_mutex_t hazards_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t hazard_key;
static pthread_once_t mode_once = PTHREAD_ONCE_INIT;

#if defined(__linux__) && defined(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
static int membarrier(int cmd) { return (int)syscall(__NR_membarrier, cmd, 0, 0); }
#endif

static void hazard_thread_ended(void *record) {
    dfsi_hazard *h = record;
    atomic_store_explicit(&h->handle, 0, memory_order_release);
    atomic_store_explicit(&h->in_use, 0, memory_order_release);
    dfsi_thread_hazard = NULL;
}

/* Whether this process may use MEMBARRIER_CMD_PRIVATE_EXPEDITED (registering it). */
static int membarrier_ready(void) {
#if defined(__linux__) && defined(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
    int supported = membarrier(MEMBARRIER_CMD_QUERY);
    return supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#else
    return 0;
#endif
}

/* In the child of a fork, only the forking thread is left: the hazard records of the
 * others would keep a release waiting forever. And the child registers for membarrier
 * again (or fences), before it can start a thread. */
static void forked_child(void) {
    for (dfsi_hazard *h = atomic_load_explicit(&hazards, memory_order_relaxed); h != NULL; h = h->next) {
        if (h == dfsi_thread_hazard) continue;
        atomic_store_explicit(&h->handle, 0, memory_order_relaxed);
        atomic_store_explicit(&h->in_use, 0, memory_order_relaxed);
    }
    if (atomic_load_explicit(&dfsi_settled_mode, memory_order_relaxed) == SETTLED_MEMBARRIER && !membarrier_ready())
        atomic_store_explicit(&dfsi_settled_mode, SETTLED_FENCE, memory_order_relaxed);
}

static void decide_mode(void) {
    if (pthread_key_create(&hazard_key, hazard_thread_ended) != 0) return; /* stays off */
    if (pthread_atfork(NULL, NULL, forked_child) != 0) {
        pthread_key_delete(hazard_key);
        return;
    }
    int chosen = membarrier_ready() ? SETTLED_MEMBARRIER : SETTLED_FENCE;
    atomic_store_explicit(&dfsi_settled_mode, chosen, memory_order_release);
}

/* The library may be unloaded (dlclose): no thread may then call its destructor. */
__attribute__((destructor)) static void forget_hazard_key(void) {
    if (atomic_load_explicit(&dfsi_settled_mode, memory_order_acquire) != SETTLED_OFF)
        pthread_key_delete(hazard_key);
}

static dfsi_hazard *claim_hazard(void) {
    dfsi_hazard *h;
    for (h = atomic_load_explicit(&hazards, memory_order_acquire); h != NULL; h = h->next) {
        int free_record = 0;
        if (atomic_compare_exchange_strong(&h->in_use, &free_record, 1)) break;
    }
    if (h == NULL) {
        h = calloc(1, sizeof *h);
        if (h == NULL) return NULL;
        atomic_init(&h->in_use, 1);
        pthread_mutex_lock(&hazards_lock);
        h->next = atomic_load_explicit(&hazards, memory_order_relaxed);
        atomic_store_explicit(&hazards, h, memory_order_release);
        pthread_mutex_unlock(&hazards_lock);
    }
    if (pthread_setspecific(hazard_key, h) != 0) {
        atomic_store_explicit(&h->in_use, 0, memory_order_release);
        return NULL;
    }
    dfsi_thread_hazard = h;
    return h;
}

void dfsi_settled_claim(void) {
    if (dfsi_thread_hazard != NULL || atomic_load_explicit(&dfsi_settled_mode, memory_order_acquire) == SETTLED_OFF)
        return;
    claim_hazard();
}

void dfsi_settled_publish(uintptr_t handle, void *gate) {
    pthread_once(&mode_once, decide_mode);
    if (atomic_load_explicit(&dfsi_settled_mode, memory_order_acquire) == SETTLED_OFF) return;
    dfsi_settled_entry *e = dfsi_settled_entry_of(handle);
    if (e == NULL || gate == NULL || atomic_load_explicit(&e->handle, memory_order_relaxed) == handle) return;
    atomic_store_explicit(&e->gate, gate, memory_order_relaxed);
    atomic_store_explicit(&e->handle, handle, memory_order_release);
}

int dfsi_settled_retract(uintptr_t handle) {
    dfsi_settled_entry *e = dfsi_settled_entry_of(handle);
    if (e == NULL || atomic_load_explicit(&e->handle, memory_order_relaxed) != handle) return 0;
    atomic_store_explicit(&e->handle, 0, memory_order_relaxed);
    atomic_store_explicit(&e->gate, NULL, memory_order_relaxed);
    return 1;
}

void dfsi_settled_quiesce(uintptr_t handle) {
#if defined(__linux__) && defined(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
    /* The process registered (decide_mode, forked_child), so this does not fail. */
    if (atomic_load_explicit(&dfsi_settled_mode, memory_order_acquire) == SETTLED_MEMBARRIER)
        membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
#endif
    atomic_thread_fence(memory_order_seq_cst);
    for (dfsi_hazard *h = atomic_load_explicit(&hazards, memory_order_acquire); h != NULL; h = h->next)
        while (atomic_load_explicit(&h->handle, memory_order_acquire) == handle) sched_yield();
}
