/* The C library allocations a step benchmark makes while `counting` is set: malloc, calloc and realloc interposed
 * (glibc's __libc_* do the work). Include it in exactly one translation unit: the benchmark's. */
#ifndef ROBOEST_BENCH_ALLOCS_H
#define ROBOEST_BENCH_ALLOCS_H

#include <stddef.h>

static volatile int counting;
static volatile long allocs;
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
void *malloc(size_t n)
{
    if (counting)
        allocs++;
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    if (counting)
        allocs++;
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    if (counting)
        allocs++;
    return __libc_realloc(p, n);
}

#endif
