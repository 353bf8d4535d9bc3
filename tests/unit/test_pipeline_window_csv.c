/* Outputs written window by window (stream_out.c) use rb_csv_stream: its bytes are rb_log_write's CSV bytes for
 * the same log whatever the blocks of rows (quoted names, units, attributes, non-finite values). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roboest/io.h"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    char *b = malloc(*n + 1);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

Test(pipeline_window_csv, rows_in_blocks_are_the_whole_writers_bytes)
{
    enum { T = 257 };
    rb_err err;
    rb_log *log = NULL;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    double t[T], a[T * 2], b[T];
    for (size_t k = 0; k < T; k++) {
        t[k] = 1763726401.0 + 0.001 * (double)k;
        a[2 * k] = k % 50 == 3 ? NAN : sin(0.1 * (double)k) * 1e-7;
        a[2 * k + 1] = k % 77 == 5 ? -INFINITY : (double)k / 3.0;
        b[k] = k % 2 ? 0.1 : -0.0;
    }
    const char *na[] = {"left, knee", "r\"q"}, *ua[] = {"N m", "rad/s"}, *nb[] = {"0"}, *ub[] = {""};
    cr_assert_eq(rb_log_add_channel_copy(log, "joints/tau", T, 2, t, a, na, ua, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_add_channel_copy(log, "flag", T, 1, t, b, nb, ub, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_set_attr(log, "run", "p/log", &err), RB_OK, "%s", err.msg);
    char dir[] = "/tmp/rb_csvstream_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char whole[64], parts[64];
    snprintf(whole, sizeof whole, "%s/whole.csv", dir);
    snprintf(parts, sizeof parts, "%s/parts.csv", dir);
    rb_write_opts wo = {RB_OUT_CSV, true, NULL};
    cr_assert_eq(rb_log_write(log, whole, &wo, &err), RB_OK, "%s", err.msg);
    static const size_t blocks[] = {1, 7, 100, 257, 1000};
    size_t nw;
    char *want = slurp(whole, &nw);
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        rb_csv_stream *s = NULL;
        cr_assert_eq(rb_csv_stream_open(log, parts, parts, &s, &err), RB_OK, "%s", err.msg);
        for (size_t k = 0; k < T; k += blocks[i]) {
            size_t n = T - k < blocks[i] ? T - k : blocks[i];
            const double *rows[] = {a + 2 * k, b + k};
            rb_csv_stream_rows(s, t + k, rows, n);
        }
        cr_assert_eq(rb_csv_stream_close(s, &err), RB_OK, "%s", err.msg);
        size_t ng;
        char *got = slurp(parts, &ng);
        cr_assert(ng == nw && memcmp(got, want, nw) == 0, "blocks of %zu: the bytes differ", blocks[i]);
        free(got);
    }
    free(want);
    unlink(whole), unlink(parts), rmdir(dir);
    rb_log_free(log);
}
