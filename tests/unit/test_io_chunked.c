/* rb_log_source: a log read in bounded parts gives rb_log_read's doubles bit for bit, on the shipped logs and on
 * the reader fixtures of every writer (tests/fixtures), and a layout read whole says so against a memory limit. */
#include <dirent.h>
#include <unistd.h>

#include "support.h"
#include "io_read_expect.h"

/* Every channel of path read in parts of `part` samples (reading backwards too: parts are independent) against
 * rb_log_read; returns whether the source was chunked. */
static bool same_in_parts(const char *path, size_t part)
{
    rb_err err;
    rb_log *whole = NULL;
    rb_log_source *src = NULL;
    cr_assert_eq(rb_log_read(path, &whole, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_source_open(path, 0, &src, &err), RB_OK, "%s", err.msg);
    const rb_log *meta = rb_log_source_log(src);
    cr_assert_eq(meta->n_channels, whole->n_channels, "%s", path);
    for (size_t c = 0; c < whole->n_channels; c++) {
        const rb_channel *w = &whole->channels[c], *m = &meta->channels[c];
        cr_assert_str_eq(m->name, w->name);
        cr_assert_eq(m->n_samples, w->n_samples, "%s: %s", path, w->name);
        cr_assert_eq(m->n_elements, w->n_elements, "%s: %s", path, w->name);
        for (size_t i = 0; i < w->n_elements; i++) {
            cr_assert_str_eq(m->element_names[i], w->element_names[i]);
            cr_assert_str_eq(m->units[i], w->units[i]);
        }
        size_t n = w->n_elements, T = w->n_samples;
        double *t = rb_malloc((part + 1) * sizeof *t), *d = rb_malloc((part + 1) * (n + 1) * sizeof *d);
        for (size_t k = T; k > 0;) {
            size_t first = k > part ? k - part : 0, count = k - first;
            cr_assert_eq(rb_log_source_read(src, c, first, count, t, d, &err), RB_OK, "%s", err.msg);
            cr_assert(memcmp(t, w->time + first, count * sizeof *t) == 0, "%s: %s: time from %zu", path, w->name,
                      first);
            cr_assert(memcmp(d, w->data + first * n, count * n * sizeof *d) == 0, "%s: %s: data from %zu", path,
                      w->name, first);
            k = first;
        }
        rb_free(t);
        rb_free(d);
    }
    bool chunked = rb_log_source_chunked(src);
    rb_log_source_free(src);
    rb_log_free(whole);
    return chunked;
}

Test(io_chunked, shipped_logs_read_in_parts_bit_for_bit)
{
    test_deadline(300);
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
        cr_assert(same_in_parts(path, 4093), "%s: not read in parts", path); /* v7.3: hyperslabs */
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 20);
}

Test(io_chunked, reader_fixtures_of_every_writer)
{
    static const char *const chunked[] = {"logger_matio73.mat", "logger_h5py73.mat", "logger_h5py73_u8.mat",
                                          "logger_h5py73_old.mat"};
    static const char *const whole[] = {"logger_matio5.mat", "logger_matio7.mat", "logger_scipy5.mat"};
    for (size_t part = 1; part <= 4; part += 3)
        for (size_t f = 0; f < sizeof chunked / sizeof *chunked; f++) {
            char *path = fixture(chunked[f]);
            cr_assert(same_in_parts(path, part), "%s", path);
            rb_free(path);
        }
    for (size_t f = 0; f < sizeof whole / sizeof *whole; f++) {
        char *path = fixture(whole[f]);
        cr_assert_not(same_in_parts(path, 2), "%s: v5 is read whole", path);
        rb_free(path);
    }
}

/* The roboest .h5 layout (rb_log_write's and h5py's) and roboest's own v7.3 output are read in parts. */
Test(io_chunked, roboest_h5_and_transposed_groups)
{
    rb_log *log = read_ok("logger_matio73.mat");
    char *out = rb_asprintf("%s/chunked_%d.h5", RB_BUILD, (int)getpid());
    rb_err err;
    rb_write_opts o = {RB_OUT_H5, true, NULL};
    cr_assert_eq(rb_log_write(log, out, &o, &err), RB_OK, "%s", err.msg);
    cr_assert(same_in_parts(out, 2));
    o.format = RB_OUT_MAT73;
    cr_assert_eq(rb_log_write(log, out, &o, &err), RB_OK, "%s", err.msg);
    cr_assert(same_in_parts(out, 3));
    remove(out);
    rb_free(out);
    rb_log_free(log);
    char *path = fixture("roboest.h5"); /* h5py's, with a channel of no samples */
    cr_assert(same_in_parts(path, 2));
    rb_free(path);
}

Test(io_chunked, a_log_read_whole_says_what_it_needs_against_the_limit)
{
    char *path = fixture("logger_matio7.mat");
    rb_log_source *src = NULL;
    rb_err err;
    cr_assert_eq(rb_log_source_open(path, 64, &src, &err), RB_EINPUT);
    cr_assert_null(src);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
    cr_assert(strstr(err.msg, "must fit in memory"), "%s", err.msg);
    cr_assert(strstr(err.msg, "MiB"), "%s", err.msg);
    /* under a limit it fits: read whole */
    cr_assert_eq(rb_log_source_open(path, 1 << 20, &src, &err), RB_OK, "%s", err.msg);
    rb_log_source_free(src);
    rb_free(path);
    /* a chunked layout opens whatever the limit */
    path = fixture("logger_matio73.mat");
    cr_assert_eq(rb_log_source_open(path, 64, &src, &err), RB_OK, "%s", err.msg);
    cr_assert(rb_log_source_chunked(src));
    cr_assert_null(rb_log_source_log(src)->channels[0].data);
    size_t T = rb_log_source_log(src)->channels[0].n_samples;
    cr_assert_eq(rb_log_source_read(src, 0, T - 1, 2, NULL, NULL, &err), RB_EINVAL);
    rb_log_source_free(src);
    rb_free(path);
}
