/*
 * stress_threads.c — threads hammering shared diffusers and fusers, for
 * ThreadSanitizer (scripts/tsan.sh builds it against the TSan build of libdiffuser.so
 * and fails on any report).
 *
 * Every thread loops over random steps on a shared pool:
 * - runs of shared leaves and of trees over them (graphs that share nodes, so runs on
 *   different threads must be serialized by the core: each effect counts its calls in a
 *   plain, non-atomic counter, which TSan watches);
 * - effects that run their own diffuser again (queued reentrant runs);
 * - new trees composed over pool diffusers and run at once, while other threads run
 *   the pool (graphs merged while their parts run), then released;
 * - connections to shared fusers made and disposed while other threads emit through
 *   the sources, directly and through libffi closures; an effect called after the
 *   dispose of its connection returned is counted as a violation;
 * - retain and release of shared handles.
 * At the end every callback context must have been destroyed exactly once.
 *
 *   stress_threads [iterations per thread]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRESS_NAME "stress_threads"
#include "stress.h"

#define THREADS 4
#define LEAVES 6
#define TREES 4
#define MAX_CTX 100000

static int stress_iterations = 2000;

/* ------------------------------------------------------------------------------------
 * Contexts: every one is counted, and its destroy must run exactly once.
 * ------------------------------------------------------------------------------------ */

typedef struct ctx {
    long plain_calls;        /* touched only under the graph's serialization */
    atomic_int destroyed;
    atomic_int disposed;     /* connection effects: dispose returned */
    dfs_diffuser *self;      /* reentrant effects: the diffuser to run again */
    dfs_diffuser *feed;      /* connection effects: a diffuser to run on each event */
} ctx;

static ctx *contexts[MAX_CTX];
static atomic_int n_contexts;

static ctx *new_ctx(void) {
    int i = atomic_fetch_add(&n_contexts, 1);
    if (i >= MAX_CTX) {
        fprintf(stderr, "stress_threads: too many contexts\n");
        abort();
    }
    ctx *c = calloc(1, sizeof *c);
    if (c == NULL) abort();
    contexts[i] = c;
    return c;
}

static void ctx_destroy(void *p) {
    ctx *c = p;
    if (atomic_fetch_add(&c->destroyed, 1) != 0) atomic_fetch_add(&violations, 1);
}

static int leaf_effect(const void *value, void *p) {
    ctx *c = p;
    if (atomic_load(&c->destroyed)) atomic_fetch_add(&violations, 1);
    c->plain_calls++; /* a data race here means two passes of one graph overlapped */
    uintptr_t v = (uintptr_t)value;
    if (c->self != NULL && v % 4 == 1) {
        /* Reentrant: queued until this pass is over. */
        EXPECT(dfs_diffuser_run(c->self, (const void *)(v + 1)) == DFS_OK, "reentrant run");
    }
    return 0;
}

static int half(const void *value, const void **out, void *p) {
    ctx *c = p;
    c->plain_calls++;
    *out = (const void *)((uintptr_t)value / 2);
    return 0;
}

static int conn_effect(const void *value, void *p) {
    (void)value;
    ctx *c = p;
    if (atomic_load(&c->disposed)) atomic_fetch_add(&violations, 1); /* after dispose returned */
    c->plain_calls++; /* one event at a time per connection */
    if (c->feed != NULL) dfs_diffuser_run(c->feed, (const void *)(uintptr_t)3);
    return 0;
}

/* ------------------------------------------------------------------------------------
 * A source: a registry of live dispatches (and a closure for each, for the ffi source),
 * emitted to under the registry lock. That is safe here only because no effect of these
 * connections disposes its own and no loop is fed (a disconnect would then run inside
 * the emission: see dfs_source_disconnect_fn); stress_loops.c emits after the lock.
 * ------------------------------------------------------------------------------------ */

#define MAX_SINKS 256
typedef struct sink {
    dfs_dispatch *dispatch;
    void (*closure)(int32_t);
    int used;
} sink;

typedef struct source {
    pthread_mutex_t lock;
    sink sinks[MAX_SINKS];
    int ffi;
    atomic_int destroyed;
} source;

static int source_connect(dfs_dispatch *dispatch, void *p, void **connection) {
    source *s = p;
    void (*fn)(void) = NULL;
    if (s->ffi) {
        dfs_ffi_type args[1] = {DFS_FFI_INT32};
        if (dfs_closure_new(dispatch, DFS_FFI_VOID, args, 1, &fn) != DFS_OK) return 1;
    }
    pthread_mutex_lock(&s->lock);
    int slot = -1;
    for (int i = 0; i < MAX_SINKS; i++) {
        if (!s->sinks[i].used) {
            slot = i;
            break;
        }
    }
    if (slot >= 0) s->sinks[slot] = (sink){dispatch, (void (*)(int32_t))fn, 1};
    pthread_mutex_unlock(&s->lock);
    if (slot < 0) return 1; /* full: refuse */
    *connection = &s->sinks[slot];
    return 0;
}

static void source_disconnect(void *connection, void *p) {
    source *s = p;
    sink *k = connection;
    pthread_mutex_lock(&s->lock);
    if (!k->used) atomic_fetch_add(&violations, 1);
    k->used = 0;
    k->dispatch = NULL;
    k->closure = NULL;
    pthread_mutex_unlock(&s->lock);
}

static void source_destroy(void *p) { atomic_fetch_add(&((source *)p)->destroyed, 1); }

static void source_emit(source *s, uintptr_t v) {
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < MAX_SINKS; i++) {
        sink *k = &s->sinks[i];
        if (!k->used) continue;
        if (s->ffi && k->closure) {
            k->closure((int32_t)v);
        } else {
            dfs_status st = dfs_dispatch_emit(k->dispatch, (const void *)v);
            EXPECT(st == DFS_OK, "emit");
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------------------------
 * The shared pool and the threads
 * ------------------------------------------------------------------------------------ */

static dfs_diffuser *pool[LEAVES + TREES];
static source sources[2];
static dfs_fuser *fusers[3]; /* from(source 0), from(source 1: ffi) extracted, fromAll */

static int ffi_to_pointer(const void *value, const void **out, void *p) {
    (void)p;
    const dfs_ffi_event *e = value;
    *out = (const void *)(uintptr_t)(e && e->count ? (uintptr_t)e->args[0].as.i : 0);
    return 0;
}

static void *worker(void *arg) {
    uint32_t seed = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
    for (int i = 0; i < stress_iterations; i++) {
        uint32_t r = next_random(&seed);
        dfs_diffuser *a = pool[r % (LEAVES + TREES)];
        dfs_diffuser *b = pool[(r >> 8) % (LEAVES + TREES)];
        uintptr_t v = (r >> 16) % 9;
        switch ((r >> 24) % 8) {
        case 0:
        case 1:
            EXPECT(dfs_diffuser_run(a, (const void *)v) == DFS_OK, "run");
            break;
        case 2: { /* a tree over two pool diffusers, run at once: graphs merge */
            dfs_diffuser *children[2] = {a, b}, *tree = NULL;
            EXPECT(dfs_diffuser_into_all(dfs_type_pointer(), children, 2, &tree) == DFS_OK, "into_all");
            EXPECT(dfs_diffuser_run(tree, (const void *)v) == DFS_OK, "run tree");
            dfs_diffuser_release(tree);
            break;
        }
        case 3: { /* a map with a transform of its own */
            ctx *c = new_ctx();
            dfs_diffuser *m = NULL;
            EXPECT(dfs_diffuser_map(dfs_type_pointer(), half, c, ctx_destroy, a, &m) == DFS_OK, "map");
            EXPECT(dfs_diffuser_run(m, (const void *)v) == DFS_OK, "run map");
            EXPECT(dfs_diffuser_run(m, (const void *)(v + 2)) == DFS_OK, "run map");
            dfs_diffuser_release(m);
            break;
        }
        case 4: { /* a connection made and disposed while others emit */
            ctx *c = new_ctx();
            c->feed = (r & 1) ? a : NULL;
            dfs_disposable *x = NULL;
            dfs_fuser *f = fusers[(r >> 4) % 3];
            if (dfs_fuser_connect(f, conn_effect, c, ctx_destroy, &x) != DFS_OK) {
                /* a full source refuses: fine */
                break;
            }
            source_emit(&sources[r & 1], v);
            EXPECT(dfs_disposable_dispose(x) == DFS_OK, "dispose");
            atomic_store(&c->disposed, 1);
            source_emit(&sources[(r >> 1) & 1], v);
            dfs_disposable_release(x);
            break;
        }
        case 5:
        case 6:
            source_emit(&sources[r & 1], v);
            break;
        default:
            EXPECT(dfs_diffuser_retain(a) == DFS_OK, "retain");
            EXPECT(dfs_diffuser_run(a, (const void *)v) == DFS_OK, "run");
            EXPECT(dfs_diffuser_release(a) == DFS_OK, "release");
            break;
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) stress_iterations = atoi(argv[1]);
    dfs_type *ptr = dfs_type_pointer();

    /* Leaves (two reentrant), trees sharing them. */
    for (int i = 0; i < LEAVES; i++) {
        ctx *c = new_ctx();
        dfs_status s = i % 2 ? dfs_diffuser_into_always(ptr, leaf_effect, c, ctx_destroy, &pool[i])
                             : dfs_diffuser_into(ptr, leaf_effect, c, ctx_destroy, &pool[i]);
        EXPECT(s == DFS_OK, "leaf");
        if (i < 2) c->self = pool[i];
    }
    for (int t = 0; t < TREES; t++) {
        dfs_diffuser *children[3] = {pool[t], pool[t + 1], pool[(t + 3) % LEAVES]};
        EXPECT(dfs_diffuser_into_all(ptr, children, 3, &pool[LEAVES + t]) == DFS_OK, "tree");
    }

    /* Sources and fusers. */
    for (int i = 0; i < 2; i++) {
        pthread_mutex_init(&sources[i].lock, NULL);
        sources[i].ffi = i == 1;
    }
    EXPECT(dfs_fuser_from(ptr, source_connect, source_disconnect, &sources[0], source_destroy, &fusers[0]) == DFS_OK,
           "from");
    dfs_fuser *ffi = NULL;
    EXPECT(dfs_fuser_from(dfs_type_ffi_event(), source_connect, source_disconnect, &sources[1], source_destroy, &ffi) ==
               DFS_OK,
           "from ffi");
    ctx *xc = new_ctx();
    EXPECT(dfs_fuser_extract(ptr, ffi_to_pointer, xc, ctx_destroy, ffi, &fusers[1]) == DFS_OK, "extract");
    dfs_fuser *both[2] = {fusers[0], fusers[1]};
    EXPECT(dfs_fuser_from_all(ptr, both, 2, &fusers[2]) == DFS_OK, "from_all");
    dfs_fuser_release(ffi);

    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)(t + 1));
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);

    for (int i = 0; i < LEAVES + TREES; i++) dfs_diffuser_release(pool[i]);
    for (int i = 0; i < 3; i++) dfs_fuser_release(fusers[i]);

    int n = atomic_load(&n_contexts), leaked = 0;
    long calls = 0;
    for (int i = 0; i < n; i++) {
        if (atomic_load(&contexts[i]->destroyed) != 1) leaked++;
        calls += contexts[i]->plain_calls;
        free(contexts[i]);
    }
    for (int i = 0; i < 2; i++) {
        if (atomic_load(&sources[i].destroyed) != 1) leaked++;
        for (int k = 0; k < MAX_SINKS; k++)
            if (sources[i].sinks[k].used) leaked++;
        pthread_mutex_destroy(&sources[i].lock);
    }
    printf("stress_threads: %d threads x %d steps, %d contexts, %ld callback calls, %d not destroyed once, "
           "%d violations, %d failed calls\n",
           THREADS, stress_iterations, n, calls, leaked, atomic_load(&violations), atomic_load(&failures));
    return leaked || atomic_load(&violations) || atomic_load(&failures) ? 1 : 0;
}
