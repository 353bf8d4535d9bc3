/* lib/model: the in-code builder, lookups, and the physical-consistency test of inertial parameters. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/model.h"

static const double rod[10] = {2.0, 0.2, 0.0, 0.0, 0.03, 0.0, 0.0, 0.05, 0.0, 0.03}; /* valid, c = (0.1, 0, 0) */

static rb_xform offset(double x, double y, double z)
{
    rb_xform X;
    rb_xform_identity(&X);
    X.p[0] = x, X.p[1] = y, X.p[2] = z;
    return X;
}

/* base -> a (revolute z) -> b (fixed) -> c (prismatic x); base -> d (revolute y) */
static int build(rb_model **out, rb_err *err)
{
    rb_model *m = NULL;
    rb_xform X = offset(0, 0, 0.3);
    double z[3] = {0, 0, 1}, x[3] = {1, 0, 0}, y[3] = {0, 1, 0};
    int rc;
    if ((rc = rb_model_begin(&m, "toy", "base", rod, false, err)) < 0)
        return rc;
    if ((rc = rb_model_add_body(m, "a", 0, RB_JOINT_REVOLUTE, "ja", &X, z, rod, err)) < 0 ||
        (rc = rb_model_add_body(m, "b", 1, RB_JOINT_FIXED, "jb", &X, NULL, rod, err)) < 0 ||
        (rc = rb_model_add_body(m, "c", 2, RB_JOINT_PRISMATIC, "jc", &X, x, rod, err)) < 0 ||
        (rc = rb_model_add_body(m, "d", 0, RB_JOINT_REVOLUTE, "jd", &X, y, rod, err)) < 0 ||
        (rc = rb_model_set_dof_limits(m, 0, -1.0, 2.0, 10.0, 3.0, err)) < 0 ||
        (rc = rb_model_add_frame(m, "tip", 3, &X, RB_FRAME_USER, err)) < 0 ||
        (rc = rb_model_add_ft_sensor(m, "ft", 2, 0, 0, -1, err)) < 0 ||
        (rc = rb_model_add_imu(m, "acc", RB_SENSOR_ACCELEROMETER, 0, err)) < 0) {
        rb_model_free(m);
        return rc;
    }
    *out = m;
    return RB_OK;
}

Test(model_builder, builds_and_looks_up)
{
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(build(&m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m->n_bodies, 5);
    cr_assert_eq(m->n_dofs, 3);
    cr_assert_eq(m->nq, 3);
    cr_assert_eq(m->nv, 3);
    cr_assert_float_eq(m->total_mass, 10.0, 1e-12);
    cr_assert_eq(m->gravity[2], -9.81);
    /* dofs in order of addition */
    cr_assert_str_eq(m->dof_names[0], "ja");
    cr_assert_str_eq(m->dof_names[1], "jc");
    cr_assert_str_eq(m->dof_names[2], "jd");
    cr_assert_eq(m->dof_body[1], 3);
    cr_assert_eq(m->bodies[3].dof, 1);
    cr_assert_eq(m->bodies[2].dof, -1);
    cr_assert_eq(m->bodies[0].parent, -1);
    cr_assert_null(m->bodies[0].joint_name);
    cr_assert_eq(m->dof_lower[0], -1.0);
    cr_assert_eq(m->dof_velocity[0], 3.0);
    cr_assert(isinf(m->dof_upper[2]) && m->dof_upper[2] > 0);
    /* the user frame plus a LINK frame per body */
    cr_assert_eq(m->n_frames, 6);
    cr_assert_eq(rb_model_frame_index(m, "tip"), 0);
    long fc = rb_model_frame_index(m, "c");
    cr_assert_eq(m->frames[fc].body, 3);
    cr_assert_eq(m->frames[fc].kind, RB_FRAME_LINK);
    cr_assert_eq(rb_model_body_index(m, "d"), 4);
    cr_assert_eq(rb_model_body_index(m, "zz"), -1);
    cr_assert_eq(rb_model_dof_index(m, "jd"), 2);
    cr_assert_eq(rb_model_dof_index(m, "jb"), -1, "a fixed joint is no dof");
    cr_assert_eq(rb_model_ft_index(m, "ft"), 0);
    cr_assert_eq(m->ft[0].parent_body, 1);
    cr_assert_str_eq(m->ft[0].joint_name, "jb");
    cr_assert_eq(m->ft[0].sign, -1);
    cr_assert_eq(m->n_imu, 1);
    rb_model_free(m);
}

Test(model_builder, floating_base_sizes)
{
    rb_model *m = NULL;
    rb_err err;
    double z[3] = {0, 0, 1};
    rb_xform X = offset(0, 0, 0);
    cr_assert_eq(rb_model_begin(&m, "f", "base", rod, true, &err), RB_OK);
    cr_assert_eq(rb_model_add_body(m, "a", 0, RB_JOINT_REVOLUTE, "ja", &X, z, rod, &err), RB_OK);
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m->nq, 8);
    cr_assert_eq(m->nv, 7);
    rb_model_free(m);
}

Test(model_builder, dof_order)
{
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(build(&m, &err), RB_OK, "%s", err.msg);
    const char *order[] = {"jd", "ja", "jc"};
    cr_assert_eq(rb_model_set_dof_order(m, order, 3, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(m->dof_names[0], "jd");
    cr_assert_eq(m->dof_body[0], 4);
    cr_assert_eq(m->bodies[4].dof, 0);
    cr_assert_eq(m->bodies[1].dof, 1);
    cr_assert_eq(m->dof_lower[1], -1.0, "limits follow their joint");
    cr_assert_eq(m->bodies[3].dof, 2);
    const char *missing[] = {"jd", "ja", "jx"};
    cr_assert_eq(rb_model_set_dof_order(m, missing, 3, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "jx"), "%s", err.msg);
    const char *twice[] = {"jd", "ja", "jd"};
    cr_assert_eq(rb_model_set_dof_order(m, twice, 3, &err), RB_EINVAL);
    cr_assert_eq(rb_model_set_dof_order(m, order, 2, &err), RB_EINVAL);
    cr_assert_str_eq(m->dof_names[0], "jd", "a failed reorder changes nothing");
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    rb_model_free(m);
}

Test(model_builder, invalid_arguments)
{
    rb_model *m = NULL;
    rb_err err;
    double z[3] = {0, 0, 1};
    rb_xform X = offset(0, 0, 0);
    cr_assert_eq(build(&m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_model_add_body(m, "e", 7, RB_JOINT_REVOLUTE, "je", &X, z, rod, &err), RB_EINVAL);
    cr_assert_eq(rb_model_add_body(m, "e", -1, RB_JOINT_REVOLUTE, "je", &X, z, rod, &err), RB_EINVAL);
    cr_assert_eq(rb_model_add_body(m, "e", 0, RB_JOINT_REVOLUTE, NULL, &X, z, rod, &err), RB_EINVAL);
    cr_assert_eq(rb_model_add_body(m, "e", 0, RB_JOINT_REVOLUTE, "je", &X, NULL, rod, &err), RB_EINVAL);
    cr_assert_eq(rb_model_add_frame(m, "f", 9, &X, RB_FRAME_USER, &err), RB_EINVAL);
    cr_assert_eq(rb_model_add_ft_sensor(m, "ft2", 1, 0, 0, 1, &err), RB_EINVAL, "body 1 is on a revolute joint");
    cr_assert_eq(rb_model_add_ft_sensor(m, "ft2", 2, 0, 0, 2, &err), RB_EINVAL);
    cr_assert_eq(rb_model_add_imu(m, "g", RB_SENSOR_GYROSCOPE, 99, &err), RB_EINVAL);
    cr_assert_eq(rb_model_set_dof_limits(m, 0, 2.0, 1.0, 1, 1, &err), RB_EINVAL);
    cr_assert_eq(rb_model_set_dof_limits(m, 5, 0, 1, 1, 1, &err), RB_EINVAL);
    cr_assert_eq(m->n_bodies, 5, "nothing was added");
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    rb_model_free(m);
}

static int end_with(void (*spoil)(rb_model *), rb_err *err)
{
    rb_model *m = NULL;
    cr_assert_eq(build(&m, err), RB_OK);
    spoil(m);
    int rc = rb_model_end(m, err);
    rb_model_free(m);
    return rc;
}
static void long_axis(rb_model *m) { m->bodies[1].axis[0] = 0.1; }
static void bad_inertia(rb_model *m) { m->bodies[3].inertia[4] = -1.0; }
static void dup_body(rb_model *m) { m->bodies[4].name[0] = 'c'; /* "d" -> "c" */ }
static void dup_frame(rb_model *m)
{
    rb_xform X = offset(1, 2, 3);
    cr_assert_eq(rb_model_add_frame(m, "tip", 1, &X, RB_FRAME_USER, NULL), RB_OK);
}
static void skewed_pose(rb_model *m) { m->bodies[2].X_parent.R[1] = 0.5; }
static void nan_pose(rb_model *m) { m->bodies[2].X_parent.p[1] = NAN; }

Test(model_builder, end_validates)
{
    rb_err err;
    cr_assert_eq(end_with(long_axis, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "joint ja") && strstr(err.msg, "axis"), "%s", err.msg);
    cr_assert_eq(end_with(bad_inertia, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "body c") && strstr(err.msg, "inertia"), "%s", err.msg);
    cr_assert_eq(end_with(dup_body, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "duplicate body name c"), "%s", err.msg);
    cr_assert_eq(end_with(dup_frame, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "duplicate frame name tip"), "%s", err.msg);
    cr_assert_eq(end_with(skewed_pose, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "body b"), "%s", err.msg);
    cr_assert_eq(end_with(nan_pose, &err), RB_EINPUT);
}

Test(model_builder, allocation_failures)
{
    rb_err err;
    long n;
    for (n = 0; n < 1000; n++) {
        rb_model *m = NULL;
        rb_alloc_fail_after(n);
        int rc = build(&m, &err);
        if (rc == RB_OK)
            rc = rb_model_end(m, &err);
        rb_alloc_fail_after(-1);
        rb_model_free(m);
        if (rc == RB_OK)
            break;
        cr_assert_eq(rc, RB_ENOMEM, "failure %ld: %s", n, err.msg);
    }
    cr_assert(n > 10 && n < 1000, "%ld allocations", n);
}

Test(model_builder, physical_inertia)
{
    cr_assert(rb_inertia_is_physical(rod));
    /* a point mass off the origin: I_c = 0 */
    double point[10] = {3.0, 3.0, 0, 0, 0, 0, 0, 3.0, 0, 3.0};
    cr_assert(rb_inertia_is_physical(point));
    double thin_disc[10] = {1.0, 0, 0, 0, 0.25, 0, 0, 0.25, 0, 0.5}; /* equality in the triangle inequality */
    cr_assert(rb_inertia_is_physical(thin_disc));
    double zero[10] = {0};
    cr_assert(rb_inertia_is_physical(zero), "massless");
    double v[10];
    memcpy(v, rod, sizeof v), v[0] = -1.0;
    cr_assert_not(rb_inertia_is_physical(v), "negative mass");
    double triangle[10] = {1.0, 0, 0, 0, 0.1, 0, 0, 0.1, 0, 0.3};
    cr_assert_not(rb_inertia_is_physical(triangle), "triangle inequality");
    double indefinite[10] = {1.0, 0, 0, 0, 0.1, 0.2, 0, 0.1, 0, 0.1};
    cr_assert_not(rb_inertia_is_physical(indefinite), "not positive semi-definite");
    /* fine about the centre of mass, but the centre is far away: about the origin it needs m |c|^2 more */
    double shifted[10] = {1.0, 1.0, 0, 0, 0.01, 0, 0, 0.01, 0, 0.01};
    cr_assert_not(rb_inertia_is_physical(shifted));
    shifted[7] += 1.0, shifted[9] += 1.0;
    cr_assert(rb_inertia_is_physical(shifted));
    double rotation_only[10] = {0, 0, 0, 0, 1e-3, 0, 0, 1e-3, 0, 1e-3};
    cr_assert_not(rb_inertia_is_physical(rotation_only), "inertia without mass");
    double first_moment_only[10] = {0, 0.1, 0, 0, 0, 0, 0, 0, 0, 0};
    cr_assert_not(rb_inertia_is_physical(first_moment_only));
    memcpy(v, rod, sizeof v), v[5] = NAN;
    cr_assert_not(rb_inertia_is_physical(v), "NaN");
    memcpy(v, rod, sizeof v), v[9] = INFINITY;
    cr_assert_not(rb_inertia_is_physical(v), "inf");
    /* principal axes need not be the frame's axes */
    double R[9], q[4] = {0.3, -0.5, 0.7, 0.2}, d[3] = {0.2, 0.3, 0.45}, I[9];
    rb_m3_from_quat(q, R);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            I[3 * i + j] =
                R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] + R[3 * i + 2] * d[2] * R[3 * j + 2];
    double rotated[10] = {1.0, 0, 0, 0, I[0], I[1], I[2], I[4], I[5], I[8]};
    cr_assert(rb_inertia_is_physical(rotated));
    d[2] = 0.55; /* 0.55 > 0.2 + 0.3 */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            I[3 * i + j] =
                R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] + R[3 * i + 2] * d[2] * R[3 * j + 2];
    double rotated_bad[10] = {1.0, 0, 0, 0, I[0], I[1], I[2], I[4], I[5], I[8]};
    cr_assert_not(rb_inertia_is_physical(rotated_bad));
}
