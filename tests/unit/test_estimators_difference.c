/* The difference stage: y = a - b - offset element by element, b optional, widths checked, names from a. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/estimators.h"

static int create(const rb_port *a, const rb_port *b, const double *offset, size_t n_off, rb_port *out, void **state,
                  rb_err *err)
{
    rb_param_value v = {.numbers = (double *)offset, .count = n_off};
    rb_params params = {&rb_stage_difference, &v};
    rb_port in[2] = {*a, *b};
    rb_stage_setup setup = {"diff", &params, in, out, 0.001, 3, NULL, NULL, "."};
    return rb_stage_difference.create(&setup, state, err);
}

Test(difference, subtracts_b_and_the_offset_per_element)
{
    const char *names[3] = {"x", "y", "z"}, *units[3] = {"N", "N", "N m"};
    rb_port a = {3, names, units}, b = {3, NULL, NULL}, out[1];
    void *st;
    rb_err err;
    cr_assert_eq(create(&a, &b, (const double[]){1, 2, 3}, 3, out, &st, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(out[0].width, 3);
    cr_assert_str_eq(out[0].names[2], "z");
    cr_assert_str_eq(out[0].units[2], "N m");
    double xa[3] = {10, 20, 30}, xb[3] = {0.5, -1, 4}, y[3];
    const double *in[2] = {xa, xb};
    double *o[1] = {y};
    test_alloc_count_init();
    long before = test_alloc_count;
    test_alloc_counting = 1;
    int rc = rb_stage_difference.step(st, 0, 0.0, in, o, &err);
    test_alloc_counting = 0;
    cr_assert_eq(rc, RB_OK);
    cr_assert_eq(test_alloc_count, before, "step allocates nothing");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(y[i], xa[i] - xb[i] - (i + 1), "element %d", i);
    rb_stage_difference.destroy(st);
}

Test(difference, b_unwired_and_one_offset_for_all)
{
    rb_port a = {2, NULL, NULL}, b = {0, NULL, NULL}, out[1];
    void *st;
    rb_err err;
    cr_assert_eq(create(&a, &b, (const double[]){0.25}, 1, out, &st, &err), RB_OK, "%s", err.msg);
    double xa[2] = {1, -1}, y[2];
    const double *in[2] = {xa, NULL};
    double *o[1] = {y};
    cr_assert_eq(rb_stage_difference.step(st, 0, 0.0, in, o, &err), RB_OK);
    cr_assert_eq(y[0], 0.75);
    cr_assert_eq(y[1], -1.25);
    rb_stage_difference.destroy(st);
}

Test(difference, rejects_mismatched_widths_and_offsets)
{
    rb_port a = {2, NULL, NULL}, b = {3, NULL, NULL}, out[1];
    void *st = NULL;
    rb_err err;
    cr_assert_eq(create(&a, &b, (const double[]){0}, 1, out, &st, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "same width"), "%s", err.msg);
    b.width = 2;
    cr_assert_eq(create(&a, &b, (const double[]){0, 1, 2}, 3, out, &st, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "offset has 3 values"), "%s", err.msg);
}
