/* Private to lib/estimators: the ukf_torque stage's ports and its functions, shared by the adapter (ukf_torque.c)
 * and the type with its documentation and schema (ukf_torque_type.c). */
#ifndef ROBOEST_UKF_TORQUE_H
#define ROBOEST_UKF_TORQUE_H

#include "roboest/stage.h"

enum { IN_Q, IN_DQ, IN_CURRENT, IN_FT, IN_ACC, IN_GYRO, IN_FRICTION, N_IN };
enum {
    OUT_TAU_J,
    OUT_TAU_M,
    OUT_TAU_F,
    OUT_DQ,
    OUT_FT,
    OUT_CONTACTS,
    OUT_BASE,
    OUT_BIAS,
    OUT_DDQ,
    OUT_VAR,
    OUT_INNOVATION,
    OUT_NIS,
    OUT_ADAPT,
    OUT_CORRECTION,
    N_OUT
};

int tq_ukf_create(const rb_stage_setup *st, void **state, rb_err *err);
int tq_ukf_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
void tq_ukf_destroy(void *state);
/* The IMU lists the stage runs without, the start-up offset's and the motor-constant check's notes
 * (torque_calib.h); gathered by tq_ukf_finish. */
int tq_ukf_finish(void *state, rb_err *err);
size_t tq_ukf_notes(void *state, const char *const **lines);
/* The normalized innovations for the fault monitor (rb_stage_type.innovations); from this call on, every step
 * fills them. */
const rb_stage_innovations *tq_ukf_innovations(void *state);

#endif
