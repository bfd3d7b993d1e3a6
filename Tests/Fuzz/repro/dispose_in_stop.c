/* Reproducer (found by fuzz_api): a dispose called from an on-cancel action while the
 * loop stops reports DISPOSED and returns; then the stop goes on and its inspector sees
 * STOPPED, after DISPOSED (out of order, and a callback after dispose returned).
 *
 *   loop (caller's executor, inspector, a handler that keeps its job and gives it an
 *   on-cancel action that disposes the loop), dispatch(1) (an effect: the handler runs),
 *   stop: the session's cancel runs the action: dispose (DISPOSED) ... then STOPPED.
 *
 * Build: cc dispose_in_stop.c -Iinclude -Lbuild -ldiffuser -Wl,-rpath,$PWD/build
 */
#include <stdint.h>
#include <stdio.h>

#include "diffuser.h"

static dfs_loop *loop;
static int disposed, after;

static int update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)ctx;
    return dfs_next_effect(next, event) == DFS_OK ? 0 : 1;
}

static void dispose_loop(void *ctx) {
    (void)ctx;
    dfs_loop_dispose(loop);
}

static int handler(const void *effect, dfs_job *job, void *ctx) {
    (void)effect, (void)ctx;
    dfs_job_on_cancel(job, dispose_loop, NULL, NULL); /* the job stays running */
    return 0;
}

static void inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    printf("trace %d\n", (int)trace->kind);
    if (disposed) after++;
    if (trace->kind == DFS_TRACE_DISPOSED) disposed = 1;
}

int main(void) {
    dfs_handler h = {handler, NULL, NULL, NULL};
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.update = update;
    config.handlers = &h;
    config.handler_count = 1;
    config.inspect = inspect;
    if (dfs_loop_new(&config, &loop) != DFS_OK) return 2;
    dfs_loop_dispatch(loop, (const void *)1);
    dfs_loop_stop(loop);
    dfs_loop_release(loop);
    if (after) {
        printf("BUG: the inspector saw %d trace(s) after DISPOSED\n", after);
        return 1;
    }
    printf("ok\n");
    return 0;
}
