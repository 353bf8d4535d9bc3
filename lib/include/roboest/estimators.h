/*
 * roboest estimators: the built-in stage types (one file per stage under lib/estimators/).
 *
 * Every stage follows the rb_stage_type contract of roboest/pipeline.h: causal, no allocation or
 * I/O in step(), element names of outputs copied from the inputs.
 *
 *   lowpass            in x (n), out y (n). First-order low-pass per element, the exact
 *                      discretization (zero-order hold on the input) of tau y' = x - y with
 *                      tau = 1 / (2 pi cutoff_hz):
 *                          a   = 1 - exp(-2 pi cutoff_hz dt)      (dt: the clock period)
 *                          y_0 = x_0,   y_k = y_{k-1} + a (x_k - y_{k-1})
 *                      so a unit step from 0 at k = 0 (y_0 = 0) gives y_k = 1 - (1 - a)^k =
 *                      1 - exp(-t_k / tau) on a uniform clock. Units as the input.
 *                      params: cutoff_hz (number > 0, required).
 *   finite_difference  in x (n), out dx (n). Backward difference per element on the actual clock
 *                      times (a channel clock may be non-uniform):
 *                        order 1: dx_k = (x_k - x_{k-1}) / (t_k - t_{k-1});
 *                                 exact for a linear ramp, error <= h/2 max|x''| (h = interval);
 *                        order 2: the three-point backward formula for the second derivative,
 *                                 dx_k = 2 [(x_k - x_{k-1})/h1 - (x_{k-1} - x_{k-2})/h2] / (h1 + h2),
 *                                 h1 = t_k - t_{k-1}, h2 = t_{k-1} - t_{k-2}: exact for a parabola,
 *                                 error <= h max|x'''| (1 + O(h)) on a uniform clock.
 *                      Before enough samples exist (k = 0, and k = 1 for order 2) dx is 0.
 *                      Units: "<unit>/s" (order 1) or "<unit>/s^2" (order 2) when the input's unit
 *                      is known, "" otherwise.
 *                      params: order (integer 1 or 2, default 1).
 */
#ifndef ROBOEST_ESTIMATORS_H
#define ROBOEST_ESTIMATORS_H

#include "roboest/pipeline.h"

extern const rb_stage_type rb_stage_lowpass;
extern const rb_stage_type rb_stage_finite_difference;

/* Register every built-in stage type. RB_EINVAL if one is already registered, RB_ENOMEM. */
int rb_estimators_register(rb_registry *reg, rb_err *err);

#endif
