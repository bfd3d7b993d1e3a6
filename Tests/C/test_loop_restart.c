/*
 * test_loop_restart.c — a loop's restart through the C API (dfs_loop_config.restart,
 * Mobius's Init): called at every start after the first with the kept model, its
 * dfs_next gives the run's first model and start effects; a restart that gives nothing
 * starts from the kept model; one that stops or disposes its loop cancels the start; its
 * dfs_next is good for its call only; its destroy runs once, also when dfs_loop_new
 * fails. Models and effects are boxes, so that the end of each test proves every one the
 * core kept was released.
 */
#include "check.h"

#define EVENT(n) ((const void *)(intptr_t)(n))
#define VALUE(p) ((long)(intptr_t)(p))

static box_type_ctx model_type_ctx, effect_type_ctx;
static dfs_type *model_type, *effect_type;

/* Adds the event to the model. */
static int add_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    return dfs_next_model(next, box_new(((const box *)model)->value + VALUE(event))) == DFS_OK ? 0 : 1;
}

/* What the restart does, by test. */
typedef struct restarter {
    test_log *log;
    int calls;
    int destroyed;
    long model_offset;   /* gives kept + model_offset as the first model (0: no model) */
    long replaced_by;    /* then gives this model too, replacing the first (0: no) */
    int effects;         /* gives the effects 1..effects */
    int close;           /* 1: stops the loop, 2: disposes it, after giving what it gives */
    dfs_loop *loop;      /* for close */
    dfs_next *kept_next; /* the dfs_next of its last call, kept past it */
} restarter;

static void restart(const void *model, dfs_next *next, void *ctx) {
    restarter *r = ctx;
    long kept = ((const box *)model)->value;
    r->calls++;
    r->kept_next = next;
    log_add(r->log, "restart:%ld", kept);
    if (r->model_offset) dfs_next_model(next, box_new(kept + r->model_offset));
    if (r->replaced_by) dfs_next_model(next, box_new(r->replaced_by));
    for (int k = 1; k <= r->effects; k++) dfs_next_effect(next, box_new(k));
    if (r->close == 1) log_add(r->log, "stop:%s", dfs_status_name(dfs_loop_stop(r->loop)));
    if (r->close == 2) log_add(r->log, "dispose:%s", dfs_status_name(dfs_loop_dispose(r->loop)));
}

static void restart_destroy(void *ctx) { ((restarter *)ctx)->destroyed++; }

/* Observers, handlers and the inspector log what they see. */
static int observe(const void *model, void *ctx) {
    log_add(ctx, "o:%ld", ((const box *)model)->value);
    return 0;
}

static int handle(const void *effect, dfs_job *job, void *ctx) {
    (void)job;
    log_add(ctx, "h:%ld", ((const box *)effect)->value);
    return 0;
}

static void inspect(const dfs_trace *trace, void *ctx) {
    const box *m = trace->model;
    if (trace->kind == DFS_TRACE_STARTED) log_add(ctx, "started:%ld/%zu", m->value, trace->effect_count);
    if (trace->kind == DFS_TRACE_STOPPED) log_add(ctx, "stopped:%ld", m->value);
    if (trace->kind == DFS_TRACE_DISPOSED) log_add(ctx, "disposed:%ld", m->value);
}

/* A config of boxes starting at `first`, with `r` as its restart and no update yet. */
static dfs_loop_config restart_config(const box *first, restarter *r) {
    dfs_loop_config c;
    memset(&c, 0, sizeof c);
    c.model_type = model_type;
    c.event_type = dfs_type_pointer();
    c.effect_type = effect_type;
    c.model = first;
    c.restart = restart;
    c.restart_ctx = r;
    c.restart_destroy = restart_destroy;
    return c;
}

/* A loop at model 3 with an observer, a handler, the inspector and `r` as its restart,
 * started once (the first start, which does not restart) and moved to 5. */
static dfs_loop *restarting_loop(test_log *log, restarter *r, dfs_disposable **observing) {
    dfs_handler handlers[] = {{.fn = handle, .ctx = log}};
    box *first = box_new(3);
    dfs_loop_config c = restart_config(first, r);
    c.update = add_update;
    c.handlers = handlers;
    c.handler_count = 1;
    c.inspect = inspect;
    c.inspect_ctx = log;
    dfs_loop *loop = NULL;
    dfs_status s = dfs_loop_new(&c, &loop);
    box_unref(first);
    if (s != DFS_OK) {
        printf("FATAL dfs_loop_new failed: %s\n", dfs_last_error());
        exit(2);
    }
    r->loop = loop;
    dfs_loop_observe(loop, observe, log, NULL, observing);
    dfs_loop_dispatch(loop, EVENT(2));
    return loop;
}

static void finish(dfs_loop *loop, dfs_disposable *observing, restarter *r) {
    dfs_disposable_release(observing);
    dfs_loop_release(loop);
    CHECK_INT(r->destroyed, 1, "the restart's context is destroyed once");
    CHECK_INT(box_live, 0, "no box left");
}

static void test_first_model_and_effects(void) {
    check_section("a restart gives the run's first model and start effects");
    test_log log = {{0}};
    restarter r = {.log = &log, .model_offset = 40, .effects = 2};
    dfs_disposable *observing = NULL;
    dfs_loop *loop = restarting_loop(&log, &r, &observing);
    CHECK_LOG(&log, "started:3/0 o:3 o:5", "the first start does not call the restart");
    CHECK_INT(r.calls, 0, "not called yet");

    dfs_loop_stop(loop);
    log_clear(&log);
    CHECK_OK(dfs_loop_start(loop), "start after a stop");
    CHECK_LOG(&log, "restart:5 started:45/2 o:45 h:1 h:2",
              "called with the kept model; its model is published, then its effects are handled in order");
    CHECK_INT(box_model_of(loop), 45, "the loop holds the restart's model");
    dfs_loop_dispatch(loop, EVENT(1));
    CHECK_LOG(&log, "o:46", "and steps from it");

    dfs_loop_stop(loop);
    log_clear(&log);
    CHECK_OK(dfs_loop_start(loop), "start again");
    CHECK_LOG(&log, "restart:46 started:86/2 o:86 h:1 h:2", "every later start restarts");
    CHECK_INT(r.calls, 2, "called once a restart");
    log_clear(&log);
    finish(loop, observing, &r);
}

static void test_nothing_given(void) {
    check_section("a restart that gives nothing starts from the kept model; a second model replaces the first");
    test_log log = {{0}};
    restarter r = {.log = &log};
    dfs_disposable *observing = NULL;
    dfs_loop *loop = restarting_loop(&log, &r, &observing);
    dfs_loop_stop(loop);
    log_clear(&log);
    CHECK_OK(dfs_loop_start(loop), "start");
    CHECK_LOG(&log, "restart:5 started:5/0 o:5", "the kept model, no effect");

    dfs_loop_stop(loop);
    log_clear(&log);
    r.model_offset = 1;
    r.replaced_by = 70;
    CHECK_OK(dfs_loop_start(loop), "start with a restart that gives two models");
    CHECK_LOG(&log, "restart:5 started:70/0 o:70", "the second replaces the first (released: see the box count)");
    log_clear(&log);
    finish(loop, observing, &r);
}

static void test_closed_from_inside(void) {
    check_section("a restart that stops or disposes its loop cancels the start");
    test_log log = {{0}};
    restarter r = {.log = &log, .model_offset = 40, .effects = 2, .close = 1};
    dfs_disposable *observing = NULL;
    dfs_loop *loop = restarting_loop(&log, &r, &observing);
    dfs_loop_stop(loop);
    log_clear(&log);
    CHECK_STATUS(dfs_loop_start(loop), DFS_ERR_STOPPED, "the start reports the stop");
    CHECK_LOG(&log, "restart:5 stopped:5 stop:DFS_OK",
              "the stop's trace comes before the stop returns; nothing of the start happens: no trace, no model, no effect");
    CHECK_INT(box_model_of(loop), 5, "the kept model stays");
    CHECK_INT(dfs_loop_is_running(loop), 0, "stopped");

    r.close = 2;
    log_clear(&log);
    CHECK_STATUS(dfs_loop_start(loop), DFS_ERR_DISPOSED, "the start reports the dispose");
    CHECK_LOG(&log, "restart:5 disposed:5 dispose:DFS_OK", "nothing of the start happens");
    CHECK_STATUS(dfs_loop_start(loop), DFS_ERR_DISPOSED, "disposed for good");
    CHECK_INT(r.calls, 2, "no restart after the dispose");
    log_clear(&log);
    finish(loop, observing, &r);
}

static void test_next_outlives_its_call(void) {
    check_section("a restart's dfs_next is good for its call only");
    test_log log = {{0}};
    restarter r = {.log = &log};
    dfs_disposable *observing = NULL;
    dfs_loop *loop = restarting_loop(&log, &r, &observing);
    dfs_loop_stop(loop);
    dfs_loop_start(loop);
    box *late = box_new(99);
    CHECK_STATUS(dfs_next_model(r.kept_next, late), DFS_ERR_HANDLE, "a model given after the call is refused");
    CHECK_STR(dfs_last_error(), "next is not the dfs_next of an update or restart in progress on this thread",
              "with a message");
    CHECK_STATUS(dfs_next_effect(r.kept_next, late), DFS_ERR_HANDLE, "so is an effect");
    CHECK_INT(box_model_of(loop), 5, "nothing changed");
    box_unref(late); /* a refused value stays the caller's */
    log_clear(&log);
    finish(loop, observing, &r);
}

static void test_destroy_when_the_loop_is_not_made(void) {
    check_section("the restart's destroy runs once when dfs_loop_new fails, and at once without a restart");
    restarter r = {0};
    box *first = box_new(1);
    dfs_loop_config c = restart_config(first, &r);
    dfs_loop *loop = NULL;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_ERR_NULL, "no update: refused");
    CHECK_STR(dfs_last_error(), "update is NULL", "naming the update");
    CHECK_INT(r.destroyed, 1, "the restart's context is destroyed once");
    CHECK(loop == NULL, "no loop");

    restarter unused = {0};
    c.update = add_update;
    c.restart = NULL;
    c.restart_ctx = &unused;
    CHECK_OK(dfs_loop_new(&c, &loop), "a destroy without a restart");
    CHECK_INT(unused.destroyed, 1, "is run at once: nothing will call its context");
    dfs_loop_release(loop);
    box_unref(first);
    CHECK_INT(unused.destroyed, 1, "and only once");
    CHECK_INT(box_live, 0, "no box left");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    model_type = box_type_new("model", &model_type_ctx);
    effect_type = box_type_new("effect", &effect_type_ctx);
    test_first_model_and_effects();
    test_nothing_given();
    test_closed_from_inside();
    test_next_outlives_its_call();
    test_destroy_when_the_loop_is_not_made();
    dfs_type_release(model_type);
    dfs_type_release(effect_type);
    return check_finish();
}
