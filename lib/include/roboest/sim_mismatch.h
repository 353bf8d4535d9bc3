/*
 * roboest sim: a plant that differs from its model, and repeated random contacts (lib/sim/mismatch.c). Included by
 * roboest/sim.h. The estimators and the controller keep the model (the URDF, the friction the network learned, the
 * sensors' nominal calibration); the plant and its sensors get the differences below, drawn once per run from the
 * scenario's seed on a stream of their own (seed ^ RB_SIM_MISMATCH_STREAM): a scenario without them draws nothing
 * and gives the same bytes as before.
 *
 * Mismatch (scenario key "mismatch", configs/README.md and configs/closed_loop/README.md say where every default
 * comes from). Every magnitude is multiplied by `level` (0: none, 1: the values as given):
 *   inertia   per body with mass > 0 (payload bodies keep their payload): m' = m (1 + mass_sd z), c' = c +
 *             com_sd [z z z] (m, body frame), I_c' = I_c (1 + inertia_sd z) (the rotational inertia about the CoM,
 *             scaled as a whole: stays physical), z ~ N(0, 1) clipped to [-2.5, 2.5], factors floored at 0.2;
 *   friction  per joint (non-stiction kinds): tau_F' = k_j (1 + a_j sgn(s_dot)) (1 + temp_coeff (temp_offset +
 *             warmup t)) tau_F(s_dot) + load |tau_m| tanh(s_dot / load_v), k_j = 1 + scale_sd z (floored at 0.2),
 *             a_j = asymmetry z' (clipped to +-0.9): the Stribeck curve the presets give, scaled per joint (wear),
 *             direction-dependent, temperature-dependent (the gear warming from temp_offset K over its training
 *             temperature at warmup K/s) and load-dependent (a Coulomb part growing with the transmitted torque);
 *   delay     command: the current the driver applies is the one asked command_delay samples before (a bus
 *             delay on top of the loop's one sample; round(level x samples));
 *   ft        each FT sensor's offset drifts linearly: + rate t per axis, rate ~ N(0, drift_force^2) (N/s) on
 *             forces and N(0, drift_torque^2) (N m/s) on moments (scenario runs: the sensor channels, not the truth);
 *   current   each joint's current sensor reads an offset ~ N(0, current_offset^2) (A), its noise grows to
 *             sqrt(sd^2 + current_noise^2) and its step to max(step, current_resolution) (the driver's shunt and
 *             ADC; scenario runs: the motor_currents channel);
 *   delay     measurement: every sensor channel's value reaches the log round(measurement x rate) of its own
 *             samples late (the control bus; stamped on arrival; a 100 Hz IMU under 5 ms keeps its timing);
 *   elastic   a series-elastic joint (the flexspline): the rotor (inertia R^2 J_m at the joint, then left out of
 *             the link's mass matrix) drives the link through tau_s = K (theta - s) + D (theta_dot - s_dot), theta
 *             the rotor angle at the joint's scale: R^2 J_m theta_ddot = tau_m - tau_s. The spring is implicit
 *             over the step (its torque at the mean of the sample's and the predicted end windup, the damper at
 *             the end, the links' response from the sample's mass matrix and contacts), the rotor beside the link
 *             (semi-implicit Euler, or exact under the step's constant torque with RK4): stable at any stiffness,
 *             a rotor-link mode the step does not resolve is damped (about omega dt / 4 of critical with Euler,
 *             omega dt / 2 with RK4). The motor encoders read R theta; joints without a rotor inertia (J_m = 0)
 *             stay rigid. Realistic preset: 6.7e4 N m/rad, 7.5 N m s/rad (configs/closed_loop/README.md). The
 *             level scales the compliance: K / level, D / sqrt(level)
 *             (the same damping ratio; level 0: rigid).
 * Random contacts (scenario key "random_contacts"): a Poisson process of `rate` contacts per second over [from,
 * until), each at a frame drawn uniformly from `frames`, a half sine of duration uniform in [duration_min,
 * duration_max] and peak force uniform in [force_min, force_max] in a random horizontal direction (no moment),
 * appended to the pushes after the random pushes (truth/pushes).
 */
#ifndef ROBOEST_SIM_MISMATCH_H
#define ROBOEST_SIM_MISMATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roboest/core.h"
#include "roboest/model.h"

RB_API_BEGIN

#define RB_SIM_MISMATCH_STREAM 0x6d69736d61746368ULL /* "mismatch": the draws' own random stream */
#define RB_SIM_CONTACTS_STREAM 0x636f6e7461637473ULL /* "contacts" */

typedef struct rb_sim_mismatch {
    bool enabled;
    double level;                                 /* multiplies every magnitude below */
    double mass_sd, com_sd, inertia_sd;           /* relative, m, relative */
    double friction_scale_sd, friction_asymmetry; /* relative */
    double friction_load, friction_load_v;        /* fraction of |tau_m|; rad/s */
    double friction_temp_coeff;                   /* 1/K */
    double friction_temp_offset, friction_warmup; /* K, K/s */
    double command_delay;                         /* samples (rounded after the level) */
    double ft_drift_force, ft_drift_torque;       /* N/s, N m/s */
    double current_offset;                        /* A */
    double elastic_stiffness, elastic_damping;    /* N m/rad, N m s/rad at the joint; 0: rigid */
    double measurement_delay;                     /* s (per channel: rounded to its own samples) */
    double current_resolution, current_noise;     /* A: the driver's ADC step, noise sd */
} rb_sim_mismatch;

/* The "realistic" preset (the documented defaults, level 1). */
void rb_sim_mismatch_realistic(rb_sim_mismatch *mm);

/* One run's draws (rb_sim_mismatch_draw; free with rb_sim_mismatch_draws_free). */
typedef struct rb_sim_mismatch_draws {
    size_t n_bodies, n_dofs, n_ft;
    double *body_pi;                /* 10 per body: the plant's parameters (the model's where not perturbed) */
    unsigned char *changed;         /* per body: perturbed */
    double *fric_scale, *fric_asym; /* per joint */
    double *ft_rate;                /* 6 per FT sensor */
    double *current_offset;         /* per joint */
    size_t command_delay;           /* samples */
    double stiffness, damping;      /* elasticity after the level (0: rigid) */
    double measurement_delay;       /* s, after the level */
    double current_resolution, current_noise; /* A, after the level */
} rb_sim_mismatch_draws;

/* Draw a run's mismatch from `seed` (deterministic: the same arguments give the same draws; independent of every
 * other random stream of the scenario). RB_ECONFIG (negative magnitudes, non-finite), RB_ENOMEM. */
int rb_sim_mismatch_draw(const rb_sim_mismatch *mm, const rb_model *m, uint64_t seed, rb_sim_mismatch_draws *d,
                         rb_err *err);
void rb_sim_mismatch_draws_free(rb_sim_mismatch_draws *d);
/* The friction factor law: the plant's friction from the model's tau_f at joint velocity v, motor torque tau_m,
 * time t (level applied by the caller through the draws and the scaled magnitudes). */
double rb_sim_mismatch_friction(const rb_sim_mismatch *mm, double scale, double asym, double tau_f, double v,
                                double tau_m, double t);

typedef struct rb_sim_random_contacts {
    const int *frames; /* n_frames model frames (borrowed) */
    size_t n_frames;
    double rate;                       /* 1/s; 0: none */
    double from, until;                /* s (until INFINITY: the run's end) */
    double duration_min, duration_max; /* s */
    double force_min, force_max;       /* N */
} rb_sim_random_contacts;

RB_API_END

#endif
