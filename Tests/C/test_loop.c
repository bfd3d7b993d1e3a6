/*
 * test_loop.c — loops through the C API: the update and its Next, the order of every
 * callback in a step, events dispatched during a step, jobs (send now, later, from
 * another thread; finish, cancel, on-cancel), feedbacks and their overlap strategies,
 * request-gated feedbacks, observers, render, sources, executors (the caller's, manual,
 * background, written in C), stop, start and dispose, the inspector, coalescing, errors
 * and misuse, and threads (eight dispatchers; dispose racing dispatch). Every model and
 * effect is a box, so that the end proves each one the core kept was released.
 *
 * One program because every section drives the same counter loop (below), with the
 * model and effect types made once in main; gears, journals and the misuse the fuzzer
 * found have programs of their own.
 */
#include "check.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The live boxes once the threads of background executors have let go of what they
 * ran: the last reference to a loop may be dropped on such a thread, just after the
 * call that handed it back returned. Waits up to a second. */
static int boxes_settled(void) {
    for (int i = 0; i < 1000 && __atomic_load_n(&box_live, __ATOMIC_SEQ_CST) != 0; i++) sleep_us(1000);
    return __atomic_load_n(&box_live, __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------------------------
 * The counter loop: models and effects are boxes, events are integers in pointers.
 * ------------------------------------------------------------------------------------ */

enum {
    EV_FAIL = 1000,    /* the update fails */
    EV_SILENT = 1001,  /* no model, no effect */
    EV_EFFECT = 2000,  /* EV_EFFECT + k: no model, the effect k */
    EV_ECHO = 3000,    /* EV_ECHO + n: no model, the effect 500 + n (handlers send n back) */
};

#define EVENT(n) ((const void *)(intptr_t)(n))
#define VALUE(p) ((long)(intptr_t)(p))

typedef struct update_ctx {
    int calls;
    int destroyed;
    test_log *log;
} update_ctx;

/* A positive event n adds n to the model; 1 also makes the effect 100 + the new count. */
static int counter_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    update_ctx *u = ctx;
    u->calls++;
    const box *m = model;
    long e = VALUE(event);
    if (u->log) log_add(u->log, "u:%ld", e);
    if (e == EV_FAIL) {
        dfs_set_error("the update refuses event 1000");
        return 1;
    }
    if (e == EV_SILENT) return 0;
    if (e >= EV_EFFECT && e < EV_EFFECT + 1000) return dfs_next_effect(next, box_new(e - EV_EFFECT)) == DFS_OK ? 0 : 9;
    if (e >= EV_ECHO && e < EV_ECHO + 1000) return dfs_next_effect(next, box_new(500 + e - EV_ECHO)) == DFS_OK ? 0 : 9;
    if (dfs_next_model(next, box_new(m->value + e)) != DFS_OK) return 9;
    if (e == 1 && dfs_next_effect(next, box_new(100 + m->value + 1)) != DFS_OK) return 9;
    return 0;
}

static void update_destroy(void *ctx) { ((update_ctx *)ctx)->destroyed++; }

/* An observer or handler context: logs "name:value". */
typedef struct tap {
    const char *name;
    test_log *log;
    int calls;
    int destroyed;
    int fail_on;          /* the observer fails on this value (0: never) */
    dfs_loop *dispatch_to;
    long dispatch_on;     /* dispatch `dispatch_event` when the value is this */
    long dispatch_event;
    dfs_job *kept;        /* a handler keeps its first job here (retained) */
} tap;

static int tap_observe(const void *model, void *ctx) {
    tap *t = ctx;
    const box *m = model;
    t->calls++;
    log_add(t->log, "%s:%ld", t->name, m->value);
    if (t->dispatch_to && m->value == t->dispatch_on) {
        dfs_status s = dfs_loop_dispatch(t->dispatch_to, EVENT(t->dispatch_event));
        log_add(t->log, "%s-dispatched:%s", t->name, s == DFS_OK ? "ok" : dfs_status_name(s));
    }
    if (t->fail_on && m->value == t->fail_on) return 3;
    return 0;
}

static void tap_destroy(void *ctx) { ((tap *)ctx)->destroyed++; }

/* A handler: logs the effect; an echo effect (500 + n) sends n back through its job. */
static int tap_handle(const void *effect, dfs_job *job, void *ctx) {
    tap *t = ctx;
    const box *e = effect;
    t->calls++;
    log_add(t->log, "%s:%ld", t->name, e->value);
    if (e->value >= 500 && e->value < 1000) {
        dfs_status s = dfs_job_send(job, EVENT(e->value - 500));
        if (s != DFS_OK) log_add(t->log, "%s-send:%s", t->name, dfs_status_name(s));
    }
    if (t->kept == NULL && e->value == 42) {
        dfs_job_retain(job);
        t->kept = job;
    }
    if (t->fail_on && e->value == t->fail_on) {
        dfs_set_error("the handler refuses");
        return 4;
    }
    return 0;
}

/* The inspector: logs each trace in a short form. */
typedef struct inspector {
    test_log *log;
    int destroyed;
    int calls;
} inspector;

static void inspect(const dfs_trace *trace, void *ctx) {
    inspector *i = ctx;
    i->calls++;
    const box *m = trace->model;
    switch (trace->kind) {
    case DFS_TRACE_STARTED:
        log_add(i->log, "started:%ld/%zu", m->value, trace->effect_count);
        break;
    case DFS_TRACE_STEPPED:
        log_add(i->log, "stepped:%ld", VALUE(trace->event));
        if (trace->has_next_model) log_add(i->log, "->%ld", ((const box *)trace->next_model)->value);
        for (size_t k = 0; k < trace->effect_count; k++) log_add(i->log, "+%ld", ((const box *)trace->effects[k])->value);
        break;
    case DFS_TRACE_FAILED:
        log_add(i->log, "failed:%ld(%s)", VALUE(trace->event), trace->error ? trace->error : "?");
        break;
    case DFS_TRACE_DROPPED:
        log_add(i->log, "dropped:%ld/%d", VALUE(trace->event), (int)trace->reason);
        break;
    case DFS_TRACE_EFFECT_FAILED:
        log_add(i->log, "effect-failed:%ld", ((const box *)trace->effect)->value);
        break;
    case DFS_TRACE_OBSERVER_FAILED:
        log_add(i->log, "observer-failed");
        break;
    case DFS_TRACE_SOURCE_FAILED:
        log_add(i->log, "source-failed(%s)", trace->error ? trace->error : "?");
        break;
    case DFS_TRACE_FEEDBACK_FAILED:
        log_add(i->log, "feedback-failed(%s)", trace->error ? trace->error : "?");
        break;
    case DFS_TRACE_STOPPED:
        log_add(i->log, "stopped:%ld", m->value);
        break;
    case DFS_TRACE_DISPOSED:
        log_add(i->log, "disposed:%ld", m->value);
        break;
    }
}

static void inspector_destroy(void *ctx) { ((inspector *)ctx)->destroyed++; }

static box_type_ctx model_type_ctx, effect_type_ctx;
static dfs_type *model_type, *effect_type;

/* A config for the counter loop starting at `start`. */
static dfs_loop_config counter_config(long start, update_ctx *u) {
    dfs_loop_config c;
    memset(&c, 0, sizeof c);
    c.model_type = model_type;
    c.event_type = dfs_type_pointer();
    c.effect_type = effect_type;
    c.model = box_new(start); /* retained by the core; the test drops its own below */
    c.update = counter_update;
    c.update_ctx = u;
    c.update_destroy = update_destroy;
    return c;
}

static dfs_loop *counter_loop(dfs_loop_config *c) {
    dfs_loop *loop = NULL;
    dfs_status s = dfs_loop_new(c, &loop);
    box_unref((box *)c->model);
    if (s != DFS_OK) {
        printf("FATAL dfs_loop_new failed: %s\n", dfs_last_error());
        exit(2);
    }
    return loop;
}

/* A counter loop of config `c` (see counter_config) whose inspector logs to `insp`. */
static dfs_loop *inspected_counter_loop(dfs_loop_config *c, inspector *insp) {
    c->inspect = inspect;
    c->inspect_ctx = insp;
    c->inspect_destroy = inspector_destroy;
    return counter_loop(c);
}

/* ------------------------------------------------------------------------------------ */

static void test_steps(void) {
    check_section("steps: update, store, publish, effects; failures; no model");
    test_log log = {{0}};
    update_ctx u = {0};
    tap h1 = {.name = "h1", .log = &log}, h2 = {.name = "h2", .log = &log};
    inspector insp = {.log = &log};
    dfs_handler handlers[] = {
        {.fn = tap_handle, .ctx = &h1, .destroy = tap_destroy},
        {.fn = tap_handle, .ctx = &h2, .destroy = tap_destroy},
    };
    dfs_loop_config c = counter_config(0, &u);
    c.handlers = handlers;
    c.handler_count = 2;
    c.inspect = inspect;
    c.inspect_ctx = &insp;
    c.inspect_destroy = inspector_destroy;
    dfs_loop *loop = counter_loop(&c);
    CHECK_LOG(&log, "started:0/0", "the inspector sees the start");

    tap o1 = {.name = "o1", .log = &log}, o2 = {.name = "o2", .log = &log};
    dfs_disposable *d1 = NULL, *d2 = NULL;
    CHECK_OK(dfs_loop_observe(loop, tap_observe, &o1, tap_destroy, &d1), "observe");
    CHECK_OK(dfs_loop_observe(loop, tap_observe, &o2, tap_destroy, &d2), "observe a second time");
    CHECK_LOG(&log, "o1:0 o2:0", "observers get the current model first");

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(1)), "dispatch 1");
    CHECK_LOG(&log, "stepped:1 ->1 +101 o1:1 o2:1 h1:101 h2:101",
              "update, then observers in order, then the effect to each handler in order");
    CHECK_INT(box_model_of(loop), 1, "the model is stored");

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 7)), "an effect without a model");
    CHECK_LOG(&log, "stepped:2007 +7 h1:7 h2:7", "no model: nothing published, the effect handled");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_SILENT)), "nothing at all");
    CHECK_LOG(&log, "stepped:1001", "no model, no effect");

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_FAIL)), "a failing update is accepted");
    CHECK_LOG(&log, "failed:1000(the update refuses event 1000)", "the inspector sees the failure and its message");
    CHECK_INT(box_model_of(loop), 1, "a failed update keeps the model");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(5)), "the loop goes on");
    CHECK_LOG(&log, "stepped:5 ->6 o1:6 o2:6", "the next event is handled");

    h1.fail_on = 107;
    o2.fail_on = 7;
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(1)), "dispatch 1 again");
    CHECK_LOG(&log, "stepped:1 ->7 +107 o1:7 o2:7 observer-failed h1:107 effect-failed:107 h2:107",
              "a failing observer and handler are reported, the rest goes on");

    dfs_disposable_dispose(d1);
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(2)), "dispatch after an observer left");
    CHECK_LOG(&log, "stepped:2 ->9 o2:9", "a disposed observer hears nothing more");
    CHECK_INT(o1.destroyed, 1, "a disposed observer's context is destroyed once");

    CHECK_OK(dfs_loop_dispose(loop), "dispose");
    CHECK_LOG(&log, "disposed:9", "the inspector sees the dispose");
    CHECK_STATUS(dfs_loop_dispatch(loop, EVENT(1)), DFS_ERR_DISPOSED, "dispatch after dispose is refused");
    CHECK_ERROR_HAS("disposed", "with a message");
    CHECK_OK(dfs_loop_dispose(loop), "dispose is idempotent");
    CHECK_INT(dfs_loop_is_running(loop), 0, "not running");
    dfs_disposable_release(d1);
    dfs_disposable_release(d2);
    CHECK_OK(dfs_loop_release(loop), "release");
    CHECK_INT(u.destroyed, 1, "the update's context is destroyed once");
    CHECK_INT(h1.destroyed + h2.destroyed, 2, "each handler's context once");
    CHECK_INT(o2.destroyed, 1, "the remaining observer's context once");
    CHECK_INT(insp.destroyed, 1, "the inspector's context once");
    CHECK_INT(box_live, 0, "every model and effect the core kept was released");
}

/* ------------------------------------------------------------------------------------ */

static void test_reentrancy(void) {
    check_section("events dispatched during a step are queued, never handled inside it");
    test_log log = {{0}};
    update_ctx u = {.log = &log};
    tap h = {.name = "h", .log = &log};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h}};
    dfs_loop_config c = counter_config(0, &u);
    c.handlers = handlers;
    c.handler_count = 1;
    dfs_loop *loop = counter_loop(&c);
    tap o = {.name = "o", .log = &log, .dispatch_on = 1, .dispatch_event = 10};
    o.dispatch_to = loop;
    dfs_disposable *d = NULL;
    dfs_loop_observe(loop, tap_observe, &o, NULL, &d);
    log_clear(&log);

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_ECHO + 1)), "an effect whose handler sends 1 back");
    CHECK_LOG(&log, "u:3001 h:501 u:1 o:1 o-dispatched:ok h:101 u:10 o:11",
              "the handler's send and the observer's dispatch each wait for the step to end");
    CHECK_INT(box_model_of(loop), 11, "both were handled");
    dfs_disposable_dispose(d);
    dfs_disposable_release(d);
    dfs_loop_release(loop);
    CHECK_INT(box_live, 0, "no box left");
}

/* ------------------------------------------------------------------------------------ */

typedef struct later {
    dfs_job *job;
    long event;
    dfs_status first, after_finish;
} later;

static void *send_later(void *arg) {
    later *l = arg;
    sleep_us(1000);
    l->first = dfs_job_send(l->job, EVENT(l->event));
    dfs_job_finish(l->job);
    l->after_finish = dfs_job_send(l->job, EVENT(l->event));
    dfs_job_release(l->job);
    return NULL;
}

static void count_action(void *ctx) { (*(int *)ctx)++; }
static void action_destroy(void *ctx) { (*(int *)ctx) += 100; }

static void test_jobs(void) {
    check_section("jobs: send later from another thread, finish, cancel, on-cancel");
    test_log log = {{0}};
    update_ctx u = {0};
    tap h = {.name = "h", .log = &log};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h}};
    dfs_loop_config c = counter_config(0, &u);
    c.handlers = handlers;
    c.handler_count = 1;
    dfs_loop *loop = counter_loop(&c);

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42)), "an effect whose handler keeps its job");
    CHECK(h.kept != NULL, "the handler retained its job");
    later l = {.job = h.kept, .event = 5};
    pthread_t thread;
    pthread_create(&thread, NULL, send_later, &l);
    pthread_join(thread, NULL);
    CHECK_OK(l.first, "a job sends from another thread, later");
    CHECK_STATUS(l.after_finish, DFS_ERR_DISPOSED, "a finished job sends nothing");
    CHECK_INT(box_model_of(loop), 5, "the event sent later was handled");

    h.kept = NULL;
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42)), "another kept job");
    dfs_job *job = h.kept;
    int actions = 0, late = 0;
    CHECK_OK(dfs_job_on_cancel(job, count_action, &actions, action_destroy), "on_cancel");
    CHECK_INT(dfs_job_is_cancelled(job), 0, "running");
    CHECK_OK(dfs_job_cancel(job), "cancel");
    CHECK_INT(actions, 101, "the action ran once, then its context was destroyed");
    CHECK_INT(dfs_job_is_cancelled(job), 1, "cancelled");
    CHECK_STATUS(dfs_job_send(job, EVENT(1)), DFS_ERR_DISPOSED, "a cancelled job sends nothing");
    CHECK_OK(dfs_job_on_cancel(job, count_action, &late, NULL), "on_cancel on a cancelled job");
    CHECK_INT(late, 1, "runs at once");
    dfs_job_release(job);

    h.kept = NULL;
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42)), "a third kept job");
    job = h.kept;
    int on_dispose = 0;
    dfs_job_on_cancel(job, count_action, &on_dispose, NULL);
    dfs_loop_dispose(loop);
    CHECK_INT(on_dispose, 1, "dispose cancels the work in flight");
    CHECK_STATUS(dfs_job_send(job, EVENT(1)), DFS_ERR_DISPOSED, "a job of a disposed loop sends nothing");
    CHECK_OK(dfs_job_release(job), "release the job");
    CHECK_STATUS(dfs_job_release(job), DFS_ERR_HANDLE, "a released job handle is refused");
    dfs_loop_release(loop);
    CHECK_INT(box_live, 0, "no box left");
}

/* A handler that releases the job it was lent without retaining it, then sends through
 * it: the release is refused and the handle serves the rest of the call. */
typedef struct over_releasing {
    dfs_status release, send, balanced;
    int message_ok;
} over_releasing;

static int over_release_handle(const void *effect, dfs_job *job, void *ctx) {
    (void)effect;
    over_releasing *o = ctx;
    o->release = dfs_job_release(job);
    o->message_ok = strstr(dfs_last_error(), "released more times than it was retained") != NULL;
    o->send = dfs_job_send(job, EVENT(7));
    dfs_job_retain(job);
    o->balanced = dfs_job_release(job);
    return 0;
}

static void test_lent_job_over_released(void) {
    check_section("jobs: a callback that releases the job it was lent without retaining it");
    update_ctx u = {0};
    over_releasing o = {0};
    dfs_handler handlers[] = {{.fn = over_release_handle, .ctx = &o}};
    dfs_loop_config c = counter_config(0, &u);
    c.handlers = handlers;
    c.handler_count = 1;
    dfs_loop *loop = counter_loop(&c);
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 1)), "an effect for the handler");
    CHECK_STATUS(o.release, DFS_ERR_HANDLE, "releasing the lent job is refused");
    CHECK_INT(o.message_ok, 1, "the error says it was released more times than retained");
    CHECK_OK(o.send, "the job still sends for the rest of the call");
    CHECK_OK(o.balanced, "a release that matches a retain is fine");
    CHECK_INT(box_model_of(loop), 7, "the event it sent was handled");
    dfs_loop_release(loop);
    CHECK_INT(box_live, 0, "no box left");
}

/* A handler that keeps the job of every effect 42 (retained) and releases `releasing`
 * on effect 43: the loop's last reference dropped from its own callback. */
typedef struct keeper {
    dfs_job *jobs[8];
    int count;
    dfs_loop *releasing;
    int destroyed;
} keeper;

static int keeper_handle(const void *effect, dfs_job *job, void *ctx) {
    keeper *k = ctx;
    long e = ((const box *)effect)->value;
    if (e == 42 && k->count < 8) {
        dfs_job_retain(job);
        k->jobs[k->count++] = job;
    }
    if (e == 43 && k->releasing) {
        dfs_loop *loop = k->releasing;
        k->releasing = NULL;
        dfs_loop_release(loop);
    }
    return 0;
}

static void keeper_destroy(void *ctx) { ((keeper *)ctx)->destroyed++; }

static dfs_loop *keeper_loop(update_ctx *u, keeper *k) {
    dfs_handler handlers[] = {{.fn = keeper_handle, .ctx = k, .destroy = keeper_destroy}};
    dfs_loop_config c = counter_config(0, u);
    c.handlers = handlers;
    c.handler_count = 1;
    return counter_loop(&c);
}

static void keeper_release_jobs(keeper *k) {
    for (int i = 0; i < k->count; i++) dfs_job_release(k->jobs[i]);
    k->count = 0;
}

/* A run's session holds its loop until the run ends: a job kept after the run ended, or
 * after its loop's last release, keeps nothing of the loop (its contexts are destroyed,
 * its models released at the last release). */
static void test_kept_jobs_do_not_keep_their_loop(void) {
    check_section("jobs kept past their run or their loop keep nothing of the loop");
    {
        update_ctx u = {0};
        keeper k = {.count = 0};
        dfs_loop *loop = keeper_loop(&u, &k);
        CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42)), "a handler keeps its job");
        CHECK_INT(k.count, 1, "kept");
        CHECK_OK(dfs_job_send(k.jobs[0], EVENT(2)), "the kept job sends");
        CHECK_INT(box_model_of(loop), 2, "handled");
        CHECK_OK(dfs_loop_release(loop), "the loop's last release, its job kept");
        CHECK_INT(u.destroyed, 1, "the update's context is destroyed at the last release");
        CHECK_INT(k.destroyed, 1, "so is the handler's");
        CHECK_INT(box_live, 0, "the model is released");
        CHECK_INT(dfs_job_is_cancelled(k.jobs[0]), 1, "the kept job is cancelled");
        CHECK_STATUS(dfs_job_send(k.jobs[0], EVENT(1)), DFS_ERR_DISPOSED, "and sends nothing");
        keeper_release_jobs(&k);
    }
    {
        update_ctx u = {0};
        keeper k = {.count = 0};
        dfs_loop *loop = keeper_loop(&u, &k);
        dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42));
        CHECK_OK(dfs_loop_stop(loop), "stop");
        CHECK_OK(dfs_loop_start(loop), "start again");
        dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42));
        CHECK_INT(k.count, 2, "a job of each run kept");
        CHECK_STATUS(dfs_job_send(k.jobs[0], EVENT(100)), DFS_ERR_DISPOSED, "the first run's job sends nothing");
        CHECK_OK(dfs_job_send(k.jobs[1], EVENT(3)), "the second run's does");
        CHECK_INT(box_model_of(loop), 3, "nothing of the first run reached the second");
        CHECK_OK(dfs_loop_stop(loop), "stop");
        CHECK_OK(dfs_loop_release(loop), "the last release of a stopped loop, its jobs kept");
        CHECK_INT(u.destroyed, 1, "the update's context is destroyed at the last release");
        CHECK_INT(box_live, 0, "the model is released");
        keeper_release_jobs(&k);
    }
    {
        update_ctx u = {0};
        keeper k = {.count = 0};
        dfs_loop *loop = keeper_loop(&u, &k);
        dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42));
        k.releasing = loop;
        CHECK_OK(dfs_job_send(k.jobs[0], EVENT(EV_EFFECT + 43)), "a kept job's event whose effect releases the loop");
        CHECK(k.releasing == NULL, "the handler made the last release");
        CHECK_INT(u.destroyed, 1, "the loop is gone once the send returns");
        CHECK_INT(k.destroyed, 1, "with its handler's context");
        CHECK_INT(box_live, 0, "and its model");
        CHECK_STATUS(dfs_job_send(k.jobs[0], EVENT(1)), DFS_ERR_DISPOSED, "the kept job sends nothing");
        keeper_release_jobs(&k);
    }
}

/* ------------------------------------------------------------------------------------ */

typedef struct fb {
    const char *name;
    test_log *log;
    int destroyed;
    dfs_job *jobs[16];
    int count;
    int cancels[16];
} fb;

static void fb_work(const void *value, dfs_job *job, void *ctx) {
    fb *f = ctx;
    long v = ((const box *)value)->value;
    log_add(f->log, "%s:%ld", f->name, v);
    if (f->count < 16) {
        dfs_job_retain(job);
        f->jobs[f->count] = job;
        dfs_job_on_cancel(job, count_action, &f->cancels[f->count], NULL);
        f->count++;
    }
}

static void fb_destroy(void *ctx) { ((fb *)ctx)->destroyed++; }

static void fb_release(fb *f) {
    for (int i = 0; i < f->count; i++) dfs_job_release(f->jobs[i]);
}

/* The request of a model: a box of value / 10, or none (NULL) below 10. */
static int request_of(const void *value, const void **out, void *ctx) {
    (void)ctx;
    long v = ((const box *)value)->value;
    *out = v < 10 ? NULL : box_new(v / 10);
    return 0;
}

static void test_feedbacks(void) {
    check_section("feedbacks: cancel previous, keep previous, concurrent; request-gated");
    test_log log = {{0}};
    update_ctx u = {0};
    dfs_loop_config c = counter_config(0, &u);
    dfs_loop *loop = counter_loop(&c);

    fb cancel = {.name = "cancel", .log = &log}, keep = {.name = "keep", .log = &log},
       both = {.name = "both", .log = &log};
    dfs_disposable *dc = NULL, *dk = NULL, *db = NULL;
    CHECK_OK(dfs_loop_add_feedback(loop, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, fb_work, &cancel, fb_destroy, &dc),
             "a cancel-previous feedback");
    CHECK_OK(dfs_loop_add_feedback(loop, DFS_OVERLAP_KEEP_PREVIOUS, NULL, fb_work, &keep, fb_destroy, &dk),
             "a keep-previous feedback");
    CHECK_OK(dfs_loop_add_feedback(loop, DFS_OVERLAP_CONCURRENT, NULL, fb_work, &both, fb_destroy, &db),
             "a concurrent feedback");
    CHECK_LOG(&log, "cancel:0 keep:0 both:0", "each hears of the current model first");
    dfs_loop_dispatch(loop, EVENT(2));
    CHECK_LOG(&log, "cancel:2 both:2", "keep-previous ignores a model while its job runs");
    CHECK_INT(cancel.cancels[0], 1, "cancel-previous cancelled its first job");
    CHECK_INT(both.cancels[0], 0, "concurrent let it run");
    CHECK_STATUS(dfs_job_send(cancel.jobs[0], EVENT(1)), DFS_ERR_DISPOSED, "the cancelled job sends nothing");
    CHECK_OK(dfs_job_send(both.jobs[0], EVENT(1)), "the concurrent first job still sends");
    CHECK_LOG(&log, "cancel:3 both:3", "its event made a model");
    dfs_job_finish(keep.jobs[0]);
    dfs_loop_dispatch(loop, EVENT(1));
    CHECK_LOG(&log, "cancel:4 keep:4 both:4", "after its job finished, keep-previous starts anew");

    dfs_disposable_dispose(dc);
    dfs_loop_dispatch(loop, EVENT(1));
    CHECK_LOG(&log, "both:5", "a removed feedback hears nothing more (and keep-previous keeps its job)");
    CHECK_INT(cancel.cancels[cancel.count - 1], 1, "and its work in progress was cancelled");
    dfs_disposable_dispose(dk);
    dfs_disposable_dispose(db);

    /* Request-gated. */
    fb req = {.name = "req", .log = &log};
    dfs_disposable *dr = NULL;
    CHECK_OK(dfs_loop_add_request_feedback(loop, model_type, request_of, NULL, NULL, DFS_OVERLAP_CANCEL_PREVIOUS, NULL,
                                           fb_work, &req, fb_destroy, &dr),
             "a request-gated feedback");
    CHECK_LOG(&log, "", "no request below 10");
    dfs_loop_dispatch(loop, EVENT(5));   /* 10: request 1 */
    dfs_loop_dispatch(loop, EVENT(5));   /* 15: request 1 again */
    dfs_loop_dispatch(loop, EVENT(5));   /* 20: request 2 */
    CHECK_LOG(&log, "req:1 req:2", "starts on a new request only");
    CHECK_INT(req.cancels[0], 1, "the new request cancelled the old one's job");
    dfs_loop_dispatch(loop, EVENT(-15)); /* 5: no request */
    CHECK_INT(req.cancels[1], 1, "no request: the job is cancelled");
    dfs_loop_dispatch(loop, EVENT(15));  /* 20: request 2 */
    CHECK_LOG(&log, "req:2", "a request again after none starts again");
    dfs_disposable_dispose(dr);

    /* A request type whose equality fails (on request 4): that model leaves the request
     * as it was, as a failing request does; nothing starts or stops. */
    box_type_ctx failing_ctx;
    dfs_type *failing = box_type_fresh(&failing_ctx, NULL);
    failing_ctx.fail_enabled = 1;
    failing_ctx.fail_on = 4;
    fb fails = {.name = "fails", .log = &log};
    dfs_disposable *df = NULL;
    CHECK_OK(dfs_loop_add_request_feedback(loop, failing, request_of, NULL, NULL, DFS_OVERLAP_CANCEL_PREVIOUS, NULL,
                                           fb_work, &fails, fb_destroy, &df),
             "a request-gated feedback whose equality fails on 4");
    CHECK_LOG(&log, "fails:2", "it starts on the current request");
    dfs_loop_dispatch(loop, EVENT(20)); /* 40: request 4, whose comparison fails */
    CHECK_LOG(&log, "", "a failing comparison starts nothing");
    CHECK_INT(fails.cancels[0], 0, "and stops nothing");
    dfs_loop_dispatch(loop, EVENT(-10)); /* 30: request 3, compared with 2 */
    CHECK_LOG(&log, "fails:3", "the next request is compared with the one kept");
    CHECK_INT(fails.cancels[0], 1, "and cancels its work");
    CHECK_INT(failing_ctx.equal_calls, 2, "one comparison a model");
    dfs_disposable_dispose(df);
    dfs_disposable_release(df);
    fb_release(&fails);
    dfs_type_release(failing);

    dfs_disposable_release(dc);
    dfs_disposable_release(dk);
    dfs_disposable_release(db);
    dfs_disposable_release(dr);
    dfs_loop_release(loop);
    fb_release(&cancel);
    fb_release(&keep);
    fb_release(&both);
    fb_release(&req);
    CHECK_INT(cancel.destroyed + keep.destroyed + both.destroyed + req.destroyed, 4, "every feedback context once");
    CHECK_INT(box_live, 0, "no box left (requests included)");
}

/* request_of, failing on the models 30 to 39 with a message. */
static int request_failing_in_the_30s(const void *value, const void **out, void *ctx) {
    long v = ((const box *)value)->value;
    if (v >= 30 && v < 40) {
        dfs_set_error("no request in the 30s");
        return 7;
    }
    return request_of(value, out, ctx);
}

static void test_request_failures(void) {
    check_section("a failing request or request equality goes to the inspector");
    test_log log = {{0}};
    update_ctx u = {0};
    inspector insp = {.log = &log};
    dfs_loop_config c = counter_config(0, &u);
    dfs_loop *loop = inspected_counter_loop(&c, &insp);
    CHECK_LOG(&log, "started:0/0", "the start");

    /* Requests are value / 10, compared by a type whose equality fails on 5. */
    box_type_ctx failing_ctx;
    dfs_type *failing = box_type_fresh(&failing_ctx, NULL);
    failing_ctx.fail_enabled = 1;
    failing_ctx.fail_on = 5;
    failing_ctx.fail_message = "5 cannot be compared";
    fb req = {.name = "req", .log = &log};
    dfs_disposable *d = NULL;
    CHECK_OK(dfs_loop_add_request_feedback(loop, failing, request_failing_in_the_30s, NULL, NULL,
                                           DFS_OVERLAP_CANCEL_PREVIOUS, NULL, fb_work, &req, fb_destroy, &d),
             "a request feedback that fails in the 30s and on request 5");
    dfs_loop_dispatch(loop, EVENT(20)); /* 20: request 2 */
    dfs_loop_dispatch(loop, EVENT(12)); /* 32: the request fails */
    dfs_loop_dispatch(loop, EVENT(20)); /* 52: request 5, whose comparison fails */
    dfs_loop_dispatch(loop, EVENT(10)); /* 62: request 6 */
    CHECK_LOG(&log,
              "stepped:20 ->20 req:2 "
              "stepped:12 ->32 feedback-failed(no request in the 30s) "
              "stepped:20 ->52 feedback-failed(5 cannot be compared) "
              "stepped:10 ->62 req:6",
              "each failure in its place, the request kept meanwhile");
    CHECK_INT(req.cancels[0], 1, "the request 6 cancelled the work of 2, which the failures left alone");
    dfs_disposable_dispose(d);
    dfs_disposable_release(d);
    dfs_loop_release(loop);
    fb_release(&req);
    dfs_type_release(failing);
    CHECK_INT(insp.destroyed, 1, "the inspector's context once");
    CHECK_INT(box_live, 0, "no box left (requests included)");
}

/* ------------------------------------------------------------------------------------ */

/* Set (atomically) when react_work hears the model 12: a background loop got there. */
static int reached_12;

/* A feedback that logs "react:model" and, on model 0, sends event 2. */
static void react_work(const void *value, dfs_job *job, void *ctx) {
    fb *f = ctx;
    long v = ((const box *)value)->value;
    log_add(f->log, "%s:%ld", f->name, v);
    if (v == 0) dfs_job_send(job, EVENT(2));
    if (v == 12) __atomic_store_n(&reached_12, 1, __ATOMIC_SEQ_CST);
    dfs_job_finish(job);
}

/* A gear feedback's propagation: logs "gear:model", pushes nothing. */
static int gear_log(const void *value, const void **out, void *ctx) {
    (void)out;
    fb *f = ctx;
    log_add(f->log, "%s:%ld", f->name, ((const box *)value)->value);
    return 0;
}

/* The loop of the config feedbacks: the counter from 0 with the start effect 510 (the
 * handler sends 10 back), the feedbacks given, an inspector; started (at once, or by
 * dfs_loop_start with manual_start) and run to its rest on `executor`, then disposed. */
static void run_with_feedbacks(dfs_executor *executor, int manual_start, dfs_feedback *const *feedbacks, size_t count,
                               test_log *log) {
    update_ctx u = {0};
    tap h = {.name = "h", .log = log};
    inspector insp = {.log = log};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h}};
    dfs_loop_config c = counter_config(0, &u);
    box *start_effect = box_new(510);
    const void *start_effects[] = {start_effect};
    c.start_effects = start_effects;
    c.start_effect_count = 1;
    c.handlers = handlers;
    c.handler_count = 1;
    c.inspect = inspect;
    c.inspect_ctx = &insp;
    c.executor = executor;
    c.manual_start = manual_start;
    c.feedbacks = feedbacks;
    c.feedback_count = count;
    __atomic_store_n(&reached_12, 0, __ATOMIC_SEQ_CST);
    dfs_loop *loop = counter_loop(&c);
    box_unref(start_effect);
    if (manual_start) CHECK_OK(dfs_loop_start(loop), "the loop starts");
    int manual = dfs_executor_run_all(executor);
    if (manual >= 0) {
        log_add(log, "runs:%d", manual);
    } else {
        /* The dispose waits for the step in progress (the rest of the model 12's). */
        for (int i = 0; i < 5000 && !__atomic_load_n(&reached_12, __ATOMIC_SEQ_CST); i++) sleep_us(1000);
    }
    dfs_loop_dispose(loop);
    dfs_loop_release(loop);
}

static void test_config_feedbacks(void) {
    check_section("config feedbacks: registered as the loop is made; the first model before the start effects");
    test_log log = {{0}};
    fb react = {.name = "react", .log = &log}, work = {.name = "work", .log = &log},
       req = {.name = "req", .log = &log}, gear = {.name = "gear", .log = &log};
    dfs_gear *bus = NULL;
    CHECK_OK(dfs_gear_new(dfs_type_pointer(), &bus), "a gear");
    dfs_feedback *feedbacks[4] = {NULL};
    CHECK_OK(dfs_feedback_work(DFS_OVERLAP_CANCEL_PREVIOUS, NULL, react_work, &react, fb_destroy, &feedbacks[0]),
             "a feedback");
    CHECK_OK(dfs_feedback_work(DFS_OVERLAP_CONCURRENT, NULL, fb_work, &work, fb_destroy, &feedbacks[1]),
             "a feedback with an overlap");
    CHECK_OK(dfs_feedback_request(model_type, request_of, NULL, NULL, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, fb_work, &req,
                                  fb_destroy, &feedbacks[2]),
             "a request-gated feedback");
    CHECK_OK(dfs_feedback_pushing(bus, gear_log, &gear, fb_destroy, &feedbacks[3]), "a gear feedback");
    CHECK_OK(dfs_gear_release(bus), "the gear handle goes: the feedback keeps the gear");

    /* Swift's Loop(feedbacks:): the start publishes the first model to them, then hands
     * the start effects to the handlers; so the feedback's event 2 comes before the
     * handler's 10, on every executor. */
    const char *expected = "started:0/1 react:0 work:0 gear:0 h:510 stepped:2 ->2 react:2 work:2 gear:2 "
                           "stepped:10 ->12 react:12 work:12 req:1 gear:12";
    run_with_feedbacks(NULL, 0, feedbacks, 4, &log);
    CHECK_LOG(&log, "started:0/1 react:0 work:0 gear:0 h:510 stepped:2 ->2 react:2 work:2 gear:2 "
                    "stepped:10 ->12 react:12 work:12 req:1 gear:12 disposed:12",
              "the caller's executor");
    run_with_feedbacks(NULL, 1, feedbacks, 4, &log);
    CHECK_LOG(&log, "started:0/1 react:0 work:0 gear:0 h:510 stepped:2 ->2 react:2 work:2 gear:2 "
                    "stepped:10 ->12 react:12 work:12 req:1 gear:12 disposed:12",
              "the caller's executor, manual start");
    dfs_executor *manual = NULL;
    dfs_executor_new_manual(&manual);
    run_with_feedbacks(manual, 0, feedbacks, 4, &log);
    CHECK_LOG(&log, "started:0/1 react:0 work:0 gear:0 h:510 stepped:2 ->2 react:2 work:2 gear:2 "
                    "stepped:10 ->12 react:12 work:12 req:1 gear:12 runs:3 disposed:12",
              "a manual executor: the start and two events, one piece of work each");
    run_with_feedbacks(manual, 1, feedbacks, 4, &log);
    CHECK_LOG(&log, "started:0/1 react:0 work:0 gear:0 h:510 stepped:2 ->2 react:2 work:2 gear:2 "
                    "stepped:10 ->12 react:12 work:12 req:1 gear:12 runs:3 disposed:12",
              "a manual executor, manual start");
    int same = 0, rounds = check_scale(20, 3);
    for (int round = 0; round < rounds; round++) {
        dfs_executor *background = NULL;
        dfs_executor_new_background(&background);
        run_with_feedbacks(background, round % 2, feedbacks, 4, &log);
        dfs_executor_release(background);
        char want[512];
        snprintf(want, sizeof want, "%s disposed:12", expected);
        if (strcmp(log.text, want) == 0) same++;
        else if (same == round) printf("     round %d: %s\n", round, log.text);
        log_clear(&log);
    }
    CHECK_INT(same, rounds, "a background executor, every round");

    /* One description, several loops: each makes its own instance. */
    CHECK_INT(react.destroyed + work.destroyed + req.destroyed + gear.destroyed, 0, "the handles keep the callbacks");
    update_ctx u = {0};
    dfs_loop_config c = counter_config(0, &u);
    c.feedbacks = &feedbacks[1];
    c.feedback_count = 1;
    dfs_loop *first = counter_loop(&c);
    c = counter_config(5, &u);
    dfs_loop *second = counter_loop(&c);
    dfs_disposable *added = NULL;
    CHECK_OK(dfs_loop_add(second, feedbacks[1], &added), "dfs_loop_add registers a description");
    CHECK_LOG(&log, "work:0 work:5", "each loop's instance hears its current model");
    for (int i = 0; i < 4; i++) CHECK_OK(dfs_feedback_release(feedbacks[i]), "release a feedback handle");
    CHECK_STATUS(dfs_feedback_release(feedbacks[0]), DFS_ERR_HANDLE, "a released feedback handle is refused");
    CHECK_INT(react.destroyed + req.destroyed + gear.destroyed, 3, "unused callbacks go with their handle");
    dfs_loop_dispatch(first, EVENT(1));
    dfs_loop_dispatch(second, EVENT(1));
    CHECK_LOG(&log, "work:1 work:6", "the loops keep what they need");
    dfs_loop_release(first);
    CHECK_INT(work.destroyed, 0, "a loop still uses it");
    dfs_disposable_dispose(added);
    dfs_disposable_release(added);
    dfs_loop_release(second);
    CHECK_INT(work.destroyed, 1, "destroyed once, with its last user");
    fb_release(&work);
    fb_release(&req);
    dfs_executor_release(manual);
    CHECK_INT(boxes_settled(), 0, "no box left");
}

static void test_config_feedback_errors(void) {
    check_section("config feedbacks: misuse; destroys run once");
    test_log log = {{0}};
    fb f = {.name = "f", .log = &log};
    dfs_feedback *made = (dfs_feedback *)(uintptr_t)1;
    CHECK_STATUS(dfs_feedback_work(DFS_OVERLAP_CANCEL_PREVIOUS, NULL, NULL, &f, fb_destroy, &made), DFS_ERR_NULL,
                 "no function");
    CHECK(made == NULL, "out cleared");
    CHECK_INT(f.destroyed, 1, "a failing constructor destroys its context");
    CHECK_STATUS(dfs_feedback_work((dfs_overlap)9, NULL, fb_work, &f, fb_destroy, &made), DFS_ERR_ARGUMENT,
                 "an unknown overlap");
    CHECK_INT(f.destroyed, 2, "once more");
    fb g = {.name = "g", .log = &log};
    CHECK_STATUS(dfs_feedback_request(NULL, request_of, &g, fb_destroy, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, fb_work, &f,
                                      fb_destroy, &made),
                 DFS_ERR_NULL, "no request type");
    CHECK_INT(f.destroyed + g.destroyed, 4, "both contexts of a request feedback");
    CHECK_STATUS(dfs_feedback_request(model_type, NULL, NULL, NULL, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, fb_work, &f,
                                      fb_destroy, &made),
                 DFS_ERR_NULL, "no request function");
    CHECK_ERROR_HAS("request is NULL", "the message names it as the header does (\"%s\")", dfs_last_error());
    CHECK_INT(f.destroyed, 4, "the work's context is destroyed");
    CHECK_STATUS(dfs_feedback_pushing(NULL, gear_log, &f, fb_destroy, &made), DFS_ERR_NULL, "no gear");
    CHECK_INT(f.destroyed, 5, "a gear feedback's too");
    CHECK_STATUS(dfs_feedback_work(DFS_OVERLAP_CANCEL_PREVIOUS, NULL, fb_work, NULL, NULL, NULL), DFS_ERR_NULL,
                 "no out");

    dfs_feedback *good = NULL;
    f.destroyed = 0;
    CHECK_OK(dfs_feedback_work(DFS_OVERLAP_CANCEL_PREVIOUS, NULL, fb_work, &f, fb_destroy, &good), "a feedback");
    update_ctx u = {0};
    tap h = {.name = "h"};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h, .destroy = tap_destroy}};
    dfs_loop *loop = NULL;
    dfs_loop_config c = counter_config(0, &u);
    c.handlers = handlers;
    c.handler_count = 1;
    c.feedback_count = 1;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_NULL, "a feedback count without feedbacks");
    CHECK_ERROR_HAS("feedbacks", "the message names them");
    CHECK(loop == NULL, "out cleared");
    CHECK_INT(u.destroyed + h.destroyed, 2, "the config's destroys run once");
    box_unref((box *)c.model);

    dfs_feedback *with_null[] = {good, NULL};
    c = counter_config(0, &u);
    c.feedbacks = with_null;
    c.feedback_count = 2;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_NULL, "a NULL feedback");
    CHECK_ERROR_HAS("feedbacks[1]", "the message names the entry");
    CHECK_INT(u.destroyed, 2, "the update's context once more");
    box_unref((box *)c.model);

    dfs_gear *gear = NULL;
    dfs_gear_new(dfs_type_pointer(), &gear);
    dfs_feedback *wrong[] = {(dfs_feedback *)gear};
    c = counter_config(0, &u);
    c.feedbacks = wrong;
    c.feedback_count = 1;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_HANDLE, "a gear handle is not a feedback");
    box_unref((box *)c.model);
    c = counter_config(0, &u);
    c.feedbacks = with_null;
    c.feedback_count = (size_t)1 << 30;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_ARGUMENT, "a feedback count out of range");
    box_unref((box *)c.model);
    /* A size_t past the largest signed size, in each count of the config. */
    for (int which = 0; which < 3; which++) {
        static const char *const names[] = {"feedback_count", "handler_count", "start_effect_count"};
        c = counter_config(0, &u);
        c.feedbacks = with_null;
        *(which == 0 ? &c.feedback_count : which == 1 ? &c.handler_count : &c.start_effect_count) = SIZE_MAX;
        CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_ARGUMENT, "%s SIZE_MAX", names[which]);
        CHECK_ERROR_HAS("18446744073709551615 is out of range", "says so (\"%s\")", dfs_last_error());
        CHECK_ERROR_HAS(names[which], "names the count");
        box_unref((box *)c.model);
    }
    /* 2^24 handlers, the first limit past the largest count: refused before the array
     * is read (an array the test cannot read either), so no handler's destroy runs. */
    c = counter_config(0, &u);
    c.handlers = (const dfs_handler *)(uintptr_t)0x10;
    c.handler_count = (size_t)1 << 24;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_ARGUMENT, "2^24 handlers");
    CHECK_ERROR_HAS("handler_count 16777216 is out of range", "says so (\"%s\")", dfs_last_error());
    box_unref((box *)c.model);
    CHECK_INT(f.destroyed, 0, "a failing dfs_loop_new leaves the feedback handles alone");

    c = counter_config(0, &u);
    c.feedbacks = with_null;
    c.feedback_count = 1;
    loop = counter_loop(&c);
    CHECK_LOG(&log, "f:0", "the handle still serves");
    dfs_disposable *d = (dfs_disposable *)(uintptr_t)1;
    CHECK_STATUS(dfs_loop_add(loop, NULL, &d), DFS_ERR_NULL, "dfs_loop_add needs a feedback");
    CHECK(d == NULL, "out cleared");
    CHECK_STATUS(dfs_loop_add(loop, (dfs_feedback *)gear, &d), DFS_ERR_HANDLE, "not a gear");
    CHECK_STATUS(dfs_loop_add((dfs_loop *)good, good, &d), DFS_ERR_HANDLE, "nor a feedback for a loop");
    CHECK_STATUS(dfs_feedback_retain(good), DFS_OK, "retain");
    CHECK_OK(dfs_feedback_release(good), "release");
    CHECK_OK(dfs_feedback_release(good), "the last release");
    CHECK_STATUS(dfs_feedback_retain(good), DFS_ERR_HANDLE, "a released handle is refused");
    CHECK_OK(dfs_feedback_release(NULL), "NULL is ignored");
    dfs_loop_release(loop);
    dfs_gear_release(gear);
    fb_release(&f);
    CHECK_INT(f.destroyed, 1, "destroyed once, with its last user");
    CHECK_INT(box_live, 0, "no box left");
}

/* ------------------------------------------------------------------------------------ */

/* An executor written in C: a queue the test runs by hand. */
typedef struct queue_executor {
    dfs_work *works[64];
    int count;
    int destroyed;
} queue_executor;

static void queue_execute(dfs_work *work, void *ctx) {
    queue_executor *q = ctx;
    q->works[q->count++] = work;
}

static void queue_destroy(void *ctx) { ((queue_executor *)ctx)->destroyed++; }

static int queue_run(queue_executor *q) {
    int ran = 0;
    while (q->count > 0) {
        dfs_work *work = q->works[0];
        memmove(q->works, q->works + 1, (size_t)(q->count - 1) * sizeof q->works[0]);
        q->count--;
        if (dfs_work_run(work) == DFS_OK) ran++;
    }
    return ran;
}

typedef struct flood {
    dfs_loop *loop;
    long events;
} flood;

/* An executor written in C that runs each piece of work at once, inside execute. */
static void inline_execute(dfs_work *work, void *ctx) {
    ++*(long *)ctx;
    if (dfs_work_run(work) != DFS_OK) abort();
}

/* An observer that dispatches `*ctx` events when it first sees model 1. */
static int flood_observe(const void *model, void *ctx) {
    flood *f = ctx;
    if (((const box *)model)->value == 1)
        for (long i = 1; i < f->events; i++) dfs_loop_dispatch(f->loop, EVENT(1));
    return 0;
}

/* Each hand-back of a drain run at once inside execute is run by the drain that made it,
 * in a loop, not one stack level deeper: 200,000 one-step pieces of work. */
static void test_inline_executor(void) {
    check_section("executors: one that runs work at once does not recurse");
    update_ctx u = {0};
    long pieces = 0;
    dfs_executor *inline_exec = NULL;
    CHECK_OK(dfs_executor_new(inline_execute, &pieces, NULL, 1, &inline_exec), "an executor that runs work at once");
    dfs_loop_config c = counter_config(0, &u);
    c.executor = inline_exec;
    dfs_loop *loop = counter_loop(&c);
    flood f = {.loop = loop, .events = 200000};
    dfs_disposable *d = NULL;
    CHECK_OK(dfs_loop_observe(loop, flood_observe, &f, NULL, &d), "an observer that floods the loop");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(1)), "the first event");
    CHECK_INT(box_model_of(loop), 200000, "every event handled");
    CHECK_INT(pieces >= 200000, 1, "one piece of work a step");
    dfs_disposable_release(d);
    dfs_loop_release(loop);
    dfs_executor_release(inline_exec);
}

/* Run in a child process whose address space is capped just above what it uses, so
 * that no new thread stack fits: dfs_executor_new_background says so instead of
 * stopping the program. The first few may still start, on the stacks of threads that
 * ended before (glibc keeps them), so executors are made until one fails. Exit status 0
 * when the failure is DFS_ERR_MEMORY with no handle and a message. */
static int background_executor_without_room(void) {
    long pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm == NULL || fscanf(statm, "%ld", &pages) != 1) return 10;
    fclose(statm);
    struct rlimit cap = {.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1u << 20)};
    cap.rlim_max = RLIM_INFINITY;
    if (setrlimit(RLIMIT_AS, &cap) != 0) return 11;
    for (int made = 0; made < 100; made++) {
        dfs_executor *executor = NULL;
        dfs_status status = dfs_executor_new_background(&executor);
        if (status == DFS_OK) continue; /* kept: its thread holds a stack */
        if (status != DFS_ERR_MEMORY) return 12;
        if (executor != NULL) return 13;
        if (strstr(dfs_last_error(), "could not start a thread") == NULL) return 14;
        return 0;
    }
    return 15;
}

/* Whether a sanitizer runtime is linked in: it maps its shadow memory as it goes, which
 * the cap below would refuse. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define DFS_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define DFS_TEST_SANITIZED 1
#endif
#endif
#ifndef DFS_TEST_SANITIZED
#define DFS_TEST_SANITIZED 0
#endif

static void test_background_executor_without_a_thread(void) {
    check_section("executors: a background executor whose thread cannot start");
    if (check_slow || DFS_TEST_SANITIZED) {
        /* valgrind keeps the address space itself, and a sanitizer needs room the cap
         * would refuse: this runs in the plain build only. */
        printf("# (plain build only: valgrind does not enforce RLIMIT_AS, a sanitizer needs room)\n");
        return;
    }
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(background_executor_without_room());
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child, "the child ran");
    CHECK(WIFEXITED(status), "no crash in the child (signal %d)", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    CHECK_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
              "DFS_ERR_MEMORY, no handle and a message (else the child's exit code names the check)");
}

static void test_executors(void) {
    check_section("executors: manual, written in C, background");
    test_log log = {{0}};
    update_ctx u = {0};

    dfs_executor *manual = NULL;
    CHECK_OK(dfs_executor_new_manual(&manual), "a manual executor");
    dfs_loop_config c = counter_config(0, &u);
    c.executor = manual;
    dfs_loop *loop = counter_loop(&c);
    tap o = {.name = "o", .log = &log};
    dfs_disposable *d = NULL;
    dfs_loop_observe(loop, tap_observe, &o, NULL, &d);
    dfs_loop_dispatch(loop, EVENT(1));
    dfs_loop_dispatch(loop, EVENT(2));
    CHECK_LOG(&log, "", "nothing runs before the executor does");
    CHECK_INT(dfs_executor_run_next(manual), 1, "the start");
    CHECK_INT(dfs_executor_run_next(manual), 1, "the observer's registration");
    CHECK_LOG(&log, "o:0", "one entry per step");
    CHECK_INT(dfs_executor_run_next(manual), 1, "one event");
    CHECK_LOG(&log, "o:1", "one step");
    CHECK_INT(dfs_executor_run_all(manual), 1, "the rest");
    CHECK_LOG(&log, "o:3", "the last step");
    CHECK_INT(dfs_executor_run_next(manual), 0, "nothing left");
    dfs_loop_dispatch(loop, EVENT(1));
    dfs_loop_dispose(loop);
    CHECK_INT(dfs_executor_run_all(manual), 1, "the drain handed over before the dispose runs");
    CHECK_LOG(&log, "", "but handles nothing: the dispose dropped the event");
    dfs_disposable_release(d);
    dfs_loop_release(loop);

    queue_executor q = {0};
    dfs_executor *custom = NULL;
    CHECK_OK(dfs_executor_new(queue_execute, &q, queue_destroy, 2, &custom), "an executor written in C");
    CHECK_INT(dfs_executor_run_next(custom), -DFS_ERR_ARGUMENT, "run_next is for manual executors");
    c = counter_config(0, &u);
    c.executor = custom;
    loop = counter_loop(&c);
    dfs_loop_observe(loop, tap_observe, &o, NULL, &d);
    for (int i = 0; i < 5; i++) dfs_loop_dispatch(loop, EVENT(1));
    CHECK_INT(q.count, 1, "one piece of work handed");
    CHECK_INT(queue_run(&q), 4, "7 entries, 2 a run: four pieces of work");
    CHECK_LOG(&log, "o:0 o:1 o:2 o:3 o:4 o:5", "every step, in order");
    CHECK_OK(dfs_executor_release(custom), "release the executor handle");
    dfs_loop_dispatch(loop, EVENT(1));
    queue_run(&q);
    CHECK_LOG(&log, "o:6", "the loop keeps its executor");
    dfs_disposable_release(d);
    dfs_loop_release(loop);
    CHECK_INT(q.destroyed, 1, "the executor's context is destroyed with the last user");

    queue_executor unlimited = {0};
    CHECK_OK(dfs_executor_new(queue_execute, &unlimited, queue_destroy, SIZE_MAX, &custom),
             "steps_per_run SIZE_MAX: no limit");
    c = counter_config(0, &u);
    c.executor = custom;
    loop = counter_loop(&c);
    for (int i = 0; i < 5; i++) dfs_loop_dispatch(loop, EVENT(1));
    CHECK_INT(queue_run(&unlimited), 1, "6 entries (the start and 5 events) in one piece of work");
    CHECK_INT(box_model_of(loop), 5, "all of them handled");
    dfs_loop_release(loop);
    dfs_executor_release(custom);

    dfs_executor *background = NULL;
    CHECK_OK(dfs_executor_new_background(&background), "a background executor");
    c = counter_config(0, &u);
    c.executor = background;
    loop = counter_loop(&c);
    for (int i = 0; i < 100; i++) dfs_loop_dispatch(loop, EVENT(1));
    dfs_loop_dispose(loop);
    CHECK_INT(box_model_of(loop), 100, "dispose waits for the background thread to handle what it accepted");
    dfs_loop_release(loop);
    dfs_executor_release(background);
    dfs_executor_release(manual);
    CHECK_INT(boxes_settled(), 0, "no box left");
}

/* ------------------------------------------------------------------------------------ */

typedef struct source {
    dfs_dispatch *dispatch;
    int connects, disconnects, destroyed;
} source;

static int source_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    source *s = ctx;
    s->dispatch = dispatch;
    s->connects++;
    *connection = s;
    return 0;
}

static void source_disconnect(void *connection, void *ctx) {
    source *s = ctx;
    (void)connection;
    s->dispatch = NULL;
    s->disconnects++;
}

static void source_destroy(void *ctx) { ((source *)ctx)->destroyed++; }

static void test_lifecycle(void) {
    check_section("lifecycle: manual start, stop keeps the model, start, sources, render, last release");
    test_log log = {{0}};
    update_ctx u = {0};
    inspector insp = {.log = &log};
    dfs_loop_config c = counter_config(3, &u);
    box *start_effect = box_new(9);
    const void *start_effects[] = {start_effect};
    tap h = {.name = "h", .log = &log};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h}};
    c.start_effects = start_effects;
    c.start_effect_count = 1;
    c.handlers = handlers;
    c.handler_count = 1;
    c.inspect = inspect;
    c.inspect_ctx = &insp;
    c.manual_start = 1;
    dfs_loop *loop = counter_loop(&c);
    box_unref(start_effect);
    CHECK_INT(dfs_loop_is_running(loop), 0, "made with manual_start: not running");
    CHECK_STATUS(dfs_loop_dispatch(loop, EVENT(1)), DFS_ERR_STOPPED, "refused before the start");

    source src = {0};
    dfs_fuser *fuser = NULL;
    dfs_fuser_from(dfs_type_pointer(), source_connect, source_disconnect, &src, source_destroy, &fuser);
    dfs_disposable *connection = NULL;
    CHECK_OK(dfs_loop_connect(loop, fuser, &connection), "connect sources");
    dfs_fuser_release(fuser);
    CHECK_INT(src.connects, 0, "not connected while not running");

    tap r = {.name = "r", .log = &log};
    dfs_diffuser *render = NULL;
    dfs_diffuser_into(model_type, tap_observe, &r, NULL, &render);
    dfs_disposable *rendering = NULL;
    CHECK_OK(dfs_loop_render(loop, render, &rendering), "render through a diffuser");
    dfs_diffuser_release(render);
    CHECK_LOG(&log, "", "nothing rendered before the start");

    CHECK_OK(dfs_loop_start(loop), "start");
    CHECK_LOG(&log, "started:3/1 r:3 h:9", "the first model is published, then the start effects");
    CHECK_INT(src.connects, 1, "sources connected");
    CHECK_OK(dfs_dispatch_emit(src.dispatch, EVENT(2)), "a source emits");
    CHECK_LOG(&log, "stepped:2 ->5 r:5", "its event is handled");

    CHECK_OK(dfs_loop_stop(loop), "stop");
    CHECK_LOG(&log, "stopped:5", "the inspector sees the stop");
    CHECK_INT(src.disconnects, 1, "sources disconnected");
    CHECK_STATUS(dfs_loop_dispatch(loop, EVENT(1)), DFS_ERR_STOPPED, "refused while stopped");
    CHECK_INT(box_model_of(loop), 5, "the model is kept");
    CHECK_OK(dfs_loop_start(loop), "start again");
    CHECK_LOG(&log, "started:5/0", "the kept model is published again: the render's gate saw it already");
    CHECK_INT(src.connects, 2, "sources reconnected");
    dfs_dispatch_emit(src.dispatch, EVENT(1));
    CHECK_LOG(&log, "stepped:1 ->6 +106 r:6 h:106", "and running");

    CHECK_OK(dfs_disposable_dispose(connection), "disconnect the sources for good");
    CHECK_INT(src.disconnects, 2, "disconnected");
    dfs_loop_stop(loop);
    dfs_loop_start(loop);
    CHECK_INT(src.connects, 2, "not reconnected after dispose");
    log_clear(&log);

    CHECK_OK(dfs_loop_release(loop), "the last release");
    CHECK_LOG(&log, "disposed:6", "disposes the loop");
    dfs_disposable_release(connection);
    dfs_disposable_release(rendering);
    CHECK_INT(src.destroyed, 1, "the source's context is destroyed once");
    CHECK_INT(box_live, 0, "no box left");
}

/* A source that refuses its first `refusals` connects. */
typedef struct refusing_source {
    int refusals, connects, disconnects;
} refusing_source;

static int refusing_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    refusing_source *s = ctx;
    (void)dispatch;
    if (s->refusals > 0) {
        s->refusals--;
        dfs_set_error("not now");
        return -1;
    }
    s->connects++;
    *connection = s;
    return 0;
}

static void refusing_disconnect(void *connection, void *ctx) {
    (void)connection;
    ((refusing_source *)ctx)->disconnects++;
}

/* The teardown's order: the loop's last model is released after the destroys of its
 * update, handlers and inspector. */
static const void *logged_retain(const void *value, void *ctx) {
    (void)ctx;
    return value;
}
static void logged_release(const void *value, void *ctx) { log_add(ctx, "model:%ld", VALUE(value)); }
static int logged_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    return dfs_next_model(next, EVENT(VALUE(model) + VALUE(event))) == DFS_OK ? 0 : 1;
}
static int logged_handle(const void *effect, dfs_job *job, void *ctx) {
    (void)effect, (void)job, (void)ctx;
    return 0;
}
static void logged_inspect(const dfs_trace *trace, void *ctx) { (void)trace, (void)ctx; }
static test_log *teardown_log;
static void logged_destroy(void *ctx) { log_add(teardown_log, "%s", (const char *)ctx); }

static void test_teardown_order(void) {
    check_section("teardown: the last model is released after the update, handlers and inspector");
    test_log log = {{0}};
    teardown_log = &log;
    dfs_type *models = NULL;
    CHECK_OK(dfs_type_new("logged", NULL, logged_retain, logged_release, &log, NULL, &models), "a model type");
    dfs_handler handlers[] = {{.fn = logged_handle, .ctx = "handler", .destroy = logged_destroy}};
    dfs_loop_config c;
    memset(&c, 0, sizeof c);
    c.model_type = models;
    c.event_type = dfs_type_pointer();
    c.effect_type = dfs_type_pointer();
    c.model = EVENT(100);
    c.update = logged_update;
    c.update_ctx = "update";
    c.update_destroy = logged_destroy;
    c.handlers = handlers;
    c.handler_count = 1;
    c.inspect = logged_inspect;
    c.inspect_ctx = "inspect";
    c.inspect_destroy = logged_destroy;
    dfs_loop *loop = NULL;
    CHECK_OK(dfs_loop_new(&c, &loop), "a loop");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(1)), "a step");
    CHECK_LOG(&log, "model:100", "the replaced model is released");
    CHECK_OK(dfs_loop_release(loop), "the last release");
    CHECK_LOG(&log, "update handler inspect model:101", "the last model goes after the callbacks");
    dfs_type_release(models);
}

/* A source that refuses to connect is not dfs_loop_connect's error (it connects on the
 * loop's turn): the inspector sees it, the fuser's other sources are disconnected, and
 * the next start tries again. */
static void test_refused_source(void) {
    check_section("lifecycle: a source that refuses to connect goes to the inspector");
    test_log log = {{0}};
    update_ctx u = {0};
    inspector insp = {.log = &log};
    dfs_loop_config c = counter_config(0, &u);
    dfs_loop *loop = inspected_counter_loop(&c, &insp);
    log_clear(&log);

    source good = {0};
    refusing_source bad = {.refusals = 1};
    dfs_fuser *parts[2] = {NULL, NULL}, *all = NULL;
    dfs_fuser_from(dfs_type_pointer(), source_connect, source_disconnect, &good, source_destroy, &parts[0]);
    dfs_fuser_from(dfs_type_pointer(), refusing_connect, refusing_disconnect, &bad, NULL, &parts[1]);
    CHECK_OK(dfs_fuser_from_all(dfs_type_pointer(), parts, 2, &all), "fuser of both");
    dfs_fuser_release(parts[0]);
    dfs_fuser_release(parts[1]);
    dfs_disposable *connection = NULL;
    CHECK_OK(dfs_loop_connect(loop, all, &connection), "connect: the refusal is not this call's error");
    dfs_fuser_release(all);
    CHECK_LOG(&log, "source-failed(not now)", "the inspector sees the refusal, with the source's message");
    CHECK_INT(good.connects - good.disconnects, 0, "nothing of the fuser stays connected");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(1)), "the loop goes on");
    CHECK_INT(box_model_of(loop), 1, "and handles events");

    dfs_loop_stop(loop);
    log_clear(&log);
    CHECK_OK(dfs_loop_start(loop), "start again");
    CHECK_INT(bad.connects, 1, "the next start connects the fuser again");
    CHECK_INT(good.connects - good.disconnects, 1, "all of it");
    CHECK_OK(dfs_dispatch_emit(good.dispatch, EVENT(2)), "a source emits");
    CHECK_INT(box_model_of(loop), 3, "its event is handled");
    CHECK_OK(dfs_loop_release(loop), "the last release");
    CHECK_INT(bad.connects - bad.disconnects, 0, "disconnected by the dispose");
    dfs_disposable_release(connection);
    CHECK_INT(good.destroyed, 1, "the source's context is destroyed once");
}

/* An observer that stops (ctx 0) or disposes (ctx 1) its loop when it sees the start. */
/* The last dfs_loop_release while a source is connected frees the loop (its update's
 * context is destroyed) even though the connection's handle is still held: from the
 * test, and from a transform of the source's own delivery. The connection holds its
 * loop until it is disposed, which the release brings about. */
static dfs_loop *released_in_transform;
static int release_on_seven(const void *value, const void **out, void *ctx) {
    (void)ctx;
    if (VALUE(value) == 7) {
        dfs_loop_release(released_in_transform);
        released_in_transform = NULL;
    }
    *out = value;
    return 0;
}

static void test_released_while_connected(void) {
    check_section("lifecycle: the last release while a source is connected frees the loop");
    for (int inside = 0; inside <= 1; inside++) {
        update_ctx u = {0};
        dfs_loop_config c = counter_config(0, &u);
        dfs_loop *loop = counter_loop(&c);
        source src = {0};
        dfs_fuser *from = NULL, *fuser = NULL;
        dfs_fuser_from(dfs_type_pointer(), source_connect, source_disconnect, &src, source_destroy, &from);
        if (inside) {
            CHECK_OK(dfs_fuser_extract(dfs_type_pointer(), release_on_seven, NULL, NULL, from, &fuser), "extract");
            dfs_fuser_release(from);
        } else {
            fuser = from;
        }
        dfs_disposable *connection = NULL;
        CHECK_OK(dfs_loop_connect(loop, fuser, &connection), "connect sources");
        dfs_fuser_release(fuser);
        CHECK_INT(src.connects, 1, "connected");
        CHECK_OK(dfs_dispatch_emit(src.dispatch, EVENT(2)), "a source emits");
        CHECK_INT(box_model_of(loop), 2, "its event is handled");
        if (inside) {
            released_in_transform = loop;
            CHECK_OK(dfs_dispatch_emit(src.dispatch, EVENT(7)), "the transform releases the loop");
            CHECK(released_in_transform == NULL, "released inside the delivery");
        } else {
            CHECK_OK(dfs_loop_release(loop), "the last release");
        }
        CHECK_INT(src.disconnects, 1, "the source is disconnected");
        CHECK_INT(u.destroyed, 1, "the loop is freed: its update's context is destroyed");
        CHECK_OK(dfs_disposable_dispose(connection), "the connection's handle still works");
        dfs_disposable_release(connection);
        CHECK_INT(src.destroyed, 1, "the source's context is destroyed once");
        CHECK_INT(box_live, 0, "no box left");
    }
}

static dfs_loop *closing_loop;
static int close_on_start(const void *model, void *ctx) {
    (void)model;
    if (ctx) dfs_loop_dispose(closing_loop);
    else dfs_loop_stop(closing_loop);
    return 0;
}

/* dfs_loop_start says whether the loop runs once it returns: a callback of the start
 * that stops or disposes it again makes the call say which. */
static void test_start_closed_by_its_callback(void) {
    check_section("lifecycle: a start that its own callback stops or disposes says so");
    for (intptr_t dispose = 0; dispose <= 1; dispose++) {
        update_ctx u = {0};
        dfs_loop_config c = counter_config(0, &u);
        c.manual_start = 1;
        closing_loop = counter_loop(&c);
        dfs_disposable *d = NULL;
        CHECK_OK(dfs_loop_observe(closing_loop, close_on_start, (void *)dispose, NULL, &d), "an observer");
        CHECK_STATUS(dfs_loop_start(closing_loop), dispose ? DFS_ERR_DISPOSED : DFS_ERR_STOPPED,
                     dispose ? "disposed by the start's observer" : "stopped by the start's observer");
        CHECK_INT(dfs_loop_is_running(closing_loop), 0, "not running");
        dfs_disposable_release(d);
        dfs_loop_release(closing_loop);
    }
}

/* ------------------------------------------------------------------------------------ */

static int key_of(const void *event, uint64_t *key, void *ctx) {
    (void)ctx;
    long e = VALUE(event);
    if (e < 100) return 0;
    *key = (uint64_t)(e / 100);
    return 1;
}

static void test_coalescing(void) {
    check_section("coalescing: a queued event with the same key is replaced in place");
    test_log log = {{0}};
    update_ctx u = {.log = &log};
    inspector insp = {.log = &log};
    dfs_executor *manual = NULL;
    dfs_executor_new_manual(&manual);
    dfs_loop_config c = counter_config(0, &u);
    c.executor = manual;
    c.coalesce = key_of;
    c.inspect = inspect;
    c.inspect_ctx = &insp;
    dfs_loop *loop = counter_loop(&c);
    dfs_executor_run_all(manual);
    log_clear(&log);
    dfs_loop_dispatch(loop, EVENT(101)); /* key 1 */
    dfs_loop_dispatch(loop, EVENT(1));
    dfs_loop_dispatch(loop, EVENT(102)); /* key 1: replaces 101 in place */
    dfs_loop_dispatch(loop, EVENT(201)); /* key 2 */
    dfs_loop_dispatch(loop, EVENT(103)); /* key 1 again */
    dfs_executor_run_all(manual);
    CHECK_LOG(&log,
              "dropped:101/2 dropped:102/2 u:103 stepped:103 ->103 u:1 stepped:1 ->104 +204 u:201 stepped:201 ->305",
              "103 took 101's place; the replaced ones are dropped as coalesced");
    dfs_loop_release(loop);
    dfs_executor_release(manual);
    CHECK_INT(box_live, 0, "no box left");
}

/* Keys given and handed back, by key number (an event's hundreds). */
typedef struct key_ledger {
    int given[8];
    int back[8];
    int back_after_destroy;
    int destroyed;
} key_ledger;

/* A ledger's key for events 100..799 only (key: the hundreds), counted atomically: the
 * thread test dispatches from several threads. */
static int ledger_key(const void *event, uint64_t *key, void *ctx) {
    key_ledger *l = ctx;
    long e = VALUE(event);
    if (e < 100 || e >= 800) return 0;
    *key = (uint64_t)(e / 100);
    __atomic_add_fetch(&l->given[*key], 1, __ATOMIC_SEQ_CST);
    return 1;
}

static void ledger_done(uint64_t key, void *ctx) {
    key_ledger *l = ctx;
    if (__atomic_load_n(&l->destroyed, __ATOMIC_SEQ_CST)) __atomic_add_fetch(&l->back_after_destroy, 1, __ATOMIC_SEQ_CST);
    if (key < 8) __atomic_add_fetch(&l->back[key], 1, __ATOMIC_SEQ_CST);
}

static void ledger_destroy(void *ctx) { __atomic_store_n(&((key_ledger *)ctx)->destroyed, 1, __ATOMIC_SEQ_CST); }

/* Makes `c` coalesce through `l`, emptied. */
static void keep_ledger(dfs_loop_config *c, key_ledger *l) {
    memset(l, 0, sizeof *l);
    c->coalesce = ledger_key;
    c->coalesce_done = ledger_done;
    c->coalesce_ctx = l;
    c->coalesce_destroy = ledger_destroy;
}

/* Once its loop is gone: the context destroyed, and every key given came back exactly
 * once, none after the destroy. */
static void check_ledger_settled(key_ledger *l, const char *loop) {
    CHECK_INT(__atomic_load_n(&l->destroyed, __ATOMIC_SEQ_CST), 1, "%s: the context is destroyed", loop);
    CHECK_INT(l->back_after_destroy, 0, "%s: no key comes back after the destroy", loop);
    for (int k = 0; k < 8; k++) CHECK_INT(l->back[k], l->given[k], "%s: every key %d given came back once", loop, k);
}

/* Every key the coalescing function gives comes back to coalesce_done exactly once, when
 * the loop holds it no more: at once for an event that replaced a queued one or was
 * refused, after the step for a handled one, at the dispose for a dropped one; all before
 * coalesce_destroy. */
static void test_coalescing_keys_come_back(void) {
    check_section("coalescing: each key given comes back to coalesce_done once the loop lets go of it");
    key_ledger l;
    update_ctx u = {0};
    dfs_executor *manual = NULL;
    dfs_executor_new_manual(&manual);
    dfs_loop_config c = counter_config(0, &u);
    c.executor = manual;
    keep_ledger(&c, &l);
    dfs_loop *loop = counter_loop(&c);
    dfs_executor_run_all(manual);

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(101)), "key 1 queued");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(1)), "no key");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(102)), "key 1 again: replaces 101");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(201)), "key 2 queued");
    CHECK_INT(l.given[1], 2, "two keys 1 given");
    CHECK_INT(l.back[1], 1, "the replacing event's key is back at once; the queued one keeps its own");
    CHECK_INT(l.back[2], 0, "key 2 is held while its event waits");
    dfs_executor_run_all(manual);
    CHECK_INT(box_model_of(loop), 1 + 102 + 201, "the events are handled");
    CHECK_INT(l.back[1], 2, "key 1 is back once its event is handled");
    CHECK_INT(l.back[2], 1, "key 2 is back once its event is handled");

    CHECK_OK(dfs_loop_stop(loop), "stop");
    CHECK_STATUS(dfs_loop_dispatch(loop, EVENT(301)), DFS_ERR_STOPPED, "a refused event");
    CHECK_INT(l.given[3], 1, "its key was given");
    CHECK_INT(l.back[3], 1, "and is back at once");

    CHECK(dfs_loop_start(loop) == DFS_OK, "start again");
    dfs_executor_run_all(manual);
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(401)), "key 4 queued");
    CHECK_INT(l.back[4], 0, "held while queued");
    CHECK_OK(dfs_loop_dispose(loop), "dispose drops it");
    dfs_executor_run_all(manual);
    CHECK_INT(l.back[4], 1, "a dropped event's key is back");
    CHECK_INT(l.destroyed, 0, "the context lives while the loop does");
    dfs_loop_release(loop);
    dfs_executor_release(manual);
    check_ledger_settled(&l, "the loop");
    CHECK_INT(box_live, 0, "no box left");
}

/* The ways test_coalescing_keys_come_back does not take: a job's event dropped because
 * the job was cancelled while it waited, a job's queued event replaced by a dispatch,
 * a stop dropping queued events and a restart after it, an event a disposed loop
 * refuses, and a loop released (not disposed) with an event queued. Each key given
 * comes back exactly once, before the destroy. */
static void test_coalescing_keys_come_back_on_every_exit(void) {
    check_section("coalescing: keys come back for cancelled jobs, stops, restarts, refusals and releases");
    key_ledger l;
    update_ctx u = {0};
    test_log log = {{0}};
    tap h = {.name = "h", .log = &log};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h}};
    dfs_executor *manual = NULL;
    dfs_executor_new_manual(&manual);
    dfs_loop_config c = counter_config(0, &u);
    c.executor = manual;
    c.handlers = handlers;
    c.handler_count = 1;
    keep_ledger(&c, &l);
    dfs_loop *loop = counter_loop(&c);
    dfs_executor_run_all(manual);

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(EV_EFFECT + 42)), "an effect whose handler keeps its job");
    dfs_executor_run_all(manual);
    CHECK(h.kept != NULL, "the handler kept its job");
    CHECK_OK(dfs_job_send(h.kept, EVENT(101)), "the job's event queued (key 1)");
    CHECK_OK(dfs_job_send(h.kept, EVENT(201)), "another (key 2)");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(202)), "a dispatch replaces the job's key-2 event");
    CHECK_INT(l.back[2], 1, "the replacing key is back at once");
    CHECK_OK(dfs_job_cancel(h.kept), "the job is cancelled while its event waits");
    dfs_job_release(h.kept);
    h.kept = NULL;
    dfs_executor_run_all(manual);
    CHECK_INT(box_model_of(loop), 202, "the cancelled job's event was dropped, the dispatched one handled");
    CHECK_INT(l.back[1], 1, "the cancelled job's key is back");
    CHECK_INT(l.back[2], 2, "the handled key is back");

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(301)), "key 3 queued");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(302)), "key 3 replaces");
    CHECK_OK(dfs_loop_stop(loop), "the stop drops it");
    CHECK_INT(l.back[3], 2, "both keys 3 are back after the stop");
    CHECK_OK(dfs_loop_start(loop), "restart");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(303)), "key 3 again, after the restart");
    CHECK_INT(l.back[3], 2, "held while queued: no stale key 3 replaced it");
    dfs_executor_run_all(manual);
    CHECK_INT(box_model_of(loop), 202 + 303, "handled after the restart");
    CHECK_INT(l.back[3], 3, "and back");

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(401)), "key 4 queued");
    CHECK_OK(dfs_loop_dispose(loop), "dispose");
    CHECK_STATUS(dfs_loop_dispatch(loop, EVENT(402)), DFS_ERR_DISPOSED, "a disposed loop refuses");
    CHECK_INT(l.back[4], 2, "the dropped and the refused keys are back");
    dfs_loop_release(loop);
    CHECK_INT(l.destroyed, 1, "destroyed with the loop");

    /* A loop released with an event queued, never disposed by hand. */
    key_ledger m;
    dfs_loop_config d = counter_config(0, &u);
    d.executor = manual;
    keep_ledger(&d, &m);
    dfs_loop *released = counter_loop(&d);
    dfs_executor_run_all(manual);
    CHECK_OK(dfs_loop_dispatch(released, EVENT(501)), "key 5 queued");
    CHECK_OK(dfs_loop_dispatch(released, EVENT(601)), "key 6 queued");
    dfs_loop_release(released);
    dfs_executor_run_all(manual);
    CHECK_INT(m.destroyed, 1, "the released loop's context is destroyed");
    dfs_executor_release(manual);

    check_ledger_settled(&l, "the disposed loop");
    check_ledger_settled(&m, "the released loop");
    CHECK_INT(box_live, 0, "no box left");
}

typedef struct keyed_dispatcher {
    dfs_loop *loop;
    int seed;
} keyed_dispatcher;

static void *dispatch_keyed(void *arg) {
    keyed_dispatcher *k = arg;
    for (int i = 0; i < 2000; i++) {
        long e = 100 * (1 + (i * 7 + k->seed) % 7) + (i % 50);
        if (dfs_loop_dispatch(k->loop, EVENT(e)) != DFS_OK) break;
    }
    return NULL;
}

/* Four threads dispatch keyed events (some coalesce) into a loop drained on a background
 * thread, and a dispose races them: still every key given comes back exactly once, all
 * before the destroy. */
static void test_coalescing_keys_come_back_across_threads(void) {
    check_section("coalescing: keys come back once each with dispatchers racing the drain and a dispose");
    key_ledger l;
    update_ctx u = {0};
    dfs_executor *background = NULL;
    dfs_executor_new_background(&background);
    dfs_loop_config c = counter_config(0, &u);
    c.executor = background;
    keep_ledger(&c, &l);
    dfs_loop *loop = counter_loop(&c);
    keyed_dispatcher ks[4];
    pthread_t threads[4];
    for (int t = 0; t < 4; t++) {
        ks[t] = (keyed_dispatcher){loop, t};
        pthread_create(&threads[t], NULL, dispatch_keyed, &ks[t]);
    }
    sleep_us(2000);
    dfs_loop_dispose(loop);
    for (int t = 0; t < 4; t++) pthread_join(threads[t], NULL);
    dfs_loop_release(loop);
    dfs_executor_release(background);
    CHECK_INT(boxes_settled(), 0, "no box left");
    for (int i = 0; i < 1000 && !__atomic_load_n(&l.destroyed, __ATOMIC_SEQ_CST); i++) sleep_us(1000);
    check_ledger_settled(&l, "the loop");
}

/* ------------------------------------------------------------------------------------ */

static int noop_effect(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    return 0;
}

static int next_outside(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model;
    (void)event;
    *(dfs_next **)ctx = next;
    return 0;
}

/* Keeps the dfs_next of event 1; in the update of event 2 (of this loop or another, as
 * `kept` is shared), gives that stale next a model, which must be refused. */
typedef struct stale_next {
    dfs_next *kept;
    dfs_status later;
} stale_next;

static int next_kept(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model;
    stale_next *s = ctx;
    if (VALUE(event) == 1) s->kept = next;
    if (VALUE(event) == 2) {
        box *late = box_new(42);
        s->later = dfs_next_model(s->kept, late);
        if (s->later != DFS_OK) box_unref(late); /* refused: the value stays the caller's */
    }
    return 0;
}

static void test_errors(void) {
    check_section("errors: NULL and wrong handles, types, dfs_next outside its update, destroy once");
    update_ctx u = {0};
    dfs_loop *loop = NULL;
    CHECK_STATUS(dfs_loop_new(NULL, &loop), DFS_ERR_NULL, "NULL config");
    CHECK(loop == NULL, "out cleared");

    dfs_loop_config c = counter_config(0, &u);
    c.update = NULL;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_NULL, "no update");
    CHECK_INT(u.destroyed, 1, "a failing constructor still destroys the update's context");
    box_unref((box *)c.model);

    tap h = {.name = "h"};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h, .destroy = tap_destroy}};
    u.destroyed = 0;
    c = counter_config(0, &u);
    c.handlers = handlers;
    c.handler_count = 1;
    c.event_type = NULL;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_NULL, "no event type");
    CHECK_INT(u.destroyed + h.destroyed, 2, "and the handlers' contexts");
    box_unref((box *)c.model);

    dfs_diffuser *diffuser = NULL;
    dfs_diffuser_into_always(dfs_type_pointer(), noop_effect, NULL, NULL, &diffuser);
    CHECK_STATUS(dfs_loop_dispatch((dfs_loop *)diffuser, EVENT(1)), DFS_ERR_HANDLE, "a diffuser handle is not a loop");
    CHECK_STATUS(dfs_loop_dispatch(NULL, EVENT(1)), DFS_ERR_NULL, "a NULL loop");
    CHECK_STATUS(dfs_loop_dispatch((dfs_loop *)(uintptr_t)0x7777, EVENT(1)), DFS_ERR_HANDLE, "a forged loop");

    u.destroyed = 0;
    c = counter_config(0, &u);
    loop = counter_loop(&c);
    CHECK_STATUS(dfs_diffuser_run((dfs_diffuser *)loop, EVENT(1)), DFS_ERR_HANDLE, "a loop handle is not a diffuser");
    dfs_disposable *d = NULL;
    CHECK_STATUS(dfs_loop_render(loop, diffuser, &d), DFS_ERR_TYPE, "render needs the model type");
    CHECK(d == NULL, "out cleared");
    dfs_fuser *boxes = NULL;
    source src = {0};
    dfs_fuser_from(model_type, source_connect, source_disconnect, &src, NULL, &boxes);
    CHECK_STATUS(dfs_loop_connect(loop, boxes, &d), DFS_ERR_TYPE, "connect needs the event type");
    CHECK_STATUS(dfs_loop_add_feedback(loop, (dfs_overlap)9, NULL, fb_work, NULL, NULL, &d), DFS_ERR_ARGUMENT,
                 "an unknown overlap");
    dfs_next *stale = NULL;
    box *unused = box_new(1);
    CHECK_STATUS(dfs_next_model(stale, unused), DFS_ERR_NULL, "a NULL next");
    box_unref(unused); /* refused: the value stays the caller's */

    update_ctx u2 = {0};
    dfs_loop_config c2 = counter_config(0, &u2);
    c2.update = next_outside;
    c2.update_ctx = &stale;
    c2.update_destroy = NULL;
    dfs_loop *capturing = counter_loop(&c2);
    dfs_loop_dispatch(capturing, EVENT(1));
    CHECK(stale != NULL, "the update saw its next");
    CHECK_STATUS(dfs_next_effect(stale, NULL), DFS_ERR_HANDLE, "a dfs_next after its update returned is refused");
    dfs_loop_release(capturing);

    /* A later update's dfs_next may lie where the stale one did: still refused, in this
     * loop and in another. */
    for (int other = 0; other < 2; other++) {
        stale_next kept = {NULL, DFS_OK};
        update_ctx u3 = {0};
        dfs_loop_config c3 = counter_config(0, &u3);
        c3.update = next_kept;
        c3.update_ctx = &kept;
        c3.update_destroy = NULL;
        dfs_loop *first = counter_loop(&c3);
        dfs_loop *second = NULL;
        if (other) {
            c3 = counter_config(0, &u3);
            c3.update = next_kept;
            c3.update_ctx = &kept;
            c3.update_destroy = NULL;
            second = counter_loop(&c3);
        }
        CHECK_OK(dfs_loop_dispatch(first, EVENT(1)), "the update keeps its next");
        CHECK_OK(dfs_loop_dispatch(other ? second : first, EVENT(2)), "a later update uses it");
        CHECK_STATUS(kept.later, DFS_ERR_HANDLE, "a kept dfs_next is refused in a later update of %s",
                     other ? "another loop" : "its loop");
        dfs_loop_release(first);
        dfs_loop_release(second);
    }

    CHECK_STATUS(dfs_executor_run_all(NULL), -DFS_ERR_NULL, "run_all of NULL");
    CHECK_OK(dfs_loop_release(NULL), "releasing NULL is allowed");
    CHECK_OK(dfs_loop_release(loop), "release");
    CHECK_STATUS(dfs_loop_release(loop), DFS_ERR_HANDLE, "a released loop");
    CHECK_INT(dfs_loop_is_running(loop), -DFS_ERR_HANDLE, "is_running of a released loop");
    dfs_fuser_release(boxes);
    dfs_diffuser_release(diffuser);
    CHECK_INT(box_live, 0, "no box left");
}

/* ------------------------------------------------------------------------------------
 * dfs_next: each update call's own, on its own thread, however updates nest
 * ------------------------------------------------------------------------------------ */

/* Two loops on the caller's executor: the outer update dispatches to the inner loop,
 * whose whole step runs on this thread inside the outer update. */
typedef struct nest {
    dfs_loop *inner;
    dfs_next *outer_next;         /* the outer update's next, while it runs */
    int inner_steps_during;       /* inner updates seen by the outer one after its dispatch */
    int inner_calls;
    dfs_status inner_used_outer;  /* the inner update giving the outer next a model */
    dfs_status outer_model_after, outer_effect_after;
} nest;

static int nest_outer_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    nest *n = ctx;
    n->outer_next = next;
    if (dfs_next_effect(next, box_new(1)) != DFS_OK) return 9;
    if (dfs_loop_dispatch(n->inner, EVENT(5)) != DFS_OK) return 8;
    n->inner_steps_during = n->inner_calls;
    n->outer_model_after = dfs_next_model(next, box_new(((const box *)model)->value + VALUE(event)));
    n->outer_effect_after = dfs_next_effect(next, box_new(2));
    n->outer_next = NULL;
    return 0;
}

static int nest_inner_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    nest *n = ctx;
    n->inner_calls++;
    box *stray = box_new(77);
    n->inner_used_outer = dfs_next_model(n->outer_next, stray);
    if (n->inner_used_outer != DFS_OK) box_unref(stray); /* refused: still the caller's */
    if (dfs_next_model(next, box_new(((const box *)model)->value + VALUE(event))) != DFS_OK) return 9;
    if (dfs_next_effect(next, box_new(3)) != DFS_OK) return 9;
    return 0;
}

/** An update that runs another loop's whole step on its thread (a dispatch to a loop on
 *  the caller's executor) gets its own dfs_next back afterwards: the inner update fills
 *  its own next, is refused the outer one, and the outer update then fills its own.
 *  Fails if a step does not put the outer builder back as the thread's current one
 *  (the outer model and second effect are refused), or if `dfs_next_model` wrote through
 *  whatever builder is current without comparing the token (77 lands in the inner
 *  loop). */
static void test_next_nested_loops(void) {
    check_section("dfs_next: an update running another loop's step on its thread keeps its own next");
    test_log log = {{0}};
    nest n = {0};
    tap ha = {.name = "a", .log = &log}, hb = {.name = "b", .log = &log};
    dfs_handler handlers_a[] = {{.fn = tap_handle, .ctx = &ha}};
    dfs_handler handlers_b[] = {{.fn = tap_handle, .ctx = &hb}};
    update_ctx unused = {0};
    dfs_loop_config c = counter_config(0, &unused);
    c.update = nest_inner_update;
    c.update_ctx = &n;
    c.update_destroy = NULL;
    c.handlers = handlers_b;
    c.handler_count = 1;
    n.inner = counter_loop(&c);
    c = counter_config(0, &unused);
    c.update = nest_outer_update;
    c.update_ctx = &n;
    c.update_destroy = NULL;
    c.handlers = handlers_a;
    c.handler_count = 1;
    dfs_loop *outer = counter_loop(&c);

    CHECK_OK(dfs_loop_dispatch(outer, EVENT(4)), "dispatch to the outer loop");
    CHECK_INT(n.inner_steps_during, 1, "the inner step ran inside the outer update");
    CHECK_STATUS(n.inner_used_outer, DFS_ERR_HANDLE, "the inner update is refused the outer next");
    CHECK_STATUS(n.outer_model_after, DFS_OK, "the outer update gives its next a model after the inner step");
    CHECK_STATUS(n.outer_effect_after, DFS_OK, "and an effect");
    CHECK_LOG(&log, "b:3 a:1 a:2", "each loop handled its own effects, the outer ones both");
    CHECK_INT(box_model_of(n.inner), 5, "the inner model is the inner update's");
    CHECK_INT(box_model_of(outer), 4, "the outer model is the outer update's");
    dfs_loop_release(outer);
    dfs_loop_release(n.inner);
    CHECK_INT(box_live, 0, "no box left");
}

/* The update of event 1 hands its next to two other threads and waits for them: one
 * idle, one running the update of another loop (which also fills its own next). */
typedef struct lent {
    dfs_next *next;
    dfs_loop *other;
    dfs_status idle_model, idle_effect, busy_model, busy_own;
} lent;

static void *use_lent_next(void *arg) {
    lent *l = arg;
    box *m = box_new(66), *e = box_new(67);
    l->idle_model = dfs_next_model(l->next, m);
    l->idle_effect = dfs_next_effect(l->next, e);
    if (l->idle_model != DFS_OK) box_unref(m);
    if (l->idle_effect != DFS_OK) box_unref(e);
    return NULL;
}

static int borrower_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    lent *l = ctx;
    box *stray = box_new(88);
    l->busy_model = dfs_next_model(l->next, stray);
    if (l->busy_model != DFS_OK) box_unref(stray);
    l->busy_own = dfs_next_model(next, box_new(((const box *)model)->value + VALUE(event)));
    return 0;
}

static void *dispatch_to_other(void *arg) {
    lent *l = arg;
    dfs_loop_dispatch(l->other, EVENT(9));
    return NULL;
}

static int lender_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    lent *l = ctx;
    l->next = next;
    pthread_t idle, busy;
    pthread_create(&idle, NULL, use_lent_next, l);
    pthread_join(idle, NULL);
    pthread_create(&busy, NULL, dispatch_to_other, l);
    pthread_join(busy, NULL);
    if (dfs_next_model(next, box_new(((const box *)model)->value + VALUE(event))) != DFS_OK) return 9;
    return dfs_next_effect(next, box_new(1)) == DFS_OK ? 0 : 9;
}

/** A dfs_next used on another thread while its update is still running is refused and
 *  writes nothing, whether that thread is idle or in an update of its own (whose own
 *  next still works). Fails if the builder were found through anything but the calling
 *  thread's own slot (a process-wide "current update" would accept 66, 67 and 88). */
static void test_next_on_another_thread(void) {
    check_section("dfs_next: another thread is refused the next of an update still running");
    test_log log = {{0}};
    lent l = {0};
    tap h = {.name = "h", .log = &log};
    dfs_handler handlers[] = {{.fn = tap_handle, .ctx = &h}};
    update_ctx unused = {0};
    dfs_loop_config c = counter_config(0, &unused);
    c.update = borrower_update;
    c.update_ctx = &l;
    c.update_destroy = NULL;
    l.other = counter_loop(&c);
    c = counter_config(0, &unused);
    c.update = lender_update;
    c.update_ctx = &l;
    c.update_destroy = NULL;
    c.handlers = handlers;
    c.handler_count = 1;
    dfs_loop *loop = counter_loop(&c);

    CHECK_OK(dfs_loop_dispatch(loop, EVENT(3)), "dispatch");
    CHECK_STATUS(l.idle_model, DFS_ERR_HANDLE, "an idle thread is refused the next's model");
    CHECK_STATUS(l.idle_effect, DFS_ERR_HANDLE, "and its effect");
    CHECK_STATUS(l.busy_model, DFS_ERR_HANDLE, "a thread in another loop's update is refused it");
    CHECK_STATUS(l.busy_own, DFS_OK, "and fills its own next");
    CHECK_INT(box_model_of(l.other), 9, "the other loop's model is its own update's");
    CHECK_INT(box_model_of(loop), 3, "the lender's model is its own");
    CHECK_LOG(&log, "h:1", "and its only effect");
    dfs_loop_release(loop);
    dfs_loop_release(l.other);
    CHECK_INT(box_live, 0, "no box left");
}

/* Gives its next a model, `count` effects 0, 1, … and then another model. */
static int many_effects_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    long count = VALUE(event);
    if (dfs_next_model(next, box_new(-1)) != DFS_OK) return 9;
    for (long k = 0; k < count; k++) {
        if (dfs_next_effect(next, box_new(k)) != DFS_OK) return 9;
    }
    return dfs_next_model(next, box_new(((const box *)model)->value + count)) == DFS_OK ? 0 : 9;
}

typedef struct effect_run {
    long count;
    long expected;  /* the next value in order */
    int out_of_order;
} effect_run;

static int count_effect(const void *effect, dfs_job *job, void *ctx) {
    (void)job;
    effect_run *r = ctx;
    if (((const box *)effect)->value != r->expected) r->out_of_order++;
    r->expected++;
    r->count++;
    return 0;
}

/** An update appending thousands of effects to its next (the array grows many times,
 *  in the builder on the update's stack) hands every one to the handler, in order, and
 *  releases the model it replaced; valgrind's run checks each growth wrote where the
 *  builder lies. Fails if dfs_next_effect appended to a copy of the builder (no effect
 *  arrives). */
static void test_next_many_effects(void) {
    check_section("dfs_next: thousands of effects through one next");
    effect_run r = {0};
    dfs_handler handlers[] = {{.fn = count_effect, .ctx = &r}};
    update_ctx unused = {0};
    dfs_loop_config c = counter_config(0, &unused);
    c.update = many_effects_update;
    c.update_ctx = NULL;
    c.update_destroy = NULL;
    c.handlers = handlers;
    c.handler_count = 1;
    dfs_loop *loop = counter_loop(&c);
    long count = check_scale(20000, 3000);
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(count)), "dispatch");
    CHECK_INT(r.count, count, "every effect handled");
    CHECK_INT(r.out_of_order, 0, "in the order given");
    CHECK_INT(box_model_of(loop), count, "the second model replaced the first");
    CHECK_OK(dfs_loop_dispatch(loop, EVENT(3)), "a second step");
    CHECK_INT(r.count, count + 3, "the next step hands over its own three effects, none of the first step's again");
    dfs_loop_release(loop);
    CHECK_INT(box_live, 0, "no box left");
}

/* ------------------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------------------ */

/* A model of plain counters in a box: value counts events; the update checks that each
 * thread's events arrive in the order sent and that no two steps overlap. */
typedef struct tally {
    long last[8];
    int out_of_order;
    int inside;
    int overlaps;
    atomic_int updates;
    atomic_int after_dispose;
    atomic_int disposed;
} tally;

static int tally_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    tally *t = ctx;
    if (atomic_load(&t->disposed)) atomic_fetch_add(&t->after_dispose, 1);
    if (t->inside++) t->overlaps++;
    long e = VALUE(event);
    int thread = (int)(e >> 20);
    long seq = e & 0xFFFFF;
    if (seq <= t->last[thread]) t->out_of_order++;
    t->last[thread] = seq;
    atomic_fetch_add(&t->updates, 1);
    dfs_next_model(next, box_new(((const box *)model)->value + 1));
    t->inside--;
    return 0;
}

typedef struct dispatcher {
    dfs_loop *loop;
    int thread;
    int count;       /* events to send; -1: until refused */
    int accepted;
} dispatcher;

static void *dispatch_many(void *arg) {
    dispatcher *d = arg;
    for (int i = 0; d->count < 0 || i < d->count; i++) {
        if (dfs_loop_dispatch(d->loop, EVENT(((long)d->thread << 20) | (i + 1))) != DFS_OK) break;
        d->accepted++;
    }
    return NULL;
}

static void run_dispatchers(dfs_loop *loop, dispatcher *ds, int count) {
    pthread_t threads[8];
    for (int i = 0; i < 8; i++) {
        ds[i] = (dispatcher){.loop = loop, .thread = i, .count = count};
        pthread_create(&threads[i], NULL, dispatch_many, &ds[i]);
    }
    for (int i = 0; i < 8; i++) pthread_join(threads[i], NULL);
}

static dfs_loop *tally_loop(tally *t, dfs_executor *executor) {
    memset(t, 0, sizeof *t);
    for (int i = 0; i < 8; i++) t->last[i] = 0;
    dfs_loop_config c;
    memset(&c, 0, sizeof c);
    c.model_type = model_type;
    c.event_type = dfs_type_pointer();
    c.effect_type = effect_type;
    c.model = box_new(0);
    c.update = tally_update;
    c.update_ctx = t;
    c.executor = executor;
    return counter_loop(&c);
}

typedef struct disposer {
    dfs_loop *loop;
    tally *t;
    int delay_us;
} disposer;

static void *dispose_soon(void *arg) {
    disposer *d = arg;
    sleep_us(d->delay_us);
    dfs_loop_dispose(d->loop);
    atomic_store(&d->t->disposed, 1);
    return NULL;
}

static int tally_observe(const void *model, void *ctx) {
    (void)model;
    tally *t = ctx;
    if (atomic_load(&t->disposed)) atomic_fetch_add(&t->after_dispose, 1);
    return 0;
}

static void test_threads(void) {
    check_section("threads: eight dispatchers; dispose racing dispatch");
    int per_thread = check_scale(2000, 200);
    tally t;
    dispatcher ds[8];

    dfs_loop *loop = tally_loop(&t, NULL);
    run_dispatchers(loop, ds, per_thread);
    CHECK_INT(box_model_of(loop), 8 * per_thread, "every event handled once (caller's executor)");
    CHECK_INT(t.out_of_order, 0, "each thread's events in the order sent");
    CHECK_INT(t.overlaps, 0, "no two steps at once");
    dfs_loop_release(loop);

    dfs_executor *background = NULL;
    dfs_executor_new_background(&background);
    loop = tally_loop(&t, background);
    run_dispatchers(loop, ds, per_thread);
    dfs_loop_dispose(loop);
    CHECK_INT(box_model_of(loop), 8 * per_thread, "every event handled once (background executor)");
    CHECK_INT(t.out_of_order + t.overlaps, 0, "in order, one at a time");
    dfs_loop_release(loop);
    dfs_executor_release(background);
    boxes_settled();

    int rounds = check_scale(40, 4);
    int lost = 0, late = 0;
    for (int round = 0; round < rounds; round++) {
        loop = tally_loop(&t, NULL);
        dfs_disposable *d = NULL;
        dfs_loop_observe(loop, tally_observe, &t, NULL, &d);
        disposer killer = {.loop = loop, .t = &t, .delay_us = 100 + (round * 37) % 500};
        pthread_t kt;
        pthread_create(&kt, NULL, dispose_soon, &killer);
        /* Until refused; under valgrind at most 5,000 each, which its slow threads need
         * minutes for. */
        run_dispatchers(loop, ds, check_scale(-1, 5000));
        pthread_join(kt, NULL);
        int accepted = 0;
        for (int i = 0; i < 8; i++) accepted += ds[i].accepted;
        if (accepted != atomic_load(&t.updates)) lost++;
        late += atomic_load(&t.after_dispose);
        if (getenv("DFS_TRACE_RACE")) fprintf(stderr, "round %d accepted %d updates %d late %d\n", round, accepted, atomic_load(&t.updates), atomic_load(&t.after_dispose));
        dfs_disposable_release(d);
        dfs_loop_release(loop);
    }
    CHECK_INT(lost, 0, "every accepted event reached the update before dispose returned");
    CHECK_INT(late, 0, "no callback after dispose returned");
    CHECK_INT(box_live, 0, "no box left");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    model_type = box_type_fresh(&model_type_ctx, NULL);
    effect_type = box_type_new("effect", &effect_type_ctx);
    if (getenv("DFS_TRACE_RACE")) { test_threads(); return check_finish(); }
    test_steps();
    test_reentrancy();
    test_jobs();
    test_lent_job_over_released();
    test_kept_jobs_do_not_keep_their_loop();
    test_feedbacks();
    test_request_failures();
    test_config_feedbacks();
    test_config_feedback_errors();
    test_executors();
    test_inline_executor();
    test_background_executor_without_a_thread();
    test_lifecycle();
    test_teardown_order();
    test_refused_source();
    test_released_while_connected();
    test_start_closed_by_its_callback();
    test_coalescing();
    test_coalescing_keys_come_back();
    test_coalescing_keys_come_back_on_every_exit();
    test_coalescing_keys_come_back_across_threads();
    test_errors();
    test_next_nested_loops();
    test_next_on_another_thread();
    test_next_many_effects();
    test_threads();
    dfs_type_release(model_type);
    dfs_type_release(effect_type);
    CHECK_INT(model_type_ctx.destroyed, 1, "the model type's context is destroyed once");
    return check_finish();
}
