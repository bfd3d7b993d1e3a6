/* Reproducer (found by fuzz_api): a run queued from inside an effect is performed
 * nested inside that same effect, after a tree built inside the effect merges the
 * running graph with another graph that is also running on this thread.
 *
 *   d0 = into_always(e0), d2 = into_always(e2)       two separate graphs
 *   run(d0):  e0 queues run(d0) (reentrant: must wait until e0 returned),
 *             then runs d2 (another graph: runs at once):
 *               e2 builds d3 = into_always_all(d2, d0) and runs it, which merges
 *               d0's serializer into d2's (both owned by this thread) and moves
 *               d0's queued run into d2's queue
 *             d2's pass then drains that queue: e0 runs again, while e0 is still
 *             on the stack (expected: after e0 returned, as documented).
 *
 * Build: cc nested_merge.c -Iinclude -Lbuild -ldiffuser -Wl,-rpath,$PWD/build
 */
#include <stdio.h>
#include <stdlib.h>

#include "diffuser.h"

static dfs_diffuser *d0, *d2;
static int e0_active, e0_calls, e2_calls, nested;

static int e2(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    if (e2_calls++ == 0) {
        dfs_diffuser *children[2] = {d2, d0};
        dfs_diffuser *d3 = NULL;
        if (dfs_diffuser_into_always_all(dfs_type_pointer(), children, 2, &d3) != DFS_OK) abort();
        dfs_diffuser_run(d3, (const void *)1);
        dfs_diffuser_release(d3);
    }
    return 0;
}

static int e0(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    if (e0_active) {
        nested = 1;
        printf("BUG: e0 called again while it is running (call %d)\n", e0_calls + 1);
    }
    e0_active++;
    if (e0_calls++ == 0) {
        dfs_diffuser_run(d0, (const void *)2); /* queued */
        dfs_diffuser_run(d2, (const void *)3); /* another graph: runs now */
    }
    e0_active--;
    return 0;
}

int main(void) {
    if (dfs_diffuser_into_always(dfs_type_pointer(), e0, NULL, NULL, &d0) != DFS_OK) return 2;
    if (dfs_diffuser_into_always(dfs_type_pointer(), e2, NULL, NULL, &d2) != DFS_OK) return 2;
    dfs_status s = dfs_diffuser_run(d0, (const void *)1);
    printf("run: %s, e0 ran %d times, e2 %d times\n", dfs_status_name(s), e0_calls, e2_calls);
    dfs_diffuser_release(d0);
    dfs_diffuser_release(d2);
    if (nested) return 1;
    printf("ok\n");
    return 0;
}
