/* Internals shared by the friction sources. Not a public header. */
#ifndef ROBOEST_FRICTION_INTERNAL_H
#define ROBOEST_FRICTION_INTERNAL_H

#include "roboest/friction.h"

/* g(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2); F_c when v_s <= 0. */
double rb_fric_stribeck(double F_c, double F_s, double v_s, double v);

/* identify_tanh6.c: the tanh6 fit on n finite samples (max |v| = vmax > 0), into *out (validated by the
 * caller). RB_EINVAL (bad bracket), RB_ENUMERIC (nothing excited), RB_ENOMEM. */
int rb_fric_fit_tanh6(const double *v, const double *y, size_t N, const rb_friction_fit_opts *o, double vmax,
                      rb_friction_model *out, rb_err *err);

#endif
