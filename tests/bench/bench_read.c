/* Reader benchmark: reads every channel of a log with rb_log_read.
 * Prints "seconds peak_rss_bytes data_bytes" like scripts/bench_read_h5py.py. */
#include <stdio.h>
#include <sys/resource.h>

#include "roboest/io.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_read LOG\n");
        return 2;
    }
    rb_err err;
    rb_log *log = NULL;
    double t0 = rb_monotonic_seconds();
    if (rb_log_read(argv[1], &log, &err) != RB_OK) {
        fprintf(stderr, "bench_read: %s\n", err.msg);
        return 3;
    }
    double seconds = rb_monotonic_seconds() - t0;
    double bytes = 0;
    for (size_t c = 0; c < log->n_channels; c++)
        bytes += 8.0 * (double)log->channels[c].n_samples * (double)(log->channels[c].n_elements + 1);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%.6f %.0f %.0f\n", seconds, (double)ru.ru_maxrss * 1024.0, bytes);
    rb_log_free(log);
    return 0;
}
