/* Time per sample of the inertial-parameter estimator's step (roboest/observers.h, rb_iekf_step: the condensed
 * regressor, Delta tau, the EKF predict and update on theta, the outputs) on the floating humanoid with arms of
 * seed 001's experiments (datasets/humanoid_arms.urdf, 23 joints: nv = 29 rows), one body (the torso) and two
 * (torso, l_forearm), EKF and KF. Targets: 30 us per sample for one body, 50 us for two. Never a timed test: it prints a table.
 * Inputs: smooth synthetic motion, torques from the RNEA of the model (the cost does not depend on the values).
 * Timing: thread CPU time, 300 warm-up samples, then the median of 15 batches of 1000 samples.
 * Usage: bench_inertial [source folder] (default RB_SOURCE or "."). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/dynamics.h"
#include "roboest/observers.h"
#include "bench_timing.h"

void openblas_set_num_threads(int);

#define SAMPLES 1000
#define BATCHES 15

/* SAMPLES synthetic states (q, nu, nu_dot, tau) for the model, and the wrench lam (6 per sample) a contact at the
 * base body's origin (body axes) must exert for them: the base rows of the RNEA, which a free-floating robot's
 * actuators cannot give (the estimator's Delta tau then is consistent, as with real foot contacts). */
static void states(const rb_model *m, double *q, double *nu, double *nud, double *tau, double *lam)
{
    rb_dyn *ws = NULL;
    rb_err err;
    if (rb_dyn_alloc(m, &ws, &err))
        exit(1);
    size_t nq = m->nq, nv = m->nv, n = m->n_dofs;
    for (size_t k = 0; k < SAMPLES; k++) {
        double t = 1e-3 * (double)k, *qk = q + k * nq, *vk = nu + k * nv, *ak = nud + k * nv;
        double full[64];
        rb_dyn_neutral(m, qk);
        for (size_t j = 0; j < nv; j++) {
            double w = 1 + 0.3 * (double)j, a = 0.2;
            vk[j] = a * w * cos(w * t), ak[j] = -a * w * w * sin(w * t);
        }
        for (size_t j = 0; j < n; j++)
            qk[nq - n + j] = 0.2 * sin((1 + 0.3 * (double)(j + 6)) * t);
        rb_dyn_rnea(m, ws, qk, vk, ak, NULL, 0, full, &err);
        memcpy(tau + k * n, full + (nv - n), n * sizeof(double));
        memcpy(lam + k * 6, full, 6 * sizeof(double));
    }
    rb_dyn_free(ws);
}

static double time_case(const rb_model *m, const char *const *names, size_t nb, rb_iekf_filter f, const double *q,
                        const double *nu, const double *nud, const double *tau, const double *lam)
{
    size_t bodies[4];
    for (size_t b = 0; b < nb; b++)
        bodies[b] = (size_t)rb_model_body_index(m, names[b]);
    rb_iekf_config c;
    rb_iekf_config_init(&c);
    if (f == RB_IEKF_KF_LINEAR)
        rb_iekf_config_defaults_kf(&c);
    rb_iekf_contact base = {rb_model_frame_index(m, m->bodies[0].name), RB_DYN_BODY};
    c.bodies = bodies, c.n_bodies = nb, c.r_scalar = 1;
    c.contacts = &base, c.n_contacts = 1;
    rb_iekf *e = NULL;
    rb_err err;
    if (rb_iekf_alloc(m, &c, &e, &err)) {
        fprintf(stderr, "bench_inertial: %s\n", err.msg);
        exit(1);
    }
    size_t nq = m->nq, nv = m->nv, n = m->n_dofs, k = 0;
    double per[BATCHES];
    for (int b = -1; b < BATCHES; b++) {
        size_t count = b < 0 ? 300 : SAMPLES;
        double t0 = thread_seconds();
        for (size_t i = 0; i < count; i++, k++) {
            size_t s = k % SAMPLES;
            if (rb_iekf_step(e, k, 1e-3 * (double)k, q + s * nq, nu + s * nv, nud + s * nv, tau + s * n, lam + s * 6,
                             &err)) {
                fprintf(stderr, "bench_inertial: %s\n", err.msg);
                exit(1);
            }
        }
        if (b >= 0)
            per[b] = (thread_seconds() - t0) / (double)count;
    }
    rb_iekf_free(e);
    qsort(per, BATCHES, sizeof *per, cmp_double);
    return per[BATCHES / 2];
}

int main(int argc, char **argv)
{
#ifdef RB_SOURCE
    const char *src = argc > 1 ? argv[1] : RB_SOURCE;
#else
    const char *src = argc > 1 ? argv[1] : ".";
#endif
    openblas_set_num_threads(1);
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/humanoid_arms.urdf", src);
    rb_model_opts o = {.floating = true};
    rb_model *m = NULL;
    rb_err err;
    if (rb_model_load_urdf(path, &o, &m, &err)) {
        fprintf(stderr, "bench_inertial: %s\n", err.msg);
        return 1;
    }
    double *q = malloc(SAMPLES * m->nq * sizeof *q), *nu = malloc(SAMPLES * m->nv * sizeof *q),
           *nud = malloc(SAMPLES * m->nv * sizeof *q), *tau = malloc(SAMPLES * m->n_dofs * sizeof *q),
           *lam = malloc(SAMPLES * 6 * sizeof *q);
    states(m, q, nu, nud, tau, lam);
    static const char *const one[] = {"torso"}, *const two[] = {"torso", "l_forearm"};
    printf("inertial-parameter estimator step, %s floating (nv = %zu), one core, median of %d x %d samples\n\n",
           m->name, m->nv, BATCHES, SAMPLES);
    printf("| bodies | filter | us per sample | target |\n|---|---|---|---|\n");
    for (int f = 0; f < 2; f++) {
        rb_iekf_filter fl = f ? RB_IEKF_KF_LINEAR : RB_IEKF_EKF_LOG_CHOLESKY;
        const char *fn = f ? "kf_linear" : "ekf_log_cholesky";
        printf("| torso | %s | %.1f | 30 |\n", fn, 1e6 * time_case(m, one, 1, fl, q, nu, nud, tau, lam));
        printf("| torso, l_forearm | %s | %.1f | 50 |\n", fn, 1e6 * time_case(m, two, 2, fl, q, nu, nud, tau, lam));
    }
    free(q), free(nu), free(nud), free(tau), free(lam);
    rb_model_free(m);
    return 0;
}
