/* Reproducer: a run queued from inside an effect is performed twice, after a tree built
 * inside an effect of a nested pass merges the two graphs that this thread is running.
 *
 *   d0 = into_always(e0), d2 = into_always(e2)       two separate graphs
 *   run(d0, 1):   e0 runs d2 (another graph: runs at once, nested)
 *     e2(1):      queues run(d2, 2)
 *     e2(2):      (the queued run, drained by d2's pass) builds d3 = into_always_all(d0, d2)
 *                 and runs it: d2's serializer is merged into d0's, and d2's queue,
 *                 which still holds the run being performed, is appended to d0's
 *   d0's pass then drains its queue: run(d2, 2) again (e2 sees 2 a second time), then d3.
 *
 * Expected calls: e0(1) e2(1) e2(2) e0(1) e2(1), the last two by d3.
 *
 * Build: cc merge_reruns_queued.c -Iinclude -Lbuild -ldiffuser -Wl,-rpath,$PWD/build
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diffuser.h"

static dfs_diffuser *d0, *d2;
static char log_text[256];
static int twos;

static void note(const char *who, const void *value) {
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s(%d) ", who, (int)(intptr_t)value);
}

static int e2(const void *value, void *ctx) {
    (void)ctx;
    note("e2", value);
    if ((intptr_t)value == 1 && twos == 0) {
        dfs_diffuser_run(d2, (const void *)2); /* queued */
    } else if ((intptr_t)value == 2 && twos++ == 0) {
        dfs_diffuser *children[2] = {d0, d2};
        dfs_diffuser *d3 = NULL;
        if (dfs_diffuser_into_always_all(dfs_type_pointer(), children, 2, &d3) != DFS_OK) abort();
        dfs_diffuser_run(d3, (const void *)1);
        dfs_diffuser_release(d3);
    }
    return 0;
}

static int e0(const void *value, void *ctx) {
    (void)ctx;
    note("e0", value);
    static int first = 1;
    if (first) {
        first = 0;
        dfs_diffuser_run(d2, (const void *)1); /* another graph: runs now */
    }
    return 0;
}

int main(void) {
    if (dfs_diffuser_into_always(dfs_type_pointer(), e0, NULL, NULL, &d0) != DFS_OK) return 2;
    if (dfs_diffuser_into_always(dfs_type_pointer(), e2, NULL, NULL, &d2) != DFS_OK) return 2;
    dfs_status s = dfs_diffuser_run(d0, (const void *)1);
    printf("run: %s\ncalls:    %s\nexpected: e0(1) e2(1) e2(2) e0(1) e2(1)\n", dfs_status_name(s), log_text);
    dfs_diffuser_release(d0);
    dfs_diffuser_release(d2);
    if (twos != 1) {
        printf("BUG: the queued run(d2, 2) was performed %d times\n", twos);
        return 1;
    }
    return 0;
}
