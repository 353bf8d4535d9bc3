/* Private to lib/estimators: the map_dynamics stage's ports and entry points, shared by map_dynamics.c (set-up and
 * steps) and map_dynamics_type.c (the type: schema and documentation). */
#ifndef ROBOEST_MAP_DYNAMICS_H
#define ROBOEST_MAP_DYNAMICS_H

#include "roboest/estimators.h"

enum { MD_Q, MD_DQ, MD_DDQ, MD_FT, MD_ACC, MD_GYRO, MD_TAU, MD_KNOWN, MD_N_IN };
enum { MD_TAU_OUT, MD_TAU_STD, MD_WRENCHES, MD_WRENCHES_STD, MD_RESIDUAL, MD_N_OUT };

int md_create(const rb_stage_setup *st, void **state, rb_err *err);
int md_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
void md_destroy(void *state);
size_t md_notes(void *state, const char *const **lines);

#endif
