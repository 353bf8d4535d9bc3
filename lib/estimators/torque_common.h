/* Private to lib/estimators: the set-up checks and helpers the model-based stages (rnea_torque, ukf_torque,
 * inertial_ekf, thrust_ekf, legged_odometry) share. Every function returns RB_OK or RB_ECONFIG with a one-line message
 * (the runner prefixes the stage). */
#ifndef ROBOEST_TORQUE_COMMON_H
#define ROBOEST_TORQUE_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/dynamics.h"
#include "roboest/stage.h"

/* The pipeline's model, or RB_ECONFIG "needs the pipeline's "model" key". */
int tq_need_model(const rb_stage_setup *setup, rb_err *err);
/* The pipeline's model with a floating base, or RB_ECONFIG naming what is missing. */
int tq_need_floating_model(const rb_stage_setup *setup, rb_err *err);

/* Index of the FT sensor / frame `name` (the value of parameter key[i]); RB_ECONFIG naming the parameter, the
 * name and the model, with the closest existing name as a suggestion. */
int tq_find_ft(const rb_stage_setup *setup, const char *key, size_t i, const char *name, int *out, rb_err *err);
int tq_find_frame(const rb_stage_setup *setup, const char *key, size_t i, const char *name, int *out, rb_err *err);
/* Every name of a string-array parameter found (FT sensors or frames), none twice. */
int tq_check_names(const rb_stage_setup *setup, const char *key, bool ft, rb_err *err);

/* Input port `port` has `expected` elements (what: e.g. "6 per FT sensor of ft_sensors"). Joint-vector ports
 * (joints true): when an element name is a model joint, every element must be the model joint at that place. */
int tq_check_port(const rb_stage_setup *setup, size_t port, size_t expected, const char *what, bool joints,
                  rb_err *err);

/* A per-group number array: `count` values must be 1 (every element), `group` (one per element of a group, the
 * same for every group) or group * n_groups (one per element). RB_ECONFIG otherwise. */
int tq_check_count(const rb_stage_setup *setup, const char *key, size_t group, size_t n_groups, rb_err *err);
/* Value for element j of group g under the rule above. */
double tq_value(const rb_param_value *v, size_t group, size_t g, size_t j);

/* "<prefix>/<suffix>" names and "unit" units for output ports: an owned string table freed by tq_strings_free. */
typedef struct tq_strings {
    size_t n;
    char **s;
} tq_strings;
int tq_strings_alloc(tq_strings *t, size_t n, rb_err *err);
/* Set entry i to printf(fmt, ...); RB_ENOMEM. */
int tq_strings_set(tq_strings *t, size_t i, rb_err *err, const char *fmt, ...) RB_PRINTF(4, 5);
void tq_strings_free(tq_strings *t);

/* Wrench element names and units. */
extern const char *const tq_wrench_axes[6]; /* fx fy fz mx my mz */
extern const char *const tq_wrench_units[6];

/* The proper acceleration a fixed base has (base = world: -g). */
void tq_fixed_base_acc(const rb_model *model, double acc[3]);

/* A floating base's state inputs: ports pos (3), pos + 1 (the quaternion, 4) and pos + 2 (the body-fixed twist, 6)
 * have those widths; on a fixed base every port pos .. last must be unwired (RB_ECONFIG naming it). */
int tq_check_base_ports(const rb_stage_setup *setup, size_t pos, size_t last, rb_err *err);
/* q (nq) and nu (nv) from the joint inputs (n each) and, on a floating base, the base inputs pos, pos + 1, pos + 2
 * of the check above. */
void tq_gather_state(const rb_model *model, const double *const *in, size_t q_port, size_t dq_port, size_t pos,
                     double *q, double *nu);
/* An algorithm's error message starts "sample k: ": drop it, the runner names the sample already. Returns rc. */
int tq_unname_sample(int rc, size_t k, rb_err *err);

/* True when every value is finite. */
bool tq_finite(const double *x, size_t n);

#endif
