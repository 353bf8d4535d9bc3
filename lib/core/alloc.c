#include "roboest/core.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Failure injection for tests: `fail_countdown` successful allocations remain before one fails. Atomic, so
 * that threads allocating at once (roboest compare runs pairs in parallel) neither race on the counters nor
 * lose the injected failure; which thread's allocation fails is then up to timing. */
static _Atomic long fail_countdown = -1;
static _Atomic long alloc_count;

static bool should_fail(void)
{
    atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
    long left = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    while (left >= 0) {
        long next = left == 0 ? -1 : left - 1;
        if (atomic_compare_exchange_weak_explicit(&fail_countdown, &left, next, memory_order_relaxed,
                                                  memory_order_relaxed))
            return left == 0;
    }
    return false;
}

long rb_alloc_fail_after(long n)
{
    long made = atomic_exchange_explicit(&alloc_count, 0, memory_order_relaxed);
    atomic_store_explicit(&fail_countdown, n, memory_order_relaxed);
    return made;
}

void *rb_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    return malloc(size ? size : 1);
}

void *rb_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    if (count == 0 || size == 0)
        count = size = 1;
    return calloc(count, size);
}

void *rb_realloc(void *ptr, size_t size)
{
    if (should_fail())
        return NULL;
    return realloc(ptr, size ? size : 1);
}

void rb_free(void *ptr) { free(ptr); }

void rb_strings_free(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        rb_free(s[i]);
    rb_free(s);
}

char *rb_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *copy = rb_malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    copy[n] = '\0';
    return copy;
}

char *rb_strdup(const char *s) { return s ? rb_strndup(s, strlen(s)) : NULL; }

char *rb_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0)
        return NULL;
    char *s = rb_malloc((size_t)len + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return s;
}

static atomic_long threads_running;

void rb_threads_add(long n) { atomic_fetch_add(&threads_running, n); }

long rb_threads_running(void) { return atomic_load(&threads_running); }
