/* Helpers for the joint-torque stage tests (test_estimators_torque*.c): logs recorded from the simulation
 * engine's truth (sim.h) with noise added where a test says so, the arm scenario, and running pipelines on them.
 * Implemented in test_estimators_torque_support.c. */
#ifndef ROBOEST_TEST_TORQUE_SUPPORT_H
#define ROBOEST_TEST_TORQUE_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/dynamics.h"
#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/sim.h"

#define ARM_URDF RB_SOURCE "/datasets/arm_2ft.urdf"
#define HUMANOID_URDF RB_SOURCE "/datasets/humanoid_lower_body.urdf"

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

/* Run the scenario to the end, recording every sample; then the log channels (noise from ns added):
 *   q, dq, ddq, current, tau_j, tau_m, tau_f (n, joint names), friction (tau_f + noise), ft/<sensor> (6, every
 *   model FT sensor, its convention; the first with ft_offset), acc/<frame>, gyro/<frame> (3, the scenario's
 *   frames), push (6 per push, MIXED) when there are pushes. */
void sim_record(const rb_sim_scenario *sc, const noise_spec *ns, sim_rec *r);
void rec_free(sim_rec *r);

/* The arm_2ft model on a pole: PD + gravity compensation, at rest at t = 0, chirps from 0.3 s, rotor inertias and
 * friction as configs/scenarios/arm_pole.json; push: a push at the wrist from 1.0 s to 1.6 s. With elbow_step != 0
 * the elbow's reference is 0.4 rad + a step of elbow_step rad at step_time instead of its chirp. The recorder owns
 * the model (r->model). */
void record_arm_step(double duration, bool push, double elbow_step, double step_time, const noise_spec *ns, sim_rec *r);
void record_arm(double duration, bool push, const noise_spec *ns, sim_rec *r);

/* A registry with every built-in stage. */
rb_registry *registry(void);
/* The arm's model, clock and signals (q, dq, ddq, cur, fric, ft, acc, gyro) for a pipeline's text. */
extern const char ARM_SIGNALS[];
/* Run a pipeline (text) on a log; the result for rb_run_result_signal. */
rb_run_result *run_text(const char *text, const rb_log *log);
/* The run's error for a pipeline expected to fail at load or at run: returns the status, message in err. */
int run_error(const char *text, const rb_log *log, rb_err *err);
/* A signal of a run (asserted present, of that width). */
const double *run_signal(const rb_run_result *res, const char *name, size_t width);
/* RMSE of element i (all: SIZE_MAX) of est against ref (both T x w) over samples [k0, k1). */
double rmse(const double *est, const double *ref, size_t w, size_t i, size_t k0, size_t k1);
double max_err(const double *est, const double *ref, size_t w, size_t k0, size_t k1);

#endif
