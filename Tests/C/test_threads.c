/*
 * test_threads.c — reentrancy and threads.
 *
 * A run called from inside the graph's own effect is queued and performed right after
 * the current pass, in order, before the outermost run returns: no deadlock, no nested
 * pass. Runs of one graph from several threads are serialized and none is lost (a
 * deliberately non-atomic counter incremented in the effect ends at the total). The
 * last release racing runs on other threads neither frees the diffuser under them nor
 * is lost.
 *
 * One program because both halves test one promise, that the runs of a graph are
 * serialized, from its two sides: reentrant runs on one thread (queued) and runs from
 * many threads (waiting); several tests mix the two.
 */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

/* ------------------------------------------------------------------------------------
 * Reentrancy
 * ------------------------------------------------------------------------------------ */

typedef struct reentrant {
    test_log *log;
    dfs_diffuser *self;   /* the diffuser to run again from inside the effect */
    int depth;            /* > 1 would mean a nested pass */
    int max_depth;
    int bad_status;       /* a reentrant run that did not return DFS_OK */
} reentrant;

static int reentrant_effect(const void *value, void *ctx) {
    reentrant *r = ctx;
    long v = (long)(intptr_t)value;
    if (++r->depth > r->max_depth) r->max_depth = r->depth;
    log_add(r->log, "start:%ld", v);
    dfs_status s1 = DFS_OK, s2 = DFS_OK;
    if (v == 1) {
        s1 = dfs_diffuser_run(r->self, IV(2));
        s2 = dfs_diffuser_run(r->self, IV(3));
    } else if (v == 2) {
        s1 = dfs_diffuser_run(r->self, IV(4));
    }
    if (s1 != DFS_OK || s2 != DFS_OK) r->bad_status++;
    log_add(r->log, "end:%ld", v);
    r->depth--;
    return 0;
}

/* On "a": runs "b" from a stack buffer that is overwritten before the effect returns;
 * the queued run must see the value as it was passed (the core retains it). */
static int reentrant_string_effect(const void *value, void *ctx) {
    reentrant *r = ctx;
    log_add(r->log, "s:%s", (const char *)value);
    if (strcmp(value, "a") == 0) {
        char buffer[8] = "b";
        if (dfs_diffuser_run(r->self, buffer) != DFS_OK) r->bad_status++;
        strcpy(buffer, "zzz");
    } else if (strcmp(value, "b") == 0) {
        if (dfs_diffuser_run(r->self, "b") != DFS_OK) r->bad_status++; /* equal: gated */
    }
    return 0;
}

/* A leaf deep inside a tree runs the tree's root. */
typedef struct loop_ctx {
    test_log *log;
    dfs_diffuser *root;
} loop_ctx;

static int identity(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = value;
    return 0;
}

static int loop_effect(const void *value, void *ctx) {
    loop_ctx *l = ctx;
    long v = (long)(intptr_t)value;
    log_add(l->log, "leaf:%ld", v);
    if (v < 5) dfs_diffuser_run(l->root, IV(v + 1));
    return 0;
}

/* A reentrant run whose queued pass fails: the error reaches the outermost caller. */
typedef struct fail_later {
    test_log *log;
    dfs_diffuser *self;
} fail_later;

static int fail_later_effect(const void *value, void *ctx) {
    fail_later *f = ctx;
    long v = (long)(intptr_t)value;
    log_add(f->log, "f:%ld", v);
    if (v == 1) dfs_diffuser_run(f->self, IV(5));
    if (v == 5) {
        dfs_set_error("queued pass failed");
        return 1;
    }
    return 0;
}

static void test_reentrancy(void) {
    check_section("reentrant runs are queued");
    test_log log;
    log_clear(&log);
    reentrant r = {&log, NULL, 0, 0, 0};
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), reentrant_effect, &r, NULL, &r.self), "into_always");
    CHECK_OK(dfs_diffuser_run(r.self, IV(1)), "run 1 (which runs 2 and 3, and 2 runs 4)");
    CHECK_LOG(&log, "start:1 end:1 start:2 end:2 start:3 end:3 start:4 end:4",
              "queued runs come after the current pass, in order");
    CHECK_INT(r.max_depth, 1, "no pass ever nested in another");
    CHECK_INT(r.bad_status, 0, "every reentrant run returned DFS_OK");
    dfs_diffuser_release(r.self);

    /* The value of a queued run is retained (a copy for cstring). */
    reentrant rs = {&log, NULL, 0, 0, 0};
    CHECK_OK(dfs_diffuser_into(dfs_type_cstring(), reentrant_string_effect, &rs, NULL, &rs.self), "into(cstring)");
    CHECK_OK(dfs_diffuser_run(rs.self, "a"), "run \"a\"");
    CHECK_LOG(&log, "s:a s:b", "the queued run saw \"b\" although the buffer was overwritten; the second \"b\" was gated");
    CHECK_INT(rs.bad_status, 0, "reentrant runs returned DFS_OK");
    dfs_diffuser_release(rs.self);

    /* A leaf deep in a tree runs the root: queued through the shared graph. */
    loop_ctx lc = {&log, NULL};
    dfs_diffuser *l = NULL, *m = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), loop_effect, &lc, NULL, &l), "leaf");
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), identity, NULL, NULL, l, &m), "map");
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), &m, 1, &lc.root), "root");
    dfs_diffuser_release(l);
    dfs_diffuser_release(m);
    CHECK_OK(dfs_diffuser_run(lc.root, IV(1)), "run the root with 1");
    CHECK_LOG(&log, "leaf:1 leaf:2 leaf:3 leaf:4 leaf:5", "a loop through the root runs to completion");
    dfs_diffuser_release(lc.root);

    fail_later fl = {&log, NULL};
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), fail_later_effect, &fl, NULL, &fl.self), "into_always");
    CHECK_STATUS(dfs_diffuser_run(fl.self, IV(1)), DFS_ERR_CALLBACK, "the queued pass's failure reaches the outermost run");
    CHECK_STR(dfs_last_error(), "queued pass failed", "with its message");
    CHECK_LOG(&log, "f:1 f:5", "both passes ran");
    dfs_diffuser_release(fl.self);

    log_clear(&log);
}

/* A reentrant box run: the effect queues a run with a box it drops right away. */
typedef struct box_loop {
    test_log *log;
    dfs_diffuser *self;
} box_loop;

static int box_loop_effect(const void *value, void *ctx) {
    box_loop *b = ctx;
    long v = ((const box *)value)->value;
    log_add(b->log, "box:%ld", v);
    if (v < 3) {
        box *next = box_new(v + 1);
        dfs_diffuser_run(b->self, next);
        box_unref(next); /* the core must have retained it for the queued run */
    }
    return 0;
}

static void test_reentrant_retain(void) {
    check_section("values of queued runs are retained and released");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    box_loop bl = {&log, NULL};
    CHECK_OK(dfs_diffuser_into(bt, box_loop_effect, &bl, NULL, &bl.self), "into(box)");
    dfs_type_release(bt);
    box *first = box_new(1);
    CHECK_OK(dfs_diffuser_run(bl.self, first), "run box 1");
    box_unref(first);
    CHECK_LOG(&log, "box:1 box:2 box:3", "queued boxes were alive when their pass ran");
    CHECK_INT(box_live, 1, "only the cached box is alive");
    dfs_diffuser_release(bl.self);
    CHECK_INT(box_live, 0, "no box outstanding");
    CHECK_INT(tc.destroyed, 1, "type destroyed once");
}

/* ------------------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------------------ */

typedef struct counter {
    volatile long count;  /* deliberately not atomic: the serializer must protect it */
    volatile int inside;
    atomic_int overlaps;  /* an effect that found another one running */
} counter;

static int counting_effect(const void *value, void *ctx) {
    (void)value;
    counter *c = ctx;
    if (c->inside) atomic_fetch_add(&c->overlaps, 1);
    c->inside = 1;
    long seen = c->count;
    for (volatile int spin = 0; spin < 20; spin++) {
    }
    if ((seen & 63) == 0) sched_yield(); /* invite the scheduler to interleave */
    c->count = seen + 1;
    c->inside = 0;
    return 0;
}

typedef struct runner {
    dfs_diffuser *target;
    int runs;
    int id;
    atomic_int *failures;
} runner;

static void *run_many(void *arg) {
    runner *r = arg;
    for (int i = 0; i < r->runs; i++) {
        if (dfs_diffuser_run(r->target, IV(r->id * 1000000 + i)) != DFS_OK) atomic_fetch_add(r->failures, 1);
    }
    return NULL;
}

#define THREADS 4

static void test_concurrent_runs(void) {
    check_section("runs from several threads are serialized; none is lost");
    int per_thread = check_scale(20000, 1000);
    counter c = {0, 0, 0};
    atomic_int failures = 0;
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), counting_effect, &c, NULL, &d), "into_always");
    pthread_t threads[THREADS];
    runner runners[THREADS];
    for (int t = 0; t < THREADS; t++) {
        runners[t] = (runner){d, per_thread, t, &failures};
        pthread_create(&threads[t], NULL, run_many, &runners[t]);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    CHECK_INT(atomic_load(&failures), 0, "every run returned DFS_OK");
    CHECK_INT(c.count, (long)THREADS * per_thread, "the non-atomic counter equals the number of runs (%d threads x %d)",
              THREADS, per_thread);
    CHECK_INT(atomic_load(&c.overlaps), 0, "no two effects ever overlapped");
    dfs_diffuser_release(d);

    /* Two roots sharing a child are one graph: runs of either root are serialized. */
    counter shared = {0, 0, 0};
    dfs_diffuser *child = NULL, *root_a = NULL, *root_b = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), counting_effect, &shared, NULL, &child), "shared child");
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), &child, 1, &root_a), "root a");
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), identity, NULL, NULL, child, &root_b), "root b (map)");
    dfs_diffuser_release(child);
    for (int t = 0; t < THREADS; t++) {
        runners[t] = (runner){t % 2 ? root_a : root_b, per_thread, t, &failures};
        pthread_create(&threads[t], NULL, run_many, &runners[t]);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    CHECK_INT(atomic_load(&failures), 0, "every run returned DFS_OK");
    CHECK_INT(shared.count, (long)THREADS * per_thread, "the shared child's counter equals the number of runs of both roots");
    CHECK_INT(atomic_load(&shared.overlaps), 0, "no overlap across roots");
    dfs_diffuser_release(root_a);
    dfs_diffuser_release(root_b);
}

/* Threads whose effects also run the diffuser reentrantly. */
typedef struct mixed {
    volatile long count;
    dfs_diffuser *self;
    atomic_int overlaps;
    volatile int inside;
} mixed;

static int mixed_effect(const void *value, void *ctx) {
    mixed *m = ctx;
    if (m->inside) atomic_fetch_add(&m->overlaps, 1);
    m->inside = 1;
    m->count = m->count + 1;
    m->inside = 0;
    /* Odd values queue one follow-up run with an even value. */
    long v = (long)(intptr_t)value;
    if (v & 1) dfs_diffuser_run(m->self, IV(v + 1));
    return 0;
}

static void *run_odd(void *arg) {
    runner *r = arg;
    for (int i = 0; i < r->runs; i++) {
        if (dfs_diffuser_run(r->target, IV(2 * i + 1)) != DFS_OK) atomic_fetch_add(r->failures, 1);
    }
    return NULL;
}

static void test_concurrent_reentrant(void) {
    check_section("threads and reentrant runs together");
    int per_thread = check_scale(10000, 500);
    mixed m = {0, NULL, 0, 0};
    atomic_int failures = 0;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), mixed_effect, &m, NULL, &m.self), "into_always");
    pthread_t threads[THREADS];
    runner runners[THREADS];
    for (int t = 0; t < THREADS; t++) {
        runners[t] = (runner){m.self, per_thread, t, &failures};
        pthread_create(&threads[t], NULL, run_odd, &runners[t]);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    CHECK_INT(atomic_load(&failures), 0, "every run returned DFS_OK");
    CHECK_INT(m.count, 2L * THREADS * per_thread, "every run and every queued run happened exactly once");
    CHECK_INT(atomic_load(&m.overlaps), 0, "no overlap");
    dfs_diffuser_release(m.self);
}

/* Handles made and released on many threads at once: the handle table stays sound. */
static void *churn(void *arg) {
    runner *r = arg;
    for (int i = 0; i < r->runs; i++) {
        counter c = {0, 0, 0};
        dfs_diffuser *leaf = NULL, *root = NULL;
        if (dfs_diffuser_into(dfs_type_pointer(), counting_effect, &c, NULL, &leaf) != DFS_OK ||
            dfs_diffuser_into_all(dfs_type_pointer(), &leaf, 1, &root) != DFS_OK) {
            atomic_fetch_add(r->failures, 1);
            continue;
        }
        dfs_diffuser_release(leaf);
        dfs_diffuser_run(root, IV(1));
        dfs_diffuser_run(root, IV(1));
        dfs_diffuser_run(root, IV(2));
        if (c.count != 2) atomic_fetch_add(r->failures, 1);
        if (dfs_diffuser_release(root) != DFS_OK) atomic_fetch_add(r->failures, 1);
        if (dfs_diffuser_run(root, IV(3)) != DFS_ERR_HANDLE) atomic_fetch_add(r->failures, 1);
    }
    return NULL;
}

static void test_handle_churn(void) {
    check_section("handles created and released on several threads");
    int per_thread = check_scale(5000, 200);
    atomic_int failures = 0;
    pthread_t threads[THREADS];
    runner runners[THREADS];
    for (int t = 0; t < THREADS; t++) {
        runners[t] = (runner){NULL, per_thread, t, &failures};
        pthread_create(&threads[t], NULL, churn, &runners[t]);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    CHECK_INT(atomic_load(&failures), 0, "every handle worked while alive and failed with DFS_ERR_HANDLE after release");
}

/* Releasing a handle's last reference while other threads run it must neither free the
 * diffuser under them nor lose the release: their runs end with DFS_ERR_HANDLE, and the
 * tree is destroyed once. */
typedef struct racing_runner {
    dfs_diffuser *target;
    atomic_int *started;
    long runs;
    dfs_status last;
} racing_runner;

static atomic_int destroyed_effects;

static void count_effect_destroy(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&destroyed_effects, 1);
}

static void *run_until_released(void *arg) {
    racing_runner *r = arg;
    atomic_fetch_add(r->started, 1);
    dfs_status s;
    while ((s = dfs_diffuser_run(r->target, IV(7))) == DFS_OK) r->runs++;
    r->last = s;
    return NULL;
}

static void test_runs_racing_release(void) {
    check_section("runs of the held value while the last reference is released on another thread");
    int rounds = check_scale(50, 5);
    int bad_status = 0, early = 0, destroys = 0;
    long rendered_total = 0;
    for (int round = 0; round < rounds; round++) {
        counter c = {0, 0, 0};
        atomic_store(&destroyed_effects, 0);
        dfs_diffuser *leaf = NULL, *root = NULL;
        CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), counting_effect, &c, count_effect_destroy, &leaf), "into");
        CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), &leaf, 1, &root), "into_all");
        dfs_diffuser_release(leaf);
        CHECK_OK(dfs_diffuser_run(root, IV(7)), "first run");
        atomic_int started = 0;
        pthread_t threads[THREADS];
        racing_runner runners[THREADS];
        for (int t = 0; t < THREADS; t++) {
            runners[t] = (racing_runner){root, &started, 0, DFS_OK};
            pthread_create(&threads[t], NULL, run_until_released, &runners[t]);
        }
        while (atomic_load(&started) < THREADS) sched_yield();
        for (volatile int spin = 0; spin < 2000 * (round % 7); spin++) {
        }
        if (atomic_load(&destroyed_effects) != 0) early++;
        CHECK_OK(dfs_diffuser_release(root), "release while runs are in flight");
        for (int t = 0; t < THREADS; t++) {
            pthread_join(threads[t], NULL);
            if (runners[t].last != DFS_ERR_HANDLE) bad_status++;
        }
        destroys += atomic_load(&destroyed_effects);
        rendered_total += c.count;
    }
    CHECK_INT(early, 0, "nothing was destroyed before the release");
    CHECK_INT(destroys, rounds, "each release destroyed the effect once, by the time the runs ended");
    CHECK_INT(bad_status, 0, "every thread's runs ended with DFS_ERR_HANDLE");
    CHECK_INT(rendered_total, rounds, "only the first run rendered: the others ran the value the gate held");
}

/* Threads that run a diffuser and end, many more than run at once. */
static void *run_once_and_end(void *arg) {
    racing_runner *r = arg;
    r->last = dfs_diffuser_run(r->target, IV(7));
    return NULL;
}

static void test_runs_on_short_threads(void) {
    check_section("runs on threads that come and go");
    counter c = {0, 0, 0};
    dfs_diffuser *root = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), counting_effect, &c, NULL, &root), "into");
    CHECK_OK(dfs_diffuser_run(root, IV(7)), "first run");
    int threads = check_scale(400, 40), bad = 0;
    for (int t = 0; t < threads; t++) {
        racing_runner r = {root, NULL, 0, DFS_ERR_HANDLE};
        pthread_t thread;
        pthread_create(&thread, NULL, run_once_and_end, &r);
        pthread_join(thread, NULL);
        if (r.last != DFS_OK) bad++;
    }
    CHECK_INT(bad, 0, "every run returned DFS_OK");
    CHECK_INT(c.count, 1, "and none rendered again");
    CHECK_OK(dfs_diffuser_release(root), "release");
    CHECK_INT(dfs_diffuser_run(root, IV(7)), DFS_ERR_HANDLE, "a released handle is reported, not read");
}

/* Errors are per thread. */
typedef struct error_probe {
    dfs_diffuser *bad;
    int ok;
} error_probe;

static void *probe_errors(void *arg) {
    error_probe *p = arg;
    dfs_status s = dfs_diffuser_run(p->bad, NULL);
    const char *msg = dfs_last_error();
    p->ok = s == DFS_ERR_HANDLE && msg != NULL && strstr(msg, "not a live") != NULL;
    return NULL;
}

static void test_thread_local_errors(void) {
    check_section("dfs_last_error is per thread");
    dfs_set_error(NULL);
    error_probe p = {(dfs_diffuser *)(uintptr_t)0xdead0001, 0};
    pthread_t thread;
    pthread_create(&thread, NULL, probe_errors, &p);
    pthread_join(thread, NULL);
    CHECK(p.ok, "the other thread saw its own error");
    CHECK_STR(dfs_last_error(), "", "this thread's message is untouched");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_reentrancy();
    test_reentrant_retain();
    test_concurrent_runs();
    test_concurrent_reentrant();
    test_handle_churn();
    test_runs_racing_release();
    test_runs_on_short_threads();
    test_thread_local_errors();
    return check_finish();
}
