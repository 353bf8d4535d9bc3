/* Test helpers for lib/model: forward kinematics written out here (the real one lives in lib/dynamics), and
 * an independent reading of a URDF's links and joints with libxml2 (no merging, no re-rooting) to compare
 * a model against. */
#ifndef ROBOEST_TEST_MODEL_SUPPORT_H
#define ROBOEST_TEST_MODEL_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/model.h"

/* Pose of every body in the base body frame at joint positions q (n_dofs, fixed-base layout); pose has
 * model->n_bodies entries. Composes X_parent * X_joint(q) down the tree. */
void fk_bodies(const rb_model *m, const double *q, rb_xform *pose);
/* Pose of frame f in the base body frame, from the body poses. */
void fk_frame(const rb_model *m, const rb_xform *pose, long f, rb_xform *out);
/* Pose of frame b in frame a. */
void relative_pose(const rb_model *m, const rb_xform *pose, long a, long b, rb_xform *out);

/* A URDF as written: links with inertial parameters about their origin, every link's pose in the root link's
 * frame at q = 0. */
typedef struct test_urdf {
    size_t n_links, n_joints, n_movable;
    char **link_names;
    double (*pi)[10]; /* about the link origin, from <inertial> */
    rb_xform *pose;   /* in the root link frame, q = 0 */
    char *root;
    double total_mass;
} test_urdf;

bool test_urdf_read(const char *path, test_urdf *out);
void test_urdf_free(test_urdf *u);
long test_urdf_link(const test_urdf *u, const char *name);

/* Composite inertia of the whole model in the frame `frame` at q (model), and of the URDF in its root link's
 * frame (the URDF is at q = 0). */
void model_composite(const rb_model *m, const double *q, long frame, double out[10]);
void urdf_composite(const test_urdf *u, double out[10]);

/* A deterministic uniform random number in [lo, hi). */
double test_uniform(double lo, double hi);

#endif
