/* Private to lib/estimators: the fbse_friction stage's ports and entry points, shared by fbse_friction.c (set-up and
 * steps) and fbse_friction_type.c (the type: schema and documentation). */
#ifndef ROBOEST_FBSE_FRICTION_H
#define ROBOEST_FBSE_FRICTION_H

#include "roboest/estimators.h"

enum { FB_Q, FB_DQ, FB_TAU, FB_WRENCHES, FB_ACC, FB_GYRO, FB_ORIENT, FB_PHASE, FB_TRUTH, FB_N_IN };
enum {
    FB_FRICTION,
    FB_MEASURED,
    FB_MODEL,
    FB_COULOMB,
    FB_VISCOUS,
    FB_LINK,
    FB_CONTACT,
    FB_SINGULAR,
    FB_TDD,
    FB_REF_COULOMB,
    FB_REF_VISCOUS,
    FB_COULOMB_ERR,
    FB_VISCOUS_ERR,
    FB_SWING_RMSE,
    FB_REF_SWING_RMSE,
    FB_N_OUT
};

int fb_create(const rb_stage_setup *st, void **state, rb_err *err);
int fb_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
int fb_finish(void *state, rb_err *err);
void fb_destroy(void *state);
size_t fb_notes(void *state, const char *const **lines);

#endif
