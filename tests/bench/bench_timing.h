/* What every step benchmark times with: the calling thread's CPU time (not wall time: other processes on a
 * shared machine do not count) and the comparison that sorts batch figures for their median. */
#ifndef ROBOEST_BENCH_TIMING_H
#define ROBOEST_BENCH_TIMING_H

#include <time.h>

static inline double thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
