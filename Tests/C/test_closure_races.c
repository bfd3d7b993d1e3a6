/*
 * test_closure_races.c — libffi closures (dfs_closure_new) called and made on other
 * threads while the connection whose dispatch they emit through is disposed.
 *
 * 1. Calls from other threads: threads call the function pointer a registry holds (as a
 *    C library calling its callback on its own threads) while the main thread connects
 *    and disposes. The source's disconnect does what the header asks: it unregisters
 *    the pointer and waits for the calls through it under way. No event reaches an
 *    effect after its dispose returned; valgrind (valgrind_test_closure_races) sees
 *    every closure freed once, after its last call.
 * 2. dfs_closure_new racing the dispose: threads make closures on the dispatch of the
 *    current connection while the main thread disposes it. Each call either makes a
 *    closure of the live connection (freed with it) or fails with DFS_ERR_HANDLE; none
 *    leaks or is freed twice.
 * 3. dfs_closure_new on another thread while the source's disconnect runs: refused, as
 *    the disconnect could not unregister the closure.
 * 4. An effect that disposes its connection from inside a call through the closure: the
 *    source's disconnect runs inside that call and waits only for other threads' calls
 *    (the header's recipe); the closure is freed once the call returns.
 * 5. A loop (the caller's executor) fed by the closure: a library thread's call drains
 *    the idle loop; a step's observer stops it while a feedback on its own executor
 *    calls the closure too. The stop waits for the feedback, whose call must not wait
 *    for the draining thread: the drain runs once the delivery has let go of the
 *    source's connection. Bounded by an alarm.
 *
 * One file although over 400 lines: the five cases check one promise of the header (a
 * closure called or made on other threads while its connection is disposed), and cases
 * 1, 4 and 5 connect through the same registry (registry_connect), 4 and 5 in its
 * two-caller form.
 */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <stdatomic.h>

typedef void (*int_fn)(int32_t);

/* ------------------------------------------------------------------------------------
 * 1. Calls from other threads while the connection is disposed
 * ------------------------------------------------------------------------------------ */

static _Atomic(int_fn) registered;
static atomic_int stop_callers;
static atomic_long calls;
static atomic_long late_events; /* events that reached an effect after its dispose returned */

typedef struct round_ctx {
    atomic_int disposed;
} round_ctx;

/* Registers a closure `void (int32_t)` in the registry slot `ctx` (an _Atomic(int_fn)). */
static int registry_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    static const dfs_ffi_type args[] = {DFS_FFI_INT32};
    void (*fn)(void) = NULL;
    if (dfs_closure_new(dispatch, DFS_FFI_VOID, args, 1, &fn) != DFS_OK) return 1;
    atomic_store((_Atomic(int_fn) *)ctx, (int_fn)fn);
    *connection = NULL;
    return 0;
}

enum { CALLERS = 3 };
/* Per caller: 1 from before it reads the registered pointer until its call through it
 * returned (a use count, as a registry keeps one around each callback it calls). */
static atomic_int calling[CALLERS];

/* Unregisters the pointer and waits for the calls through it under way: once it
 * returns, no thread is inside the closure or about to enter it. */
static void fly_disconnect(void *connection, void *ctx) {
    (void)connection;
    (void)ctx;
    atomic_store(&registered, (int_fn)NULL);
    for (int i = 0; i < CALLERS; i++) {
        while (atomic_load(&calling[i])) sched_yield();
    }
}

static int fly_effect(const void *value, void *ctx) {
    (void)value;
    round_ctx *r = ctx;
    if (atomic_load(&r->disposed)) atomic_fetch_add(&late_events, 1);
    return 0;
}

static void *caller(void *arg) {
    atomic_int *mine = &calling[(intptr_t)arg];
    while (!atomic_load(&stop_callers)) {
        atomic_store(mine, 1);
        int_fn fn = atomic_load(&registered);
        if (fn) {
            fn(7);
            atomic_fetch_add(&calls, 1);
        }
        atomic_store(mine, 0);
        if (!fn) sched_yield();
    }
    return NULL;
}

static void test_calls_from_other_threads(void) {
    check_section("calls through a closure on other threads while its connection is disposed");
    dfs_fuser *source = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), registry_connect, fly_disconnect, &registered, NULL, &source), "from");
    pthread_t threads[CALLERS];
    atomic_store(&stop_callers, 0);
    for (intptr_t i = 0; i < CALLERS; i++) pthread_create(&threads[i], NULL, caller, (void *)i);
    int rounds = check_scale(3000, 100);
    int failures = 0;
    for (int i = 0; i < rounds; i++) {
        round_ctx r;
        atomic_init(&r.disposed, 0);
        dfs_disposable *connection = NULL;
        if (dfs_fuser_connect(source, fly_effect, &r, NULL, &connection) != DFS_OK) {
            failures++;
            continue;
        }
        /* The callers go through this round's closure (yielding lets them run under
         * valgrind, which runs one thread at a time). */
        long before = atomic_load(&calls);
        for (int spin = 0; spin < 1000 && atomic_load(&calls) == before; spin++) sched_yield();
        if (dfs_disposable_dispose(connection) != DFS_OK) failures++;
        atomic_store(&r.disposed, 1);
        dfs_disposable_release(connection);
    }
    atomic_store(&stop_callers, 1);
    for (int i = 0; i < CALLERS; i++) pthread_join(threads[i], NULL);
    dfs_fuser_release(source);
    printf("# %d rounds, %ld calls\n", rounds, (long)atomic_load(&calls));
    CHECK_INT(failures, 0, "every connect and dispose succeeded");
    CHECK(atomic_load(&calls) > 0, "the callers called");
    CHECK_INT((int)atomic_load(&late_events), 0, "no event after dispose returned");
}

/* ------------------------------------------------------------------------------------
 * 2. dfs_closure_new racing the dispose of its dispatch
 * ------------------------------------------------------------------------------------ */

static _Atomic(dfs_dispatch *) current_dispatch;
static atomic_int stop_makers;
static atomic_long made_ok, made_stale, made_other;

static int keep_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx;
    atomic_store(&current_dispatch, dispatch);
    *connection = NULL;
    return 0;
}

static void keep_disconnect(void *connection, void *ctx) {
    (void)connection;
    (void)ctx;
    /* The handle is left in place on purpose: the maker may still use it after the
     * dispose, and must get DFS_ERR_HANDLE then. */
}

static int keep_effect(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    return 0;
}

static void *maker(void *arg) {
    (void)arg;
    static const dfs_ffi_type args[] = {DFS_FFI_INT32, DFS_FFI_STRING};
    while (!atomic_load(&stop_makers)) {
        dfs_dispatch *d = atomic_load(&current_dispatch);
        if (!d) {
            sched_yield();
            continue;
        }
        void (*fn)(void) = NULL;
        dfs_status s = dfs_closure_new(d, DFS_FFI_VOID, args, 2, &fn);
        if (s == DFS_OK) atomic_fetch_add(&made_ok, 1);
        else if (s == DFS_ERR_HANDLE) atomic_fetch_add(&made_stale, 1);
        else atomic_fetch_add(&made_other, 1);
        /* fn is never called: the closure dies with its connection. */
    }
    return NULL;
}

static void test_closure_new_racing_dispose(void) {
    check_section("dfs_closure_new on another thread while the dispatch's connection is disposed");
    dfs_fuser *source = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), keep_connect, keep_disconnect, NULL, NULL, &source), "from");
    enum { MAKERS = 2 };
    pthread_t threads[MAKERS];
    atomic_store(&stop_makers, 0);
    for (int i = 0; i < MAKERS; i++) pthread_create(&threads[i], NULL, maker, NULL);
    int rounds = check_scale(3000, 100);
    int failures = 0;
    for (int i = 0; i < rounds; i++) {
        dfs_disposable *connection = NULL;
        if (dfs_fuser_connect(source, keep_effect, NULL, NULL, &connection) != DFS_OK) { failures++; continue; }
        long before = atomic_load(&made_ok) + atomic_load(&made_stale);
        for (int spin = 0; spin < 1000 && atomic_load(&made_ok) + atomic_load(&made_stale) == before; spin++)
            sched_yield();
        if (dfs_disposable_dispose(connection) != DFS_OK) failures++;
        dfs_disposable_release(connection);
    }
    atomic_store(&stop_makers, 1);
    for (int i = 0; i < MAKERS; i++) pthread_join(threads[i], NULL);
    atomic_store(&current_dispatch, NULL);
    dfs_fuser_release(source);
    printf("# %d rounds: %ld closures made, %ld refused as stale, %ld other\n", rounds,
           (long)atomic_load(&made_ok), (long)atomic_load(&made_stale), (long)atomic_load(&made_other));
    CHECK_INT(failures, 0, "every connect and dispose succeeded");
    CHECK_INT((int)atomic_load(&made_other), 0, "only DFS_OK or DFS_ERR_HANDLE");
    CHECK(atomic_load(&made_ok) > 0, "closures were made");
}

/* ------------------------------------------------------------------------------------
 * 3. dfs_closure_new while the source's disconnect runs
 * ------------------------------------------------------------------------------------ */

static dfs_dispatch *during_dispatch;
static dfs_status made_during = DFS_OK;
static char made_during_message[256];

static void *make_during(void *arg) {
    (void)arg;
    static const dfs_ffi_type args[] = {DFS_FFI_INT32};
    void (*fn)(void) = NULL;
    made_during = dfs_closure_new(during_dispatch, DFS_FFI_VOID, args, 1, &fn);
    snprintf(made_during_message, sizeof made_during_message, "%s", dfs_last_error()); /* the thread's own */
    return NULL;
}

static int during_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx;
    during_dispatch = dispatch;
    *connection = NULL;
    return 0;
}

/* Another thread makes a closure on the dispatch while its connection disconnects (the
 * disconnect waits for it): the closure could not be unregistered. */
static void during_disconnect(void *connection, void *ctx) {
    (void)connection;
    (void)ctx;
    pthread_t t;
    pthread_create(&t, NULL, make_during, NULL);
    pthread_join(t, NULL);
}

static void test_closure_new_during_disconnect(void) {
    check_section("dfs_closure_new on another thread while the source disconnects");
    dfs_fuser *source = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), during_connect, during_disconnect, NULL, NULL, &source), "from");
    dfs_disposable *connection = NULL;
    CHECK_OK(dfs_fuser_connect(source, keep_effect, NULL, NULL, &connection), "connect");
    CHECK_OK(dfs_disposable_dispose(connection), "dispose");
    CHECK_INT(made_during, DFS_ERR_HANDLE, "refused: the dispose has begun");
    CHECK(strstr(made_during_message, "disposed") != NULL, "says why (%s)", made_during_message);
    dfs_disposable_release(connection);
    dfs_fuser_release(source);
}

/* ------------------------------------------------------------------------------------
 * 4. An effect disposing its connection from inside a call through the closure
 * ------------------------------------------------------------------------------------ */

/* A registry with two callers (as a C library's listener list): the closure it holds
 * (first, for registry_connect) and, per caller, a use count held around each call. */
typedef struct two_callers {
    _Atomic(int_fn) fn;
    atomic_int calling[2];
    atomic_int disconnects;
} two_callers;

/* The caller the running thread is, inside two_callers_call. */
static _Thread_local int my_caller = -1;

/* Calls the registered closure as caller `who`, holding its use count. */
static void two_callers_call(two_callers *r, int who, int32_t value) {
    int saved = my_caller;
    my_caller = who;
    atomic_store(&r->calling[who], 1);
    int_fn fn = atomic_load(&r->fn);
    if (fn) fn(value);
    atomic_store(&r->calling[who], 0);
    my_caller = saved;
}

/* The header's recipe, as a disconnect with the registry as ctx: unregister, wait for
 * the other threads' calls, not for this thread's own (it runs inside that call when
 * an effect disposed the connection). */
static void two_callers_disconnect(void *connection, void *ctx) {
    two_callers *r = ctx;
    (void)connection;
    atomic_store(&r->fn, (int_fn)NULL);
    for (int i = 0; i < 2; i++) {
        if (i == my_caller) continue;
        while (atomic_load(&r->calling[i])) sched_yield();
    }
    atomic_fetch_add(&r->disconnects, 1);
}

static two_callers once;
static dfs_disposable *once_connection;
static atomic_int once_events;

/* A one-shot listener: its first event disposes its own connection. */
static int once_effect(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    atomic_fetch_add(&once_events, 1);
    dfs_disposable_dispose(once_connection);
    return 0;
}

static void *once_caller(void *arg) {
    for (int k = 0; k < 1000; k++) {
        two_callers_call(&once, (int)(intptr_t)arg, k);
        sched_yield();
    }
    return NULL;
}

static void test_effect_disposing_inside_the_call(void) {
    check_section("an effect disposes its connection inside a call through the closure");
    dfs_fuser *source = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), registry_connect, two_callers_disconnect, &once, NULL, &source), "from");
    int rounds = check_scale(200, 20), failures = 0;
    for (int r = 0; r < rounds; r++) {
        atomic_store(&once_events, 0);
        atomic_store(&once.disconnects, 0);
        if (dfs_fuser_connect(source, once_effect, NULL, NULL, &once_connection) != DFS_OK) {
            failures++;
            continue;
        }
        pthread_t threads[2];
        for (intptr_t i = 0; i < 2; i++) pthread_create(&threads[i], NULL, once_caller, (void *)i);
        for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
        if (atomic_load(&once_events) != 1 || atomic_load(&once.disconnects) != 1) failures++;
        dfs_disposable_dispose(once_connection);
        dfs_disposable_release(once_connection);
    }
    CHECK_INT(failures, 0, "%d rounds: one event, one disconnect, no wait for itself", rounds);
    dfs_fuser_release(source);
}


static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "FAIL timed out: deadlock\n";
    ssize_t r = write(1, msg, sizeof msg - 1);
    (void)r;
    _exit(1);
}

/* ------------------------------------------------------------------------------------
 * 5. A loop fed by the closure: a feedback calls it while the draining caller stops
 * ------------------------------------------------------------------------------------ */

static two_callers a_registry; /* callers: [0] the library thread, [1] the feedback */
static atomic_int a_feedback_in, a_feedback_out;
static dfs_loop *a_loop;

static void a_call(int who, int32_t value) { two_callers_call(&a_registry, who, value); }

static int a_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model;
    (void)ctx;
    const dfs_ffi_event *e = event;
    dfs_next_model(next, (const void *)(intptr_t)(1000 + e->args[0].as.i));
    return 0;
}

/* The feedback (on its own thread): a model of 1001 makes it write to the "widget",
 * which calls its listener, the closure, at once. */
static void a_feedback(const void *value, dfs_job *job, void *ctx) {
    (void)ctx;
    if ((intptr_t)value == 1001) {
        atomic_store(&a_feedback_in, 1);
        a_call(1, 2);
        atomic_store(&a_feedback_out, 1);
    }
    dfs_job_finish(job);
}

/* An observer (in the step, on the draining library thread) stops the loop on 1001. */
static int a_observer(const void *model, void *ctx) {
    (void)ctx;
    if ((intptr_t)model == 1001) {
        for (int i = 0; i < 2000 && !atomic_load(&a_feedback_in); i++) sleep_ms(1);
        sleep_ms(50); /* let the feedback reach the connection's lock */
        dfs_loop_stop(a_loop);
    }
    return 0;
}

static void *a_library_thread(void *arg) {
    (void)arg;
    a_call(0, 1); /* the loop is idle: this call drains it */
    return NULL;
}

static void test_loop_source(void) {
    check_section("a loop: a feedback calls the closure while a step the closure's call drains stops the loop");
    dfs_executor *bg = NULL;
    CHECK_OK(dfs_executor_new_background(&bg), "background executor");
    dfs_loop_config c = {0};
    c.model_type = dfs_type_pointer();
    c.event_type = dfs_type_ffi_event();
    c.effect_type = dfs_type_pointer();
    c.model = (const void *)(intptr_t)1000;
    c.update = a_update;
    CHECK_OK(dfs_loop_new(&c, &a_loop), "loop");
    dfs_disposable *fb = NULL, *obs = NULL, *src = NULL;
    CHECK_OK(dfs_loop_add_feedback(a_loop, DFS_OVERLAP_CONCURRENT, bg, a_feedback, NULL, NULL, &fb), "feedback");
    CHECK_OK(dfs_loop_observe(a_loop, a_observer, NULL, NULL, &obs), "observer");
    dfs_fuser *source = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), registry_connect, two_callers_disconnect, &a_registry, NULL, &source), "from");
    CHECK_OK(dfs_loop_connect(a_loop, source, &src), "loop connect");
    CHECK(atomic_load(&a_registry.fn) != NULL, "the source is connected");
    alarm(10);
    pthread_t t;
    pthread_create(&t, NULL, a_library_thread, NULL);
    pthread_join(t, NULL);
    alarm(0);
    CHECK_INT(atomic_load(&a_feedback_out), 1, "no deadlock: the feedback's call returned");
    dfs_disposable_dispose(src);
    dfs_disposable_release(src);
    dfs_disposable_release(fb);
    dfs_disposable_release(obs);
    dfs_fuser_release(source);
    dfs_loop_release(a_loop);
    dfs_executor_release(bg);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    signal(SIGALRM, on_alarm);
    const char *only = getenv("RACE_SECTION");
    if (!only || strcmp(only, "1") == 0) test_calls_from_other_threads();
    if (!only || strcmp(only, "2") == 0) test_closure_new_racing_dispose();
    if (!only || strcmp(only, "3") == 0) test_closure_new_during_disconnect();
    if (!only || strcmp(only, "4") == 0) test_effect_disposing_inside_the_call();
    if (!only || strcmp(only, "5") == 0) test_loop_source();
    return check_finish();
}
