/*
 * test_faults.c — regressions of misuse, threads and faults found by probing the C API
 * as a hostile user would. Each section names the failure it keeps away:
 *
 *   - a run on one handle while other threads create, run and release handles (a
 *     released slot reused by another handle must never be read for the old one);
 *   - an effect that disposes its own connection while the event came through a libffi
 *     closure (the closure is freed while its call is still on the stack);
 *   - composing diffusers that were already run into one parent, many times (no leak);
 *   - dispose from inside an effect while the source's disconnect joins an emitting
 *     thread that waits for the connection (no deadlock);
 *   - a type released by its caller more often than retained (the library's own
 *     reference stays, the extra release is refused);
 *   - two graphs running on one thread (a pass of one inside an effect of the other)
 *     merged by a tree built inside the inner pass: a queued run is neither performed
 *     inside the effect that queued it nor twice, and the merged graph stays serialized
 *     against other threads (found by Tests/Fuzz).
 *
 * Also run under valgrind (--valgrind: shorter loops), which reports any read of freed
 * memory and any leak.
 *
 * One program because every section is a regression of the same kind (a hostile use of
 * the C API), each small and self-contained, and all want the same valgrind run; a file
 * per section would make six tiny executables and no clearer reading.
 */
#include "check.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static int ok_effect(const void *value, void *ctx) {
    (void)value;
    atomic_fetch_add((_Atomic long *)ctx, 1);
    return 0;
}

/* ------------------------------------------------------------------------------------
 * Runs on one handle while others churn through the handle table
 * ------------------------------------------------------------------------------------ */

typedef struct churn {
    dfs_diffuser *shared;
    _Atomic int stop;
    _Atomic long effects;
    _Atomic long failures;
    int rounds;
} churn;

static void *run_shared(void *arg) {
    churn *c = arg;
    while (!atomic_load(&c->stop)) {
        if (dfs_diffuser_run(c->shared, IV(7)) != DFS_OK) atomic_fetch_add(&c->failures, 1);
        if (dfs_diffuser_run(c->shared, IV(8)) != DFS_OK) atomic_fetch_add(&c->failures, 1);
    }
    return NULL;
}

static void *create_run_release(void *arg) {
    churn *c = arg;
    for (int i = 0; i < c->rounds; i++) {
        dfs_diffuser *d = NULL;
        if (dfs_diffuser_into(dfs_type_pointer(), ok_effect, (void *)&c->effects, NULL, &d) != DFS_OK) {
            atomic_fetch_add(&c->failures, 1);
            continue;
        }
        if (dfs_diffuser_run(d, IV(i)) != DFS_OK) atomic_fetch_add(&c->failures, 1);
        if (dfs_diffuser_release(d) != DFS_OK) atomic_fetch_add(&c->failures, 1);
        /* The released handle is stale even when its slot was reused. */
        if (dfs_diffuser_run(d, IV(i)) != DFS_ERR_HANDLE) atomic_fetch_add(&c->failures, 1);
    }
    return NULL;
}

static void test_runs_while_handles_churn(void) {
    check_section("runs on one handle while other threads create, run and release handles");
    churn c = {.rounds = check_scale(20000, 300)};
    atomic_init(&c.stop, 0);
    atomic_init(&c.effects, 0);
    atomic_init(&c.failures, 0);
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), ok_effect, (void *)&c.effects, NULL, &c.shared), "shared into");
    pthread_t readers[2], writers[2];
    for (int i = 0; i < 2; i++) pthread_create(&readers[i], NULL, run_shared, &c);
    for (int i = 0; i < 2; i++) pthread_create(&writers[i], NULL, create_run_release, &c);
    for (int i = 0; i < 2; i++) pthread_join(writers[i], NULL);
    atomic_store(&c.stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(readers[i], NULL);
    CHECK(atomic_load(&c.failures) == 0, "every run, release and stale run answered as expected (%ld failures)",
          atomic_load(&c.failures));
    CHECK(atomic_load(&c.effects) >= 2L * c.rounds, "every fresh diffuser ran its effect");
    CHECK_OK(dfs_diffuser_release(c.shared), "release shared");
    CHECK_STATUS(dfs_diffuser_run(c.shared, IV(7)), DFS_ERR_HANDLE, "a run after the last release is refused");
}

/* ------------------------------------------------------------------------------------
 * An effect that disposes its own connection, the event coming through a closure
 * ------------------------------------------------------------------------------------ */

static int (*registered)(int);

static int closure_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx, (void)connection;
    static const dfs_ffi_type args[] = {DFS_FFI_INT32};
    void (*fn)(void) = NULL;
    if (dfs_closure_new(dispatch, DFS_FFI_INT, args, 1, &fn) != DFS_OK) return 1;
    registered = (int (*)(int))fn;
    return 0;
}

static void closure_disconnect(void *connection, void *ctx) {
    (void)connection;
    (*(int *)ctx)++;
    registered = NULL;
}

typedef struct self_disposer {
    dfs_disposable *connection;
    int events;
} self_disposer;

static int dispose_own_connection(const void *value, void *ctx) {
    (void)value;
    self_disposer *s = ctx;
    s->events++;
    return dfs_disposable_dispose(s->connection) == DFS_OK ? 0 : 1;
}

static void test_closure_disposed_by_its_own_event(void) {
    check_section("an effect disposes its own connection during a closure call");
    int disconnects = 0;
    dfs_fuser *f = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), closure_connect, closure_disconnect, &disconnects, NULL, &f),
             "from");
    self_disposer s = {0};
    CHECK_OK(dfs_fuser_connect(f, dispose_own_connection, &s, NULL, &s.connection), "connect");
    CHECK(registered != NULL, "the source registered a closure");
    int status = registered(42);
    CHECK_INT(status, DFS_OK, "the closure call returns DFS_OK after its effect freed the closure");
    CHECK_INT(s.events, 1, "the effect ran once");
    CHECK_INT(disconnects, 1, "the source was disconnected once");
    CHECK(registered == NULL, "the source unregistered the closure");
    dfs_disposable_release(s.connection);
    dfs_fuser_release(f);
}

/* ------------------------------------------------------------------------------------
 * Composing diffusers that already ran, many times: nothing leaks
 * ------------------------------------------------------------------------------------ */

static void merge_round(_Atomic long *effects, int i) {
    dfs_diffuser *a = NULL, *b = NULL, *parent = NULL;
    dfs_diffuser_into(dfs_type_pointer(), ok_effect, (void *)effects, NULL, &a);
    dfs_diffuser_into(dfs_type_pointer(), ok_effect, (void *)effects, NULL, &b);
    dfs_diffuser_run(a, IV(i));
    dfs_diffuser_run(b, IV(i));
    dfs_diffuser *kids[2] = {a, b};
    dfs_diffuser_into_always_all(dfs_type_pointer(), kids, 2, &parent);
    dfs_diffuser_run(parent, IV(i + 1));
    dfs_diffuser_release(a);
    dfs_diffuser_release(b);
    dfs_diffuser_release(parent);
}

static void test_merging_run_graphs_does_not_leak(void) {
    check_section("composing diffusers that already ran, repeatedly");
    _Atomic long effects;
    atomic_init(&effects, 0);
    for (int i = 0; i < 200; i++) merge_round(&effects, i); /* warm up the runtime's caches */
    struct mallinfo2 before = mallinfo2();
    int rounds = check_scale(20000, 500);
    for (int i = 0; i < rounds; i++) merge_round(&effects, i);
    struct mallinfo2 after = mallinfo2();
    long grown = (long)after.uordblks - (long)before.uordblks;
    CHECK(grown < 64 * 1024, "heap in use grew by %ld bytes over %d rounds (a leak per round would show)", grown,
          rounds);
    CHECK(atomic_load(&effects) == 4L * (rounds + 200), "every round ran both effects twice");
}

/* ------------------------------------------------------------------------------------
 * Dispose from inside an effect while the source's disconnect joins its emitting thread
 * ------------------------------------------------------------------------------------ */

typedef struct ticker {
    dfs_dispatch *dispatch;
    pthread_t thread;
    _Atomic int stop;
    _Atomic int emitted;
} ticker;

/* Emits every 50 us: often enough to be waiting for the connection while the manual
 * event's effect runs (20 ms), seldom enough that the main thread's emit gets the
 * connection between two ticks (back to back, under valgrind's scheduler, the ticker
 * could take it again each time and starve the main thread for a minute). */
static void *tick(void *arg) {
    ticker *t = arg;
    while (!atomic_load(&t->stop)) {
        dfs_dispatch_emit(t->dispatch, IV(1));
        atomic_fetch_add(&t->emitted, 1);
        sleep_us(50);
    }
    return NULL;
}

static int ticker_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    ticker *t = ctx;
    t->dispatch = dispatch;
    atomic_store(&t->stop, 0);
    pthread_create(&t->thread, NULL, tick, t);
    *connection = t;
    return 0;
}

static void ticker_disconnect(void *connection, void *ctx) {
    (void)ctx;
    ticker *t = connection;
    atomic_store(&t->stop, 1);
    pthread_join(t->thread, NULL); /* waits for an emit that may wait for the connection */
}

static dfs_dispatch *manual_dispatch;

static int manual_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx, (void)connection;
    manual_dispatch = dispatch;
    return 0;
}

static void manual_disconnect(void *connection, void *ctx) {
    (void)connection, (void)ctx;
    manual_dispatch = NULL;
}

typedef struct disposer {
    dfs_disposable *connection;
    _Atomic int ticks;
    _Atomic int disposed;
} disposer;

static int dispose_on_manual_event(const void *value, void *ctx) {
    disposer *d = ctx;
    if (value == IV(2)) {
        /* Give the ticker time to block on this connection while the effect runs. */
        sleep_us(20000);
        dfs_disposable_dispose(d->connection);
        atomic_store(&d->disposed, 1);
    } else {
        atomic_fetch_add(&d->ticks, 1);
    }
    return 0;
}

static void on_alarm(int sig) {
    (void)sig;
    static const char message[] = "FAIL dispose from inside an effect deadlocked (no progress in 60 s)\n";
    write(1, message, sizeof message - 1);
    _exit(1);
}

static void test_dispose_in_effect_with_joining_source(void) {
    check_section("dispose from inside an effect, the source joining its emitting thread");
    signal(SIGALRM, on_alarm);
    alarm(60);
    ticker t = {0};
    atomic_init(&t.stop, 0);
    atomic_init(&t.emitted, 0);
    dfs_fuser *ticks = NULL, *manual = NULL, *both = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_pointer(), ticker_connect, ticker_disconnect, &t, NULL, &ticks), "ticker");
    CHECK_OK(dfs_fuser_from(dfs_type_pointer(), manual_connect, manual_disconnect, NULL, NULL, &manual), "manual");
    dfs_fuser *kids[2] = {ticks, manual};
    CHECK_OK(dfs_fuser_from_all(dfs_type_pointer(), kids, 2, &both), "from_all");
    disposer d = {0};
    atomic_init(&d.ticks, 0);
    atomic_init(&d.disposed, 0);
    CHECK_OK(dfs_fuser_connect(both, dispose_on_manual_event, &d, NULL, &d.connection), "connect");
    while (atomic_load(&t.emitted) < 10) sleep_us(100);
    CHECK_OK(dfs_dispatch_emit(manual_dispatch, IV(2)), "the manual event whose effect disposes");
    alarm(0);
    CHECK(atomic_load(&d.disposed) == 1, "the effect disposed the connection and returned");
    CHECK(manual_dispatch == NULL, "the manual source was disconnected");
    int ticks_after = atomic_load(&d.ticks);
    sleep_us(5000);
    CHECK_INT(atomic_load(&d.ticks), ticks_after, "no event reaches the effect after dispose returned");
    dfs_disposable_release(d.connection);
    dfs_fuser_release(both);
    dfs_fuser_release(ticks);
    dfs_fuser_release(manual);
}

/* ------------------------------------------------------------------------------------
 * A type released by its caller more often than retained
 * ------------------------------------------------------------------------------------ */

static int equal_calls;

static int counting_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    equal_calls++;
    return a == b;
}

static void test_type_over_release(void) {
    check_section("a type released more often than its caller retained it");
    int destroyed = 0;
    dfs_type *type = NULL;
    CHECK_OK(dfs_type_new("counted", counting_equal, NULL, NULL, &destroyed, count_destroy, &type), "type_new");
    dfs_diffuser *d = NULL;
    _Atomic long effects;
    atomic_init(&effects, 0);
    CHECK_OK(dfs_diffuser_into(type, ok_effect, (void *)&effects, NULL, &d), "into over the type");
    CHECK_OK(dfs_type_release(type), "the caller's one release");
    CHECK_STATUS(dfs_type_release(type), DFS_ERR_HANDLE, "a second release by the caller is refused");
    CHECK_ERROR_HAS("released more times than it was retained", "the error says so");
    CHECK_INT(destroyed, 0, "the type lives on in the diffuser");
    CHECK(dfs_diffuser_type(d) == type, "the diffuser still reports its type's handle");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2 compares through the type");
    CHECK_INT(equal_calls, 1, "the type's equality was called");
    CHECK_OK(dfs_type_retain(type), "the caller may retain the borrowed handle again");
    CHECK_OK(dfs_type_release(type), "and release it");
    CHECK_OK(dfs_diffuser_release(d), "release the diffuser");
    CHECK_INT(destroyed, 1, "the type is destroyed with its last reference");
    CHECK_STATUS(dfs_type_retain(type), DFS_ERR_HANDLE, "the type's handle is stale now");
}

/* ------------------------------------------------------------------------------------
 * Two graphs running on one thread, merged inside the inner pass
 * ------------------------------------------------------------------------------------ */

static dfs_diffuser *m0, *m2;
static test_log merge_log;
static int m0_active, m0_nested, m2_twos;
static _Atomic int other_thread_ran;

static void *run_m0_elsewhere(void *arg) {
    (void)arg;
    dfs_diffuser_run(m0, IV(9));
    atomic_store(&other_thread_ran, 1);
    return NULL;
}

/* Builds and runs a tree over both graphs, which merges them. */
static void merge_both(dfs_diffuser *first, dfs_diffuser *second, intptr_t value) {
    dfs_diffuser *children[2] = {first, second}, *joined = NULL;
    dfs_diffuser_into_always_all(dfs_type_pointer(), children, 2, &joined);
    dfs_diffuser_run(joined, IV(value));
    dfs_diffuser_release(joined);
}

static int scenario;

static int merge_e2(const void *value, void *ctx) {
    (void)ctx;
    intptr_t v = (intptr_t)value;
    log_add(&merge_log, "e2(%d)", (int)v);
    if (scenario == 1 && v == 3) merge_both(m2, m0, 5);
    if (scenario == 2 && v == 1 && m2_twos == 0) dfs_diffuser_run(m2, IV(2)); /* queued */
    if (scenario == 2 && v == 2 && m2_twos++ == 0) merge_both(m0, m2, 1);
    if (scenario == 3 && v == 3) merge_both(m2, m0, 5);
    return 0;
}

static int merge_e0(const void *value, void *ctx) {
    (void)ctx;
    intptr_t v = (intptr_t)value;
    if (m0_active) m0_nested = 1;
    m0_active++;
    log_add(&merge_log, "e0(%d)", (int)v);
    if (scenario == 1 && v == 1) {
        dfs_diffuser_run(m0, IV(2)); /* queued: after this effect returned */
        dfs_diffuser_run(m2, IV(3)); /* another graph: runs now */
    }
    if (scenario == 2 && v == 1 && m2_twos == 0) dfs_diffuser_run(m2, IV(1));
    if (scenario == 3 && v == 1) {
        dfs_diffuser_run(m2, IV(3));
        pthread_t other;
        pthread_create(&other, NULL, run_m0_elsewhere, NULL);
        sleep_us(check_scale(100000, 300000));
        /* The other thread's run must wait for this pass to end. */
        if (atomic_load(&other_thread_ran)) m0_nested = 2;
        m0_active--;
        pthread_detach(other);
        return 0;
    }
    m0_active--;
    return 0;
}

static void merge_scenario(int which) {
    scenario = which;
    m0_active = m0_nested = m2_twos = 0;
    atomic_store(&other_thread_ran, 0);
    log_clear(&merge_log);
    dfs_diffuser_into_always(dfs_type_pointer(), merge_e0, NULL, NULL, &m0);
    dfs_diffuser_into_always(dfs_type_pointer(), merge_e2, NULL, NULL, &m2);
}

static void test_graphs_merged_inside_a_nested_pass(void) {
    check_section("two graphs running on one thread, merged inside the inner pass");

    merge_scenario(1);
    CHECK_OK(dfs_diffuser_run(m0, IV(1)), "run");
    CHECK(m0_nested == 0, "the run queued by e0 was not performed inside e0");
    /* The merging tree joins the graph this thread is running: its run is queued too,
     * after the run e0 queued first. */
    CHECK_LOG(&merge_log, "e0(1) e2(3) e0(2) e2(5) e0(5)",
              "the queued runs are performed after the outer pass, in the order queued");
    dfs_diffuser_release(m0);
    dfs_diffuser_release(m2);

    merge_scenario(2);
    CHECK_OK(dfs_diffuser_run(m0, IV(1)), "run");
    CHECK_INT(m2_twos, 1, "the queued run(d2, 2) was performed once");
    CHECK_LOG(&merge_log, "e0(1) e2(1) e2(2) e0(1) e2(1)", "each run performed once, in order");
    dfs_diffuser_release(m0);
    dfs_diffuser_release(m2);

    merge_scenario(3);
    CHECK_OK(dfs_diffuser_run(m0, IV(1)), "run");
    CHECK(m0_nested == 0, "another thread's run of the merged graph waited for the pass in progress");
    while (!atomic_load(&other_thread_ran)) sleep_us(1000);
    dfs_diffuser_release(m0);
    dfs_diffuser_release(m2);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_type_over_release();
    test_closure_disposed_by_its_own_event();
    test_dispose_in_effect_with_joining_source();
    test_merging_run_graphs_does_not_leak();
    test_runs_while_handles_churn();
    test_graphs_merged_inside_a_nested_pass();
    return check_finish();
}
