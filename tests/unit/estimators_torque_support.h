/* The recorded arm runs and pipeline helpers of test_estimators_torque.c, shared with test_estimators_torque_runs.c. */
#ifndef ROBOEST_TEST_ESTIMATORS_TORQUE_SUPPORT_H
#define ROBOEST_TEST_ESTIMATORS_TORQUE_SUPPORT_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>

#include "roboest/dynamics.h"
#include "roboest/pipeline.h"
#include "roboest/sim.h"

#define ARM_URDF RB_SOURCE "/datasets/arm_2ft.urdf"

/* Noise added to the recorded channels (standard deviations; 0: exact), seeded. */
typedef struct noise_spec {
    double q, dq, current, ft_force, ft_moment, acc, gyro, friction;
    double ft_offset[6]; /* added to the first FT sensor's readings (the start-up offset) */
    unsigned long seed;
} noise_spec;

/* The recorded truth of a run: channels in a log (for pipelines) and arrays kept for direct checks. */
typedef struct sim_rec {
    rb_log *log;
    rb_model *model; /* owned when the recorder loaded it */
    size_t T, n, nq, nv, n_ft, n_frames, n_push, n_contacts;
    int *frames;
    double dt;
    double *q, *nu, *nud, *tau_j, *tau_m, *tau_f, *cur, *ft, *facc, *fvel, *push, *cw;
    rb_xform *base_pose;
} sim_rec;

/* The arm on a pole (its scenario in test_estimators_torque.c) run for `duration` s and recorded, with the forearm
 * push when `push`; with elbow_step != 0 the elbow's reference is 0.4 rad + a step of elbow_step rad at step_time
 * instead of its chirp. ns: noise (NULL: none). Free with rec_free. */
void record_arm_step(double duration, bool push, double elbow_step, double step_time, const noise_spec *ns, sim_rec *r);
void record_arm(double duration, bool push, const noise_spec *ns, sim_rec *r);
void rec_free(sim_rec *r);
/* Sensor noise of the realistic runs. */
extern const noise_spec ARM_NOISE;

/* ukf_torque's actuator parameters for the arm (k_t, gear_ratio, motor_inertia). */
extern const char ARM_UKF_ACTUATORS[];
/* The arm's pipeline keys before "stages": model, clock, signals. */
extern const char ARM_SIGNALS[];
/* Pipeline texts (printf formats) with an rnea_torque / a ukf_torque stage on the arm. */
extern const char RNEA_PIPE[];
extern const char UKF_PIPE[];

/* A registry with the estimators (caller frees with rb_registry_free). */
rb_registry *registry(void);
/* Run a pipeline (text) on a log; the result for rb_run_result_signal. */
rb_run_result *run_text(const char *text, const rb_log *log);
/* RMSE of element i (all: SIZE_MAX) of est against ref (both T x w) over samples [k0, k1). */
double rmse(const double *est, const double *ref, size_t w, size_t i, size_t k0, size_t k1);
/* Largest absolute error of est against ref (both T x w) over samples [k0, k1). */
double max_err(const double *est, const double *ref, size_t w, size_t k0, size_t k1);

/* The run's signal `name`, checked to be `width` wide (static: a global `signal` would replace the C library's). */
static inline const double *signal(const rb_run_result *res, const char *name, size_t width)
{
    const rb_run_signal *s = rb_run_result_signal(res, name);
    cr_assert_not_null(s, "signal %s", name);
    cr_assert_eq(s->width, width, "signal %s: width %zu, expected %zu", name, s->width, width);
    return s->data;
}

#endif
