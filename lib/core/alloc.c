#include "roboest/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Failure injection for tests: `fail_countdown` successful allocations remain before one fails. */
static long fail_countdown = -1;
static long alloc_count;

static bool should_fail(void)
{
    alloc_count++;
    if (fail_countdown < 0)
        return false;
    if (fail_countdown == 0) {
        fail_countdown = -1;
        return true;
    }
    fail_countdown--;
    return false;
}

long rb_alloc_fail_after(long n)
{
    long made = alloc_count;
    alloc_count = 0;
    fail_countdown = n;
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
