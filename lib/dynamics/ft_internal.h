/* Private to lib/dynamics: helpers shared by the sub-model split and the FT-based estimator. */
#ifndef ROBOEST_FT_INTERNAL_H
#define ROBOEST_FT_INTERNAL_H

#include <stdbool.h>

#include "roboest/dynamics.h"
#include "roboest/model.h"

/* The two bodies of FT sensor `ft`'s fixed joint as the tree sees them: *tc its tree child (the body whose
 * parent joint is the FT joint: the model's child_body, or its parent_body when re-rooting reversed the
 * joint), *tp the tree parent. False if they are not joined by a fixed joint. */
bool rbd_ft_tree_sides(const rb_model *model, const rb_ft_sensor *ft, int *tc, int *tp);
/* Pose of `frame` in the tree child tc of a fixed joint (tp its tree parent); false if the frame is on
 * neither body. */
bool rbd_frame_in_joint_child(const rb_model *model, int tc, int tp, int frame, rb_xform *out);

/* The cut at each FT sensor of the set sm (n = sm->n_ft, set order): tree child tc[k] and parent tp[k], the
 * reading frame's pose XcF[k] in tc[k], the sign sigma[k] of the reading as a wrench on tc[k] (a reversed
 * joint flips it), and cut[tc[k]] = 1. RB_EINVAL naming `what` and the sensor otherwise. */
int rbd_cut_fts(const rb_model *model, const rb_submodels *sm, int *tc, int *tp, rb_xform *XcF, int *sigma,
                unsigned char *cut, const char *what, rb_err *err);
/* Frame index of contacts[j] (checked: not NULL, in the model, not listed before j), or a negative rb_status
 * naming `what` and the frame. */
long rbd_contact_frame(const rb_model *model, const char *const *contacts, size_t j, const char *what, rb_err *err);

#endif
