#include "alloc_count.h"

#include <stddef.h>
#include <valgrind/valgrind.h>

volatile int test_alloc_counting;
volatile long test_alloc_count;

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

bool test_alloc_count_works(void) { return !RUNNING_ON_VALGRIND; }

#ifdef TEST_ASAN
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
static void on_malloc(const volatile void *p, size_t n)
{
    (void)p, (void)n;
    if (test_alloc_counting)
        test_alloc_count++;
}
static void on_free(const volatile void *p) { (void)p; }
void test_alloc_count_init(void) { __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free); }
#else
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

void test_alloc_count_init(void) {}

void *malloc(size_t n)
{
    if (test_alloc_counting)
        test_alloc_count++;
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    if (test_alloc_counting)
        test_alloc_count++;
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    if (test_alloc_counting)
        test_alloc_count++;
    return __libc_realloc(p, n);
}
void *aligned_alloc(size_t align, size_t n)
{
    if (test_alloc_counting)
        test_alloc_count++;
    return __libc_memalign(align, n);
}
int posix_memalign(void **out, size_t align, size_t n)
{
    if (test_alloc_counting)
        test_alloc_count++;
    if (align < sizeof(void *) || (align & (align - 1)))
        return 22; /* EINVAL */
    void *p = __libc_memalign(align, n);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}
#endif
