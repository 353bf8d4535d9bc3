/* Real-time factor of the simulation engine at 1 kHz on one core:
 *   - the ergoCub right leg (6 joints) on a pole, torque control with friction and actuators, its IMU and FT
 *     sensor frames exposed as a real scenario does, Euler and RK4;
 *   - the floating-base humanoid lower body standing on both soles (two 6D contacts, Baumgarte), PD with
 *     contact-consistent gravity compensation and the sideways CoM sinusoid, Euler and RK4;
 * each with the whole truth computed at every sample (the default) and with the truth on demand as a logger uses
 * it (FT wrenches and energy at 1 kHz, frame motion at 100 Hz), beside the figures of the engine before the
 * speed-ups.
 * Usage: bench_sim [source folder] [shared folder] [label filter] [repeats] (defaults: RB_SOURCE / RB_SHARED or
 *        "." / "../shared"; the filter runs only the configurations whose label contains it; each configuration
 *        runs `repeats` times, 5 by default, and the best run is reported). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"

/* us per step of the engine before the speed-ups (commit ecd5afd with this benchmark), best of 3 x 3 runs,
 * measured interleaved with this version on the machine the speed-ups were made on (2 shared cores, quiet).
 * bench_sim of ecd5afd computes the whole truth at every sample: the logger configurations are compared with
 * their whole-truth configuration. Figures of another machine are not comparable with these. */
#define BEFORE_LEG_EULER 5.42
#define BEFORE_LEG_EULER_NO_FRAMES 4.61
#define BEFORE_LEG_RK4 11.29
#define BEFORE_STANDING_EULER 17.29
#define BEFORE_BALANCE_EULER 22.90
#define BEFORE_BALANCE_RK4 58.24

static const char *only; /* run only the configurations whose label contains this (argv[3]) */

/* A logger's use of the truth with scenario->truth_on_demand: the FT wrenches, the frame motion and the energy
 * every `ft`, `frames`, `energy` steps (0: never). */
typedef struct demand {
    unsigned ft, frames, energy;
} demand;

/* One run of the scenario to its end; wall seconds in *wall. */
static int run_once(const char *label, const rb_sim_scenario *sc, const demand *d, double *wall)
{
    rb_sim *s = NULL;
    rb_err err;
    if (rb_sim_init(sc, &s, &err) < 0) {
        fprintf(stderr, "%s: %s\n", label, err.msg);
        return 1;
    }
    double t0 = rb_monotonic_seconds();
    int rc = 1;
    for (unsigned k = 0; rc == 1; k++) {
        if (sc->truth_on_demand) {
            unsigned parts = (d->ft && k % d->ft == 0 ? RB_SIM_TRUTH_FT : 0u) |
                             (d->frames && k % d->frames == 0 ? RB_SIM_TRUTH_FRAMES : 0u) |
                             (d->energy && k % d->energy == 0 ? RB_SIM_TRUTH_ENERGY : 0u);
            if ((rc = rb_sim_truth_compute(s, parts, &err)) < 0)
                break;
        }
        rc = rb_sim_step(s, &err);
    }
    *wall = rb_monotonic_seconds() - t0;
    rb_sim_finish(s);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", label, err.msg);
        return 1;
    }
    return 0;
}

/* The best of `repeats` runs (argv[4], default 5; the machine is shared: the minimum is the engine's cost, the
 * rest is load), beside the figure of the engine before the speed-ups (before_us: us per step of the same
 * configuration at commit ecd5afd on the same machine, measured interleaved with this one; 0: none). */
static int repeats = 5;

static int run(const char *label, const rb_sim_scenario *sc, const demand *d, double before_us)
{
    if (only && !strstr(label, only))
        return 0;
    double best = INFINITY, wall;
    for (int r = 0; r < repeats; r++) {
        if (run_once(label, sc, d, &wall))
            return 1;
        best = wall < best ? wall : best;
    }
    double steps = ceil(sc->duration / sc->dt - 1e-9), us = 1e6 * best / steps;
    printf("%-66s %6.0f  %7.1f x %7.2f us", label, steps, 1e6 * sc->dt / us, us);
    if (before_us > 0)
        printf("   %7.1f x %7.2f us   %5.2f\n", 1e6 * sc->dt / before_us, before_us, before_us / us);
    else
        printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
#ifdef RB_SOURCE
    const char *src = argc > 1 ? argv[1] : RB_SOURCE;
#else
    const char *src = argc > 1 ? argv[1] : ".";
#endif
#ifdef RB_SHARED
    const char *shared = argc > 2 ? argv[2] : RB_SHARED;
#else
    const char *shared = argc > 2 ? argv[2] : "../shared";
#endif
    only = argc > 3 && argv[3][0] ? argv[3] : NULL;
    repeats = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : 5;
    char path[2048];
    rb_err err;
    int fails = 0;

    /* ergoCub right leg on a pole */
    const char *leg[6] = {"r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"};
    rb_model_opts o = {0};
    o.joints = leg, o.n_joints = 6, o.base = "root_link";
    snprintf(path, sizeof path, "%s/models/ergoCubSN000.urdf", shared);
    rb_model *m = NULL;
    if (rb_model_load_urdf(path, &o, &m, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    rb_sim_ref ref[6];
    rb_sim_joint_ctrl g[6];
    rb_sim_actuator act[6];
    rb_friction_model fr[6];
    for (int j = 0; j < 6; j++) {
        ref[j] = (rb_sim_ref){.kind = RB_REF_SINE, .amplitude = 0.2, .freq = 0.3 + 0.1 * j};
        g[j] = (rb_sim_joint_ctrl){.kp = 400, .kd = 40, .kp_tau = 0.5, .ki_tau = 5};
        act[j] = (rb_sim_actuator){.k_t = 0.05, .R = -100, .J_m = 1e-5, .i_max = 20};
        rb_friction_preset("ergocub_r_knee", &fr[j], &err);
    }
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 20.0, sc.seed = 1, sc.refs = ref, sc.gains = g;
    sc.actuators = act, sc.friction = fr, sc.ctrl = RB_CTRL_TORQUE;
    /* the sensor frames a real scenario exposes: every IMU's and every FT sensor's (once each) */
    int frames[64];
    size_t nf = 0;
    for (size_t k = 0; k < m->n_imu + m->n_ft && nf < 64; k++) {
        int f = k < m->n_imu ? m->imu[k].frame : m->ft[k - m->n_imu].frame, seen = 0;
        for (size_t i = 0; i < nf; i++)
            seen |= frames[i] == f;
        if (!seen)
            frames[nf++] = f;
    }
    sc.frames = frames, sc.n_frames = nf;
    static const int no_frames[1] = {0};
    /* a logger sampling the FT sensors, the truth (energy) at 1 kHz and the IMUs at 100 Hz */
    const demand all = {0, 0, 0}, logger = {1, 10, 1};
    printf("ergoCub leg model: %zu bodies, %zu frames, %zu IMUs, %zu FTs; %zu sensor frames exposed\n", m->n_bodies,
           m->n_frames, m->n_imu, m->n_ft, nf);
    printf("%-66s %6s  %20s   %20s   %5s\n", "configuration (dt = 1 ms)", "steps", "now", "before (ecd5afd)", "gain");
    fails += run("ergoCub right leg (6 joints, fixed), torque ctrl, Euler", &sc, &all, BEFORE_LEG_EULER);
    sc.truth_on_demand = true;
    fails += run("ergoCub right leg, torque ctrl, Euler, truth as a logger uses it", &sc, &logger, BEFORE_LEG_EULER);
    sc.truth_on_demand = false;
    sc.frames = no_frames, sc.n_frames = 0;
    fails += run("ergoCub right leg, torque ctrl, Euler, no sensor frames", &sc, &all, BEFORE_LEG_EULER_NO_FRAMES);
    sc.frames = frames, sc.n_frames = nf;
    sc.method = RB_SIM_RK4;
    fails += run("ergoCub right leg (6 joints, fixed), torque ctrl, RK4", &sc, &all, BEFORE_LEG_RK4);
    sc.truth_on_demand = true;
    fails += run("ergoCub right leg, torque ctrl, RK4, truth as a logger uses it", &sc, &logger, BEFORE_LEG_RK4);
    rb_model_free(m);

    /* humanoid lower body standing on both soles */
    rb_model_opts of = {0};
    of.floating = true;
    snprintf(path, sizeof path, "%s/datasets/humanoid_lower_body.urdf", src);
    if (rb_model_load_urdf(path, &of, &m, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double q0[64];
    rb_dyn_neutral(m, q0);
    q0[2] = 0.85;
    const char *bendj[6] = {"l_hip_pitch", "l_knee", "l_ankle_pitch", "r_hip_pitch", "r_knee", "r_ankle_pitch"};
    const double bend[6] = {0.3, -0.6, 0.3, 0.3, -0.6, 0.3};
    for (int k = 0; k < 6; k++)
        q0[7 + rb_model_dof_index(m, bendj[k])] = bend[k];
    rb_sim_contact c[2];
    for (int k = 0; k < 2; k++)
        c[k] = (rb_sim_contact){.frame = (int)rb_model_frame_index(m, k ? "r_sole" : "l_sole"),
                                .dim = 6,
                                .baumgarte_T = 0.02,
                                .initially_active = true};
    rb_sim_joint_ctrl gh[32];
    for (size_t j = 0; j < m->n_dofs; j++)
        gh[j] = (rb_sim_joint_ctrl){.kp = 600, .kd = 30};
    rb_sim_scenario sh = {0};
    sh.model = m, sh.dt = 1e-3, sh.duration = 10.0, sh.seed = 1, sh.q0 = q0, sh.contacts = c, sh.n_contacts = 2;
    sh.ctrl = RB_CTRL_PD, sh.gains = gh, sh.gravity_comp = true;
    fails += run("humanoid lower body, 2 foot contacts, standing, Euler", &sh, &all, BEFORE_STANDING_EULER);
    sh.balance = (rb_sim_balance){.enabled = true, .amplitude = 0.03, .freq = 0.5};
    fails += run("humanoid lower body, 2 foot contacts, CoM sine + IK, Euler", &sh, &all, BEFORE_BALANCE_EULER);
    sh.truth_on_demand = true;
    fails += run("humanoid, CoM sine + IK, Euler, truth as a logger uses it", &sh, &logger, BEFORE_BALANCE_EULER);
    sh.truth_on_demand = false;
    sh.method = RB_SIM_RK4;
    fails += run("humanoid lower body, 2 foot contacts, CoM sine + IK, RK4", &sh, &all, BEFORE_BALANCE_RK4);
    sh.truth_on_demand = true;
    fails += run("humanoid, CoM sine + IK, RK4, truth as a logger uses it", &sh, &logger, BEFORE_BALANCE_RK4);
    rb_model_free(m);
    return fails ? 1 : 0;
}
