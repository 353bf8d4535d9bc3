/* Counting the C library's allocations (malloc, calloc, realloc, aligned allocations) made while
 * test_alloc_counting is set, so that "allocates nothing" covers OpenBLAS and LAPACK too, not only
 * rb_malloc (which rb_alloc_fail_after counts). Under AddressSanitizer the count comes from the
 * sanitizer's allocation hooks (call test_alloc_count_init first); otherwise this test binary
 * interposes the malloc family and forwards to glibc's __libc_* entry points. Under valgrind, which
 * replaces the malloc family itself, nothing is counted: test_alloc_count_works() is false. */
#ifndef ROBOEST_TEST_ALLOC_COUNT_H
#define ROBOEST_TEST_ALLOC_COUNT_H

#include <stdbool.h>

extern volatile int test_alloc_counting; /* count while non-zero */
extern volatile long test_alloc_count;   /* allocations counted */

void test_alloc_count_init(void);
bool test_alloc_count_works(void);

#endif
