/* Reproducer (found by fuzz_api): a dfs_loop_stop called again from a callback of a stop
 * in progress (an on-cancel action of a job the stop cancels) ends that stop early. The
 * nested stop returns at once (the loop is stopped already) but clears the loop's record
 * of the close in progress (LoopCore.closer), so until the outer stop returns:
 *   - dfs_loop_start from the same callback starts a new run (DFS_OK), where without the
 *     nested stop it is refused (DFS_ERR_DISPOSED: a callback of the run being stopped);
 *   - dfs_loop_dispatch is accepted and the event is handled, although "stop and dispose
 *     refuse events from the moment they are called";
 *   - the outer stop then reports STOPPED after the new run's STARTED and STEPPED, and
 *     returns with the loop running.
 *
 *   loop (caller's executor, inspector), an inline feedback that keeps its job, an
 *   on-cancel action on that job; dfs_loop_stop(loop):
 *     the stop cancels the job -> action: dfs_loop_stop(loop), dfs_loop_start(loop),
 *     dfs_loop_dispatch(loop, 1)
 *   expected: the start and the dispatch inside the stop are refused, as they are
 *             without the nested stop; STOPPED is the last trace; the loop is stopped;
 *   bug:      both succeed, the update handles event 1 inside the stop, STOPPED comes
 *             after it, and the loop runs after dfs_loop_stop returned.
 *
 * Run with an argument to leave out the nested stop (the behaviour expected).
 *
 * Build: cc stop_in_stop.c -Iinclude -Lbuild -ldiffuser -Wl,-rpath,$PWD/build
 */
#include <stdint.h>
#include <stdio.h>

#include "diffuser.h"

static dfs_loop *loop;
static dfs_job *held;
static int nested_stop = 1, stopping, updates_inside_stop, last_trace;

static int update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)ctx;
    printf("update(%d)%s\n", (int)(intptr_t)event, stopping ? ", inside dfs_loop_stop" : "");
    if (stopping) updates_inside_stop++;
    dfs_next_model(next, event);
    return 0;
}

static void feedback(const void *model, dfs_job *job, void *ctx) {
    (void)model, (void)ctx;
    if (held == NULL && dfs_job_retain(job) == DFS_OK) held = job;
}

static void inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    static const char *const names[] = {"?", "STARTED", "STEPPED", "FAILED", "DROPPED", "EFFECT_FAILED",
                                        "OBSERVER_FAILED", "STOPPED", "DISPOSED"};
    printf("  trace %s\n", names[trace->kind <= 8 ? trace->kind : 0]);
    last_trace = trace->kind;
}

static void on_cancel(void *ctx) {
    (void)ctx;
    if (nested_stop) printf("on-cancel action: dfs_loop_stop -> %s\n", dfs_status_name(dfs_loop_stop(loop)));
    printf("on-cancel action: dfs_loop_start -> %s\n", dfs_status_name(dfs_loop_start(loop)));
    printf("on-cancel action: dfs_loop_dispatch(1) -> %s\n", dfs_status_name(dfs_loop_dispatch(loop, (const void *)1)));
}

int main(int argc, char **argv) {
    (void)argv;
    nested_stop = argc < 2;
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.update = update;
    config.inspect = inspect;
    if (dfs_loop_new(&config, &loop) != DFS_OK) return 2;
    dfs_disposable *registration = NULL;
    if (dfs_loop_add_feedback(loop, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, feedback, NULL, NULL, &registration) != DFS_OK)
        return 2;
    if (held == NULL || dfs_job_on_cancel(held, on_cancel, NULL, NULL) != DFS_OK) return 2;
    printf("dfs_loop_stop%s\n", nested_stop ? " (the action stops it again)" : "");
    stopping = 1;
    dfs_loop_stop(loop);
    stopping = 0;
    int running = dfs_loop_is_running(loop), last = last_trace;
    printf("after dfs_loop_stop: running %d\n", running);
    dfs_job_release(held);
    dfs_disposable_dispose(registration);
    dfs_disposable_release(registration);
    dfs_loop_release(loop);
    if (updates_inside_stop || running == 1) {
        printf("BUG: %d event(s) handled inside dfs_loop_stop, running %d after it (last trace %d)\n", updates_inside_stop,
               running, last);
        return 1;
    }
    printf("ok\n");
    return 0;
}
