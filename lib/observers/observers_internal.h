/* Private to lib/observers: the inertial-parameter estimator's state, shared by iekf.c (set-up and steps) and
 * iekf_report.c (what it says at the end). */
#ifndef ROBOEST_OBSERVERS_INTERNAL_H
#define ROBOEST_OBSERVERS_INTERNAL_H

#include "roboest/observers.h"

/* One delayed sample (central differences). */
typedef struct iekf_sample {
    double t;
    double *q, *nu, *tau, *lambda;
} iekf_sample;

struct rb_iekf {
    const rb_model *m;
    rb_iekf_config cfg; /* bodies, contacts, r point into this struct's arrays */
    size_t nb, np, nv, nq, n, nc;
    size_t *bodies;
    rb_iekf_contact *contacts;
    double *r;    /* nv */
    double *qvar; /* np: the process variance per second, per state element */
    double *p0;   /* np */
    rb_dyn *ws;
    rb_dyn_condensed *cond;
    rb_filter *f;
    /* per-sample scratch */
    double *Y, *tau_nom, *z, *Jc, *G, *gpi, *zhat;
    /* outputs */
    double *pi, *pi_raw, *theta, *mass, *com, *residual, *var, *bias, *pi_lp;
    unsigned char *consistent;
    double nis;
    bool gated, updated;
    /* low-pass and bias state */
    double *res_lp;
    bool res_lp_started, est_lp_started;
    double *bias_sum;
    long *bias_cnt;
    bool bias_frozen;
    double t0, t_prev, dt;
    long n_steps;
    /* central differences: the last three samples, slot (n_steps - 1) % 3 the newest */
    iekf_sample hist[3];
    /* diagnostics */
    long updates, n_gated, rows_skipped, predict_only;
    double *max_var;
    double *info; /* np x np */
    double *nu_dot;
};

#endif
