/*
 * Expected contents of the reader fixtures (tests/fixtures/gen_matio.c and gen_fixtures.py write the
 * same numbers): channel k holds value(t, i) = 100000 k + 1000 t + i + 0.25 at time k + 0.01 t.
 * Shared by tests/unit/test_io_read*.c.
 */
#ifndef RB_TEST_IO_READ_EXPECT_H
#define RB_TEST_IO_READ_EXPECT_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/io.h"

static inline char *fixture(const char *name) { return rb_asprintf("%s/%s", RB_FIXTURES, name); }

static inline double logger_value(int k, size_t t, size_t i)
{
    return 100000.0 * k + 1000.0 * (double)t + (double)i + 0.25;
}

static inline double logger_time(int k, size_t t) { return k + 0.01 * (double)t; }

typedef struct expect_channel {
    const char *name;
    int k;
    size_t n, T;
    const char *const *names; /* NULL: "0", "1", ... */
    const char *const *units; /* NULL: "" */
} expect_channel;

static const char *const joint_names[3] = {"torso_pitch", "gelenk_\xc3\xa4",
                                           "kn\xe2\x82\xac"
                                           "e"};
static const char *const rad[3] = {"rad", "rad", "rad"};
static const char *const rad_s[3] = {"rad/s", "rad/s", "rad/s"};
static const char *const ft_names[6] = {"fx", "fy", "fz", "mx", "my", "mz"};
static const char *const ft_units[6] = {"N", "N", "N", "N m", "N m", "N m"};

static const expect_channel logger_channels[3] = {
    {"joints_state/positions", 1, 3, 5, joint_names, rad},
    {"joints_state/velocities", 2, 3, 4, joint_names, rad_s},
    {"FTs/l_leg_ft", 3, 6, 7, ft_names, ft_units},
};

static inline rb_log *read_ok(const char *name)
{
    char *path = fixture(name);
    rb_log *log = NULL;
    rb_err err;
    rb_err_clear(&err);
    int rc = rb_log_read(path, &log, &err);
    cr_assert_eq(rc, RB_OK, "%s: %s", name, err.msg);
    cr_assert_not_null(log);
    rb_free(path);
    return log;
}

/* Every value, time, name and unit of one channel. */
static inline void check_channel(const char *file, const rb_log *log, const expect_channel *e, bool integer_values)
{
    const rb_channel *ch = rb_log_find(log, e->name);
    cr_assert_not_null(ch, "%s: channel %s missing", file, e->name);
    cr_assert_eq(ch->n_samples, e->T, "%s: %s: T = %zu", file, e->name, ch->n_samples);
    cr_assert_eq(ch->n_elements, e->n, "%s: %s: n = %zu", file, e->name, ch->n_elements);
    for (size_t t = 0; t < e->T; t++) {
        cr_assert_eq(ch->time[t], logger_time(e->k, t), "%s: %s: time[%zu] = %.17g", file, e->name, t, ch->time[t]);
        for (size_t i = 0; i < e->n; i++) {
            double want = logger_value(e->k, t, i);
            if (integer_values)
                want = floor(want);
            cr_assert_eq(ch->data[t * e->n + i], want, "%s: %s: (t %zu, i %zu) = %.17g, want %.17g", file, e->name, t,
                         i, ch->data[t * e->n + i], want);
        }
    }
    for (size_t i = 0; i < e->n; i++) {
        char idx[32];
        snprintf(idx, sizeof idx, "%zu", i);
        cr_assert_str_eq(ch->element_names[i], e->names ? e->names[i] : idx, "%s: %s: name %zu", file, e->name, i);
        cr_assert_str_eq(ch->units[i], e->units ? e->units[i] : "", "%s: %s: unit %zu", file, e->name, i);
    }
}

/* The robot-logger fixture: three channels, empty ones skipped, root attributes. */
static inline void check_logger(const char *file, rb_log_format fmt)
{
    rb_log *log = read_ok(file);
    cr_assert_eq(log->format, fmt, "%s: format %s", file, rb_log_format_name(log->format));
    cr_assert_str_eq(log->root_name, "robot_logger_device");
    cr_assert_eq(log->n_channels, 3, "%s: %zu channels", file, log->n_channels);
    for (size_t c = 0; c < 3; c++)
        check_channel(file, log, &logger_channels[c], false);
    cr_assert_null(rb_log_find(log, "motors_state/currents"), "%s: the 0-sample channel is skipped", file);
    cr_assert_null(rb_log_find(log, "accelerometers"), "%s: the empty struct is skipped", file);
    cr_assert_str_eq(rb_log_get_attr(log, "yarp_robot_name"), "ergoCubSN001");
    cr_assert_str_eq(rb_log_get_attr(log, "description_list"), "torso_pitch,gelenk_\xc3\xa4,kn\xe2\x82\xac"
                                                               "e");
    rb_log_free(log);
}

/* Two logs hold the same channels (any order), values, times, names, units and attributes. */
static inline void check_same(const rb_log *a, const rb_log *b, const char *what)
{
    cr_assert_eq(a->n_channels, b->n_channels, "%s", what);
    for (size_t c = 0; c < a->n_channels; c++) {
        const rb_channel *x = &a->channels[c], *y = rb_log_find(b, x->name);
        cr_assert_not_null(y, "%s: %s", what, x->name);
        cr_assert_eq(x->n_samples, y->n_samples, "%s: %s", what, x->name);
        cr_assert_eq(x->n_elements, y->n_elements, "%s: %s", what, x->name);
        cr_assert_eq(memcmp(x->time, y->time, x->n_samples * sizeof(double)), 0, "%s: %s time", what, x->name);
        cr_assert_eq(memcmp(x->data, y->data, x->n_samples * x->n_elements * sizeof(double)), 0, "%s: %s data", what,
                     x->name);
        for (size_t i = 0; i < x->n_elements; i++) {
            cr_assert_str_eq(x->element_names[i], y->element_names[i], "%s: %s", what, x->name);
            cr_assert_str_eq(x->units[i], y->units[i], "%s: %s", what, x->name);
        }
    }
    cr_assert_eq(a->n_attrs, b->n_attrs, "%s: attributes", what);
    for (size_t k = 0; k < a->n_attrs; k++) {
        const char *v = rb_log_get_attr(b, a->attrs[k].key);
        cr_assert_not_null(v, "%s: attribute %s", what, a->attrs[k].key);
        cr_assert_str_eq(v, a->attrs[k].value, "%s: attribute %s", what, a->attrs[k].key);
    }
}

#endif
