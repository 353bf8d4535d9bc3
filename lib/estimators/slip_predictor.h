/* Private to lib/estimators: the slip_predictor stage, split between slip_predictor.c (set-up and steps) and
 * slip_predictor_type.c (ports, parameter schema, documentation). */
#ifndef ROBOEST_SLIP_PREDICTOR_H
#define ROBOEST_SLIP_PREDICTOR_H

#include "roboest/estimators.h"
#include "roboest/observers.h"

enum { SP_FORCE, SP_ACC, SP_PHASE, SP_N_IN };
enum {
    SP_PREDICTION,
    SP_PREDICTION_FOOT,
    SP_DETECTED,
    SP_THRESHOLDS,
    SP_TANGENTIAL,
    SP_FRICTION,
    SP_ACCELERATION,
    SP_CONTACT,
    SP_NORMAL,
    SP_N_OUT
};

extern const char *const sp_inputs[SP_N_IN];
extern const char *const sp_outputs[SP_N_OUT];

int sp_create(const rb_stage_setup *setup, void **state, rb_err *err);
int sp_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
int sp_finish(void *state, rb_err *err);
void sp_destroy(void *state);
size_t sp_notes(void *state, const char *const **lines);

#endif
