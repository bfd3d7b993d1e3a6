/* bench_heap.h — the C library's heap in use, for the benchmarks' bytes-per-leaf
 * figures. Not part of Diffuser. */
#ifndef BENCH_HEAP_H
#define BENCH_HEAP_H

#include <stddef.h>

/* Bytes the C library's allocator has handed out and not taken back (glibc's
 * mallinfo2().uordblks), after returning free memory to the system; 0 where the C
 * library cannot say. */
size_t bench_heap_in_use(void);

#endif
