/* Reproducer (found by fuzz_api): a feedback starts new work after its loop was
 * disposed. A work feedback with DFS_OVERLAP_CANCEL_PREVIOUS cancels the job of its
 * work in progress when the next model comes; an on-cancel action of that job disposes
 * the loop (here: its last dfs_loop_release). The rest of the step must be skipped and
 * no callback of the loop may start once the release returned, but the feedback goes on
 * and starts its new work: fn runs with a job that is already cancelled.
 *
 *   loop (caller's executor; update: the event is the new model), an inline work
 *   feedback (cancel previous) that keeps its first job; on_cancel(that job: release
 *   the loop); dispatch(1):
 *     update(1) -> model 1; published to the feedback, which cancels its first job;
 *     the on-cancel action releases the loop (the last reference: disposed)
 *   expected: the feedback is not called again;
 *   bug:      feedback(1) runs after the release returned.
 *
 * The same path goes through dfs_feedback_request (a new request cancels the previous
 * one's job), and a stop instead of the release starts the work in a stopped loop.
 *
 * Build: cc cancel_previous_dispose.c -Iinclude -Lbuild -ldiffuser -Wl,-rpath,$PWD/build
 */
#include <stdint.h>
#include <stdio.h>

#include "diffuser.h"

static dfs_loop *loop;
static dfs_job *held;
static int released, late_calls;

static int update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)ctx;
    dfs_next_model(next, event);
    return 0;
}

static void feedback(const void *model, dfs_job *job, void *ctx) {
    (void)ctx;
    printf("feedback(%d)%s\n", (int)(intptr_t)model, dfs_job_is_cancelled(job) == 1 ? ", its job already cancelled" : "");
    if (released) late_calls++;
    if (held == NULL && dfs_job_retain(job) == DFS_OK) held = job;
}

static void release_loop(void *ctx) {
    (void)ctx;
    printf("on-cancel action: dfs_loop_release (the last reference)\n");
    released = 1;
    dfs_loop_release(loop);
}

int main(void) {
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.update = update;
    if (dfs_loop_new(&config, &loop) != DFS_OK) return 2;
    dfs_disposable *registration = NULL;
    if (dfs_loop_add_feedback(loop, DFS_OVERLAP_CANCEL_PREVIOUS, NULL, feedback, NULL, NULL, &registration) != DFS_OK)
        return 2;
    if (held == NULL || dfs_job_on_cancel(held, release_loop, NULL, NULL) != DFS_OK) return 2;
    dfs_loop_dispatch(loop, (const void *)1);
    dfs_job_release(held);
    dfs_disposable_dispose(registration);
    dfs_disposable_release(registration);
    if (late_calls) {
        printf("BUG: the feedback was called %d time(s) after the last release of its loop returned\n", late_calls);
        return 1;
    }
    printf("ok\n");
    return 0;
}
