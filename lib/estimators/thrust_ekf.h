/* Private to lib/estimators: the thrust_ekf stage's ports and functions, shared by the adapter (thrust_ekf.c) and the
 * type with its documentation and schema (thrust_ekf_type.c). */
#ifndef ROBOEST_THRUST_EKF_H
#define ROBOEST_THRUST_EKF_H

#include "roboest/stage.h"

enum { TE_Q, TE_DQ, TE_BASE_POS, TE_BASE_QUAT, TE_BASE_TWIST, TE_THROTTLE, TE_FEET, TE_RPM_ERR, TE_N_IN };
enum {
    TE_T,
    TE_T_DOT,
    TE_L,
    TE_L_MEAS,
    TE_W_LF,
    TE_W_RF,
    TE_W_JETS,
    TE_SUPPORT,
    TE_SUPPORT_KG,
    TE_SCHEDULED,
    TE_VAR,
    TE_NIS,
    TE_N_OUT
};

int te_create(const rb_stage_setup *st, void **state, rb_err *err);
int te_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
int te_finish(void *state, rb_err *err);
void te_destroy(void *state);
size_t te_notes(void *state, const char *const **lines);

#endif
