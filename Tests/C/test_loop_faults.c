/* Loops under misuse found by the C API fuzzer (Tests/Fuzz/fuzz_loop.c): each case is a
 * regression test of a bug it found (reproducers in Tests/Fuzz/repro/). */
#include "check.h"

#include <stdint.h>

#include "diffuser.h"

/* The last dfs_loop_release from inside the loop's own update disposes the loop then:
 * an event queued before is dropped, the update never sees it, and the inspector sees
 * DISPOSED (repro/release_in_update.c). */
static dfs_loop *release_loop;
static int release_updates, release_late, release_dropped, release_disposed;

static int release_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)next, (void)ctx;
    release_updates++;
    if (release_disposed) release_late++;
    if ((intptr_t)event == 1) {
        CHECK_OK(dfs_loop_dispatch(release_loop, (const void *)2), "dispatch from inside the update is queued");
        CHECK_OK(dfs_loop_release(release_loop), "the last release, from inside the update");
        CHECK(release_disposed, "the last release disposed the loop before it returned");
        CHECK_STATUS(dfs_loop_dispatch(release_loop, (const void *)3), DFS_ERR_HANDLE, "the handle is stale");
    }
    return 0;
}

static void release_inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    if (trace->kind == DFS_TRACE_DROPPED && (intptr_t)trace->event == 2) release_dropped++;
    if (trace->kind == DFS_TRACE_DISPOSED) release_disposed++;
}

static void test_release_inside_update(void) {
    check_section("the last release from inside the update disposes the loop");
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.update = release_update;
    config.inspect = release_inspect;
    CHECK_OK(dfs_loop_new(&config, &release_loop), "loop");
    CHECK_OK(dfs_loop_dispatch(release_loop, (const void *)1), "dispatch");
    CHECK_INT(release_updates, 1, "the update saw only the first event");
    CHECK_INT(release_late, 0, "no update after the last release returned");
    CHECK_INT(release_dropped, 1, "the queued event was dropped");
    CHECK_INT(release_disposed, 1, "the inspector saw DISPOSED once");
}

/* A dispose from an on-cancel action run by a stop: the inspector sees DISPOSED last,
 * nothing after it (repro/dispose_in_stop.c). */
static dfs_loop *stop_loop;
static test_log stop_log;

static int stop_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)ctx;
    return dfs_next_effect(next, event) == DFS_OK ? 0 : 1;
}

static void stop_dispose(void *ctx) {
    (void)ctx;
    CHECK_OK(dfs_loop_dispose(stop_loop), "dispose from an on-cancel action of the stop");
}

static int stop_handler(const void *effect, dfs_job *job, void *ctx) {
    (void)effect, (void)ctx;
    return dfs_job_on_cancel(job, stop_dispose, NULL, NULL) == DFS_OK ? 0 : 1;
}

static void stop_inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    log_add(&stop_log, "%d", (int)trace->kind);
}

static void test_dispose_inside_stop(void) {
    check_section("a dispose from inside a stop is the last thing the inspector sees");
    dfs_handler handler = {stop_handler, NULL, NULL, NULL};
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.update = stop_update;
    config.handlers = &handler;
    config.handler_count = 1;
    config.inspect = stop_inspect;
    log_clear(&stop_log);
    CHECK_OK(dfs_loop_new(&config, &stop_loop), "loop");
    CHECK_OK(dfs_loop_dispatch(stop_loop, (const void *)1), "dispatch: the handler keeps its job");
    CHECK_OK(dfs_loop_stop(stop_loop), "stop: the job's action disposes the loop");
    CHECK_LOG(&stop_log, "1 2 8", "started, stepped, disposed: no STOPPED after DISPOSED");
    CHECK_STATUS(dfs_loop_start(stop_loop), DFS_ERR_DISPOSED, "disposed for good");
    CHECK_OK(dfs_loop_release(stop_loop), "release");
}

/* A dispose from inside the update ends the step there: no model is stored, nothing is
 * published or handled, the journal does not record the event, and the event's STEPPED
 * trace is the only one after DISPOSED. */
static dfs_loop *cut_loop;
static test_log cut_log;

static int cut_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    if ((intptr_t)event == 9) CHECK_OK(dfs_loop_dispose(cut_loop), "dispose from inside the update");
    dfs_next_model(next, (const void *)((intptr_t)model + (intptr_t)event));
    dfs_next_effect(next, event);
    return 0;
}

static int cut_observe(const void *model, void *ctx) {
    (void)ctx;
    log_add(&cut_log, "model:%ld", (long)(intptr_t)model);
    return 0;
}

static int cut_handle(const void *effect, dfs_job *job, void *ctx) {
    (void)job, (void)ctx;
    log_add(&cut_log, "effect:%ld", (long)(intptr_t)effect);
    return 0;
}

static void cut_inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    if (trace->kind == DFS_TRACE_STEPPED) log_add(&cut_log, "stepped:%ld", (long)(intptr_t)trace->event);
    if (trace->kind == DFS_TRACE_DISPOSED) log_add(&cut_log, "disposed:%ld", (long)(intptr_t)trace->model);
}

static int cut_entry(dfs_journal_entry kind, const void *value, void *ctx) {
    (void)ctx;
    log_add(&cut_log, "%s:%ld", kind == DFS_JOURNAL_START ? "start" : "event", (long)(intptr_t)value);
    return 0;
}

static int cut_read(const void *model, void *ctx) {
    *(long *)ctx = (long)(intptr_t)model;
    return 0;
}

static void test_dispose_inside_update(void) {
    check_section("a dispose from inside the update ends the step there");
    log_clear(&cut_log);
    dfs_journal *journal = NULL;
    CHECK_OK(dfs_journal_new(dfs_type_pointer(), dfs_type_pointer(), &journal), "journal");
    dfs_handler handler = {cut_handle, NULL, NULL, NULL};
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.model = (const void *)1;
    config.update = cut_update;
    config.handlers = &handler;
    config.handler_count = 1;
    config.inspect = cut_inspect;
    config.journal = journal;
    CHECK_OK(dfs_loop_new(&config, &cut_loop), "loop");
    dfs_disposable *observer = NULL;
    CHECK_OK(dfs_loop_observe(cut_loop, cut_observe, NULL, NULL, &observer), "observe");
    CHECK_OK(dfs_loop_dispatch(cut_loop, (const void *)2), "dispatch 2");
    CHECK_OK(dfs_loop_dispatch(cut_loop, (const void *)9), "dispatch 9: its update disposes the loop");
    CHECK_LOG(&cut_log, "model:1 stepped:2 model:3 effect:2 disposed:3 stepped:9",
              "nothing of the step after the update; its trace right after DISPOSED");
    long model = 0;
    dfs_loop_model(cut_loop, cut_read, &model);
    CHECK_INT(model, 3, "the model the update made is not stored");
    log_clear(&cut_log);
    CHECK_OK(dfs_journal_entries(journal, cut_entry, NULL), "entries");
    CHECK_LOG(&cut_log, "start:1 event:2", "the journal does not record the cut step");
    dfs_disposable_release(observer);
    dfs_journal_release(journal);
    CHECK_OK(dfs_loop_release(cut_loop), "release");
}

/* An on-cancel action of a feedback's work in progress, run as the next model cancels
 * it (DFS_OVERLAP_CANCEL_PREVIOUS), that stops the loop or releases it (the last
 * reference): the rest of the step is skipped, no new work starts
 * (repro/cancel_previous_dispose.c). */
static dfs_loop *cancel_loop;
static dfs_job *cancel_job;
static int cancel_stops, cancel_calls, cancel_late, cancel_closed;

static int cancel_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)ctx;
    return dfs_next_model(next, event) == DFS_OK ? 0 : 1;
}

static void cancel_feedback(const void *model, dfs_job *job, void *ctx) {
    (void)model, (void)ctx;
    cancel_calls++;
    if (cancel_closed) cancel_late++;
    if (cancel_job == NULL && dfs_job_retain(job) == DFS_OK) cancel_job = job;
}

static void cancel_action(void *ctx) {
    (void)ctx;
    if (cancel_stops) CHECK_OK(dfs_loop_stop(cancel_loop), "stop from the on-cancel action");
    else CHECK_OK(dfs_loop_release(cancel_loop), "the last release, from the on-cancel action");
    cancel_closed = 1;
}

static void test_close_inside_cancel_previous(void) {
    check_section("a stop or the last release from an on-cancel action of a feedback's previous work");
    for (cancel_stops = 0; cancel_stops < 2; cancel_stops++) {
        cancel_job = NULL;
        cancel_calls = cancel_late = cancel_closed = 0;
        dfs_loop_config config = {0};
        config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
        config.update = cancel_update;
        CHECK_OK(dfs_loop_new(&config, &cancel_loop), "loop");
        dfs_disposable *added = NULL;
        CHECK_OK(dfs_loop_add_feedback(cancel_loop, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, cancel_feedback, NULL, NULL, &added),
                 "a feedback that cancels its previous work");
        CHECK_INT(cancel_calls, 1, "it heard the first model at once");
        CHECK(cancel_job != NULL, "its first job kept");
        CHECK_OK(dfs_job_on_cancel(cancel_job, cancel_action, NULL, NULL), "an on-cancel action that closes the loop");
        CHECK_OK(dfs_loop_dispatch(cancel_loop, (const void *)1), "dispatch: the next model cancels the first job");
        CHECK_INT(cancel_closed, 1, "the action ran");
        CHECK_INT(cancel_late, 0, cancel_stops ? "no new work in the stopped loop" : "no new work after the last release returned");
        CHECK_INT(dfs_job_is_cancelled(cancel_job), 1, "the first job is cancelled");
        dfs_job_release(cancel_job);
        dfs_disposable_dispose(added);
        dfs_disposable_release(added);
        if (cancel_stops) CHECK_OK(dfs_loop_release(cancel_loop), "release");
    }
}

/* A stop from an on-cancel action of the stop in progress returns at once and leaves
 * that stop in charge: a start and a dispatch from the same action are refused as
 * without it, and the loop is stopped when the outer stop returns
 * (repro/stop_in_stop.c). */
static dfs_loop *nested_loop;
static dfs_job *nested_job;
static int nested_updates;
static test_log nested_log;

static int nested_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)ctx;
    nested_updates++;
    return dfs_next_model(next, event) == DFS_OK ? 0 : 1;
}

static void nested_feedback(const void *model, dfs_job *job, void *ctx) {
    (void)model, (void)ctx;
    if (nested_job == NULL && dfs_job_retain(job) == DFS_OK) nested_job = job;
}

static void nested_inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    if (trace->kind == DFS_TRACE_STARTED) log_add(&nested_log, "started");
    if (trace->kind == DFS_TRACE_STEPPED) log_add(&nested_log, "stepped:%ld", (long)(intptr_t)trace->event);
    if (trace->kind == DFS_TRACE_STOPPED) log_add(&nested_log, "stopped");
}

static void nested_action(void *ctx) {
    (void)ctx;
    CHECK_OK(dfs_loop_stop(nested_loop), "a stop from an on-cancel action of the stop");
    CHECK_STATUS(dfs_loop_start(nested_loop), DFS_ERR_STOPPED, "a start from it is refused: the loop is being stopped");
    CHECK_STATUS(dfs_loop_dispatch(nested_loop, (const void *)1), DFS_ERR_STOPPED, "so is an event");
}

static void test_stop_inside_stop(void) {
    check_section("a stop from an on-cancel action of a stop");
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.update = nested_update;
    config.inspect = nested_inspect;
    CHECK_OK(dfs_loop_new(&config, &nested_loop), "loop");
    dfs_disposable *added = NULL;
    CHECK_OK(dfs_loop_add_feedback(nested_loop, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, nested_feedback, NULL, NULL, &added),
             "a feedback that keeps its job");
    CHECK(nested_job != NULL, "its job kept");
    CHECK_OK(dfs_job_on_cancel(nested_job, nested_action, NULL, NULL), "an on-cancel action that stops the loop again");
    CHECK_OK(dfs_loop_stop(nested_loop), "stop");
    CHECK_INT(nested_updates, 0, "no event handled inside the stop");
    CHECK_INT(dfs_loop_is_running(nested_loop), 0, "stopped when the stop returned");
    CHECK_LOG(&nested_log, "started stopped", "STOPPED once, last");
    dfs_job_release(nested_job);
    dfs_disposable_dispose(added);
    dfs_disposable_release(added);
    CHECK_OK(dfs_loop_release(nested_loop), "release");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_release_inside_update();
    test_dispose_inside_stop();
    test_dispose_inside_update();
    test_close_inside_cancel_previous();
    test_stop_inside_stop();
    return check_finish();
}
