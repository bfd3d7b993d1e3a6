/*
 * stress.h — what the stress programs (stress_threads.c, stress_loops.c) share: their
 * failure counters, the check that counts a call's unexpected status, and the random
 * numbers that pick each thread's steps. Define STRESS_NAME (the program's name, for
 * messages) before including it.
 */
#ifndef DFS_STRESS_H
#define DFS_STRESS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "diffuser.h"

/* Breaches of a promise of the library (a callback after its dispose, a destroy twice). */
static atomic_int violations;
/* Calls that gave a status their documentation does not list for them. */
static atomic_int failures;

#define EXPECT(cond, ...)                                                                   \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            atomic_fetch_add(&failures, 1);                                                 \
            fprintf(stderr, STRESS_NAME ": %s:%d: ", __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fprintf(stderr, " (%s)\n", dfs_last_error());                                   \
        }                                                                                   \
    } while (0)

/* xorshift32: each thread's own sequence of steps, the same from run to run. */
static inline uint32_t next_random(uint32_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

#endif
