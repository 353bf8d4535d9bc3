/* roboest's dynamics against an independent library: Orocos KDL 1.5 (Debian liborocos-kdl-dev), the
 * KDL model built from the same URDF by ROS kdl_parser through urdfdom, so neither roboest's URDF
 * parser nor its dynamics take part in the reference. The reference program is
 * tests/kdl/kdl_reference.cpp, built as RB_BUILD/kdl_reference; see it for the file formats.
 *
 * Seeded random states of high entropy (positions anywhere within the joint limits, or in [-pi, pi]
 * where there are none; velocities up to 4 rad/s, accelerations up to 30 rad/s^2, every joint at
 * once) are written to a state file; kdl_reference computes KDL's results; roboest computes the same
 * (rb_dyn_rnea, rb_dyn_gravity_forces, rb_dyn_mass_matrix) and every entry must agree to 1e-9 (N m,
 * kg m^2), absolute. Joints are matched by name: KDL's order (chain order, or the tree's q order)
 * is not roboest's joint-list order, and the tests give roboest deliberately different orders.
 *
 * Chains, made exact. A KDL::Chain ROOT -> TIP holds only the segments on the path, while roboest's
 * model of the same joints (a joint list; other joints locked at 0 and merged, fixed joints merged)
 * also carries every link hanging off the path. On ergoCub's right leg, r_foot_front (0.22 kg) hangs
 * on r_ankle_2 through the fixed FT-sensor joint r_foot_front_ft_sensor, so the two are different
 * physical systems. Two exact comparisons are made instead, each between identical systems:
 *   - chain: roboest loads the chain-only URDF written by tests/kdl/chain_urdf.py (the path's links
 *     and joints, nothing else), compared with KDL's ChainIdSolver_RNE / ChainDynParam on the KDL
 *     chain of the ORIGINAL URDF: RNEA, M and g;
 *   - restricted tree: roboest loads the whole URDF with the 6 leg joints as its joint list, compared
 *     with KDL's TreeIdSolver_RNE on the whole tree with every other joint held at q = qd = qdd = 0:
 *     RNEA, g (RNEA at rest) and M (by n RNEA calls: KDL 1.5 has no tree mass-matrix solver).
 * The test also checks that the two systems do differ on the leg (by more than 1e-3 N m), so the
 * chain-only URDF is not a no-op.
 * The whole tree: ergoCub with a fixed base at root_link and all 56 movable joints, against
 * TreeIdSolver_RNE: RNEA (and g and M as above). The four_joints models: chain and tree. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roboest/dynamics.h"
#include "roboest/model.h"
#include "support.h"

#define MODELS RB_SHARED "/models"
#define ERGOCUB MODELS "/ergoCubSN000.urdf"
#define KDL_REFERENCE RB_BUILD "/kdl_reference"
#define CHAIN_URDF RB_SOURCE "/tests/kdl/chain_urdf.py"
#define PYTHON "/usr/bin/python3"

static const double TOL = 1e-9;

/* the right leg's joints (KDL's chain order: r_hip_pitch, r_hip_roll, r_hip_yaw, r_knee, r_ankle_pitch,
 * r_ankle_roll) in another order, for roboest's joint list */
static const char *const LEG_SHUFFLED[] = {"r_knee",        "r_ankle_roll", "r_hip_pitch",
                                           "r_ankle_pitch", "r_hip_yaw",    "r_hip_roll"};

/* ---- scratch folder ------------------------------------------------------------------------------- */

typedef struct scratch {
    char dir[64];
    char path[256];
} scratch;

static void scratch_open(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/rb_kdl_XXXXXX");
    cr_assert_not_null(mkdtemp(s->dir), "mkdtemp: %s", strerror(errno));
}

static const char *scratch_file(scratch *s, const char *name)
{
    snprintf(s->path, sizeof s->path, "%s/%s", s->dir, name);
    return s->path;
}

static void scratch_close(scratch *s)
{
    DIR *d = opendir(s->dir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", s->dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(s->dir);
}

/* ---- running the reference tools ------------------------------------------------------------------- */

/* Run argv with stdout to out_path and stderr to err_path; the exit status, or -1. */
static int run(char *const argv[], const char *out_path, const char *err_path)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void log_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        cr_log_error("  %s", line);
    fclose(f);
}

static void run_or_fail(scratch *s, char *const argv[], const char *out_path)
{
    char err_path[256];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", s->dir);
    int rc = run(argv, out_path, err_path);
    if (rc != 0) {
        cr_log_error("%s exited with %d; its stderr:", argv[0], rc);
        log_file(err_path);
        if (rc == 127)
            cr_log_error("(cannot execute %s: build it first, see tests/kdl/kdl_reference.cpp)", argv[0]);
        scratch_close(s);
        cr_assert_fail("%s failed", argv[1]);
    }
}

/* ---- states ---------------------------------------------------------------------------------------- */

static uint64_t rng_state;

static double uniform(double lo, double hi)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

/* k states of a fixed-base model: rows [q (n), qd (n), qdd (n)] in roboest's joint order. */
static double *make_states(const rb_model *m, size_t k, uint64_t seed)
{
    size_t n = m->n_dofs;
    double *S = malloc(k * 3 * n * sizeof *S);
    cr_assert_not_null(S);
    rng_state = seed;
    for (size_t r = 0; r < k; r++)
        for (size_t i = 0; i < n; i++) {
            double lo = m->dof_lower[i], hi = m->dof_upper[i];
            if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
                lo = -M_PI, hi = M_PI;
            S[r * 3 * n + i] = uniform(lo, hi);
            S[r * 3 * n + n + i] = uniform(-4.0, 4.0);
            S[r * 3 * n + 2 * n + i] = uniform(-30.0, 30.0);
        }
    return S;
}

static void write_states(const char *path, const rb_model *m, size_t k, const double *S)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fprintf(f, "# test_dynamics_kdl: %zu states, rows q qd qdd\njoints", k);
    for (size_t i = 0; i < m->n_dofs; i++)
        fprintf(f, " %s", m->dof_names[i]);
    fputc('\n', f);
    for (size_t r = 0; r < k; r++) {
        for (size_t i = 0; i < 3 * m->n_dofs; i++)
            fprintf(f, "%s%.17g", i ? " " : "", S[r * 3 * m->n_dofs + i]);
        fputc('\n', f);
    }
    cr_assert_eq(fclose(f), 0);
}

/* ---- kdl_reference output ---------------------------------------------------------------------------- */

typedef struct kdl_out {
    size_t n, n_states;
    long *dof;    /* roboest dof index of each KDL joint (KDL order) */
    double *tau;  /* n_states x n */
    double *grav; /* n_states x n */
    double *mass; /* n_states x n x n, KDL order */
    int has_mass;
} kdl_out;

static void kdl_out_free(kdl_out *o)
{
    free(o->dof), free(o->tau), free(o->grav), free(o->mass);
    memset(o, 0, sizeof *o);
}

/* Read `n_values` numbers after a "KEY COUNT" prefix already split off; checks COUNT. */
static void read_numbers(char **save, size_t count_expected, double *dst, const char *key)
{
    char *tok = strtok_r(NULL, " \t\n", save);
    cr_assert_not_null(tok, "%s: no count", key);
    cr_assert_eq(strtoull(tok, NULL, 10), count_expected, "%s: count %s, expected %zu", key, tok, count_expected);
    for (size_t i = 0; i < count_expected; i++) {
        tok = strtok_r(NULL, " \t\n", save);
        cr_assert_not_null(tok, "%s: %zu numbers, expected %zu", key, i, count_expected);
        char *end;
        dst[i] = strtod(tok, &end);
        cr_assert(*end == '\0', "%s: bad number %s", key, tok);
    }
}

static void read_kdl(const char *path, const rb_model *m, size_t n_states, kdl_out *o)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    memset(o, 0, sizeof *o);
    char *line = NULL, *save;
    size_t cap = 0;
    long state = -1;
    while (getline(&line, &cap, f) > 0) {
        char *key = strtok_r(line, " \t\n", &save);
        if (!key || key[0] == '#' || !strcmp(key, "mode"))
            continue;
        if (!strcmp(key, "joints")) {
            o->n = strtoull(strtok_r(NULL, " \t\n", &save), NULL, 10);
            cr_assert_eq(o->n, m->n_dofs, "KDL has %zu joints, roboest %zu", o->n, m->n_dofs);
            o->dof = calloc(o->n, sizeof *o->dof);
            o->tau = calloc(n_states * o->n, sizeof *o->tau);
            o->grav = calloc(n_states * o->n, sizeof *o->grav);
            o->mass = calloc(n_states * o->n * o->n, sizeof *o->mass);
            cr_assert(o->dof && o->tau && o->grav && o->mass);
            for (size_t i = 0; i < o->n; i++) {
                char *name = strtok_r(NULL, " \t\n", &save);
                cr_assert_not_null(name);
                o->dof[i] = rb_model_dof_index(m, name);
                cr_assert_geq(o->dof[i], 0, "KDL joint %s is not a roboest dof", name);
            }
        } else if (!strcmp(key, "state")) {
            state = strtol(strtok_r(NULL, " \t\n", &save), NULL, 10);
            cr_assert(o->n > 0 && state == (long)o->n_states && (size_t)state < n_states, "unexpected state %ld",
                      state);
            o->n_states++;
        } else {
            cr_assert_geq(state, 0, "%s before any state", key);
            if (!strcmp(key, "tau"))
                read_numbers(&save, o->n, o->tau + state * o->n, key);
            else if (!strcmp(key, "gravity"))
                read_numbers(&save, o->n, o->grav + state * o->n, key);
            else if (!strcmp(key, "mass") || !strcmp(key, "mass_by_rnea")) {
                read_numbers(&save, o->n * o->n, o->mass + state * o->n * o->n, key);
                o->has_mass = 1;
            } else
                cr_assert_fail("%s: unknown line %s", path, key);
        }
    }
    free(line);
    fclose(f);
    cr_assert_eq(o->n_states, n_states, "KDL gave %zu states of %zu", o->n_states, n_states);
    cr_assert(o->has_mass);
}

/* ---- the comparison ------------------------------------------------------------------------------------ */

typedef struct errs {
    double tau, grav, mass; /* worst absolute differences */
} errs;

/* roboest's RNEA, g and M on the states against KDL's; logs the first disagreements. */
static errs compare(const char *label, const rb_model *m, const double *S, const kdl_out *o)
{
    size_t n = m->n_dofs;
    rb_err err;
    rb_dyn *ws = NULL;
    errs e = {0, 0, 0};
    int logged = 0;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    double *tau = malloc(n * sizeof *tau), *g = malloc(n * sizeof *g), *Md = malloc(n * n * sizeof *Md);
    cr_assert(tau && g && Md);
    rb_mat M = rb_mat_view(Md, n, n, n);
    for (size_t k = 0; k < o->n_states; k++) {
        const double *q = S + k * 3 * n, *qd = q + n, *qdd = q + 2 * n;
        cr_assert_eq(rb_dyn_rnea(m, ws, q, qd, qdd, NULL, 0, tau, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_dyn_gravity_forces(m, ws, q, g, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_dyn_mass_matrix(m, ws, q, &M, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < n; i++) {
            size_t a = (size_t)o->dof[i];
            double dt = fabs(tau[a] - o->tau[k * n + i]), dg = fabs(g[a] - o->grav[k * n + i]);
            if ((dt > TOL || dg > TOL || isnan(dt) || isnan(dg)) && logged++ < 8)
                cr_log_error("%s state %zu joint %s: tau roboest %.17g KDL %.17g; g roboest %.17g KDL %.17g", label, k,
                             m->dof_names[a], tau[a], o->tau[k * n + i], g[a], o->grav[k * n + i]);
            e.tau = fmax(e.tau, isnan(dt) ? INFINITY : dt);
            e.grav = fmax(e.grav, isnan(dg) ? INFINITY : dg);
            for (size_t j = 0; j < n; j++) {
                size_t b = (size_t)o->dof[j];
                double dm = fabs(Md[a * n + b] - o->mass[(k * n + i) * n + j]);
                if ((dm > TOL || isnan(dm)) && logged++ < 8)
                    cr_log_error("%s state %zu M(%s, %s): roboest %.17g KDL %.17g", label, k, m->dof_names[a],
                                 m->dof_names[b], Md[a * n + b], o->mass[(k * n + i) * n + j]);
                e.mass = fmax(e.mass, isnan(dm) ? INFINITY : dm);
            }
        }
    }
    free(tau), free(g), free(Md);
    rb_dyn_free(ws);
    cr_log_info("%s: %zu states, max |difference| RNEA %.3g N m, g %.3g N m, M %.3g kg m^2", label, o->n_states, e.tau,
                e.grav, e.mass);
    return e;
}

static rb_model *load(const char *path, const char *const *joints, size_t n_joints)
{
    rb_model_opts opts = {.joints = joints, .n_joints = n_joints};
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(path, joints ? &opts : NULL, &m, &err), RB_OK, "%s", err.msg);
    cr_assert(!m->floating);
    return m;
}

/* Compare roboest's model `m` with kdl_reference run on `kdl_urdf` in `mode` ("chain ROOT TIP" or
 * "tree ROOT"): k seeded random states. Returns the worst differences (and asserts them <= TOL).
 * kdl_out, if not NULL, receives KDL's results (the caller frees them). */
static errs check_case(scratch *s, const char *label, const rb_model *m, const char *kdl_urdf, const char *mode,
                       const char *root, const char *tip, size_t k, uint64_t seed, double **states_out,
                       kdl_out *kdl_keep)
{
    double *S = make_states(m, k, seed);
    char states_path[256], out_path[256];
    snprintf(states_path, sizeof states_path, "%s", scratch_file(s, "states.txt"));
    snprintf(out_path, sizeof out_path, "%s", scratch_file(s, "kdl.txt"));
    write_states(states_path, m, k, S);
    char *argv[8] = {KDL_REFERENCE, (char *)kdl_urdf, (char *)mode, (char *)root, NULL, NULL, NULL, NULL};
    if (tip)
        argv[4] = (char *)tip, argv[5] = states_path;
    else
        argv[4] = states_path;
    run_or_fail(s, argv, out_path);
    kdl_out o;
    read_kdl(out_path, m, k, &o);
    errs e = compare(label, m, S, &o);
    cr_expect_leq(e.tau, TOL, "%s: RNEA differs from KDL by %.3g N m (seed %llu)", label, e.tau,
                  (unsigned long long)seed);
    cr_expect_leq(e.grav, TOL, "%s: gravity torques differ from KDL by %.3g N m (seed %llu)", label, e.grav,
                  (unsigned long long)seed);
    cr_expect_leq(e.mass, TOL, "%s: mass matrix differs from KDL by %.3g kg m^2 (seed %llu)", label, e.mass,
                  (unsigned long long)seed);
    if (kdl_keep)
        *kdl_keep = o;
    else
        kdl_out_free(&o);
    if (states_out)
        *states_out = S;
    else
        free(S);
    return e;
}

/* The chain-only URDF of root -> tip (tests/kdl/chain_urdf.py) into the scratch folder. */
static const char *chain_only_urdf(scratch *s, const char *urdf, const char *root, const char *tip)
{
    static char out[256];
    snprintf(out, sizeof out, "%s", scratch_file(s, "chain.urdf"));
    char stdout_path[256];
    snprintf(stdout_path, sizeof stdout_path, "%s", scratch_file(s, "chain_stdout.txt"));
    char *argv[] = {PYTHON, CHAIN_URDF, (char *)urdf, (char *)root, (char *)tip, out, NULL};
    run_or_fail(s, argv, stdout_path);
    return out;
}

/* ---- tests -------------------------------------------------------------------------------------------- */

Test(dynamics_kdl, ergocub_right_leg_chain_only_urdf)
{
    test_need_shared("models/ergoCubSN000.urdf");
    scratch s;
    scratch_open(&s);
    const char *urdf = chain_only_urdf(&s, ERGOCUB, "root_link", "r_sole");
    rb_model *m = load(urdf, LEG_SHUFFLED, 6);
    cr_assert_eq(m->n_dofs, 6);
    /* KDL's chain taken from the ORIGINAL URDF: the chain-only file is roboest's input only */
    check_case(&s, "ergoCub right leg, chain", m, ERGOCUB, "chain", "root_link", "r_sole", 40, 0x5eed0001, NULL, NULL);
    rb_model_free(m);
    scratch_close(&s);
}

Test(dynamics_kdl, ergocub_right_leg_in_full_model)
{
    test_need_shared("models/ergoCubSN000.urdf");
    scratch s;
    scratch_open(&s);
    rb_model *m = load(ERGOCUB, LEG_SHUFFLED, 6);
    double *S = NULL;
    kdl_out tree;
    check_case(&s, "ergoCub right leg, full model (other joints at 0)", m, ERGOCUB, "tree", "root_link", NULL, 40,
               0x5eed0002, &S, &tree);

    /* The KDL chain on the same states is a different physical system (r_foot_front is not on the
     * path): the chain-only URDF above is needed for an exact chain comparison. */
    char states_path[256], out_path[256];
    snprintf(states_path, sizeof states_path, "%s", scratch_file(&s, "states.txt"));
    snprintf(out_path, sizeof out_path, "%s", scratch_file(&s, "kdl_chain.txt"));
    char *argv[] = {KDL_REFERENCE, ERGOCUB, "chain", "root_link", "r_sole", states_path, NULL};
    run_or_fail(&s, argv, out_path);
    kdl_out chain;
    read_kdl(out_path, m, 40, &chain);
    double gap = 0.0;
    for (size_t i = 0; i < 6; i++) {
        size_t j = 0; /* the same joint in the tree output (KDL's tree order may differ from the chain's) */
        while (j < 6 && tree.dof[j] != chain.dof[i])
            j++;
        cr_assert_lt(j, 6);
        for (size_t k = 0; k < 40; k++)
            gap = fmax(gap, fabs(chain.grav[k * 6 + i] - tree.grav[k * 6 + j]));
    }
    cr_log_info("KDL chain vs KDL tree on the right leg: gravity torques differ by up to %.3g N m", gap);
    cr_expect_gt(gap, 1e-3, "the leg chain and the full model should differ by r_foot_front's weight");
    kdl_out_free(&chain);
    kdl_out_free(&tree);
    free(S);
    rb_model_free(m);
    scratch_close(&s);
}

Test(dynamics_kdl, ergocub_whole_tree)
{
    test_need_shared("models/ergoCubSN000.urdf");
    scratch s;
    scratch_open(&s);
    rb_model *m = load(ERGOCUB, NULL, 0);
    cr_assert_eq(m->n_dofs, 56);
    check_case(&s, "ergoCub whole tree (56 joints)", m, ERGOCUB, "tree", "root_link", NULL, 12, 0x5eed0003, NULL, NULL);
    rb_model_free(m);
    scratch_close(&s);
}

static void four_joints(const char *file, uint64_t seed)
{
    char urdf[256], label[128];
    snprintf(urdf, sizeof urdf, "%s/%s", MODELS, file);
    static const char *const order[] = {"joint_3", "joint_1", "joint_4", "joint_2"};
    scratch s;
    scratch_open(&s);
    rb_model *m = load(urdf, order, 4);
    snprintf(label, sizeof label, "%s, tree", file);
    check_case(&s, label, m, urdf, "tree", "base_link", NULL, 40, seed, NULL, NULL);
    rb_model_free(m);
    /* chain base_link -> link_6: the chain-only URDF (here the same bodies, minus frames) */
    const char *chain = chain_only_urdf(&s, urdf, "base_link", "link_6");
    m = load(chain, order, 4);
    snprintf(label, sizeof label, "%s, chain", file);
    check_case(&s, label, m, urdf, "chain", "base_link", "link_6", 40, seed + 1, NULL, NULL);
    rb_model_free(m);
    scratch_close(&s);
}

Test(dynamics_kdl, four_joints_two_sensors)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    four_joints("four_joints_two_sensors.urdf", 0x5eed0010);
}

Test(dynamics_kdl, four_joints_two_ft_three_imu)
{
    test_need_shared("models/four_joints_two_ft_three_imu.urdf");
    four_joints("four_joints_two_ft_three_imu.urdf", 0x5eed0020);
}
