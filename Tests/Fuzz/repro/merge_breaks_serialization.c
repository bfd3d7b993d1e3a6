/* Reproducer: after the merge of repro/nested_merge.c, the graph's runs are no longer
 * serialized across threads: another thread runs d0 while this thread is still inside
 * d0's pass (in e0).
 *
 *   d0 = into_always(e0), d2 = into_always(e2)
 *   thread A: run(d0):  e0 runs d2 (another graph: runs at once, nested)
 *                         e2 builds d3 = into_always_all(d2, d0) and runs it: d0's
 *                         serializer is merged into d2's, whose pass then ends and
 *                         unlocks it
 *                       e0, still in d0's pass, starts thread B and waits up to 2 s
 *   thread B: run(d0)   must wait until A's pass is over; it runs at once instead.
 *
 * Build: cc merge_breaks_serialization.c -Iinclude -Lbuild -ldiffuser -lpthread -Wl,-rpath,$PWD/build
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "diffuser.h"

static dfs_diffuser *d0, *d2;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int b_done, overlapped;
static int in_e0; /* guarded by mutex */

static int e2(const void *value, void *ctx) {
    (void)ctx;
    if ((intptr_t)value == 1) {
        dfs_diffuser *children[2] = {d2, d0};
        dfs_diffuser *d3 = NULL;
        if (dfs_diffuser_into_always_all(dfs_type_pointer(), children, 2, &d3) != DFS_OK) abort();
        dfs_diffuser_run(d3, (const void *)5);
        dfs_diffuser_release(d3);
    }
    return 0;
}

static void *thread_b(void *arg) {
    (void)arg;
    dfs_diffuser_run(d0, (const void *)7);
    pthread_mutex_lock(&mutex);
    b_done = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&mutex);
    return NULL;
}

static int e0(const void *value, void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&mutex);
    if (in_e0) overlapped = 1;
    in_e0++;
    pthread_mutex_unlock(&mutex);
    if ((intptr_t)value == 1) {
        dfs_diffuser_run(d2, (const void *)1);
        pthread_t b;
        pthread_create(&b, NULL, thread_b, NULL);
        pthread_detach(b);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 2;
        pthread_mutex_lock(&mutex);
        while (!b_done) {
            if (pthread_cond_timedwait(&cond, &mutex, &until) == ETIMEDOUT) break;
        }
        if (b_done) printf("BUG: thread B's run of d0 finished while thread A is inside d0's pass\n");
        pthread_mutex_unlock(&mutex);
    }
    pthread_mutex_lock(&mutex);
    in_e0--;
    pthread_mutex_unlock(&mutex);
    return 0;
}

int main(void) {
    if (dfs_diffuser_into_always(dfs_type_pointer(), e0, NULL, NULL, &d0) != DFS_OK) return 2;
    if (dfs_diffuser_into_always(dfs_type_pointer(), e2, NULL, NULL, &d2) != DFS_OK) return 2;
    dfs_diffuser_run(d0, (const void *)1);
    pthread_mutex_lock(&mutex);
    while (!b_done) pthread_cond_wait(&cond, &mutex);
    int bug = overlapped;
    pthread_mutex_unlock(&mutex);
    dfs_diffuser_release(d0);
    dfs_diffuser_release(d2);
    if (bug) {
        printf("BUG: e0 ran on two threads at once\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
