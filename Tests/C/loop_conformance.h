/*
 * loop_conformance.h — the loop vectors' runner (loop_conformance.c), for
 * conformance_runner.c.
 */
#ifndef LOOP_CONFORMANCE_H
#define LOOP_CONFORMANCE_H

#include <jansson.h>

/* Runs one vector of kind "loop" (conformance/README.md, section 11); `base` is its file
 * name, for messages. Prints every mismatch; returns 1 if the vector passed, else 0. */
int run_loop_vector(const json_t *vector, const char *base);

#endif
