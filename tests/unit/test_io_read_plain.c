/* Plain named matrices (.mat v5 and v7.3, .h5), the roboest .h5 layout and CSV. */
#include <locale.h>

#include "io_read_expect.h"
#include "support.h"

enum { PLAIN_T = 6 };

/* time 100 + 0.5 t; x T x 2: 10 t + j + 0.5; y 3 x T (read transposed): -t - 0.125 j;
 * s.z: 7 t - 20; s.inner.w: t % 2; k (1 x 1), m (2 x 2) and label (char) are not channels. */
static void check_plain(const char *file, rb_log_format fmt, size_t n_channels)
{
    rb_log *log = read_ok(file);
    cr_assert_eq(log->format, fmt, "%s: %s", file, rb_log_format_name(log->format));
    cr_assert_null(log->root_name);
    cr_assert_eq(log->n_channels, n_channels, "%s: %zu channels", file, log->n_channels);
    const rb_channel *x = rb_log_find(log, "x"), *y = rb_log_find(log, "y");
    const rb_channel *z = rb_log_find(log, "s/z"), *w = rb_log_find(log, "s/inner/w");
    cr_assert(x && y && z && w, "%s: x, y, s/z, s/inner/w", file);
    cr_assert(x->n_elements == 2 && y->n_elements == 3 && z->n_elements == 1 && w->n_elements == 1, "%s", file);
    const rb_channel *all[4] = {x, y, z, w};
    for (size_t c = 0; c < 4; c++) {
        cr_assert_eq(all[c]->n_samples, PLAIN_T, "%s: %s", file, all[c]->name);
        for (size_t t = 0; t < PLAIN_T; t++)
            cr_assert_eq(all[c]->time[t], 100.0 + 0.5 * (double)t, "%s: %s", file, all[c]->name);
        for (size_t i = 0; i < all[c]->n_elements; i++) {
            char idx[32];
            snprintf(idx, sizeof idx, "%zu", i);
            cr_assert_str_eq(all[c]->element_names[i], idx);
            cr_assert_str_eq(all[c]->units[i], "");
        }
    }
    for (size_t t = 0; t < PLAIN_T; t++) {
        for (size_t j = 0; j < 2; j++)
            cr_assert_eq(x->data[t * 2 + j], 10.0 * (double)t + (double)j + 0.5, "%s: x(%zu,%zu)", file, t, j);
        for (size_t j = 0; j < 3; j++)
            cr_assert_eq(y->data[t * 3 + j], -(double)t - 0.125 * (double)j, "%s: y(%zu,%zu)", file, t, j);
        cr_assert_eq(z->data[t], 7.0 * (double)t - 20.0, "%s: z(%zu)", file, t);
        cr_assert_eq(w->data[t], (double)(t % 2), "%s: w(%zu)", file, t);
    }
    cr_assert_null(rb_log_find(log, "k"));
    cr_assert_null(rb_log_find(log, "m"));
    cr_assert_null(rb_log_find(log, "label"));
    cr_assert_null(rb_log_find(log, "time"));
    rb_log_free(log);
}

Test(io_read_plain, matio_v5) { check_plain("plain_matio5.mat", RB_FMT_PLAIN_MAT5, 4); }

Test(io_read_plain, matio_v73) { check_plain("plain_matio73.mat", RB_FMT_PLAIN_MAT73, 4); }

Test(io_read_plain, h5py_v73_as_matlab) { check_plain("plain_h5py73.mat", RB_FMT_PLAIN_MAT73, 4); }

Test(io_read_plain, scipy_v5) { check_plain("plain_scipy5.mat", RB_FMT_PLAIN_MAT5, 4); }

Test(io_read_plain, numpy_h5_and_square_matrices_are_sample_rows)
{
    check_plain("plain.h5", RB_FMT_PLAIN_H5, 5);
    rb_log *log = read_ok("plain.h5");
    const rb_channel *sq = rb_log_find(log, "sq");
    cr_assert_not_null(sq);
    cr_assert_eq(sq->n_elements, PLAIN_T);
    cr_assert_eq(sq->data[2 * PLAIN_T + 5], 2.0 * PLAIN_T + 5.0, "T x T: rows are samples");
    rb_log_free(log);
}

Test(io_read_plain, v5_and_v73_read_identically)
{
    rb_log *a = read_ok("plain_matio5.mat"), *b = read_ok("plain_matio73.mat"), *c = read_ok("plain_h5py73.mat");
    check_same(a, b, "matio v5 vs v7.3");
    check_same(a, c, "matio v5 vs h5py v7.3");
    rb_log_free(a);
    rb_log_free(b);
    rb_log_free(c);
}

Test(io_read_plain, missing_time_vector)
{
    char *path = fixture("bad_no_time.h5");
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_EINPUT);
    char *want = rb_asprintf("%s: no time vector (time, t or timestamps) and no channel group (a group holding "
                             "datasets data and timestamps)",
                             path);
    cr_assert_str_eq(err.msg, want);
    rb_free(want);
    rb_free(path);
}

Test(io_read_plain, roboest_h5_layout)
{
    rb_log *log = read_ok("roboest.h5");
    cr_assert_eq(log->format, RB_FMT_ROBOEST_H5);
    cr_assert_eq(log->n_channels, 3);
    check_channel("roboest.h5", log, &logger_channels[0], false);
    check_channel("roboest.h5", log, &logger_channels[2], false); /* fixed-length unit strings */
    const rb_channel *idle = rb_log_find(log, "idle");
    cr_assert_not_null(idle, "a roboest channel without samples is kept");
    cr_assert(idle->n_samples == 0 && idle->n_elements == 2);
    cr_assert_str_eq(rb_log_get_attr(log, "yarp_robot_name"), "ergoCubSN001");
    cr_assert_str_eq(rb_log_get_attr(log, "roboest_version"), "0.1.0");
    cr_assert_null(rb_log_get_attr(log, "roboest_layout"), "the layout marker is not metadata");
    cr_assert_null(rb_log_get_attr(log, "not_a_string"));
    cr_assert_eq(log->n_attrs, 2);
    rb_log_free(log);
}

static void check_csv(const char *file)
{
    rb_log *log = read_ok(file);
    cr_assert_eq(log->format, RB_FMT_CSV);
    cr_assert_eq(log->n_channels, 3);
    cr_assert_str_eq(rb_log_get_attr(log, "yarp_robot_name"), "ergoCubSN001");
    cr_assert_str_eq(rb_log_get_attr(log, "description_list"), "torso_pitch,gelenk_\xc3\xa4");
    cr_assert_eq(log->n_attrs, 2, "prose comments are not attributes");
    const rb_channel *pos = rb_log_find(log, "joints_state/positions"), *ft = rb_log_find(log, "FTs/l_leg_ft");
    const rb_channel *bat = rb_log_find(log, "battery");
    cr_assert(pos && ft && bat);
    cr_assert(pos->n_samples == 3 && pos->n_elements == 2 && ft->n_elements == 2 && bat->n_elements == 1);
    const double times[3] = {10.0, 10.01, 10.02};
    for (size_t t = 0; t < 3; t++)
        cr_assert(pos->time[t] == times[t] && ft->time[t] == times[t] && bat->time[t] == times[t]);
    cr_assert_str_eq(pos->element_names[1], "gelenk_\xc3\xa4");
    cr_assert_str_eq(pos->units[1], "rad");
    cr_assert_str_eq(ft->element_names[0], "fx");
    cr_assert_str_eq(ft->units[1], "N");
    cr_assert_str_eq(bat->element_names[0], "0");
    cr_assert_str_eq(bat->units[0], "");
    const double p[6] = {1.25, 2.5, 1001.25, NAN, 2001.25, 2002.5}, f[6] = {-3, 4e-3, NAN, -0.5, 7, 8};
    const double b[3] = {NAN, 12, 13};
    for (size_t k = 0; k < 6; k++) {
        cr_assert(isnan(p[k]) ? isnan(pos->data[k]) : pos->data[k] == p[k], "%s: positions[%zu]", file, k);
        cr_assert(isnan(f[k]) ? isnan(ft->data[k]) : ft->data[k] == f[k], "%s: ft[%zu]", file, k);
    }
    for (size_t k = 0; k < 3; k++)
        cr_assert(isnan(b[k]) ? isnan(bat->data[k]) : bat->data[k] == b[k], "%s: battery[%zu]", file, k);
    rb_log_free(log);
}

Test(io_read_plain, csv) { check_csv("log.csv"); }

Test(io_read_plain, csv_crlf) { check_csv("log_crlf.csv"); }

/* Numbers are parsed under the C locale even when the program uses a decimal comma. */
Test(io_read_plain, csv_ignores_the_locale)
{
    char dir[] = "/tmp/rb_locale_XXXXXX";
    cr_assert(test_decimal_comma_locale(LC_NUMERIC, dir), "a decimal-comma locale (localedef, Debian's locales)");
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 0.5);
    cr_assert_str_eq(probe, "0,5", "the locale really uses a decimal comma");
    check_csv("log.csv");
    test_locale_restore(LC_NUMERIC, dir);
}
