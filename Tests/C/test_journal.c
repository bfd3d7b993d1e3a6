/*
 * test_journal.c — journals through the C API: a loop recording into a journal
 * (config.journal, dfs_loop_record before the start, and on a running loop), the entries in order,
 * dfs_journal_replay through the loop's update and through another update (effects
 * released, never handled; failing events skipped), clear, stopping the recording, and
 * misuse: NULL and invalid handles, mismatched types, failing visitors. Models and
 * events are boxes, so the end proves every value the journal held was released.
 */
#include "check.h"

#define EVENT_FAIL 1000

/* Adds the event to the model; EVENT_FAIL fails; every step also makes an effect. */
static int add_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    int *calls = ctx;
    if (calls) (*calls)++;
    const box *m = model, *e = event;
    if (e->value == EVENT_FAIL) return 1;
    dfs_next_model(next, box_new(m->value + e->value));
    dfs_next_effect(next, box_new(-e->value));
    return 0;
}

/* The same events, counted twice: a changed update re-derives other models. */
static int double_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    const box *m = model, *e = event;
    if (e->value == EVENT_FAIL) return 1;
    dfs_next_model(next, box_new(m->value + 2 * e->value));
    return 0;
}

static int handled;

static int count_handler(const void *effect, dfs_job *job, void *ctx) {
    (void)effect;
    (void)job;
    (void)ctx;
    handled++;
    return 0;
}

static int log_entry(dfs_journal_entry kind, const void *value, void *ctx) {
    log_add(ctx, "%s:%ld", kind == DFS_JOURNAL_START ? "start" : "event", ((const box *)value)->value);
    return 0;
}

static int log_model(const void *model, void *ctx) {
    log_add(ctx, "%ld", ((const box *)model)->value);
    return 0;
}

static int refuse(const void *model, void *ctx) {
    (void)model;
    (void)ctx;
    dfs_set_error("the visitor stops");
    return 7;
}

static dfs_loop *make_loop_with(dfs_type *type, int manual_start, dfs_executor *executor, dfs_journal *journal) {
    dfs_handler handler = {count_handler, NULL, NULL, NULL};
    box *first = box_new(0);
    dfs_loop_config c = {0};
    c.model_type = c.event_type = c.effect_type = type;
    c.model = first;
    c.update = add_update;
    c.handlers = &handler;
    c.handler_count = 1;
    c.manual_start = manual_start;
    c.executor = executor;
    c.journal = journal;
    dfs_loop *loop = NULL;
    dfs_status status = dfs_loop_new(&c, &loop);
    box_unref(first);
    if (status != DFS_OK) {
        printf("FATAL dfs_loop_new: %s\n", dfs_last_error());
        exit(2);
    }
    return loop;
}

static dfs_loop *make_loop(dfs_type *type, int manual_start) {
    return make_loop_with(type, manual_start, NULL, NULL);
}

static void dispatch(dfs_loop *loop, long value) {
    box *e = box_new(value);
    dfs_loop_dispatch(loop, e);
    box_unref(e);
}

static void test_record_and_replay(void) {
    check_section("a loop recorded from its first start, replayed");
    box_type_ctx tc;
    dfs_type *type = box_type_fresh(&tc, NULL);
    dfs_loop *loop = make_loop(type, 1);
    dfs_journal *journal = NULL;
    CHECK_OK(dfs_journal_new(type, type, &journal), "dfs_journal_new");
    CHECK_OK(dfs_loop_record(loop, journal), "dfs_loop_record before the start");
    CHECK_OK(dfs_loop_start(loop), "start");
    dispatch(loop, 2);
    dispatch(loop, EVENT_FAIL);
    dispatch(loop, 3);
    dfs_loop_stop(loop);
    dfs_loop_start(loop);
    dispatch(loop, 1);

    test_log log = {0};
    CHECK_OK(dfs_journal_entries(journal, log_entry, &log), "entries");
    CHECK_LOG(&log, "start:0 event:2 event:1000 event:3 start:5 event:1", "starts and every event that reached the update");

    handled = 0;
    int calls = 0;
    log_clear(&log);
    CHECK_OK(dfs_journal_replay(journal, type, add_update, &calls, log_model, &log), "replay");
    CHECK_LOG(&log, "0 2 5 5 6", "every model published, re-derived");
    CHECK_INT(calls, 4, "the update is called once per event");
    CHECK_INT(handled, 0, "no effect is handled by a replay");

    log_clear(&log);
    CHECK_OK(dfs_journal_replay(journal, type, double_update, NULL, log_model, &log), "replay, another update");
    CHECK_LOG(&log, "0 4 10 5 7", "a changed update re-derives other models from the same starts");

    dfs_loop_release(loop);
    dfs_journal_release(journal);
    dfs_type_release(type);
    CHECK_INT(box_live, 0, "every model, event and effect was released");
}

static void test_journal_in_config(void) {
    check_section("a journal given in the config records from the first start, on any executor");
    box_type_ctx tc, oc;
    dfs_type *type = box_type_fresh(&tc, NULL);
    dfs_type *other = box_type_new("other", &oc);
    dfs_executor *manual = NULL;
    dfs_executor_new_manual(&manual);
    dfs_journal *journal = NULL;
    dfs_journal_new(type, type, &journal);
    dfs_loop *loop = make_loop_with(type, 0, manual, journal);
    dispatch(loop, 4);
    dfs_executor_run_all(manual);
    test_log log = {0};
    CHECK_OK(dfs_journal_entries(journal, log_entry, &log), "entries");
    CHECK_LOG(&log, "start:0 event:4", "the first start and the event, with the loop's steps on a manual executor");

    dfs_journal *mismatched = NULL;
    dfs_journal_new(other, type, &mismatched);
    dfs_loop_config c = {0};
    c.model_type = c.event_type = c.effect_type = type;
    box *first = box_new(0);
    c.model = first;
    c.update = add_update;
    c.journal = mismatched;
    dfs_loop *refused = NULL;
    CHECK_STATUS(dfs_loop_new(&c, &refused), DFS_ERR_TYPE, "a journal of other models is refused");
    CHECK_ERROR_HAS("journal", "the message names it");
    CHECK(refused == NULL, "and no loop is made");
    c.journal = (dfs_journal *)loop;
    CHECK_STATUS(dfs_loop_new(&c, &refused), DFS_ERR_HANDLE, "a loop handle is not a journal");
    box_unref(first);

    dfs_loop_release(loop);
    dfs_executor_release(manual);
    dfs_journal_release(journal);
    dfs_journal_release(mismatched);
    dfs_type_release(other);
    dfs_type_release(type);
    CHECK_INT(box_live, 0, "every value was released");
}

static void test_record_running_loop(void) {
    check_section("recording a running loop starts from its current model");
    box_type_ctx tc;
    dfs_type *type = box_type_fresh(&tc, NULL);
    dfs_loop *loop = make_loop(type, 0);
    dispatch(loop, 4);
    dfs_journal *journal = NULL;
    dfs_journal_new(type, type, &journal);
    CHECK_OK(dfs_loop_record(loop, journal), "record a running loop");
    dispatch(loop, 1);
    test_log log = {0};
    dfs_journal_entries(journal, log_entry, &log);
    CHECK_LOG(&log, "start:4 event:1", "the current model first");

    CHECK_OK(dfs_loop_record(loop, NULL), "NULL stops recording");
    dispatch(loop, 1);
    log_clear(&log);
    dfs_journal_entries(journal, log_entry, &log);
    CHECK_LOG(&log, "start:4 event:1", "nothing recorded once stopped");

    CHECK_OK(dfs_journal_clear(journal), "clear");
    log_clear(&log);
    dfs_journal_entries(journal, log_entry, &log);
    CHECK_LOG(&log, "", "cleared");
    log_clear(&log);
    CHECK_OK(dfs_journal_replay(journal, type, add_update, NULL, log_model, &log), "replay of nothing");
    CHECK_LOG(&log, "", "no model");

    CHECK_OK(dfs_journal_retain(journal), "retain");
    CHECK_OK(dfs_journal_release(journal), "release the retained reference");
    dfs_loop_dispose(loop);
    CHECK_OK(dfs_loop_record(loop, journal), "record into a disposed loop is accepted and does nothing");
    dfs_loop_release(loop);
    dfs_journal_release(journal);
    dfs_type_release(type);
    CHECK_INT(box_live, 0, "every value was released");
}

static void test_misuse(void) {
    check_section("NULL and invalid handles, mismatched types, failing visitors");
    box_type_ctx tc, oc;
    dfs_type *type = box_type_fresh(&tc, NULL);
    dfs_type *other = box_type_new("other", &oc);
    dfs_journal *journal = (dfs_journal *)1;
    CHECK_STATUS(dfs_journal_new(NULL, type, &journal), DFS_ERR_NULL, "NULL model type");
    CHECK(journal == NULL, "*out cleared on failure");
    CHECK_ERROR_HAS("model_type", "the message names the argument");
    CHECK_STATUS(dfs_journal_new(type, NULL, &journal), DFS_ERR_NULL, "NULL event type");
    CHECK_STATUS(dfs_journal_new(type, type, NULL), DFS_ERR_NULL, "NULL out");
    CHECK_STATUS(dfs_journal_new((dfs_type *)(intptr_t)0x7777, type, &journal), DFS_ERR_HANDLE, "forged type");

    dfs_journal_new(other, type, &journal);
    dfs_loop *loop = make_loop(type, 1);
    CHECK_STATUS(dfs_loop_record(loop, journal), DFS_ERR_TYPE, "a journal of other models");
    CHECK_STATUS(dfs_loop_record(NULL, journal), DFS_ERR_NULL, "NULL loop");
    CHECK_STATUS(dfs_loop_record((dfs_loop *)journal, journal), DFS_ERR_HANDLE, "a journal is not a loop");
    CHECK_STATUS(dfs_loop_record(loop, (dfs_journal *)loop), DFS_ERR_HANDLE, "a loop is not a journal");

    test_log log = {0};
    CHECK_STATUS(dfs_journal_entries(NULL, log_entry, &log), DFS_ERR_NULL, "entries of NULL");
    CHECK_STATUS(dfs_journal_entries(journal, NULL, &log), DFS_ERR_NULL, "entries without a visitor");
    CHECK_STATUS(dfs_journal_clear(NULL), DFS_ERR_NULL, "clear NULL");
    CHECK_STATUS(dfs_journal_replay(NULL, type, add_update, NULL, log_model, &log), DFS_ERR_NULL, "replay NULL");
    CHECK_STATUS(dfs_journal_replay(journal, NULL, add_update, NULL, log_model, &log), DFS_ERR_NULL,
                 "replay without an effect type");
    CHECK_STATUS(dfs_journal_replay(journal, type, NULL, NULL, log_model, &log), DFS_ERR_NULL, "replay without an update");
    CHECK_STATUS(dfs_journal_replay(journal, type, add_update, NULL, NULL, NULL), DFS_ERR_NULL, "replay without a visitor");
    CHECK_STATUS(dfs_journal_retain(NULL), DFS_ERR_NULL, "retain NULL");
    CHECK_OK(dfs_journal_release(NULL), "release NULL is ignored");

    dfs_journal *recorded = NULL;
    dfs_journal_new(type, type, &recorded);
    dfs_loop_record(loop, recorded);
    dfs_loop_start(loop);
    dispatch(loop, 1);
    CHECK_STATUS(dfs_journal_replay(recorded, type, add_update, NULL, refuse, NULL), DFS_ERR_CALLBACK,
                 "a visitor that fails stops the replay");
    CHECK_ERROR_HAS("the visitor stops", "its message");

    CHECK_OK(dfs_journal_release(journal), "release");
    CHECK_STATUS(dfs_journal_clear(journal), DFS_ERR_HANDLE, "a released journal");
    CHECK_STATUS(dfs_journal_release(journal), DFS_ERR_HANDLE, "released twice");
    dfs_loop_release(loop);
    dfs_journal_release(recorded);
    dfs_type_release(other);
    dfs_type_release(type);
    CHECK_INT(box_live, 0, "every value was released");
}

/* add_update, which also dispatches each event it sees to `loop` (on the caller's
 * executor: that loop's whole step runs here, inside this update), between giving its
 * next an effect and a model. */
typedef struct relay {
    dfs_loop *loop;
    int refused;  /* dispatches or next calls that failed */
} relay;

static int relaying_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    relay *r = ctx;
    const box *m = model, *e = event;
    if (e->value == EVENT_FAIL) return 1;
    if (dfs_next_effect(next, box_new(-e->value)) != DFS_OK) r->refused++;
    if (dfs_loop_dispatch(r->loop, e) != DFS_OK) r->refused++;
    if (dfs_next_model(next, box_new(m->value + e->value)) != DFS_OK) r->refused++;
    return 0;
}

/** A replay whose update dispatches to the very loop that records the journal runs that
 *  loop's step inside each replayed update on the same thread: the step's update fills
 *  its own dfs_next, the replayed update then fills its own, and the replay re-derives
 *  the models it read before the new events were recorded. Fails if a nested update
 *  left the thread without the replay's builder (the replayed models stop after the
 *  start), or if a replay walked the journal while it grows. */
static void test_replay_that_dispatches(void) {
    check_section("a replay whose update dispatches to the recording loop");
    box_type_ctx tc;
    dfs_type *type = box_type_fresh(&tc, NULL);
    dfs_journal *journal = NULL;
    CHECK_OK(dfs_journal_new(type, type, &journal), "dfs_journal_new");
    dfs_loop *loop = make_loop_with(type, 0, NULL, journal);
    dispatch(loop, 2);
    dispatch(loop, EVENT_FAIL);
    dispatch(loop, 3);

    relay r = {.loop = loop};
    test_log log = {0};
    handled = 0;
    CHECK_OK(dfs_journal_replay(journal, type, relaying_update, &r, log_model, &log), "replay");
    CHECK_LOG(&log, "0 2 5", "the models read before the replay began");
    CHECK_INT(r.refused, 0, "every dispatch and every next call accepted");
    CHECK_INT(handled, 2, "the loop's own steps handled their effects");

    log_clear(&log);
    CHECK_OK(dfs_journal_entries(journal, log_entry, &log), "entries");
    CHECK_LOG(&log, "start:0 event:2 event:1000 event:3 event:2 event:3", "the relayed events were recorded");
    log_clear(&log);
    dfs_loop_model(loop, log_model, &log);
    CHECK_LOG(&log, "10", "the loop handled its events and the relayed ones");
    dfs_loop_release(loop);
    dfs_journal_release(journal);
    dfs_type_release(type);
    CHECK_INT(box_live, 0, "every value was released");
}

/* A loop's update that replays `journal` through add_update before filling its own next. */
typedef struct replayer {
    dfs_journal *journal;
    dfs_type *type;
    test_log *log;
    dfs_status replayed, own;
} replayer;

static int replaying_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    replayer *p = ctx;
    const box *m = model, *e = event;
    p->replayed = dfs_journal_replay(p->journal, p->type, add_update, NULL, log_model, p->log);
    p->own = dfs_next_model(next, box_new(m->value + 10 * e->value));
    return 0;
}

/** A replay from inside a loop's update: each replayed update has its own dfs_next, and
 *  the loop's update fills its own after the replay returns. Fails if a replayed update
 *  left the thread's current builder pointing at its finished one (the outer model is
 *  refused). */
static void test_replay_inside_an_update(void) {
    check_section("a replay from inside a loop's update");
    box_type_ctx tc;
    dfs_type *type = box_type_fresh(&tc, NULL);
    dfs_journal *journal = NULL;
    CHECK_OK(dfs_journal_new(type, type, &journal), "dfs_journal_new");
    dfs_loop *recorded = make_loop_with(type, 0, NULL, journal);
    dispatch(recorded, 2);
    dispatch(recorded, 3);

    test_log log = {0};
    replayer p = {.journal = journal, .type = type, .log = &log, .replayed = -1, .own = -1};
    box *first = box_new(0);
    dfs_loop_config c = {0};
    c.model_type = c.event_type = c.effect_type = type;
    c.model = first;
    c.update = replaying_update;
    c.update_ctx = &p;
    dfs_loop *loop = NULL;
    CHECK_OK(dfs_loop_new(&c, &loop), "dfs_loop_new");
    box_unref(first);
    dispatch(loop, 1);
    CHECK_STATUS(p.replayed, DFS_OK, "the replay inside the update");
    CHECK_LOG(&log, "0 2 5", "re-derived its models");
    CHECK_STATUS(p.own, DFS_OK, "the update then fills its own next");
    log_clear(&log);
    dfs_loop_model(loop, log_model, &log);
    CHECK_LOG(&log, "10", "the loop's model is its update's");
    dfs_loop_release(loop);
    dfs_loop_release(recorded);
    dfs_journal_release(journal);
    dfs_type_release(type);
    CHECK_INT(box_live, 0, "every value was released");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_record_and_replay();
    test_journal_in_config();
    test_record_running_loop();
    test_misuse();
    test_replay_that_dispatches();
    test_replay_inside_an_update();
    return check_finish();
}
