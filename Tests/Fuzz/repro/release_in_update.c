/* Reproducer (found by fuzz_api): the last dfs_loop_release, called from inside the
 * loop's own update, does not dispose the loop ("the last one disposes the loop"): the
 * CLoop object stays alive while dfs_loop_dispatch holds it, so the loop goes on with
 * the rest of the queue (here: a second event, queued from the update) and is disposed
 * only when that dispatch returns.
 *
 *   loop (caller's executor, inspector), dispatch(1):
 *     update(1): dispatch(2) (queued), dfs_loop_release(loop) (the last reference)
 *   expected: event 2 is dropped (DISPOSED), the update never sees it;
 *   bug:      update(2) runs after the release returned, and DISPOSED comes last.
 *
 * Build: cc release_in_update.c -Iinclude -Lbuild -ldiffuser -Wl,-rpath,$PWD/build
 */
#include <stdint.h>
#include <stdio.h>

#include "diffuser.h"

static dfs_loop *loop;
static int released, late_updates;

static int update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model, (void)next, (void)ctx;
    printf("update(%d)\n", (int)(intptr_t)event);
    if (released) late_updates++;
    if ((intptr_t)event == 1) {
        dfs_loop_dispatch(loop, (const void *)2); /* queued */
        released = 1;
        dfs_loop_release(loop); /* the last reference: disposes the loop */
    }
    return 0;
}

static void inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    printf("  trace %d (event %d)\n", (int)trace->kind, (int)(intptr_t)trace->event);
}

int main(void) {
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = dfs_type_pointer();
    config.update = update;
    config.inspect = inspect;
    if (dfs_loop_new(&config, &loop) != DFS_OK) return 2;
    dfs_loop_dispatch(loop, (const void *)1);
    if (late_updates) {
        printf("BUG: the update ran %d time(s) after the last release of its loop returned\n", late_updates);
        return 1;
    }
    printf("ok\n");
    return 0;
}
