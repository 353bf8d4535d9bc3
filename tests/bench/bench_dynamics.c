/* roboest side of the dynamics benchmark (scripts/bench-dynamics.sh runs it next to bench_kdl.cpp):
 * per-call times of rb_dyn_rnea, rb_dyn_mass_matrix and rb_dyn_aba on ergoCub. Never a timed test: it
 * prints figures.
 *
 * Cases (the same as bench_kdl.cpp):
 *   leg6     right leg, 6 DoF, fixed base at root_link: variant "roboest" loads the whole URDF with the
 *            6 joints as its joint list (the other joints locked, what a user does); variant
 *            "roboest_chain", when CHAIN_URDF is given, the chain-only URDF of root_link -> r_sole
 *            (tests/kdl/chain_urdf.py: exactly the bodies of KDL's chain)
 *   fixed32  32 DoF, fixed base at root_link (JOINTS32; the other 24 movable joints, hands and fingers,
 *            locked at 0)
 *   float38  the same 32 joints with a floating base (6 + 32 velocity coordinates, q of dim 7 + 32)
 *   float62  every movable joint (56) with a floating base (roboest only: not in bench_kdl.cpp)
 * Algorithms: rnea (rb_dyn_rnea, no external wrench), mass (rb_dyn_mass_matrix, CRBA), aba (rb_dyn_aba),
 * fd (rb_dyn_fd_cholesky: the mass matrix, the bias forces and a Cholesky solve).
 *
 * The same source is built against the library of another commit (make bench-dynamics BASELINE=...) to print
 * before/after ratios: it uses only the API that commit a661b3c already had.
 *
 * Timing (the thread's CPU time, bench_timing.h): N_STATES random states precomputed (positions within the joint limits, or [-pi, pi]; a random
 * unit quaternion and position for the floating base; velocities up to 3, accelerations and torques up
 * to 10), a warm-up of 0.2 s, then BATCHES batches of about 10 ms of calls each, cycling through the
 * states; the figure is the median over batches of the time per call.
 *
 * Usage: bench_dynamics URDF [CHAIN_URDF] [BATCHES]   (BATCHES default 31)
 * Output, one line per measurement:  CASE ALGORITHM VARIANT MICROSECONDS_PER_CALL */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/dynamics.h"
#include "roboest/model.h"
#include "bench_timing.h"

static const char *const JOINTS_LEG[] = {"r_hip_pitch", "r_hip_roll",    "r_hip_yaw",
                                         "r_knee",      "r_ankle_pitch", "r_ankle_roll"};

/* legs 12, torso 2 (torso_pitch is a fixed joint in ergoCubSN000.urdf), arms 2 x 7, neck 3, and the head
 * camera tilt to make 32 */
static const char *const JOINTS32[] = {
    "r_hip_pitch", "r_hip_roll",   "r_hip_yaw",        "r_knee",           "r_ankle_pitch",   "r_ankle_roll",
    "l_hip_pitch", "l_hip_roll",   "l_hip_yaw",        "l_knee",           "l_ankle_pitch",   "l_ankle_roll",
    "torso_roll",  "torso_yaw",    "r_shoulder_pitch", "r_shoulder_roll",  "r_shoulder_yaw",  "r_elbow",
    "r_wrist_yaw", "r_wrist_roll", "r_wrist_pitch",    "l_shoulder_pitch", "l_shoulder_roll", "l_shoulder_yaw",
    "l_elbow",     "l_wrist_yaw",  "l_wrist_roll",     "l_wrist_pitch",    "neck_pitch",      "neck_roll",
    "neck_yaw",    "camera_tilt"};

enum { N_STATES = 256 };
enum { ALG_RNEA, ALG_MASS, ALG_ABA, ALG_FD };

typedef struct bench_case {
    const char *name, *variant;
    rb_model *model;
    rb_dyn *ws;
    double *q, *nu, *nu_dot, *tau; /* N_STATES each */
    double *out;                   /* nv x nv scratch */
} bench_case;

static uint64_t rng_state = 1;

static double uniform(double lo, double hi)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

static void die(const char *what, const rb_err *err)
{
    fprintf(stderr, "bench_dynamics: %s: %s\n", what, err ? err->msg : "out of memory");
    exit(1);
}

static void setup(bench_case *c, const char *name, const char *variant, const char *urdf, const char *const *joints,
                  size_t n_joints, bool floating)
{
    rb_err err;
    rb_model_opts opts = {.joints = joints, .n_joints = n_joints, .floating = floating};
    memset(c, 0, sizeof *c);
    c->name = name, c->variant = variant;
    if (rb_model_load_urdf(urdf, &opts, &c->model, &err) != RB_OK)
        die(urdf, &err);
    if (rb_dyn_alloc(c->model, &c->ws, &err) != RB_OK)
        die("rb_dyn_alloc", &err);
    const rb_model *m = c->model;
    size_t nq = m->nq, nv = m->nv, off_q = m->floating ? 7 : 0;
    c->q = malloc(N_STATES * nq * sizeof *c->q);
    c->nu = malloc(N_STATES * nv * sizeof *c->nu);
    c->nu_dot = malloc(N_STATES * nv * sizeof *c->nu_dot);
    c->tau = malloc(N_STATES * nv * sizeof *c->tau);
    c->out = malloc(nv * nv * sizeof *c->out);
    if (!c->q || !c->nu || !c->nu_dot || !c->tau || !c->out)
        die("setup", NULL);
    for (size_t k = 0; k < N_STATES; k++) {
        double *q = c->q + k * nq;
        if (m->floating) {
            double qn = 0.0;
            for (int i = 0; i < 3; i++)
                q[i] = uniform(-1.0, 1.0);
            for (int i = 3; i < 7; i++)
                q[i] = uniform(-1.0, 1.0), qn += q[i] * q[i];
            for (int i = 3; i < 7; i++)
                q[i] /= sqrt(qn);
        }
        for (size_t i = 0; i < m->n_dofs; i++) {
            double lo = m->dof_lower[i], hi = m->dof_upper[i];
            if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
                lo = -M_PI, hi = M_PI;
            q[off_q + i] = uniform(lo, hi);
        }
        for (size_t i = 0; i < nv; i++) {
            c->nu[k * nv + i] = uniform(-3.0, 3.0);
            c->nu_dot[k * nv + i] = uniform(-10.0, 10.0);
            c->tau[k * nv + i] = uniform(-10.0, 10.0);
        }
    }
}

static void release(bench_case *c)
{
    rb_dyn_free(c->ws);
    rb_model_free(c->model);
    free(c->q), free(c->nu), free(c->nu_dot), free(c->tau), free(c->out);
}

static volatile double sink;

static double call(bench_case *c, int alg, size_t k)
{
    const rb_model *m = c->model;
    size_t nq = m->nq, nv = m->nv;
    rb_err err;
    int rc = RB_OK;
    switch (alg) {
    case ALG_RNEA:
        rc = rb_dyn_rnea(m, c->ws, c->q + k * nq, c->nu + k * nv, c->nu_dot + k * nv, NULL, 0, c->out, &err);
        break;
    case ALG_MASS: {
        rb_mat M = rb_mat_view(c->out, nv, nv, nv);
        rc = rb_dyn_mass_matrix(m, c->ws, c->q + k * nq, &M, &err);
        break;
    }
    case ALG_ABA:
        rc = rb_dyn_aba(m, c->ws, c->q + k * nq, c->nu + k * nv, c->tau + k * nv, NULL, 0, c->out, &err);
        break;
    default:
        rc = rb_dyn_fd_cholesky(m, c->ws, c->q + k * nq, c->nu + k * nv, c->tau + k * nv, NULL, 0, c->out, &err);
        break;
    }
    if (rc != RB_OK)
        die(c->name, &err);
    return c->out[0];
}

/* Median over batches of the microseconds per call. */
static double time_per_call_us(bench_case *c, int alg, int batches)
{
    size_t k = 0;
    long calls = 0;
    double acc = 0.0, t0 = thread_seconds(), t;
    while ((t = thread_seconds()) - t0 < 0.2) {
        for (int i = 0; i < 16; i++)
            acc += call(c, alg, k++ % N_STATES);
        calls += 16;
    }
    long reps = (long)(0.01 / ((t - t0) / (double)calls));
    if (reps < 1)
        reps = 1;
    double *per = malloc((size_t)batches * sizeof *per);
    if (!per)
        die("timing", NULL);
    for (int b = 0; b < batches; b++) {
        double start = thread_seconds();
        for (long i = 0; i < reps; i++)
            acc += call(c, alg, k++ % N_STATES);
        per[b] = (thread_seconds() - start) * 1e6 / (double)reps;
    }
    sink = acc;
    qsort(per, (size_t)batches, sizeof *per, cmp_double);
    double med = per[batches / 2];
    free(per);
    return med;
}

static void run_case(bench_case *c, int batches)
{
    static const char *const names[] = {"rnea", "mass", "aba", "fd"};
    for (int alg = ALG_RNEA; alg <= ALG_FD; alg++) {
        printf("%s %s %s %.4f\n", c->name, names[alg], c->variant, time_per_call_us(c, alg, batches));
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_dynamics URDF [CHAIN_URDF] [BATCHES]\n");
        return 2;
    }
    const char *urdf = argv[1], *chain = argc >= 3 && argv[2][0] ? argv[2] : NULL;
    int batches = argc == 4 ? atoi(argv[3]) : 31;
    if (batches < 1) {
        fprintf(stderr, "bench_dynamics: BATCHES must be positive\n");
        return 2;
    }
    bench_case leg, leg_chain, f32, f38, f62;
    setup(&leg, "leg6", "roboest", urdf, JOINTS_LEG, 6, false);
    if (chain)
        setup(&leg_chain, "leg6", "roboest_chain", chain, JOINTS_LEG, 6, false);
    setup(&f32, "fixed32", "roboest", urdf, JOINTS32, 32, false);
    setup(&f38, "float38", "roboest", urdf, JOINTS32, 32, true);
    setup(&f62, "float62", "roboest", urdf, NULL, 0, true);
    if (f32.model->nv != 32 || f38.model->nv != 38 || f62.model->nv != 62)
        die("unexpected number of velocity coordinates", NULL);
    char chain_bodies[64] = "";
    if (chain)
        snprintf(chain_bodies, sizeof chain_bodies, " (chain-only URDF %zu)", leg_chain.model->n_bodies);
    printf("# bench_dynamics: roboest, %s; bodies: leg6 %zu%s, fixed32 %zu, float38 %zu, float62 %zu; microseconds "
           "per call, median of %d batches\n",
           urdf, leg.model->n_bodies, chain_bodies, f32.model->n_bodies, f38.model->n_bodies, f62.model->n_bodies,
           batches);
    run_case(&leg, batches);
    if (chain)
        run_case(&leg_chain, batches);
    run_case(&f32, batches);
    run_case(&f38, batches);
    run_case(&f62, batches);
    release(&leg);
    if (chain)
        release(&leg_chain);
    release(&f32);
    release(&f38);
    release(&f62);
    return 0;
}
