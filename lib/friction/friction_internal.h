/* Internals shared by the friction sources. Not a public header. */
#ifndef ROBOEST_FRICTION_INTERNAL_H
#define ROBOEST_FRICTION_INTERNAL_H

#include "roboest/friction.h"

/* g(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2); F_c when v_s <= 0. */
double rb_fric_stribeck(double F_c, double F_s, double v_s, double v);

/* The Coulomb-viscous fit as a tanh6 start: g4 = F_c, g5 (the sign's sharpness), g6 = F_v, offset c. */
typedef struct rb_fric_cv_start {
    double F_c, F_v, g5, c;
} rb_fric_cv_start;

/* identify_tanh6.c: the tanh6 fit on n finite samples (max |v| = vmax > 0), into *out (validated by the
 * caller) and *c (the constant term with `offset`, else 0); cv (may be NULL) the Coulomb-viscous fit on the
 * same samples, one of the starts. RB_EINVAL (bad bracket), RB_ENUMERIC (nothing excited), RB_ENOMEM. */
int rb_fric_fit_tanh6(const double *v, const double *y, size_t N, const rb_friction_fit_opts *o, double vmax,
                      const rb_fric_cv_start *cv, bool offset, rb_friction_model *out, double *c, rb_err *err);

#endif
