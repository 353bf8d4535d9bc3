/* Private to lib/estimators: the lipm_com stage's ports and entry points, shared by lipm_com.c (set-up and steps)
 * and lipm_com_type.c (the type: schema and documentation). */
#ifndef ROBOEST_LIPM_COM_H
#define ROBOEST_LIPM_COM_H

#include "roboest/estimators.h"

enum { LC_Q, LC_QUAT, LC_ACC, LC_GYRO, LC_WRENCHES, LC_FEET, LC_PHASE, LC_DQ, LC_N_IN };
enum {
    LC_POS,
    LC_ZMP,
    LC_ZMP_ERR,
    LC_OFFSET,
    LC_CORR,
    LC_VEL,
    LC_ACC_OUT,
    LC_ACC_ERR,
    LC_BASE_POS,
    LC_BASE_VEL,
    LC_VAR,
    LC_SUPPORT,
    LC_N_OUT
};

typedef struct lc_stage lc_stage;

int lc_create(const rb_stage_setup *st, void **state, rb_err *err);
int lc_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
int lc_finish(void *state, rb_err *err);
void lc_destroy(void *state);
size_t lc_notes(void *state, const char *const **lines);

#endif
