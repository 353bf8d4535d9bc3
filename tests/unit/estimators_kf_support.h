/* The kf_derivative stage driven directly (stage_create in test_estimators_kf.c), for test_estimators_kf*.c. */
#ifndef ROBOEST_TEST_ESTIMATORS_KF_SUPPORT_H
#define ROBOEST_TEST_ESTIMATORS_KF_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/estimators.h"

/* The stage's output ports, in the type's order. */
enum { OUT_X, OUT_X_DOT, OUT_X_DDOT, OUT_INNOVATION, OUT_NIS, OUT_VAR, N_OUT };

typedef struct stage_h {
    rb_param_value values[5];
    rb_params params;
    rb_port in, out[N_OUT];
    void *state;
} stage_h;

/* rb_stage_kf_derivative created at 1 kHz with the parameters given, in schema order: process_noise (model), q
 * (nq values; none: the default), q_diag (3 values, given or not), r (nr values), p0 1, 1e2, 1e4; on `width`
 * input elements named `names` with `units`. */
int stage_create(stage_h *h, const char *model, const double *q, size_t nq, const double *qd, bool qd_given,
                 const double *r, size_t nr, size_t width, const char *const *names, const char *const *units,
                 rb_err *err);

#endif
