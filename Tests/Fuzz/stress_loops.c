/*
 * stress_loops.c — threads doing random steps on shared loops, for ThreadSanitizer
 * (scripts/tsan.sh builds it against the TSan build of libdiffuser.so and fails on any
 * report).
 *
 * Three loops: one on the caller's executor with a restart, one on an executor of this
 * program (a queue served by a thread it joins, so that every teardown has run when the
 * checks below run) with a handler on that executor too, one on the caller's executor
 * with coalescing keys. A gear joins the first two. Every thread loops over random
 * steps: dispatches; jobs kept by handlers and sent to, cancelled or finished later from
 * other threads; observers, feedbacks and connected sources added and disposed while
 * others dispatch and emit; gear sends; stops and starts; model reads; retain and
 * release. Handlers dispatch into their own loop, send through their jobs and stop it.
 * Halfway, one thread disposes the second loop while the others go on using it.
 *
 * What must hold:
 * - the update, the inspector, the handlers run inline and each observer are called one
 *   at a time (plain counters: only TSan sees a breach);
 * - no observer is called after its dispose returned, and no update, handler or observer
 *   of the disposed loop after that dispose returned;
 * - the inspector hears every accepted event exactly once (stepped, failed or dropped),
 *   and no refused event: every event carries its own number;
 * - no event a source emits after its loop connection's dispose returned is heard, also
 *   when that dispose came while the loop's turn, on another thread, was inside the
 *   source's connect (a connect that takes its time, to open that window);
 * - the coalescing keys come back, as many as were given (every key has one value, so
 *   only the totals are compared);
 * - every callback context is destroyed exactly once;
 * - every call gives one of the statuses its documentation lists.
 *
 *   stress_loops [iterations per thread]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define STRESS_NAME "stress_loops"
#include "stress.h"

#define THREADS 4
#define LOOPS 3
#define MAX_CTX 200000
#define MAX_IDS (1 << 22)
#define DISPOSED_LOOP 1

static int stress_iterations = 2000;

#define VIOLATION(...)                                                                      \
    do {                                                                                    \
        atomic_fetch_add(&violations, 1);                                                   \
        fprintf(stderr, "stress_loops: violation: " __VA_ARGS__);                           \
        fprintf(stderr, "\n");                                                              \
    } while (0)

/* ------------------------------------------------------------------------------------
 * Events: a number of its own (for the inspector's count) and a kind (low 3 bits).
 *   0: model + 1, no effect
 *   1: model + 1, effect 1 (the handler sends through its job)
 *   2: no model, effect 2 (the handler dispatches into its loop)
 *   3: model + 1, effect 3 (the handler keeps its job; coalesced on the third loop)
 *   4: the update fails
 *   5: model + 1, effect 5 (the handler stops its loop)
 *   6: model + 1, effect 0
 *   7: no model, effects 0 and 1
 * ------------------------------------------------------------------------------------ */

static atomic_int next_id = 1;
/* 1: an accepted event; 2: maybe (emitted, made); 3: never (emitted after its
 * connection's dispose returned) */
static atomic_uchar accepted[MAX_IDS];
static atomic_uchar heard[MAX_IDS];

static const void *new_event(int kind) {
    int id = atomic_fetch_add(&next_id, 1);
    if (id >= MAX_IDS) {
        fprintf(stderr, "stress_loops: too many events\n");
        abort();
    }
    return (const void *)(((uintptr_t)id << 3) | (uintptr_t)kind);
}

static int kind_of(const void *event) { return (int)((uintptr_t)event & 7); }
static int id_of(const void *event) { return (int)((uintptr_t)event >> 3); }

/* Records what a dispatch of `event` said: accepted or refused. */
static void sent(const void *event, dfs_status status) {
    EXPECT(status == DFS_OK || status == DFS_ERR_STOPPED || status == DFS_ERR_DISPOSED, "dispatch: %d", status);
    if (status == DFS_OK) atomic_store(&accepted[id_of(event)], 1);
}

/* Records what a job's send of `event` said: accepted, or refused as the job ended. */
static void job_sent(const void *event, dfs_status status) {
    EXPECT(status == DFS_OK || status == DFS_ERR_DISPOSED, "job send: %d", status);
    if (status == DFS_OK) atomic_store(&accepted[id_of(event)], 1);
}

/* ------------------------------------------------------------------------------------
 * Contexts: every one is counted, and its destroy must run exactly once.
 * ------------------------------------------------------------------------------------ */

typedef struct ctx {
    const char *what;       /* for messages */
    int loop;               /* the loop index it belongs to */
    long plain_calls;       /* touched only where the core promises one call at a time */
    atomic_int destroyed;
    atomic_int disposed;    /* observers: their dispose returned */
    atomic_int fired;       /* feedbacks: sent their one event */
} ctx;

static ctx *contexts[MAX_CTX];
static atomic_int n_contexts;

static ctx *new_ctx(int loop, const char *what) {
    int i = atomic_fetch_add(&n_contexts, 1);
    if (i >= MAX_CTX) {
        fprintf(stderr, "stress_loops: too many contexts\n");
        abort();
    }
    ctx *c = calloc(1, sizeof *c);
    if (c == NULL) abort();
    c->loop = loop;
    c->what = what;
    contexts[i] = c;
    return c;
}

static void ctx_destroy(void *p) {
    ctx *c = p;
    if (atomic_fetch_add(&c->destroyed, 1) != 0) VIOLATION("a context destroyed twice");
}

static dfs_loop *loops[LOOPS];
static atomic_int loop_disposed[LOOPS]; /* its dfs_loop_dispose returned */

static void check_alive(const ctx *c, const char *what) {
    if (atomic_load(&c->destroyed)) VIOLATION("%s called after its destroy", what);
    if (atomic_load(&loop_disposed[c->loop])) VIOLATION("%s of loop %d called after its dispose returned", what, c->loop);
}

/* ------------------------------------------------------------------------------------
 * The loops' callbacks
 * ------------------------------------------------------------------------------------ */

static int update(const void *model, const void *event, dfs_next *next, void *p) {
    ctx *c = p;
    check_alive(c, "update");
    c->plain_calls++; /* one step at a time */
    const void *more = (const void *)((uintptr_t)model + 1);
    switch (kind_of(event)) {
    case 0: return dfs_next_model(next, more) == DFS_OK ? 0 : 1;
    case 2: return dfs_next_effect(next, (const void *)2) == DFS_OK ? 0 : 1;
    case 4: return 1;
    case 6: return dfs_next_model(next, more) == DFS_OK && dfs_next_effect(next, (const void *)0) == DFS_OK ? 0 : 1;
    case 7:
        return dfs_next_effect(next, (const void *)0) == DFS_OK && dfs_next_effect(next, (const void *)1) == DFS_OK ? 0
                                                                                                                : 1;
    default: /* 1, 3, 5: the effect of the same kind */
        return dfs_next_model(next, more) == DFS_OK &&
                       dfs_next_effect(next, (const void *)(uintptr_t)kind_of(event)) == DFS_OK
                   ? 0
                   : 1;
    }
}

static void restart(const void *model, dfs_next *next, void *p) {
    ctx *c = p;
    c->plain_calls++;
    EXPECT(dfs_next_model(next, model) == DFS_OK, "restart model");
    EXPECT(dfs_next_effect(next, (const void *)0) == DFS_OK, "restart effect");
}

/* A job a handler kept, for other threads to send to, cancel or finish. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static dfs_job *kept_job;
static int kept_loop;

static void keep_job(dfs_job *job, int loop) {
    if (dfs_job_retain(job) != DFS_OK) {
        EXPECT(0, "job retain");
        return;
    }
    pthread_mutex_lock(&kept_lock);
    dfs_job *old = kept_job;
    kept_job = job;
    kept_loop = loop;
    pthread_mutex_unlock(&kept_lock);
    if (old != NULL) EXPECT(dfs_job_release(old) == DFS_OK, "job release");
}

static dfs_job *take_job(int *loop) {
    pthread_mutex_lock(&kept_lock);
    dfs_job *job = kept_job;
    *loop = kept_loop;
    kept_job = NULL;
    pthread_mutex_unlock(&kept_lock);
    return job;
}

static void on_cancel(void *p) {
    ctx *c = p;
    if (atomic_load(&c->destroyed)) VIOLATION("on-cancel action after its destroy");
}

static int handler_body(const void *effect, dfs_job *job, ctx *c, int inline_handler) {
    check_alive(c, "handler");
    if (inline_handler) c->plain_calls++; /* inside the step: one at a time */
    switch ((uintptr_t)effect) {
    case 1: {
        const void *e = new_event(0);
        job_sent(e, dfs_job_send(job, e));
        EXPECT(dfs_job_finish(job) == DFS_OK, "job finish");
        break;
    }
    case 2: {
        const void *e = new_event(0);
        sent(e, dfs_loop_dispatch(loops[c->loop], e));
        break;
    }
    case 3: {
        ctx *a = new_ctx(c->loop, "on-cancel action");
        EXPECT(dfs_job_on_cancel(job, on_cancel, a, ctx_destroy) == DFS_OK, "on cancel");
        keep_job(job, c->loop);
        break;
    }
    case 5:
        EXPECT(dfs_loop_stop(loops[c->loop]) == DFS_OK, "stop from a handler");
        break;
    default:
        break;
    }
    return 0;
}

static int handler_inline(const void *effect, dfs_job *job, void *p) { return handler_body(effect, job, p, 1); }
static int handler_queued(const void *effect, dfs_job *job, void *p) { return handler_body(effect, job, p, 0); }

static void inspect(const dfs_trace *t, void *p) {
    ctx *c = p;
    c->plain_calls++; /* one call at a time */
    if (t->kind == DFS_TRACE_STEPPED || t->kind == DFS_TRACE_FAILED || t->kind == DFS_TRACE_DROPPED) {
        int id = id_of(t->event);
        if (atomic_fetch_add(&heard[id], 1) != 0) VIOLATION("event %d heard twice", id);
    }
}

static atomic_long keys_given, keys_back;

static int coalesce(const void *event, uint64_t *key, void *p) {
    (void)p;
    if (kind_of(event) != 3) return 0;
    atomic_fetch_add(&keys_given, 1);
    *key = 3;
    return 1;
}

static void coalesce_done(uint64_t key, void *p) {
    (void)p;
    if (key != 3) VIOLATION("a key that was never given");
    atomic_fetch_add(&keys_back, 1);
}

static int observer(const void *model, void *p) {
    (void)model;
    ctx *c = p;
    check_alive(c, "observer");
    if (atomic_load(&c->disposed)) VIOLATION("an observer called after its dispose returned");
    c->plain_calls++; /* one model at a time */
    return 0;
}

static void feedback_work(const void *model, dfs_job *job, void *p) {
    (void)model;
    ctx *c = p;
    if (atomic_load(&c->destroyed)) VIOLATION("feedback work after its destroy");
    /* One event per feedback: each event makes a model, which the feedback hears. */
    if (atomic_exchange(&c->fired, 1)) {
        EXPECT(dfs_job_finish(job) == DFS_OK, "feedback job finish");
        return;
    }
    const void *e = new_event(0);
    job_sent(e, dfs_job_send(job, e));
    EXPECT(dfs_job_finish(job) == DFS_OK, "feedback job finish");
}

/* The gear: the first loop pushes every fourth model; the second hears it. */
static int push_model(const void *model, const void **out, void *p) {
    (void)p;
    if ((uintptr_t)model % 4 != 0) return 0;
    *out = (const void *)(uintptr_t)model;
    return 1;
}

static int hear_gear(const void *value, const void **out, void *p) {
    (void)value;
    (void)p;
    const void *e = new_event(0);
    atomic_store(&accepted[id_of(e)], 2);
    *out = e;
    return 1;
}

/* ------------------------------------------------------------------------------------
 * The executor of this program: a queue and the thread that serves it.
 * ------------------------------------------------------------------------------------ */

typedef struct work_item {
    dfs_work *work;
    struct work_item *next;
} work_item;

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static work_item *queue_head, *queue_tail;
static int executor_gone;

static void execute(dfs_work *work, void *p) {
    (void)p;
    work_item *w = malloc(sizeof *w);
    if (w == NULL) abort();
    w->work = work;
    w->next = NULL;
    pthread_mutex_lock(&queue_lock);
    if (queue_tail) queue_tail->next = w;
    else queue_head = w;
    queue_tail = w;
    pthread_cond_signal(&queue_ready);
    pthread_mutex_unlock(&queue_lock);
}

static void executor_destroy(void *p) {
    ctx_destroy(p);
    pthread_mutex_lock(&queue_lock);
    executor_gone++;
    pthread_cond_signal(&queue_ready);
    pthread_mutex_unlock(&queue_lock);
}

static void *serve(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        while (queue_head == NULL && !executor_gone) pthread_cond_wait(&queue_ready, &queue_lock);
        work_item *w = queue_head;
        if (w == NULL) {
            pthread_mutex_unlock(&queue_lock);
            return NULL;
        }
        queue_head = w->next;
        if (queue_head == NULL) queue_tail = NULL;
        pthread_mutex_unlock(&queue_lock);
        EXPECT(dfs_work_run(w->work) == DFS_OK, "work run");
        free(w);
    }
}

/* ------------------------------------------------------------------------------------
 * A source: a registry of live dispatches, as a C event source would keep. It emits
 * outside its lock, as diffuser.h asks of a source connected to a loop: the emitting
 * thread may run the loop's queued work, which connects and disconnects sources (this
 * one and the other). A dispatch disconnected meanwhile gives DFS_ERR_HANDLE.
 * ------------------------------------------------------------------------------------ */

#define MAX_SINKS 64
typedef struct source {
    pthread_mutex_t lock;
    dfs_dispatch *sinks[MAX_SINKS];
    atomic_int destroyed;
} source;

static source sources[2];

static int source_connect(dfs_dispatch *dispatch, void *p, void **connection) {
    source *s = p;
    pthread_mutex_lock(&s->lock);
    int slot = -1;
    for (int i = 0; i < MAX_SINKS && slot < 0; i++)
        if (s->sinks[i] == NULL) slot = i;
    if (slot >= 0) s->sinks[slot] = dispatch;
    pthread_mutex_unlock(&s->lock);
    if (slot < 0) return 1; /* full: refuse */
    *connection = &s->sinks[slot];
    return 0;
}

static void source_disconnect(void *connection, void *p) {
    source *s = p;
    pthread_mutex_lock(&s->lock);
    dfs_dispatch **slot = connection;
    if (*slot == NULL) VIOLATION("a connection disconnected twice");
    *slot = NULL;
    pthread_mutex_unlock(&s->lock);
}

static void source_destroy(void *p) { atomic_fetch_add(&((source *)p)->destroyed, 1); }

static void source_emit(source *s, int kind) {
    dfs_dispatch *live[MAX_SINKS];
    int n = 0;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < MAX_SINKS; i++)
        if (s->sinks[i] != NULL) live[n++] = s->sinks[i];
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < n; i++) {
        const void *e = new_event(kind);
        dfs_status st = dfs_dispatch_emit(live[i], e);
        EXPECT(st == DFS_OK || st == DFS_ERR_HANDLE, "emit: %d", st);
        if (st == DFS_OK) atomic_store(&accepted[id_of(e)], 2);
    }
}

/* ------------------------------------------------------------------------------------
 * A source of one registration: it keeps the dispatch of its last connect, and its
 * connect sometimes takes its time, so that another thread's dispose of the
 * registration can come while the loop's turn is inside it. Events it emits once that
 * dispose has returned must be dropped.
 * ------------------------------------------------------------------------------------ */

typedef struct own_source {
    ctx *c; /* counts the destroy */
    pthread_mutex_t lock;
    dfs_dispatch *dispatch;
    int slow;
} own_source;

static int own_connect(dfs_dispatch *dispatch, void *p, void **connection) {
    own_source *s = p;
    pthread_mutex_lock(&s->lock);
    s->dispatch = dispatch;
    pthread_mutex_unlock(&s->lock);
    if (s->slow) usleep((useconds_t)s->slow);
    *connection = s;
    return 0;
}

static void own_disconnect(void *connection, void *p) {
    own_source *s = p;
    if (connection != s) VIOLATION("a disconnect given another connection");
    pthread_mutex_lock(&s->lock);
    if (s->dispatch == NULL) VIOLATION("a registration's source disconnected twice");
    s->dispatch = NULL;
    pthread_mutex_unlock(&s->lock);
}

static void own_destroy(void *p) {
    own_source *s = p;
    ctx_destroy(s->c);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Emits an event of `kind` through the source's dispatch, if it has one; `late`: the
 * registration's dispose has returned, so the event must be dropped. */
static void own_emit(own_source *s, int kind, int late) {
    pthread_mutex_lock(&s->lock);
    dfs_dispatch *dispatch = s->dispatch;
    pthread_mutex_unlock(&s->lock);
    if (dispatch == NULL) return;
    const void *e = new_event(kind);
    if (late) atomic_store(&accepted[id_of(e)], 3);
    dfs_status st = dfs_dispatch_emit(dispatch, e);
    EXPECT(st == DFS_OK || st == DFS_ERR_HANDLE, "emit: %d", st);
    if (st == DFS_OK && !late) atomic_store(&accepted[id_of(e)], 2);
}

/* ------------------------------------------------------------------------------------
 * The threads
 * ------------------------------------------------------------------------------------ */

static dfs_executor *queue_executor;
static dfs_fuser *fusers[2];
static dfs_gear *gear;

static int read_model(const void *model, void *p) {
    (void)model;
    (void)p;
    return 0;
}

static void *worker(void *arg) {
    int thread = (int)(uintptr_t)arg;
    uint32_t seed = (uint32_t)(thread + 1) * 2654435761u + 1;
    for (int i = 0; i < stress_iterations; i++) {
        if (thread == 0 && i == stress_iterations / 2) {
            EXPECT(dfs_loop_dispose(loops[DISPOSED_LOOP]) == DFS_OK, "dispose");
            atomic_store(&loop_disposed[DISPOSED_LOOP], 1);
        }
        uint32_t r = next_random(&seed);
        int l = (int)(r % LOOPS);
        dfs_loop *loop = loops[l];
        int kind = (int)((r >> 4) % 8);
        if (kind == 5 && (r >> 12) % 16 != 0) kind = 6; /* stops from handlers: rarely */
        switch ((r >> 24) % 16) {
        case 0: case 1: case 2: case 3: case 4: {
            const void *e = new_event(kind);
            sent(e, dfs_loop_dispatch(loop, e));
            break;
        }
        case 5: { /* a kept job: send, then cancel or finish */
            int jl;
            dfs_job *job = take_job(&jl);
            if (job == NULL) break;
            const void *e = new_event(0);
            job_sent(e, dfs_job_send(job, e));
            EXPECT((r & 1 ? dfs_job_cancel(job) : dfs_job_finish(job)) == DFS_OK, "job end");
            EXPECT(dfs_job_is_cancelled(job) >= 0, "job state");
            EXPECT(dfs_job_release(job) == DFS_OK, "job release");
            break;
        }
        case 6: { /* an observer added, heard, disposed */
            ctx *c = new_ctx(l, "observer");
            dfs_disposable *d = NULL;
            EXPECT(dfs_loop_observe(loop, observer, c, ctx_destroy, &d) == DFS_OK, "observe");
            const void *e = new_event(0);
            sent(e, dfs_loop_dispatch(loop, e));
            EXPECT(dfs_disposable_dispose(d) == DFS_OK, "observer dispose");
            atomic_store(&c->disposed, 1);
            EXPECT(dfs_disposable_release(d) == DFS_OK, "observer release");
            break;
        }
        case 7: { /* a feedback, inline or on the queue */
            ctx *c = new_ctx(l, "feedback");
            dfs_disposable *d = NULL;
            dfs_overlap overlap = (dfs_overlap)((r >> 8) % 3);
            EXPECT(dfs_loop_add_feedback(loop, overlap, (r & 2) ? queue_executor : NULL, feedback_work, c, ctx_destroy,
                                         &d) == DFS_OK,
                   "add feedback");
            const void *e = new_event(0);
            sent(e, dfs_loop_dispatch(loop, e));
            EXPECT(dfs_disposable_dispose(d) == DFS_OK, "feedback dispose");
            EXPECT(dfs_disposable_release(d) == DFS_OK, "feedback release");
            break;
        }
        case 8: { /* sources connected, emitting, disconnected */
            dfs_disposable *d = NULL;
            EXPECT(dfs_loop_connect(loop, fusers[r & 1], &d) == DFS_OK, "connect");
            source_emit(&sources[r & 1], kind == 5 ? 0 : kind);
            EXPECT(dfs_disposable_dispose(d) == DFS_OK, "connection dispose");
            EXPECT(dfs_disposable_release(d) == DFS_OK, "connection release");
            break;
        }
        case 9:
            source_emit(&sources[r & 1], kind == 5 ? 0 : kind);
            break;
        case 10: { /* a registration's own source, disposed maybe while it connects */
            own_source *s = calloc(1, sizeof *s);
            if (s == NULL) abort();
            s->c = new_ctx(l, "registration's source");
            pthread_mutex_init(&s->lock, NULL);
            s->slow = (r & 1) ? (int)((r >> 8) % 200) : 0;
            dfs_fuser *f = NULL;
            EXPECT(dfs_fuser_from(dfs_type_pointer(), own_connect, own_disconnect, s, own_destroy, &f) == DFS_OK,
                   "from");
            dfs_disposable *d = NULL;
            EXPECT(dfs_loop_connect(loop, f, &d) == DFS_OK, "connect");
            if (r & 2) own_emit(s, kind == 5 ? 0 : kind, 0);
            EXPECT(dfs_disposable_dispose(d) == DFS_OK, "connection dispose");
            own_emit(s, kind == 5 ? 0 : kind, 1);
            EXPECT(dfs_disposable_release(d) == DFS_OK, "connection release");
            /* Held until here: the source's context lives as long as its fuser. */
            EXPECT(dfs_fuser_release(f) == DFS_OK, "fuser release");
            break;
        }
        case 11:
            EXPECT(dfs_gear_send(gear, (const void *)(uintptr_t)r) == DFS_OK, "gear send");
            break;
        case 12: {
            dfs_status st = dfs_loop_start(loop);
            EXPECT(st == DFS_OK || st == DFS_ERR_STOPPED || st == DFS_ERR_DISPOSED, "start: %d", st);
            break;
        }
        case 13:
            if ((r & 7) == 0) EXPECT(dfs_loop_stop(loop) == DFS_OK, "stop");
            else EXPECT(dfs_loop_is_running(loop) >= 0, "is running");
            break;
        case 14:
            EXPECT(dfs_loop_model(loop, read_model, NULL) == DFS_OK, "model");
            break;
        default: {
            EXPECT(dfs_loop_retain(loop) == DFS_OK, "retain");
            const void *e = new_event(kind);
            sent(e, dfs_loop_dispatch(loop, e));
            EXPECT(dfs_loop_release(loop) == DFS_OK, "release");
            break;
        }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) stress_iterations = atoi(argv[1]);
    dfs_type *ptr = dfs_type_pointer();

    pthread_t server;
    ctx *xc = new_ctx(0, "executor");
    EXPECT(dfs_executor_new(execute, xc, executor_destroy, 4, &queue_executor) == DFS_OK, "executor");
    pthread_create(&server, NULL, serve, NULL);

    ctx *inspectors[LOOPS];
    for (int l = 0; l < LOOPS; l++) {
        ctx *u = new_ctx(l, "update"), *h = new_ctx(l, "handler"), *q = l == 1 ? new_ctx(l, "queued handler") : NULL;
        inspectors[l] = new_ctx(l, "inspector");
        dfs_handler handlers[2] = {{handler_inline, h, ctx_destroy, NULL}, {handler_queued, q, ctx_destroy, queue_executor}};
        dfs_loop_config config = {
            .model_type = ptr, .event_type = ptr, .effect_type = ptr,
            .model = (const void *)(uintptr_t)0,
            .update = update, .update_ctx = u, .update_destroy = ctx_destroy,
            .handlers = handlers, .handler_count = l == 1 ? 2 : 1,
            .executor = l == 1 ? queue_executor : NULL,
            .inspect = inspect, .inspect_ctx = inspectors[l], .inspect_destroy = ctx_destroy,
        };
        if (l == 0) {
            config.restart = restart;
            config.restart_ctx = new_ctx(l, "restart");
            config.restart_destroy = ctx_destroy;
        }
        if (l == 2) {
            config.coalesce = coalesce;
            config.coalesce_done = coalesce_done;
        }
        EXPECT(dfs_loop_new(&config, &loops[l]) == DFS_OK, "loop %d", l);
    }

    for (int i = 0; i < 2; i++) {
        pthread_mutex_init(&sources[i].lock, NULL);
        EXPECT(dfs_fuser_from(ptr, source_connect, source_disconnect, &sources[i], source_destroy, &fusers[i]) == DFS_OK,
               "from");
    }
    /* Connected for good: the first loop to both sources, the third to the second. */
    dfs_disposable *lasting[3] = {NULL, NULL, NULL};
    EXPECT(dfs_loop_connect(loops[0], fusers[0], &lasting[0]) == DFS_OK, "connect");
    EXPECT(dfs_loop_connect(loops[0], fusers[1], &lasting[1]) == DFS_OK, "connect");
    EXPECT(dfs_loop_connect(loops[2], fusers[1], &lasting[2]) == DFS_OK, "connect");

    EXPECT(dfs_gear_new(ptr, &gear) == DFS_OK, "gear");
    dfs_disposable *pushing = NULL, *hearing = NULL;
    ctx *pc = new_ctx(0, "gear push"), *hc = new_ctx(1, "gear attachment");
    EXPECT(dfs_loop_push_to_gear(loops[0], gear, push_model, pc, ctx_destroy, &pushing) == DFS_OK, "push");
    EXPECT(dfs_loop_attach_to_gear(loops[1], gear, hear_gear, hc, ctx_destroy, &hearing) == DFS_OK, "attach");

    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);

    int jl;
    dfs_job *job = take_job(&jl);
    if (job != NULL) EXPECT(dfs_job_release(job) == DFS_OK, "job release");
    for (int i = 0; i < 3; i++) {
        EXPECT(dfs_disposable_dispose(lasting[i]) == DFS_OK, "dispose");
        dfs_disposable_release(lasting[i]);
    }
    dfs_disposable_release(pushing);
    dfs_disposable_release(hearing);
    for (int l = 0; l < LOOPS; l++) {
        EXPECT(dfs_loop_dispose(loops[l]) == DFS_OK, "dispose");
        EXPECT(dfs_loop_release(loops[l]) == DFS_OK, "release");
    }
    dfs_gear_release(gear);
    for (int i = 0; i < 2; i++) dfs_fuser_release(fusers[i]);
    dfs_executor_release(queue_executor);
    pthread_join(server, NULL); /* the executor's destroy ran: every loop's teardown is over */

    /* The inspector heard every accepted event once, and no refused one. */
    int ids = atomic_load(&next_id), missed = 0, unaccepted = 0, late = 0;
    long heard_count = 0;
    for (int id = 1; id < ids; id++) {
        int a = atomic_load(&accepted[id]), h = atomic_load(&heard[id]);
        heard_count += h;
        if (a == 1 && h != 1) missed++;
        if (a == 0 && h != 0) unaccepted++;
        if (a == 3 && h != 0) late++;
    }
    if (late) VIOLATION("%d events emitted after their connection's dispose returned were heard", late);
    if (missed) VIOLATION("%d accepted events never heard", missed);
    if (unaccepted) VIOLATION("%d refused events heard", unaccepted);
    if (atomic_load(&keys_given) != atomic_load(&keys_back))
        VIOLATION("%ld coalescing keys given, %ld back", atomic_load(&keys_given), atomic_load(&keys_back));

    int n = atomic_load(&n_contexts), leaked = 0;
    long calls = 0;
    for (int i = 0; i < n; i++) {
        int d = atomic_load(&contexts[i]->destroyed);
        if (d != 1) {
            if (leaked++ < 10) fprintf(stderr, "stress_loops: %s of loop %d destroyed %d times\n", contexts[i]->what, contexts[i]->loop, d);
        }
        calls += contexts[i]->plain_calls;
        free(contexts[i]);
    }
    for (int i = 0; i < 2; i++)
        if (atomic_load(&sources[i].destroyed) != 1) leaked++;
    if (leaked) VIOLATION("%d contexts not destroyed exactly once", leaked);

    int v = atomic_load(&violations), f = atomic_load(&failures);
    printf("stress_loops: %d threads x %d steps, %d events (%ld heard), %ld callback calls, %d contexts, "
           "%ld coalescing keys, %d violations, %d failures\n",
           THREADS, stress_iterations, ids - 1, heard_count, calls, n, atomic_load(&keys_given), v, f);
    return v == 0 && f == 0 ? 0 : 1;
}
