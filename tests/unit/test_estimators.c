/* Built-in stages against analytic answers, driven through the stage interface directly. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"

/* One single-input, single-output stage with its parameters filled in like the loader does. */
typedef struct harness {
    const rb_stage_type *type;
    rb_param_value values[4];
    rb_params params;
    rb_port in, out;
    void *state;
} harness;

static void harness_create(harness *h, const rb_stage_type *type, const double *numbers, size_t width,
                           const char *const *names, const char *const *units, const double *time, size_t T, double dt)
{
    memset(h, 0, sizeof *h);
    h->type = type;
    for (size_t i = 0; i < type->n_params; i++)
        h->values[i].number = numbers[i];
    h->params = (rb_params){type, h->values};
    h->in = (rb_port){width, names, units};
    rb_stage_setup setup = {"under_test", &h->params, &h->in, &h->out, dt, T, time, NULL, "."};
    rb_err err;
    cr_assert_eq(type->create(&setup, &h->state, &err), RB_OK, "%s", err.msg);
}

static void harness_step(harness *h, size_t k, double t, const double *x, double *y)
{
    rb_err err;
    const double *in[1] = {x};
    double *out[1] = {y};
    cr_assert_eq(h->type->step(h->state, k, t, in, out, &err), RB_OK);
}

static void harness_destroy(harness *h)
{
    if (h->type->finish)
        cr_assert_eq(h->type->finish(h->state, NULL), RB_OK);
    h->type->destroy(h->state);
}

Test(estimators, lowpass_step_response_is_the_exact_exponential)
{
    const double fc = 3.0, dt = 0.004, tau = 1.0 / (2 * M_PI * fc);
    const double a = 1.0 - exp(-2 * M_PI * fc * dt);
    const char *names[] = {"step", "scaled"}, *units[] = {"rad", "N"};
    harness h;
    harness_create(&h, &rb_stage_lowpass, (double[]){fc}, 2, names, units, NULL, 0, dt);
    cr_assert_eq(h.out.width, 2);
    cr_assert_str_eq(h.out.names[1], "scaled", "element names copied from the input");
    cr_assert_str_eq(h.out.units[0], "rad");
    double y[2];
    harness_step(&h, 0, 0.0, (double[]){0.0, 5.0}, y);
    cr_assert_eq(y[0], 0.0, "y_0 = x_0");
    cr_assert_eq(y[1], 5.0, "y_0 = x_0");
    for (size_t k = 1; k <= 1000; k++) {
        double t = (double)k * dt;
        harness_step(&h, k, t, (double[]){1.0, -2.0}, y);
        double discrete = 1.0 - pow(1.0 - a, (double)k);
        cr_assert(fabs(y[0] - discrete) <= 1e-12, "k %zu: %.17g vs 1-(1-a)^k %.17g", k, y[0], discrete);
        /* ZOH discretization: at the sample instants the step response is the continuous one. */
        cr_assert(fabs(y[0] - (1.0 - exp(-t / tau))) <= 1e-12, "k %zu: %.17g vs 1-exp(-t/tau)", k, y[0]);
        cr_assert(fabs(y[1] - (-2.0 + 7.0 * exp(-t / tau))) <= 1e-11);
    }
    harness_destroy(&h);
}

Test(estimators, lowpass_rejects_a_bad_period)
{
    rb_param_value v = {.number = 5.0};
    rb_params params = {&rb_stage_lowpass, &v};
    rb_port in = {1, NULL, NULL}, out = {0};
    rb_stage_setup setup = {"lp", &params, &in, &out, NAN, 3, NULL, NULL, "."};
    void *state = NULL;
    rb_err err;
    cr_assert_eq(rb_stage_lowpass.create(&setup, &state, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "stage lp"), "%s", err.msg);
    cr_assert_null(state);
}

/* Jittered, non-uniform times around a 10 ms period. */
static double jittered(size_t k) { return 0.3 + 0.01 * (double)k + 0.003 * sin(1.7 * (double)k); }

Test(estimators, finite_difference_is_exact_for_a_ramp_on_any_clock)
{
    const char *units[] = {"m"};
    harness h;
    harness_create(&h, &rb_stage_finite_difference, (double[]){1}, 1, NULL, units, NULL, 0, 0.01);
    cr_assert_str_eq(h.out.units[0], "m/s");
    cr_assert_null(h.out.names, "names pass through from the input (NULL here)");
    double y;
    for (size_t k = 0; k < 500; k++) {
        double t = jittered(k);
        harness_step(&h, k, t, (double[]){4.5 * t - 2.0}, &y);
        if (k == 0)
            cr_assert_eq(y, 0.0, "no difference before the second sample");
        else
            cr_assert(fabs(y - 4.5) <= 1e-9, "k %zu: %.17g", k, y);
    }
    harness_destroy(&h);
}

Test(estimators, finite_difference_of_a_sinusoid_within_the_truncation_bound)
{
    const double w = 2 * M_PI * 1.5, h_dt = 0.002;
    harness h;
    harness_create(&h, &rb_stage_finite_difference, (double[]){1}, 1, NULL, NULL, NULL, 0, h_dt);
    cr_assert_str_eq(h.out.units[0], "", "unknown unit stays unknown");
    double y, worst = 0;
    for (size_t k = 0; k < 2000; k++) {
        double t = (double)k * h_dt;
        harness_step(&h, k, t, (double[]){sin(w * t)}, &y);
        if (k == 0)
            continue;
        /* backward difference: |error| <= h/2 max|x''| = h w^2 / 2 */
        double err = fabs(y - w * cos(w * t));
        cr_assert(err <= h_dt * w * w / 2 + 1e-9, "k %zu: error %g", k, err);
        worst = fmax(worst, err);
    }
    cr_assert(worst > h_dt * w * w / 8, "the bound is not vacuous: worst error %g", worst);
    harness_destroy(&h);
}

Test(estimators, second_derivative_three_point_formula)
{
    /* exact for a parabola, on a non-uniform clock too */
    harness h;
    const char *units[] = {"rad"};
    harness_create(&h, &rb_stage_finite_difference, (double[]){2}, 1, NULL, units, NULL, 0, 0.01);
    cr_assert_str_eq(h.out.units[0], "rad/s^2");
    double y;
    for (size_t k = 0; k < 300; k++) {
        double t = jittered(k);
        harness_step(&h, k, t, (double[]){-3.0 * t * t + t + 7.0}, &y);
        if (k < 2)
            cr_assert_eq(y, 0.0, "k %zu: zero until three samples exist", k);
        else
            cr_assert(fabs(y + 6.0) <= 1e-6, "k %zu: %.17g", k, y);
    }
    harness_destroy(&h);

    /* a cubic on a uniform clock: (x_k - 2 x_{k-1} + x_{k-2}) / h^2 = 6 t_k - 6 h exactly */
    const double dt = 0.01;
    harness_create(&h, &rb_stage_finite_difference, (double[]){2}, 1, NULL, NULL, NULL, 0, dt);
    for (size_t k = 0; k < 200; k++) {
        double t = (double)k * dt;
        harness_step(&h, k, t, (double[]){t * t * t}, &y);
        if (k >= 2)
            cr_assert(fabs(y - (6 * t - 6 * dt)) <= 1e-8, "k %zu: %.17g vs %.17g", k, y, 6 * t - 6 * dt);
    }
    harness_destroy(&h);

    /* a sinusoid: |error| <= h max|x'''| + h^2 max|x''''| */
    const double w = 2 * M_PI;
    harness_create(&h, &rb_stage_finite_difference, (double[]){2}, 1, NULL, NULL, NULL, 0, 0.001);
    for (size_t k = 0; k < 1000; k++) {
        double t = (double)k * 0.001;
        harness_step(&h, k, t, (double[]){sin(w * t)}, &y);
        if (k >= 2)
            cr_assert(fabs(y + w * w * sin(w * t)) <= 0.001 * pow(w, 3) + 1e-6 * pow(w, 4), "k %zu", k);
    }
    harness_destroy(&h);
}

Test(estimators, registered_with_schemas)
{
    rb_registry *reg;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    const rb_stage_type *lp = rb_registry_find(reg, "lowpass"), *fd = rb_registry_find(reg, "finite_difference");
    cr_assert(lp && fd);
    cr_assert(lp->params[0].required);
    cr_assert_str_eq(fd->params[0].name, "order");
    cr_assert_eq(fd->params[0].def_number, 1.0);
    cr_assert_str_eq(fd->outputs[0], "dx");
    rb_registry_free(reg);
}
