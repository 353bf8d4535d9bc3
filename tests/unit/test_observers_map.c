/* The MAP whole-body dynamics (roboest/observers.h, rb_map_*): on noise-free readings made by lib/dynamics (RNEA,
 * FT predictions, proper accelerations, gyroscopes) it recovers the RNEA's joint torques and the external wrenches
 * that made them (the project's humanoid, floating base with a moving base and a pushed shank; random trees with
 * branching and prismatic joints, fixed and floating); the block-tree solver agrees with the dense one (estimate,
 * standard deviations, residual) on noisy readings; bad configurations and a non-finite reading. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "dyn_support.h"
#include "roboest/estimators.h"
#include "roboest/observers.h"
#include "roboest/pipeline.h"

int openblas_get_num_threads(void);
void openblas_set_num_threads(int);

#define HUMANOID RB_SOURCE "/datasets/humanoid_lower_body.urdf"
#define MAXS 64

static rb_model *load_humanoid(bool floating)
{
    rb_model *m = NULL;
    rb_err err;
    rb_model_opts o = {.floating = floating};
    cr_assert_eq(rb_model_load_urdf(HUMANOID, &o, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

static int frame(const rb_model *m, const char *name)
{
    long f = rb_model_frame_index(m, name);
    cr_assert_geq(f, 0, "frame %s", name);
    return (int)f;
}

/* A scenario: the state, the external wrenches, and the readings lib/dynamics predicts for them. */
typedef struct scene {
    size_t nq, nv, n;
    double q[MAXS], nu[MAXS], nud[MAXS], tau[MAXS];
    rb_ext_wrench ext[4];
    size_t n_ext;
    int ft[8], acc[4], gyro[4];
    size_t n_ft, n_acc, n_gyro;
    double y_ft[48], y_acc[12], y_gyro[12];
} scene;

static void readings(const rb_model *m, scene *s)
{
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_rnea(m, ws, s->q, s->nu, s->nud, s->ext, s->n_ext, s->tau, &err), RB_OK, "%s", err.msg);
    double all[6 * 8];
    cr_assert_eq(rb_dyn_ft_wrenches(m, ws, all, &err), RB_OK, "%s", err.msg);
    for (size_t i = 0; i < s->n_ft; i++)
        memcpy(s->y_ft + 6 * i, all + 6 * s->ft[i], 6 * sizeof(double));
    cr_assert_eq(rb_dyn_kinematics(m, ws, s->q, s->nu, s->nud, &err), RB_OK, "%s", err.msg);
    for (size_t i = 0; i < s->n_acc; i++) {
        double a[6];
        cr_assert_eq(rb_dyn_frame_proper_acceleration(m, ws, (size_t)s->acc[i], RB_DYN_BODY, a, &err), RB_OK, "%s",
                     err.msg);
        memcpy(s->y_acc + 3 * i, a, 3 * sizeof(double));
    }
    for (size_t i = 0; i < s->n_gyro; i++) {
        double v[6];
        cr_assert_eq(rb_dyn_frame_velocity(m, ws, (size_t)s->gyro[i], RB_DYN_BODY, v, &err), RB_OK, "%s", err.msg);
        memcpy(s->y_gyro + 3 * i, v + 3, 3 * sizeof(double));
    }
    rb_dyn_free(ws);
}

static rb_map *make(const rb_model *m, const rb_map_config *c)
{
    rb_map *map = NULL;
    rb_err err;
    cr_assert_eq(rb_map_alloc(m, c, &map, &err), RB_OK, "%s", err.msg);
    return map;
}

static void step(rb_map *map, const scene *s, const double *known, rb_map_out *o)
{
    size_t vo = s->nv - s->n;
    rb_map_input in = {.s = s->q + (s->nq - s->n),
                       .s_dot = s->nu + vo,
                       .s_ddot = s->nud + vo,
                       .ft = s->y_ft,
                       .acc = s->y_acc,
                       .gyro = s->y_gyro,
                       .known = known};
    rb_err err;
    cr_assert_eq(rb_map_step(map, &in, &err), RB_OK, "%s", err.msg);
    rb_map_get_out(map, o);
}

static double vars[256];

/* Exact settings: tight constraints and zero priors, no prior elsewhere (the readings are noise-free). */
static void exact_config(rb_map_config *c, const scene *s)
{
    rb_map_config_init(c);
    for (size_t i = 0; i < 256; i++)
        vars[i] = 1e-4;
    c->ft = s->ft, c->n_ft = s->n_ft, c->var_ft = vars;
    c->acc = s->acc, c->n_acc = s->n_acc, c->var_acc = vars;
    c->gyro = s->gyro, c->n_gyro = s->n_gyro, c->var_gyro = vars;
    c->ddq = true, c->var_ddq = vars;
    c->var_dyn = 1e-10, c->var_zero = 1e-10, c->var_free = INFINITY, c->var_unknown = INFINITY;
}

/* The floating humanoid, moving base (linear velocity too: it must not matter), the left front plate on the
 * ground, a push on the right shank, the base balanced by a wrench at root_link so the base needs no agent. */
static void humanoid_scene(const rb_model *m, scene *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    trng r = {seed};
    s->nq = m->nq, s->nv = m->nv, s->n = m->n_dofs;
    random_state(&r, m, s->q, s->nu, 1.0, s->nud, 3.0);
    for (size_t k = 0; k < s->n; k++) /* joints within a plausible range */
        s->q[7 + k] *= 0.3;
    s->ext[0] = (rb_ext_wrench){frame(m, "l_foot_front_contact"), RB_DYN_BODY, {5, -8, 260, 3, -6, 1}};
    s->ext[1] = (rb_ext_wrench){frame(m, "r_lower_leg"), RB_DYN_BODY, {40, 12, -5, 0.5, 2, -1}};
    s->n_ext = 2;
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_rnea(m, ws, s->q, s->nu, s->nud, s->ext, s->n_ext, s->tau, &err), RB_OK, "%s", err.msg);
    rb_dyn_free(ws);
    s->ext[2] = (rb_ext_wrench){frame(m, "root_link"), RB_DYN_BODY, {0}};
    memcpy(s->ext[2].w, s->tau, 6 * sizeof(double));
    s->n_ext = 3;
    for (size_t i = 0; i < m->n_ft; i++)
        s->ft[i] = (int)i;
    s->n_ft = m->n_ft;
    const char *imu[3] = {"waist_imu", "l_foot_imu", "r_foot_imu"};
    for (size_t i = 0; i < 3; i++)
        s->acc[i] = s->gyro[i] = frame(m, imu[i]);
    s->n_acc = s->n_gyro = 3;
    readings(m, s);
}

static void expect_close(const double *a, const double *b, size_t n, double tol, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert(fabs(a[i] - b[i]) <= tol * (1 + fabs(b[i])), "%s[%zu]: %.12g vs %.12g", what, i, a[i], b[i]);
}

Test(observers_map, humanoid_noise_free_gives_the_rnea_torques_and_the_wrenches)
{
    rb_model *m = load_humanoid(true);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        scene s;
        humanoid_scene(m, &s, seed);
        cr_assert_lt(fabs(s.tau[0]) + fabs(s.tau[5]), 1e300);
        rb_map_config c;
        exact_config(&c, &s);
        int unk[3] = {s.ext[0].frame, s.ext[1].frame, s.ext[2].frame};
        c.unknown = unk, c.n_unknown = 3;
        for (int dense = 0; dense < 2; dense++) {
            c.dense = dense;
            rb_map *map = make(m, &c);
            rb_map_out o;
            step(map, &s, NULL, &o);
            double tau_ref[MAXS];
            rb_err err;
            rb_dyn *ws = NULL;
            cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_dyn_rnea(m, ws, s.q, s.nu, s.nud, s.ext, s.n_ext, tau_ref, &err), RB_OK, "%s", err.msg);
            rb_dyn_free(ws);
            expect_close(tau_ref, (double[6]){0}, 6, 1e-9, "base wrench (balanced)");
            expect_close(o.tau, tau_ref + 6, s.n, 1e-6, dense ? "dense tau" : "sparse tau");
            for (size_t u = 0; u < 3; u++)
                expect_close(o.wrench + 6 * u, s.ext[u].w, 6, 1e-6, "wrench");
            cr_assert_lt(o.residual, 1e-3, "residual %g on noise-free readings", o.residual);
            rb_map_free(map);
        }
    }
    rb_model_free(m);
}

/* Random trees: every body's wrench follows from its subtree, so with no external wrench the MAP is the RNEA. A
 * floating base is balanced by a KNOWN wrench at the base (the known-wrench rows); accelerometers at random frames
 * and the gyroscopes (floating: the base's rate) take part. */
Test(observers_map, random_trees_give_the_rnea_torques)
{
    for (int floating = 0; floating < 2; floating++)
        for (uint64_t seed = 11; seed < 16; seed++) {
            trng r = {seed * 7 + (uint64_t)floating};
            rb_model *m = random_tree(&r, 14, floating);
            scene s;
            memset(&s, 0, sizeof s);
            s.nq = m->nq, s.nv = m->nv, s.n = m->n_dofs;
            random_state(&r, m, s.q, s.nu, 1.0, s.nud, 3.0);
            double known[6] = {0};
            if (floating) {
                rb_dyn *ws = NULL;
                rb_err err;
                cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
                cr_assert_eq(rb_dyn_rnea(m, ws, s.q, s.nu, s.nud, NULL, 0, s.tau, &err), RB_OK, "%s", err.msg);
                rb_dyn_free(ws);
                memcpy(known, s.tau, sizeof known);
                s.ext[0] = (rb_ext_wrench){0, RB_DYN_BODY, {0}};
                s.ext[0].frame = frame(m, m->bodies[0].name);
                memcpy(s.ext[0].w, known, sizeof known);
                s.n_ext = 1;
            }
            for (size_t i = 0; i < 3; i++)
                s.acc[i] = s.gyro[i] = (int)trng_index(&r, m->n_frames);
            s.n_acc = s.n_gyro = (s.acc[0] != s.acc[1] && s.acc[1] != s.acc[2] && s.acc[0] != s.acc[2]) ? 3 : 1;
            readings(m, &s);
            rb_map_config c;
            exact_config(&c, &s);
            int kf[1] = {floating ? frame(m, m->bodies[0].name) : 0};
            if (floating)
                c.known = kf, c.n_known = 1, c.var_known = vars;
            for (int dense = 0; dense < 2; dense++) {
                c.dense = dense;
                rb_map *map = make(m, &c);
                rb_map_out o;
                step(map, &s, known, &o);
                expect_close(o.tau, s.tau + (s.nv - s.n), s.n, 1e-6, dense ? "dense tau" : "sparse tau");
                rb_map_free(map);
            }
            rb_model_free(m);
        }
}

/* Noisy readings, a prior everywhere: the two solvers agree on everything they output. */
Test(observers_map, sparse_and_dense_agree_with_noise)
{
    rb_model *m = load_humanoid(true);
    scene s;
    humanoid_scene(m, &s, 5);
    trng r = {99};
    for (size_t i = 0; i < 6 * s.n_ft; i++)
        s.y_ft[i] += trng_uniform(&r, -1, 1);
    for (size_t i = 0; i < 9; i++)
        s.y_acc[i] += trng_uniform(&r, -0.1, 0.1), s.y_gyro[i] += trng_uniform(&r, -0.01, 0.01);
    for (size_t i = 0; i < s.n; i++)
        s.nud[6 + i] += trng_uniform(&r, -1, 1);
    rb_map_config c;
    rb_map_config_init(&c);
    double v[64];
    for (size_t i = 0; i < 64; i++)
        v[i] = 0.01 + 0.001 * (double)i;
    c.ft = s.ft, c.n_ft = s.n_ft, c.var_ft = v, c.acc = s.acc, c.n_acc = 3, c.var_acc = v;
    c.gyro = s.gyro, c.n_gyro = 3, c.var_gyro = v, c.ddq = true, c.var_ddq = v;
    int unk[3] = {s.ext[0].frame, s.ext[1].frame, s.ext[2].frame};
    c.unknown = unk, c.n_unknown = 3;
    rb_map_out o[2];
    rb_map *map[2];
    for (int dense = 0; dense < 2; dense++) {
        c.dense = dense;
        map[dense] = make(m, &c);
        step(map[dense], &s, NULL, &o[dense]);
    }
    expect_close(o[0].tau, o[1].tau, s.n, 1e-8, "tau");
    expect_close(o[0].tau_std, o[1].tau_std, s.n, 1e-7, "tau_std");
    expect_close(o[0].wrench, o[1].wrench, 18, 1e-8, "wrench");
    expect_close(o[0].wrench_std, o[1].wrench_std, 18, 1e-7, "wrench_std");
    expect_close(&o[0].residual, &o[1].residual, 1, 1e-8, "residual");
    cr_assert_gt(o[0].residual, 1.0, "noisy readings leave a residual (%g)", o[0].residual);
    for (size_t j = 0; j < s.n; j++)
        cr_assert(o[0].tau_std[j] > 0 && isfinite(o[0].tau_std[j]), "tau_std[%zu] %g", j, o[0].tau_std[j]);
    rb_map_free(map[0]);
    rb_map_free(map[1]);
    rb_model_free(m);
}

/* A NaN in one FT element drops that row only: the estimate is the one whose row has (almost) no weight. */
Test(observers_map, nan_in_one_ft_element_drops_that_row)
{
    rb_model *m = load_humanoid(true);
    scene s;
    humanoid_scene(m, &s, 6);
    trng r = {7};
    for (size_t i = 0; i < 6 * s.n_ft; i++)
        s.y_ft[i] += trng_uniform(&r, -1, 1);
    rb_map_config c;
    rb_map_config_init(&c);
    double v[64], vft[64];
    for (size_t i = 0; i < 64; i++)
        v[i] = vft[i] = 0.25;
    c.ft = s.ft, c.n_ft = s.n_ft, c.var_ft = vft, c.acc = s.acc, c.n_acc = 3, c.var_acc = v;
    c.gyro = s.gyro, c.n_gyro = 3, c.var_gyro = v, c.ddq = true, c.var_ddq = v;
    int unk[3] = {s.ext[0].frame, s.ext[1].frame, s.ext[2].frame};
    c.unknown = unk, c.n_unknown = 3;
    rb_map *full = make(m, &c);
    rb_map_out of;
    step(full, &s, NULL, &of);
    double keep[MAXS];
    memcpy(keep, of.tau, s.n * sizeof(double));
    vft[8] = 1e24; /* FT 1, element 2: no weight */
    rb_map *weak = make(m, &c);
    rb_map_out ow;
    step(weak, &s, NULL, &ow);
    vft[8] = 0.25;
    rb_map *nan = make(m, &c);
    s.y_ft[8] = NAN;
    rb_map_out on;
    step(nan, &s, NULL, &on);
    cr_assert_eq(on.dropped, 1);
    cr_assert_eq(on.rows + 1, of.rows);
    expect_close(on.tau, ow.tau, s.n, 1e-7, "tau without the row");
    double diff = 0;
    for (size_t j = 0; j < s.n; j++)
        diff += fabs(keep[j] - on.tau[j]);
    cr_assert_gt(diff, 1e-9, "the dropped row mattered");
    rb_map_diag d;
    rb_map_get_diag(nan, &d);
    cr_assert_eq(d.dropped, 1);
    rb_map_free(full);
    rb_map_free(weak);
    rb_map_free(nan);
    rb_model_free(m);
}

Test(observers_map, unobservable_wrenches_without_a_prior_are_named)
{
    rb_model *m = load_humanoid(true);
    scene s;
    humanoid_scene(m, &s, 8);
    rb_map_config c;
    exact_config(&c, &s);
    /* two unknown wrenches between the right leg FT and the foot FTs: the sub-model's balance fixes one */
    int unk[4] = {s.ext[0].frame, s.ext[2].frame, frame(m, "r_upper_leg"), frame(m, "r_lower_leg")};
    c.unknown = unk, c.n_unknown = 4;
    rb_map *map = NULL;
    rb_err err;
    cr_assert_eq(rb_map_alloc(m, &c, &map, &err), RB_ECONFIG);
    cr_assert_null(map);
    cr_assert(strstr(err.msg, "unobservable") && strstr(err.msg, "external wrench") && strstr(err.msg, "r_upper_leg") &&
                  strstr(err.msg, "r_lower_leg"),
              "%s", err.msg);
    cr_assert(!strstr(err.msg, "l_foot_front"), "only the culprits: %s", err.msg);
    /* with a prior it is fine */
    c.var_unknown = 1e4;
    cr_assert_eq(rb_map_alloc(m, &c, &map, &err), RB_OK, "%s", err.msg);
    rb_map_free(map);
    rb_model_free(m);
}

Test(observers_map, bad_configurations)
{
    rb_model *m = load_humanoid(true);
    scene s;
    humanoid_scene(m, &s, 9);
    rb_map_config c;
    exact_config(&c, &s);
    rb_map *map = NULL;
    rb_err err;
    double v[64];
    for (size_t i = 0; i < 64; i++)
        v[i] = 1;
    v[3] = 0;
    c.var_ft = v;
    cr_assert_eq(rb_map_alloc(m, &c, &map, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "var_ft[3]"), "%s", err.msg);
    v[3] = 1;
    c.var_dyn = -1;
    cr_assert_eq(rb_map_alloc(m, &c, &map, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "var_dyn"), "%s", err.msg);
    c.var_dyn = 1e-10;
    int bad_acc[3] = {s.acc[0], (int)m->n_frames + 4, s.acc[2]};
    c.acc = bad_acc;
    cr_assert_eq(rb_map_alloc(m, &c, &map, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "acc[1]") && strstr(err.msg, "not in model"), "%s", err.msg);
    c.acc = s.acc;
    /* an FT sensor whose joint is not a sensor joint: point it at the knee */
    rb_ft_sensor keep = m->ft[1];
    long knee = rb_model_body_index(m, "r_lower_leg");
    cr_assert_geq(knee, 0);
    m->ft[1].child_body = (int)knee, m->ft[1].parent_body = m->bodies[knee].parent;
    cr_assert_eq(rb_map_alloc(m, &c, &map, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "not a sensor joint") && strstr(err.msg, m->ft[1].name), "%s", err.msg);
    m->ft[1] = keep;
    cr_assert_null(map);
    rb_model_free(m);
}

Test(observers_map, floating_base_without_gyroscope_is_flagged)
{
    rb_model *m = load_humanoid(true);
    scene s;
    humanoid_scene(m, &s, 10);
    rb_map_config c;
    rb_map_config_init(&c);
    double v[64];
    for (size_t i = 0; i < 64; i++)
        v[i] = 0.25;
    c.ft = s.ft, c.n_ft = s.n_ft, c.var_ft = v, c.acc = s.acc, c.n_acc = 3, c.var_acc = v, c.ddq = true;
    c.var_ddq = v;
    rb_map *map = make(m, &c);
    rb_map_diag d;
    rb_map_get_diag(map, &d);
    cr_assert(d.base_rate_unobserved);
    rb_map_free(map);
    c.gyro = s.gyro, c.n_gyro = 1, c.var_gyro = v;
    map = make(m, &c);
    rb_map_get_diag(map, &d);
    cr_assert(!d.base_rate_unobserved);
    rb_map_free(map);
    rb_model_free(m);
}

Test(observers_map, steps_allocate_nothing)
{
    if (!test_alloc_count_works())
        cr_skip_test("allocations cannot be counted here (valgrind)");
    test_alloc_count_init();
    rb_model *m = load_humanoid(true);
    scene s;
    humanoid_scene(m, &s, 12);
    rb_map_config c;
    rb_map_config_init(&c);
    double v[64];
    for (size_t i = 0; i < 64; i++)
        v[i] = 0.25;
    c.ft = s.ft, c.n_ft = s.n_ft, c.var_ft = v, c.acc = s.acc, c.n_acc = 3, c.var_acc = v;
    c.gyro = s.gyro, c.n_gyro = 3, c.var_gyro = v, c.ddq = true, c.var_ddq = v;
    int unk[3] = {s.ext[0].frame, s.ext[1].frame, s.ext[2].frame};
    c.unknown = unk, c.n_unknown = 3;
    int threads = openblas_get_num_threads();
    openblas_set_num_threads(1); /* as the roboest command runs: threaded level-3 OpenBLAS allocates per call */
    for (int dense = 0; dense < 2; dense++) {
        c.dense = dense;
        rb_map *map = make(m, &c);
        rb_map_out o;
        step(map, &s, NULL, &o);
        test_alloc_counting = 1;
        test_alloc_count = 0;
        for (int k = 0; k < 3; k++)
            step(map, &s, NULL, &o);
        test_alloc_counting = 0;
        cr_assert_eq(test_alloc_count, 0, "%s: %ld allocations", dense ? "dense" : "sparse", test_alloc_count);
        rb_map_free(map);
    }
    openblas_set_num_threads(threads);
    rb_model_free(m);
}

/* The map_dynamics stage (lib/estimators) on one sample with a NaN FT element, driven directly: a log's NaN never
 * reaches a stage (the pipeline refuses or holds it), a stage upstream may produce one. */
Test(observers_map, stage_drops_a_nan_ft_element_and_counts_it)
{
    static const char text[] =
        "{\"model\": {\"urdf\": \"" RB_SOURCE "/datasets/humanoid_lower_body.urdf\", \"base\": \"root_link\","
        "  \"joints\": [\"r_hip_pitch\", \"r_hip_roll\", \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", "
        "\"r_ankle_roll\"]},"
        " \"clock\": {\"rate\": 1000}, \"signals\": {\"q\": {\"channel\": \"q\"}, \"ft\": {\"channel\": \"ft\"}},"
        " \"stages\": [{\"id\": \"map\", \"type\": \"map_dynamics\", \"in\": {\"q\": \"q\", \"dq\": \"q\", \"ddq\": "
        "\"q\","
        "   \"ft\": \"ft\"}, \"out\": {\"tau\": \"tau\"}, \"params\": {\"ft_sensors\": [\"r_leg_ft_sensor\","
        "   \"r_foot_front_ft_sensor\", \"r_foot_rear_ft_sensor\"], \"unknown_wrenches\": [\"r_foot_front_contact\","
        "   \"r_foot_rear_contact\", \"r_upper_leg\"]}}],"
        " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\"]}]}";
    rb_registry *reg = NULL;
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "t", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    const rb_stage_type *ty = p->stages[0].type;
    cr_assert_eq(ty, &rb_stage_map_dynamics);
    rb_params params = {ty, p->stages[0].params};
    rb_port in[8] = {{6, NULL, NULL}, {6, NULL, NULL}, {6, NULL, NULL}, {18, NULL, NULL}}, out[5];
    double t0 = 0;
    rb_stage_setup st = {"map", &params, in, out, 1e-3, 2, &t0, p->model, "."};
    void *state = NULL;
    cr_assert_eq(ty->create(&st, &state, &err), RB_OK, "%s", err.msg);
    double q[6] = {0.1, -0.1, 0.05, 0.4, -0.2, 0.1}, zero[6] = {0}, ft[18];
    for (size_t i = 0; i < 18; i++)
        ft[i] = (i % 6 == 2 ? 80.0 : 1.0) * (i < 6 ? -1 : 1);
    double tau[6], sd[6], res[1], w[18], wsd[18];
    double *const o[5] = {tau, sd, w, wsd, res};
    const double *const cin[8] = {q, zero, zero, ft, NULL, NULL, NULL, NULL};
    cr_assert_eq(ty->step(state, 0, 0.0, cin, o, &err), RB_OK, "%s", err.msg);
    double full[6];
    memcpy(full, tau, sizeof full);
    ft[8] = NAN;
    cr_assert_eq(ty->step(state, 1, 1e-3, cin, o, &err), RB_OK, "%s", err.msg);
    for (size_t j = 0; j < 6; j++)
        cr_assert(isfinite(tau[j]), "joint %zu estimated", j);
    cr_assert_neq(memcmp(full, tau, sizeof full), 0, "the row's absence shows");
    const char *const *lines = NULL;
    size_t nl = ty->notes(state, &lines);
    cr_assert_eq(nl, 1);
    cr_assert(strstr(lines[0], "1 sensor rows dropped") && strstr(lines[0], "2 samples"), "%s", lines[0]);
    ty->destroy(state);
    rb_pipeline_free(p);
    rb_registry_free(reg);
}

/* Joint torque sensors instead of joint accelerations (fixed base): the MAP is then the forward dynamics, its joint
 * accelerations the ones that made the torques. */
Test(observers_map, torque_sensors_give_the_forward_dynamics)
{
    trng r = {4242};
    rb_model *m = random_tree(&r, 10, false);
    scene s;
    memset(&s, 0, sizeof s);
    s.nq = m->nq, s.nv = m->nv, s.n = m->n_dofs;
    random_state(&r, m, s.q, s.nu, 1.0, s.nud, 3.0);
    readings(m, &s);
    rb_map_config c;
    exact_config(&c, &s);
    c.ddq = false;
    int tq[MAXS];
    for (size_t j = 0; j < s.n; j++)
        tq[j] = (int)j;
    c.tau = tq, c.n_tau = s.n, c.var_tau = vars;
    rb_map *map = make(m, &c);
    rb_map_input in = {.s = s.q, .s_dot = s.nu, .tau = s.tau};
    rb_err err;
    cr_assert_eq(rb_map_step(map, &in, &err), RB_OK, "%s", err.msg);
    rb_map_out o;
    rb_map_get_out(map, &o);
    expect_close(o.tau, s.tau, s.n, 1e-6, "tau");
    for (size_t j = 0; j < s.n; j++) {
        rb_map_layout L;
        cr_assert_eq(rb_map_layout_of(map, (size_t)m->dof_body[j], &L, &err), RB_OK);
        cr_assert_geq(L.qdd, 0);
        expect_close(&o.d[L.qdd], &s.nud[j], 1, 1e-5, "qdd");
    }
    /* without them (and no prior) the joint accelerations are unobservable: named */
    c.n_tau = 0;
    rb_map *bad = NULL;
    cr_assert_eq(rb_map_alloc(m, &c, &bad, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "joint acceleration"), "%s", err.msg);
    rb_map_free(map);
    rb_model_free(m);
}
