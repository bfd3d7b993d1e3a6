/*
 * test_gear.c — gears through the C API: a feedback of one loop pushes gear events made
 * from its models, a feedback of another loop turns them into its own events; events
 * sent straight into a gear; removal of either feedback; loops that are stopped hear
 * nothing; misuse (NULL and wrong-kind handles, a NULL propagate) is refused with a
 * message, and every box the core kept is released, also one a propagate stored before
 * answering nothing; a disposed attachment lets go of its gear on the loop's turn.
 */
#include "check.h"

#define EVENT(n) ((const void *)(intptr_t)(n))
#define VALUE(p) ((long)(intptr_t)(p))

static box_type_ctx model_type_ctx, gear_type_ctx;
static dfs_type *model_type, *gear_type;

/* Models are boxes; an event n adds n to the model. */
static int add_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    return dfs_next_model(next, box_new(((const box *)model)->value + VALUE(event))) == DFS_OK ? 0 : 1;
}

static dfs_loop *adder(long start) {
    dfs_loop_config c;
    memset(&c, 0, sizeof c);
    c.model_type = model_type;
    c.event_type = dfs_type_pointer();
    c.effect_type = dfs_type_pointer();
    box *first = box_new(start);
    c.model = first;
    c.update = add_update;
    dfs_loop *loop = NULL;
    CHECK_STATUS(dfs_loop_new(&c, &loop), DFS_OK, "a loop is made");
    box_release(first, NULL);
    return loop;
}

/* Pushes a gear event (a box of the model's value) for every model over 10. */
static int over_ten(const void *model, const void **out, void *ctx) {
    test_log *log = ctx;
    long value = ((const box *)model)->value;
    log_add(log, "push?%ld", value);
    if (value <= 10) return 0;
    *out = box_new(value);
    return 1;
}

/* Turns a gear event into the event 100 (and logs it). */
static int to_hundred(const void *gear_event, const void **out, void *ctx) {
    test_log *log = ctx;
    log_add(log, "heard:%ld", ((const box *)gear_event)->value);
    *out = EVENT(100);
    return 1;
}

static int nothing(const void *value, const void **out, void *ctx) {
    (void)value, (void)out, (void)ctx;
    return 0;
}

/* Stores a box, then answers ctx's code (0, or another that is not 1): nothing. */
static int stores_then_declines(const void *value, const void **out, void *ctx) {
    *out = box_new(((const box *)value)->value);
    return *(int *)ctx;
}

static int destroyed;

static void test_between_loops(void) {
    check_section("gears: one loop pushes, another hears");
    test_log log;
    log_clear(&log);
    dfs_gear *gear = NULL;
    CHECK_STATUS(dfs_gear_new(gear_type, &gear), DFS_OK, "a gear is made");
    dfs_loop *feature = adder(0), *routing = adder(0);
    dfs_disposable *push = NULL, *attach = NULL;
    CHECK_STATUS(dfs_loop_attach_to_gear(routing, gear, to_hundred, &log, NULL, &attach), DFS_OK, "attached");
    CHECK_STATUS(dfs_loop_push_to_gear(feature, gear, over_ten, &log, NULL, &push), DFS_OK, "pushing");
    CHECK_LOG(&log, "push?0", "the pushing feedback hears the current model first");

    log_clear(&log);
    dfs_loop_dispatch(feature, EVENT(5));
    CHECK_LOG(&log, "push?5", "a model of 10 or less pushes nothing");
    CHECK_INT(box_model_of(routing), 0, "so the other loop heard nothing");

    log_clear(&log);
    dfs_loop_dispatch(feature, EVENT(7));
    CHECK_LOG(&log, "push?12 heard:12", "a model over 10 pushes a gear event, which the other loop turns into its own");
    CHECK_INT(box_model_of(routing), 100, "and handles as a dispatched event");
    CHECK_INT(box_model_of(feature), 12, "the pushing loop goes on");

    log_clear(&log);
    box *direct = box_new(3);
    CHECK_STATUS(dfs_gear_send(gear, direct), DFS_OK, "events can be sent into a gear directly");
    box_release(direct, NULL);
    CHECK_LOG(&log, "heard:3", "the attached loop hears them");
    CHECK_INT(box_model_of(routing), 200, "and handles them");

    dfs_loop_stop(routing);
    log_clear(&log);
    direct = box_new(4);
    dfs_gear_send(gear, direct);
    box_release(direct, NULL);
    CHECK_LOG(&log, "", "a stopped loop hears nothing");
    dfs_loop_start(routing);
    log_clear(&log);
    direct = box_new(5);
    dfs_gear_send(gear, direct);
    box_release(direct, NULL);
    CHECK_LOG(&log, "heard:5", "a restarted loop hears again");

    dfs_disposable_dispose(attach);
    log_clear(&log);
    dfs_loop_dispatch(feature, EVENT(1));
    CHECK_LOG(&log, "push?13", "once the attached feedback is removed, nobody hears");
    CHECK_INT(box_model_of(routing), 300, "the other loop's model stays");

    dfs_disposable_dispose(push);
    log_clear(&log);
    dfs_loop_dispatch(feature, EVENT(1));
    CHECK_LOG(&log, "", "a removed pushing feedback pushes nothing");

    dfs_disposable_release(push);
    dfs_disposable_release(attach);
    dfs_gear_release(gear);
    dfs_loop_release(feature);
    dfs_loop_release(routing);
    CHECK_INT(box_live, 0, "every box the core kept is released");
}

static void test_misuse(void) {
    check_section("gears: misuse");
    dfs_gear *gear = NULL;
    CHECK_STATUS(dfs_gear_new(NULL, &gear), DFS_ERR_NULL, "a gear needs an event type");
    CHECK_ERROR_HAS("event_type", "which the message names");
    CHECK_STATUS(dfs_gear_new(gear_type, NULL), DFS_ERR_NULL, "and somewhere to put the handle");
    CHECK_STATUS(dfs_gear_send(NULL, EVENT(1)), DFS_ERR_NULL, "a NULL gear is refused");
    CHECK_ERROR_HAS("gear", "by name");

    dfs_gear_new(gear_type, &gear);
    dfs_loop *loop = adder(0);
    dfs_disposable *d = NULL;
    destroyed = 0;
    CHECK_STATUS(dfs_loop_push_to_gear(loop, gear, NULL, &destroyed, count_destroy, &d), DFS_ERR_NULL,
                 "a NULL propagate is refused");
    CHECK_ERROR_HAS("propagate", "by name");
    CHECK_INT(destroyed, 1, "and its destroy runs once all the same");
    CHECK_STATUS(dfs_loop_attach_to_gear(loop, (dfs_gear *)loop, nothing, &destroyed, count_destroy, &d), DFS_ERR_HANDLE,
                 "a loop handle is not a gear");
    CHECK_ERROR_HAS("dfs_loop", "the message says what it is");
    CHECK_INT(destroyed, 2, "the destroy runs on failure");
    CHECK_STATUS(dfs_gear_send((dfs_gear *)loop, EVENT(1)), DFS_ERR_HANDLE, "nor can one send into it");

    CHECK_STATUS(dfs_loop_attach_to_gear(loop, gear, nothing, &destroyed, count_destroy, &d), DFS_OK, "attached");
    dfs_gear_release(gear);
    CHECK_STATUS(dfs_gear_send(gear, EVENT(1)), DFS_ERR_HANDLE, "a released gear handle is refused");
    dfs_loop_release(loop);
    dfs_disposable_release(d);
    CHECK_INT(destroyed, 3, "the feedback's destroy runs once the loop lets it go");
    CHECK_STATUS(dfs_gear_release(NULL), DFS_OK, "releasing NULL does nothing");
    CHECK_INT(box_live, 0, "no box left");
}

static void test_declined_values_released(void) {
    check_section("gears: a value stored by a propagate that answers nothing is released");
    int codes[] = {0, 7, -1};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        dfs_gear *gear = NULL;
        dfs_gear_new(gear_type, &gear);
        dfs_loop *loop = adder(3);
        dfs_disposable *push = NULL;
        CHECK_STATUS(dfs_loop_push_to_gear(loop, gear, stores_then_declines, &codes[i], NULL, &push), DFS_OK,
                     "a pushing feedback is added");
        dfs_loop_dispatch(loop, EVENT(1));
        dfs_disposable_release(push);
        dfs_loop_release(loop);
        dfs_gear_release(gear);
        CHECK_INT(box_live, 0, "the boxes it stored with a return other than 1 are released");
    }
}

/* Removing a gear attachment takes effect on the loop's turn (include/diffuser.h,
 * dfs_loop_add): with a manual executor, a gear event sent after the dispose returned
 * but before the executor ran the loop is still propagated and handled; none after. */
static int logged_identity(const void *gear_event, const void **out, void *ctx) {
    log_add(ctx, "heard:%ld", ((const box *)gear_event)->value);
    *out = EVENT(((const box *)gear_event)->value);
    return 1;
}

static void test_removal_on_the_loops_turn(void) {
    check_section("gears: an attachment disposed lets go of its gear on the loop's turn");
    test_log log;
    log_clear(&log);
    dfs_executor *manual = NULL;
    dfs_executor_new_manual(&manual);
    dfs_loop_config c;
    memset(&c, 0, sizeof c);
    c.model_type = model_type;
    c.event_type = dfs_type_pointer();
    c.effect_type = dfs_type_pointer();
    box *first = box_new(0);
    c.model = first;
    c.update = add_update;
    c.executor = manual;
    dfs_loop *loop = NULL;
    dfs_loop_new(&c, &loop);
    box_release(first, NULL);
    dfs_gear *gear = NULL;
    dfs_gear_new(gear_type, &gear);
    dfs_disposable *attach = NULL;
    dfs_loop_attach_to_gear(loop, gear, logged_identity, &log, NULL, &attach);
    dfs_executor_run_all(manual);
    CHECK_OK(dfs_disposable_dispose(attach), "the attachment is disposed");
    box *sent = box_new(4);
    dfs_gear_send(gear, sent);
    CHECK_LOG(&log, "heard:4", "before the loop's turn the attachment still hears the gear");
    dfs_executor_run_all(manual);
    CHECK_INT(box_model_of(loop), 4, "and the loop handles what it made");
    log_clear(&log);
    dfs_gear_send(gear, sent);
    box_release(sent, NULL);
    dfs_executor_run_all(manual);
    CHECK_LOG(&log, "", "after the loop's turn it hears nothing");
    CHECK_INT(box_model_of(loop), 4, "and the loop's model stays");
    dfs_disposable_release(attach);
    dfs_loop_release(loop);
    dfs_gear_release(gear);
    dfs_executor_release(manual);
    CHECK_INT(box_live, 0, "every box the core kept is released");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    model_type = box_type_fresh(&model_type_ctx, NULL);
    gear_type = box_type_new("gear event", &gear_type_ctx);
    test_between_loops();
    test_misuse();
    test_declined_values_released();
    test_removal_on_the_loops_turn();
    dfs_type_release(model_type);
    dfs_type_release(gear_type);
    return check_finish();
}
