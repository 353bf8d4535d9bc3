/* Real-time factor of the 12-DoF biped walking at 1 kHz (configs/scenarios/walk.json: datasets/walker_biped.urdf,
 * the thesis's gait over 10.6 s, PD with the inverse-dynamics feedforward, actuators, friction) on one core:
 *   - the engine alone (rb_sim_step), the whole truth at every sample;
 *   - the engine with the truth as a logger uses it (FT wrenches, the CoM and its motion at 1 kHz, the IMU frames at
 *     100 Hz);
 *   - the whole scenario run as `roboest simulate` does it (rb_scenario_run: every sensor and truth channel
 *     recorded into a log, without the file writing).
 * Plus the set-up (rb_sim_init: the preview controller's Riccati solve and the CoM plan). Target: at least 5x real
 * time.
 * Usage: bench_walk [source folder] [repeats] (defaults: RB_SOURCE or "."; 5: the best run is reported). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "roboest/sim.h"

/* One engine run to the scenario's end (logger: the truth on demand at a logger's rates); wall seconds. */
static int engine_once(const rb_sim_scenario *base, bool logger, double *wall, double *init)
{
    rb_sim_scenario sc = *base;
    sc.truth_on_demand = logger;
    rb_sim *s = NULL;
    rb_err err;
    double t0 = rb_monotonic_seconds();
    if (rb_sim_init(&sc, &s, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double t1 = rb_monotonic_seconds();
    int rc = 1;
    for (unsigned k = 0; rc == 1; k++) {
        if (logger) {
            unsigned parts = RB_SIM_TRUTH_FT | RB_SIM_TRUTH_COM_MOTION | (k % 10 == 0 ? RB_SIM_TRUTH_FRAMES : 0u);
            if ((rc = rb_sim_truth_compute(s, parts, &err)) < 0)
                break;
        }
        rc = rb_sim_step(s, &err);
    }
    *wall = rb_monotonic_seconds() - t1;
    *init = t1 - t0;
    rb_sim_finish(s);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    return 0;
}

static int run_once(const rb_scenario *s, double *wall)
{
    rb_log *log = NULL;
    rb_err err;
    double t0 = rb_monotonic_seconds();
    int rc = rb_scenario_run(s, NULL, NULL, &log, &err);
    *wall = rb_monotonic_seconds() - t0;
    rb_log_free(log);
    if (rc < 0)
        fprintf(stderr, "%s\n", err.msg);
    return rc < 0;
}

static void report(const char *label, double duration, double dt, double best)
{
    double steps = ceil(duration / dt - 1e-9), us = 1e6 * best / steps;
    printf("| %-62s | %6.0f | %7.1f x | %7.2f us |\n", label, steps, duration / best, us);
}

int main(int argc, char **argv)
{
#ifdef RB_SOURCE
    const char *src = argc > 1 ? argv[1] : RB_SOURCE;
#else
    const char *src = argc > 1 ? argv[1] : ".";
#endif
    int repeats = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 5;
    char path[2048];
    snprintf(path, sizeof path, "%s/configs/scenarios/walk.json", src);
    rb_scenario *s = NULL;
    rb_err err;
    if (rb_scenario_load(path, &s, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const rb_sim_scenario *sc = &s->sim;
    printf("walk.json: %s, %zu joints, %zu single supports, %.1f s at dt = %g s; best of %d runs\n\n",
           s->model->name ? s->model->name : "?", s->model->n_dofs, rb_gait_n_steps(&sc->gait), sc->duration, sc->dt,
           repeats);
    printf("| %-62s | %6s | %9s | %10s |\n", "configuration", "steps", "real time", "per step");
    printf("|---|---:|---:|---:|\n");
    double best[3] = {INFINITY, INFINITY, INFINITY}, init = INFINITY, wall, in;
    for (int r = 0; r < repeats; r++) {
        for (int logger = 0; logger < 2; logger++) {
            if (engine_once(sc, logger, &wall, &in))
                return 1;
            best[logger] = fmin(best[logger], wall);
            init = fmin(init, in);
        }
        if (run_once(s, &wall))
            return 1;
        best[2] = fmin(best[2], wall);
    }
    report("engine, whole truth every sample", sc->duration, sc->dt, best[0]);
    report("engine, truth as a logger uses it (FT, CoM 1 kHz; IMU 100 Hz)", sc->duration, sc->dt, best[1]);
    report("scenario run into a log (roboest simulate without the file)", sc->duration, sc->dt, best[2]);
    printf("\nset-up (rb_sim_init: Riccati solve, CoM plan): %.2f ms\n", 1e3 * init);
    rb_scenario_free(s);
    return 0;
}
