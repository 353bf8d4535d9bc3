/* rb_resampler on channels read window by window (rb_log_source, rb_channel_window) against rb_resample on the
 * whole log: the same doubles bit for bit and the same held counts, on every shipped log and on non-finite
 * samples held across windows. */
#include <dirent.h>
#include <unistd.h>

#include "support.h"
#include "io_read_expect.h"

/* Channel c of src onto clk in windows of `win` clock times, reading parts of `part` samples, into out. */
static int windowed(rb_log_source *src, size_t c, const size_t *sel, size_t n_sel, const rb_clock *clk,
                    rb_interp interp, rb_nonfinite policy, size_t win, size_t part, double *out, size_t *held,
                    rb_err *err_out)
{
    const rb_channel *ch = &rb_log_source_log(src)->channels[c];
    size_t w = sel ? n_sel : ch->n_elements;
    rb_resampler *rs = NULL;
    rb_channel_window cw = {0};
    rb_err err;
    int rc = RB_OK;
    cr_assert_eq(rb_resampler_new(ch, sel, n_sel, interp, policy, &rs, &err), RB_OK, "%s", err.msg);
    for (size_t k0 = 0; k0 < clk->n && !rc; k0 += win) {
        size_t k1 = clk->n - k0 > win ? k0 + win : clk->n;
        cr_assert_eq(rb_channel_window_advance(src, c, &cw, rb_resampler_need(rs), clk->t[k1 - 1], part, &err), RB_OK,
                     "%s", err.msg);
        rc = rb_resampler_run(rs, cw.time, cw.data, cw.first, cw.count, clk->t + k0, k1 - k0, out + k0 * w, err_out);
    }
    *held = rb_resampler_held(rs);
    rb_resampler_free(rs);
    rb_channel_window_free(&cw);
    return rc;
}

static size_t n_errors, n_held; /* what the comparisons met: non-finite samples refused, values held */

/* Every channel of path onto clk (inside its span) both ways. */
static void same_as_whole(const char *path, size_t win, size_t part, rb_interp interp, rb_nonfinite policy)
{
    rb_err err;
    rb_log *whole = NULL;
    rb_log_source *src = NULL;
    cr_assert_eq(rb_log_read(path, &whole, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_source_open(path, 0, &src, &err), RB_OK, "%s", err.msg);
    for (size_t c = 0; c < whole->n_channels; c++) {
        const rb_channel *ch = &whole->channels[c];
        if (ch->n_samples < 2)
            continue;
        /* a rate that falls between samples, and the clock of another channel (exact samples and between) */
        rb_clock clocks[2] = {{0, NULL}, {0, NULL}};
        double span = ch->time[ch->n_samples - 1] - ch->time[0];
        cr_assert_eq(rb_clock_uniform(&clocks[0], ch->time[0], ch->time[ch->n_samples - 1],
                                      0.77 * (double)(ch->n_samples - 1) / span, &err),
                     RB_OK, "%s", err.msg);
        const rb_channel *other = &whole->channels[(c + 1) % whole->n_channels];
        if (rb_clock_from_channel(&clocks[1], other, ch->time[0], ch->time[ch->n_samples - 1], &err) != RB_OK)
            clocks[1] = (rb_clock){0, NULL};
        size_t sel[2] = {ch->n_elements - 1, 0};
        for (int k = 0; k < 2; k++) {
            rb_clock *clk = &clocks[k];
            if (clk->n == 0)
                continue;
            for (int s = 0; s < 2; s++) {
                size_t n_sel = s ? 2 : 0, w = s ? 2 : ch->n_elements, held_whole = 0, held = 0;
                double *a = rb_calloc(clk->n * w, sizeof *a), *b = rb_calloc(clk->n * w, sizeof *b);
                rb_err err2;
                int rc = rb_resample(ch, s ? sel : NULL, n_sel, clk, interp, policy, a, &held_whole, &err);
                int rc2 = windowed(src, c, s ? sel : NULL, n_sel, clk, interp, policy, win, part, b, &held, &err2);
                cr_assert_eq(rc2, rc, "%s: %s: %s", path, ch->name, rc ? err.msg : err2.msg);
                if (rc) { /* the same first non-finite sample, named alike */
                    cr_assert_str_eq(err2.msg, err.msg);
                    n_errors++;
                } else {
                    cr_assert(memcmp(a, b, clk->n * w * sizeof *a) == 0, "%s: %s: clock %d selection %d differs", path,
                              ch->name, k, s);
                    cr_assert_eq(held, held_whole, "%s: %s", path, ch->name);
                    n_held += held;
                }
                rb_free(a);
                rb_free(b);
            }
            rb_clock_free(clk);
        }
    }
    rb_log_source_free(src);
    rb_log_free(whole);
}

Test(io_chunked_resample, every_shipped_log_bit_for_bit)
{
    test_deadline(600);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/datasets", RB_SOURCE);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mat") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        same_as_whole(path, 1000, 777, n % 2 ? RB_INTERP_HOLD : RB_INTERP_LINEAR, RB_NONFINITE_ERROR);
        same_as_whole(path, 1000, 777, n % 2 ? RB_INTERP_LINEAR : RB_INTERP_HOLD, RB_NONFINITE_HOLD);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 20);
    cr_assert_gt(n_errors, 0); /* some shipped logs hold NaN: both ways refuse them alike, or hold them alike */
    cr_assert_gt(n_held, 0);
}

Test(io_chunked_resample, small_windows_and_parts_on_the_fixtures)
{
    static const char *const files[] = {"logger_matio73.mat", "logger_h5py73_old.mat", "roboest.h5"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++)
        for (size_t win = 1; win <= 3; win++)
            for (size_t part = 1; part <= 2; part++) {
                char *path = fixture(files[f]);
                same_as_whole(path, win, part, RB_INTERP_LINEAR, RB_NONFINITE_ERROR);
                same_as_whole(path, win, part, RB_INTERP_HOLD, RB_NONFINITE_HOLD);
                rb_free(path);
            }
}

/* Runs of NaN longer than a window and a part: the value held comes from a window read before. */
Test(io_chunked_resample, non_finite_samples_held_across_windows)
{
    enum { T = 400, N = 3 };
    double t[T], x[T * N];
    for (size_t k = 0; k < T; k++) {
        t[k] = 0.01 * (double)k;
        for (size_t i = 0; i < N; i++)
            x[k * N + i] = (k / 37 + i) % 3 == 1 && k > 5 ? NAN : sin(0.1 * (double)k + (double)i);
    }
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "s/x", T, N, t, x, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_add_channel_copy(log, "s/y", T / 3, N, t, x, NULL, NULL, &err), RB_OK, "%s", err.msg);
    char *path = rb_asprintf("%s/chunked_nan_%d.h5", RB_BUILD, (int)getpid());
    rb_write_opts o = {RB_OUT_H5, true, NULL};
    cr_assert_eq(rb_log_write(log, path, &o, &err), RB_OK, "%s", err.msg);
    for (size_t win = 1; win <= 64; win *= 4)
        for (size_t part = 1; part <= 16; part *= 4) {
            same_as_whole(path, win, part, RB_INTERP_LINEAR, RB_NONFINITE_HOLD);
            same_as_whole(path, win, part, RB_INTERP_HOLD, RB_NONFINITE_HOLD);
        }
    cr_assert_gt(n_held, 0);
    remove(path);
    rb_free(path);
    rb_log_free(log);
}
