/* Private to lib/estimators: the inertial_ekf stage's ports and functions, shared by the adapter (inertial_ekf.c)
 * and the type with its documentation and schema (inertial_ekf_type.c). */
#ifndef ROBOEST_INERTIAL_EKF_H
#define ROBOEST_INERTIAL_EKF_H

#include "roboest/stage.h"

enum { IE_Q, IE_DQ, IE_TAU, IE_DDQ, IE_CONTACTS, IE_BASE_POS, IE_BASE_QUAT, IE_BASE_TWIST, IE_BASE_ACC, IE_N_IN };
enum {
    IE_PI,
    IE_PI_RAW,
    IE_THETA,
    IE_MASS,
    IE_COM,
    IE_CONSISTENT,
    IE_RESIDUAL,
    IE_NIS,
    IE_GATED,
    IE_VAR,
    IE_BIAS,
    IE_N_OUT
};

int ie_create(const rb_stage_setup *st, void **state, rb_err *err);
int ie_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
int ie_finish(void *state, rb_err *err);
void ie_destroy(void *state);
size_t ie_notes(void *state, const char *const **lines);

#endif
