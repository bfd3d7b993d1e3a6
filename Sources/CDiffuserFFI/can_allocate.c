/* Whether malloc can give a block now: see dfsi_can_allocate in CDiffuserFFI.h. */
#include "CDiffuserFFI.h"

#include <stdlib.h>

int dfsi_can_allocate(size_t bytes) {
    /* Through a volatile pointer: a compiler may otherwise drop a malloc whose block is
     * only freed, and take it as having succeeded. */
    void *volatile block = malloc(bytes ? bytes : 1);
    int can = block != NULL;
    free(block);
    return can;
}
