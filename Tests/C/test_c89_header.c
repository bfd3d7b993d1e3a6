/*
 * test_c89_header.c — the header from C89 with -pedantic -Werror: it compiles without a
 * warning (no trailing commas in enumerations, no C99-only syntax), and a diffuser runs
 * through it. The C++ side, in the oldest standard it is built with, is
 * test_cxx_header.cpp; this one also builds as C++98 (test_cxx98_header.cpp).
 */
#include "diffuser.h"

#include <stdio.h>

static int count_effect(const void *value, void *ctx) {
    (void)value;
    ++*(int *)ctx;
    return 0;
}

int main(void) {
    int calls = 0;
    dfs_diffuser *d = NULL;
    if (dfs_diffuser_into(dfs_type_pointer(), count_effect, &calls, NULL, &d) != DFS_OK) return 1;
    if (dfs_diffuser_run(d, NULL) != DFS_OK || dfs_diffuser_run(d, NULL) != DFS_OK) return 1;
    dfs_diffuser_release(d);
    if (calls != 1) {
        printf("FAIL: into ran %d times for two equal values\n", calls);
        return 1;
    }
    printf("ok   the header compiles as C89 (and C++98) with -pedantic -Werror, and a diffuser runs\n");
    return 0;
}
