/* Internals shared by the friction sources. Not a public header. */
#ifndef ROBOEST_FRICTION_INTERNAL_H
#define ROBOEST_FRICTION_INTERNAL_H

#include "roboest/friction.h"

/* g(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2); F_c when v_s <= 0. */
double rb_fric_stribeck(double F_c, double F_s, double v_s, double v);

#endif
