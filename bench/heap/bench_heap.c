#include "bench_heap.h"

#include <stdlib.h> /* defines __GLIBC__ on glibc */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>

size_t bench_heap_in_use(void) {
    malloc_trim(0);
    return mallinfo2().uordblks;
}
#else
size_t bench_heap_in_use(void) { return 0; }
#endif
