/* lib/sim: the walking gait (roboest/sim_gait.h): the thesis's time-based schedule, footholds, the ZMP reference,
 * the CoM by Kajita's preview control (planned once, at set-up), the swing-foot spline, and the engine's side:
 * the feet's contacts switched by the phase, the references the IK tracks (ik.c), the ZMP of the contact wrenches. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

#define PHASE_EPS 1e-9 /* s: phase boundaries within this of t count as reached */

/* ---- schedule ------------------------------------------------------------------------------------------------- */

rb_sim_gait rb_sim_gait_defaults(void)
{
    rb_sim_gait g = {0};
    g.ds = 0.9, g.ss = 0.6, g.start = 0.5, g.stop = 10.1;
    g.first = RB_GAIT_LEFT;
    g.step_length = 0.06, g.step_width = NAN, g.swing_height = 0.03, g.com_height = NAN;
    g.feet[0] = g.feet[1] = -1;
    g.preview = 1.6, g.ik_T = 0.02;
    g.feedforward = RB_GAIT_FF_DYNAMICS;
    return g;
}

int rb_sim_gait_validate(const rb_sim_gait *g, rb_err *err)
{
    if (!g)
        return rb_err_set(err, RB_EINVAL, "rb_sim_gait_validate: NULL gait");
    struct {
        const char *key;
        double v, lo, hi;
        bool open_lo;
    } r[] = {
        {"ds", g->ds, 0, 1e3, true},
        {"ss", g->ss, 0, 1e3, true},
        {"start", g->start, 0, 1e6, false},
        {"stand", g->stand, 0, 1e6, false},
        {"stop", g->stop, 0, 1e6, false},
        {"step_length", g->step_length, -0.2, 0.2, false},
        {"swing_height", g->swing_height, 0, 0.2, true},
        {"preview", g->preview, 0.1, 5, false},
        {"ik_T", g->ik_T, 0, 1e3, true},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (!(r[i].open_lo ? r[i].v > r[i].lo : r[i].v >= r[i].lo) || !(r[i].v <= r[i].hi))
            return rb_err_set(err, RB_ECONFIG, "gait.%s: must be in %c%g, %g] (is %g)", r[i].key,
                              r[i].open_lo ? '(' : '[', r[i].lo, r[i].hi, r[i].v);
    if (!isnan(g->step_width) && !(g->step_width > 0 && g->step_width <= 0.6))
        return rb_err_set(err, RB_ECONFIG, "gait.step_width: must be in (0, 0.6] m (is %g)", g->step_width);
    if (!isnan(g->com_height) && !isfinite(g->com_height))
        return rb_err_set(err, RB_ECONFIG, "gait.com_height must be finite");
    if (g->first != RB_GAIT_LEFT && g->first != RB_GAIT_RIGHT)
        return rb_err_set(err, RB_ECONFIG, "gait.first: must be left or right");
    if (g->feedforward != RB_GAIT_FF_DYNAMICS && g->feedforward != RB_GAIT_FF_GRAVITY)
        return rb_err_set(err, RB_ECONFIG, "gait.feedforward: must be dynamics or gravity");
    if (g->stand > 0 && !(g->stand < g->start))
        return rb_err_set(err, RB_ECONFIG, "gait.stand: must be before the first single support (start %g s; is %g s)",
                          g->start, g->stand);
    if (rb_gait_n_steps(g) == 0)
        return rb_err_set(err, RB_ECONFIG, "gait.stop: no single support fits (is %g s; must be >= start + ss = %g s)",
                          g->stop, g->start + g->ss);
    return RB_OK;
}

size_t rb_gait_n_steps(const rb_sim_gait *g)
{
    double span = g->stop - g->start - g->ss, cycle = g->ss + g->ds;
    if (!(span >= -PHASE_EPS) || !(cycle > 0) || !isfinite(span))
        return 0;
    return (size_t)floor((span + PHASE_EPS) / cycle) + 1;
}

/* The stance foot of single support k. */
static rb_gait_foot stance_of(const rb_sim_gait *g, size_t k) { return (rb_gait_foot)((g->first + k) % 2); }

rb_gait_phase rb_gait_phase_at(const rb_sim_gait *g, double t, size_t *step, double *s)
{
    size_t n = rb_gait_n_steps(g), k = SIZE_MAX;
    double u = t - g->start, cycle = g->ss + g->ds, prog = 0.0;
    rb_gait_phase ph = RB_GAIT_DS;
    if (n > 0 && u >= -PHASE_EPS) {
        double kf = floor((u + PHASE_EPS) / cycle), tau = u - kf * cycle;
        k = kf >= (double)n ? n - 1 : (size_t)kf;
        if (kf < (double)n && tau < g->ss - PHASE_EPS) {
            prog = tau > 0 ? tau / g->ss : 0.0;
            ph = stance_of(g, k) == RB_GAIT_LEFT ? RB_GAIT_LS : RB_GAIT_RS;
        }
    }
    if (step)
        *step = k;
    if (s)
        *s = prog;
    return ph;
}

void rb_gait_swing(const double from[3], const double to[3], double height, double s, double duration, double p[3],
                   double v[3])
{
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    double s2 = s * s, s3 = s2 * s, r = 1 - s;
    double sig = s3 * (10 - 15 * s + 6 * s2), dsig = 30 * s2 * r * r;
    double bump = 64 * height * s3 * r * r * r, dbump = 192 * height * s2 * r * r * (1 - 2 * s);
    for (int i = 0; i < 3; i++) {
        p[i] = from[i] + (to[i] - from[i]) * sig + (i == 2 ? bump : 0.0);
        if (v)
            v[i] = ((to[i] - from[i]) * dsig + (i == 2 ? dbump : 0.0)) / duration;
    }
}

/* ---- the plan ---------------------------------------------------------------------------------------------------- */

struct rb_gait_plan {
    rb_sim_gait g;
    size_t n;               /* single supports */
    double feet0[2][3];     /* initial feet */
    double *hold;           /* 3 per single support: where its swing foot lands */
    double p0[2], mid[2];   /* initial CoM (x, y); the feet's midpoint after the last step */
    double cz0, cz, ground; /* initial CoM height, the plan's, the ground's (world z) */
    double zc, gravity;
    size_t nk;  /* plan steps */
    double *x;  /* 8 per step: c, c_dot, c_ddot, jerk along x, then along y */
    double *pr; /* 2 per step (nk + preview steps): p_ref at the plan's instants (set-up scratch) */
};

void rb_gait_plan_foothold(const rb_gait_plan *p, size_t k, double pos[3])
{
    memcpy(pos, p->hold + 3 * (k < p->n ? k : p->n - 1), 3 * sizeof *pos);
}

double rb_gait_plan_zc(const rb_gait_plan *p) { return p->zc; }

/* Where the stance foot of single support k stands (x, y): it landed in single support k - 1. */
static const double *stance_pos(const rb_gait_plan *p, size_t k)
{
    return k == 0 ? p->feet0[stance_of(&p->g, 0)] : p->hold + 3 * (k - 1);
}

static void lerp2(const double *a, const double *b, double w, double out[2])
{
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    out[0] = a[0] + w * (b[0] - a[0]), out[1] = a[1] + w * (b[1] - a[1]);
}

void rb_gait_plan_zmp_ref(const rb_gait_plan *p, double t, double zmp[2])
{
    const rb_sim_gait *g = &p->g;
    size_t k;
    rb_gait_phase ph = rb_gait_phase_at(g, t, &k, NULL);
    if (k == SIZE_MAX) { /* before the first single support: standing, then the first shift of the ZMP */
        double shift = g->start - g->stand;
        lerp2(p->p0, stance_pos(p, 0), t < g->stand ? 0.0 : shift > 0 ? (t - g->stand) / shift : 1.0, zmp);
        return;
    }
    if (ph != RB_GAIT_DS) {
        memcpy(zmp, stance_pos(p, k), 2 * sizeof *zmp);
        return;
    }
    double after = t - (g->start + (double)k * (g->ss + g->ds) + g->ss); /* time since single support k ended */
    if (k + 1 < p->n)
        lerp2(stance_pos(p, k), stance_pos(p, k + 1), after / g->ds, zmp);
    else
        lerp2(stance_pos(p, k), p->mid, after / g->ds, zmp);
}

/* The CoM height reference: a quintic from the initial height to the plan's on [stand, start). */
static void com_z(const rb_gait_plan *p, double t, double z[3])
{
    double T = p->g.start - p->g.stand;
    if (p->cz == p->cz0 || !(t < p->g.start)) {
        z[0] = p->cz, z[1] = z[2] = 0.0;
        return;
    }
    double s = t > p->g.stand ? (t - p->g.stand) / T : 0.0, s2 = s * s, d = p->cz - p->cz0;
    z[0] = p->cz0 + d * s2 * s * (10 - 15 * s + 6 * s2);
    z[1] = d * 30 * s2 * (1 - s) * (1 - s) / T;
    z[2] = d * 60 * s * (1 - s) * (1 - 2 * s) / (T * T);
}

void rb_gait_plan_com(const rb_gait_plan *p, double t, double c[3], double c_dot[3], double c_ddot[3])
{
    double T = RB_GAIT_PLAN_DT, kf = floor(t / T);
    size_t k = kf < 0 ? 0 : kf >= (double)(p->nk - 1) ? p->nk - 1 : (size_t)kf;
    double tau = t - (double)k * T, z[3];
    tau = tau < 0 ? 0 : tau;
    com_z(p, t, z);
    for (int a = 0; a < 2; a++) {
        const double *x = p->x + 8 * k + 4 * a;
        if (c)
            c[a] = x[0] + tau * (x[1] + tau * (x[2] / 2 + tau * x[3] / 6));
        if (c_dot)
            c_dot[a] = x[1] + tau * (x[2] + tau * x[3] / 2);
        if (c_ddot)
            c_ddot[a] = x[2] + tau * x[3];
    }
    if (c)
        c[2] = z[0];
    if (c_dot)
        c_dot[2] = z[1];
    if (c_ddot)
        c_ddot[2] = z[2];
}

void rb_gait_plan_feet(const rb_gait_plan *p, double t, double pos[6], double vel[6])
{
    size_t k;
    double s;
    rb_gait_phase ph = rb_gait_phase_at(&p->g, t, &k, &s);
    for (int f = 0; f < 2; f++) {
        /* the foot's last foothold: its latest landing up to single support k (included once it is over) */
        const double *at = p->feet0[f];
        for (size_t j = 0; k != SIZE_MAX && j <= k; j++)
            if ((int)stance_of(&p->g, j) != f && (j < k || ph == RB_GAIT_DS))
                at = p->hold + 3 * j;
        memcpy(pos + 3 * f, at, 3 * sizeof *pos);
        if (vel)
            memset(vel + 3 * f, 0, 3 * sizeof *vel);
        if (ph != RB_GAIT_DS && (int)stance_of(&p->g, k) != f)
            rb_gait_swing(at, p->hold + 3 * k, p->g.swing_height, s, p->g.ss, pos + 3 * f, vel ? vel + 3 * f : NULL);
    }
}

/* 3 x 3 helpers (row-major). */
static void m3_mul(const double *a, const double *b, double *out)
{
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    memcpy(out, r, sizeof r);
}

/* The preview controller's gains (sim_gait.h): K (3) and f_1 .. f_N (N) for the pendulum at z_c. */
static int preview_gains(double zc, double g, size_t N, double K[3], double *f, rb_err *err)
{
    const double T = RB_GAIT_PLAN_DT, Q = 1.0, R = 1e-6;
    const double A[9] = {1, T, T * T / 2, 0, 1, T, 0, 0, 1}, B[3] = {T * T * T / 6, T * T / 2, T};
    const double C[3] = {1, 0, -zc / g};
    double P[9], At[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            P[3 * i + j] = Q * C[i] * C[j], At[3 * i + j] = A[3 * j + i];
    bool converged = false;
    for (int it = 0; it < 200000 && !converged; it++) {
        double PA[9], AtPA[9], PB[3], BtPA[3], AtPB[3], s = R;
        m3_mul(P, A, PA);
        m3_mul(At, PA, AtPA);
        for (int i = 0; i < 3; i++) {
            PB[i] = P[3 * i] * B[0] + P[3 * i + 1] * B[1] + P[3 * i + 2] * B[2];
            s += B[i] * PB[i];
        }
        for (int j = 0; j < 3; j++) {
            BtPA[j] = B[0] * PA[j] + B[1] * PA[3 + j] + B[2] * PA[6 + j];
            AtPB[j] = At[3 * j] * PB[0] + At[3 * j + 1] * PB[1] + At[3 * j + 2] * PB[2];
        }
        double diff = 0.0, size = 0.0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double v = AtPA[3 * i + j] - AtPB[i] * BtPA[j] / s + Q * C[i] * C[j];
                diff = fmax(diff, fabs(v - P[3 * i + j])), size = fmax(size, fabs(v));
                P[3 * i + j] = v;
            }
        converged = diff <= 1e-13 * size;
    }
    if (!converged)
        return rb_err_set(err, RB_ENUMERIC, "gait: preview control: the Riccati iteration does not converge");
    double PB[3], s = R, PA[9], Ac[9], w[3];
    m3_mul(P, A, PA);
    for (int i = 0; i < 3; i++) {
        PB[i] = P[3 * i] * B[0] + P[3 * i + 1] * B[1] + P[3 * i + 2] * B[2];
        s += B[i] * PB[i];
    }
    for (int j = 0; j < 3; j++)
        K[j] = (B[0] * PA[j] + B[1] * PA[3 + j] + B[2] * PA[6 + j]) / s;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Ac[3 * i + j] = A[3 * i + j] - B[i] * K[j];
    for (int i = 0; i < 3; i++)
        w[i] = C[i] * Q;
    double sum = 0.0;
    for (size_t j = 0; j < N; j++) { /* f_j = B^T (Ac^T)^(j-1) C^T Q / s */
        f[j] = (B[0] * w[0] + B[1] * w[1] + B[2] * w[2]) / s;
        sum += f[j];
        double nw[3];
        for (int i = 0; i < 3; i++)
            nw[i] = Ac[i] * w[0] + Ac[3 + i] * w[1] + Ac[6 + i] * w[2];
        memcpy(w, nw, sizeof w);
    }
    /* the reference held past the horizon: f_N takes the tail, sum_{j > N} f_j = K_1 - sum_{j <= N} f_j (the whole
     * sum is K_1: at rest on a constant reference u = 0), else the truncation leaves an offset in proportion to
     * the distance walked (0.6 % with 1.6 s) */
    f[N - 1] += K[0] - sum;
    return RB_OK;
}

/* The footholds (sim_gait.h) from the initial feet. */
static void plan_footholds(rb_gait_plan *p)
{
    const rb_sim_gait *g = &p->g;
    double x0 = (p->feet0[0][0] + p->feet0[1][0]) / 2, ymid = (p->feet0[0][1] + p->feet0[1][1]) / 2;
    double w = isnan(g->step_width) ? fabs(p->feet0[0][1] - p->feet0[1][1]) : g->step_width;
    for (size_t k = 0; k < p->n; k++) {
        int sw = 1 - (int)stance_of(g, k);
        size_t adv = k + 1 < p->n - 1 ? k + 1 : p->n - 1;
        double *h = p->hold + 3 * k;
        h[0] = x0 + (double)adv * g->step_length;
        h[1] = ymid + (sw == RB_GAIT_LEFT ? 0.5 : -0.5) * w;
        h[2] = p->feet0[sw][2];
    }
    const double *last = p->hold + 3 * (p->n - 1), *other = stance_pos(p, p->n - 1);
    p->mid[0] = (last[0] + other[0]) / 2, p->mid[1] = (last[1] + other[1]) / 2;
}

void rb_gait_plan_free(rb_gait_plan *p)
{
    if (!p)
        return;
    rb_free(p->hold);
    rb_free(p->x);
    rb_free(p->pr);
    rb_free(p);
}

int rb_gait_plan_new(const rb_sim_gait *g, const rb_gait_start *st, double duration, rb_gait_plan **out, rb_err *err)
{
    if (!g || !st || !out)
        return rb_err_set(err, RB_EINVAL, "rb_gait_plan_new: NULL argument");
    *out = NULL;
    int rc = rb_sim_gait_validate(g, err);
    if (rc < 0)
        return rc;
    if (!(st->g > 0) || !(duration >= 0) || !isfinite(duration))
        return rb_err_set(err, RB_ECONFIG, "gait: gravity must be > 0 and the duration finite and >= 0");
    rb_gait_plan *p = rb_calloc(1, sizeof *p);
    if (!p)
        return rb_err_set(err, RB_ENOMEM, "gait: out of memory");
    p->g = *g;
    p->g.free_joints = NULL;
    p->n = rb_gait_n_steps(g);
    memcpy(p->feet0, st->feet, sizeof p->feet0);
    p->p0[0] = st->com[0], p->p0[1] = st->com[1];
    p->cz0 = st->com[2];
    p->cz = isnan(g->com_height) ? st->com[2] : g->com_height;
    p->ground = (st->feet[0][2] + st->feet[1][2]) / 2;
    p->zc = p->cz - p->ground;
    p->gravity = st->g;
    size_t N = (size_t)lround(g->preview / RB_GAIT_PLAN_DT);
    p->nk = (size_t)floor(duration / RB_GAIT_PLAN_DT) + 2;
    double K[3], *f = NULL;
    if (!(p->zc > 0.05)) {
        rc = rb_err_set(err, RB_ECONFIG, "gait.com_height: the CoM must be more than 0.05 m above the feet (is %g m)",
                        p->zc);
        goto done;
    }
    if (p->cz != p->cz0 && !(g->start > g->stand)) {
        rc = rb_err_set(err, RB_ECONFIG, "gait.com_height: a change of the CoM height needs start > stand");
        goto done;
    }
    p->hold = rb_calloc(3 * p->n, sizeof *p->hold);
    p->x = rb_calloc(8 * p->nk, sizeof *p->x);
    p->pr = rb_calloc(2 * (p->nk + N + 1), sizeof *p->pr);
    f = rb_calloc(N + 1, sizeof *f);
    if (!p->hold || !p->x || !p->pr || !f) {
        rc = rb_err_set(err, RB_ENOMEM, "gait: out of memory");
        goto done;
    }
    plan_footholds(p);
    if ((rc = preview_gains(p->zc, p->gravity, N, K, f, err)) < 0)
        goto done;
    for (size_t k = 0; k < p->nk + N + 1; k++)
        rb_gait_plan_zmp_ref(p, (double)k * RB_GAIT_PLAN_DT, p->pr + 2 * k);
    const double T = RB_GAIT_PLAN_DT;
    for (int a = 0; a < 2; a++) {
        double x[3] = {st->com[a], 0.0, 0.0};
        for (size_t k = 0; k < p->nk; k++) {
            double *row = p->x + 8 * k + 4 * a;
            if ((double)k * T < g->stand) { /* standing: held at rest */
                row[0] = x[0], row[1] = x[1], row[2] = x[2], row[3] = 0.0;
                continue;
            }
            double u = -(K[0] * x[0] + K[1] * x[1] + K[2] * x[2]);
            for (size_t j = 1; j <= N; j++)
                u += f[j - 1] * p->pr[2 * (k + j) + (size_t)a];
            row[0] = x[0], row[1] = x[1], row[2] = x[2], row[3] = u;
            x[0] += T * (x[1] + T * (x[2] / 2 + T * u / 6));
            x[1] += T * (x[2] + T * u / 2);
            x[2] += T * u;
        }
    }
done:
    rb_free(f);
    if (rc < 0) {
        rb_gait_plan_free(p);
        return rc;
    }
    rb_free(p->pr); /* set-up scratch */
    p->pr = NULL;
    *out = p;
    return RB_OK;
}

/* ---- the engine's side --------------------------------------------------------------------------------------- */

struct sim_gait {
    rb_gait_plan *plan;
    size_t contact[2]; /* the feet's contacts */
    double R0[2][9];   /* the feet's initial orientations (held) */
    bool swinging;
    int swing;         /* the swinging foot */
    size_t step;       /* its single support */
    double from[3];    /* its position at lift-off */
    double p[3], v[3]; /* its reference this sample */
    double com_dot[3]; /* the planned CoM velocity this sample (its position: truth->com_ref) */
    double *acc;       /* nv: the IK's acceleration (nu_r - nu_r_prev) / dt */
};

/* The contact at frame f among n (SIZE_MAX: none). */
static size_t contact_at(const rb_sim_contact *contacts, size_t n, int f)
{
    for (size_t k = 0; k < n; k++)
        if (contacts[k].frame == f)
            return k;
    return SIZE_MAX;
}

int sim_gait_check(const rb_sim_scenario *sc, rb_err *err)
{
    const rb_sim_gait *g = &sc->gait;
    const rb_model *m = sc->model;
    if (!g->enabled)
        return RB_OK;
    int rc = rb_sim_gait_validate(g, err);
    if (rc < 0)
        return rc;
    if (!m->floating)
        return rb_err_set(err, RB_ECONFIG, "gait: needs a floating base (model.floating: true)");
    if (sc->balance.enabled)
        return rb_err_set(err, RB_ECONFIG, "gait: not with balance (both drive the CoM: choose one)");
    for (int f = 0; f < 2; f++) {
        int fr = g->feet[f];
        if (fr < 0 || (size_t)fr >= m->n_frames)
            return rb_err_set(err, RB_ECONFIG, "gait.feet[%d]: not a model frame", f);
        if (g->feet[1 - f] == fr)
            return rb_err_set(err, RB_ECONFIG, "gait.feet: the left and right foot are one frame ('%s')",
                              m->frames[fr].name);
        size_t k = contact_at(sc->contacts, sc->n_contacts, fr);
        if (k == SIZE_MAX || sc->contacts[k].dim != 6 || !sc->contacts[k].initially_active)
            return rb_err_set(err, RB_ECONFIG, "gait.feet[%d]: '%s' needs a 6D contact, active from the start", f,
                              m->frames[fr].name);
        for (size_t e = 0; e < sc->n_events; e++)
            if (sc->events[e].contact == k)
                return rb_err_set(err, RB_ECONFIG,
                                  "gait: events[%zu] switches the contact of foot '%s' (the gait does)", e,
                                  m->frames[fr].name);
    }
    return RB_OK;
}

int sim_gait_init(rb_sim *s, rb_err *err)
{
    const rb_sim_gait *g = &s->sc.gait;
    struct sim_gait *G = rb_calloc(1, sizeof *G);
    if (!G)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    s->gait = G;
    rb_gait_start st;
    for (int f = 0; f < 2; f++) {
        G->contact[f] = contact_at(s->contacts, s->nc, g->feet[f]);
        const rb_xform *X = &s->cref[G->contact[f]];
        memcpy(st.feet[f], X->p, sizeof st.feet[f]);
        memcpy(G->R0[f], X->R, sizeof G->R0[f]);
    }
    if (!(G->acc = rb_calloc(s->nv, sizeof *G->acc)))
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    memcpy(st.com, s->com0, sizeof st.com);
    const double *gv = s->m->gravity;
    st.g = sqrt(gv[0] * gv[0] + gv[1] * gv[1] + gv[2] * gv[2]);
    return rb_gait_plan_new(g, &st, s->sc.duration, &G->plan, err);
}

void sim_gait_free(rb_sim *s)
{
    if (!s->gait)
        return;
    rb_gait_plan_free(s->gait->plan);
    rb_free(s->gait->acc);
    rb_free(s->gait);
    s->gait = NULL;
}

size_t sim_gait_phase(rb_sim *s)
{
    struct sim_gait *G = s->gait;
    size_t k, landing = SIZE_MAX;
    rb_gait_phase ph = rb_gait_phase_at(&s->sc.gait, s->t, &k, NULL);
    if (G->swinging && (ph == RB_GAIT_DS || k != G->step)) { /* touch-down (the caller switches the contact on) */
        landing = G->contact[G->swing];
        G->swinging = false;
    }
    if (ph != RB_GAIT_DS && !G->swinging) { /* lift-off */
        G->swing = ph == RB_GAIT_LS ? RB_GAIT_RIGHT : RB_GAIT_LEFT;
        G->step = k;
        G->swinging = true;
        size_t c = G->contact[G->swing];
        memcpy(G->from, s->cref[c].p, sizeof G->from);
        s->active[c] = 0;
    }
    return landing;
}

void sim_gait_refs(rb_sim *s)
{
    struct sim_gait *G = s->gait;
    const rb_sim_gait *g = &s->sc.gait;
    size_t k;
    double prog;
    rb_sim_truth *tr = &s->truth;
    tr->gait.phase = rb_gait_phase_at(g, s->t, &k, &prog);
    rb_gait_plan_com(G->plan, s->t, tr->com_ref, G->com_dot, NULL);
    rb_gait_plan_zmp_ref(G->plan, s->t, tr->gait.zmp_ref);
    if (G->swinging) {
        double to[3];
        rb_gait_plan_foothold(G->plan, G->step, to);
        rb_gait_swing(G->from, to, g->swing_height, prog, g->ss, G->p, G->v);
    }
    for (int f = 0; f < 2; f++) {
        const double *p = G->swinging && f == G->swing ? G->p : s->cref[G->contact[f]].p;
        memcpy(tr->gait.feet_ref + 3 * f, p, 3 * sizeof *p);
    }
}

bool sim_gait_swing_task(const rb_sim *s, int *frame, const double **p, const double **v, const double **R)
{
    const struct sim_gait *G = s->gait;
    if (!G || !G->swinging)
        return false;
    *frame = s->sc.gait.feet[G->swing];
    *p = G->p, *v = G->v, *R = G->R0[G->swing];
    return true;
}

const double *sim_gait_com_dot(const rb_sim *s) { return s->gait->com_dot; }

int sim_gait_zmp(rb_sim *s, rb_err *err)
{
    double F[3] = {0, 0, 0}, M[3] = {0, 0, 0}, h = s->gait->plan->ground;
    double *zmp = s->truth.gait.zmp;
    zmp[0] = zmp[1] = NAN;
    if (s->kin < KIN_POS)
        return RB_OK; /* no contact in effect: the plant's kinematics were not needed */
    for (size_t k = 0; k < s->nc; k++) {
        if (!s->active[k])
            continue;
        rb_xform X;
        int rc = rb_dyn_frame_pose(s->m, s->plant, (size_t)s->contacts[k].frame, &X, err);
        if (rc < 0)
            return rc;
        const double *w = s->cw + 6 * k;
        double pf[3];
        rb_v3_cross(X.p, w, pf);
        for (int i = 0; i < 3; i++)
            F[i] += w[i], M[i] += w[3 + i] + pf[i];
    }
    if (F[2] > 1e-9) { /* the point on z = h about which the horizontal moments vanish */
        zmp[0] = (h * F[0] - M[1]) / F[2];
        zmp[1] = (h * F[1] + M[0]) / F[2];
    }
    return RB_OK;
}

int sim_gait_dynamics(rb_sim *s, rb_dyn *ws, double *out, rb_err *err)
{
    double *a = s->gait->acc;
    for (size_t i = 0; i < s->nv; i++)
        a[i] = s->step == 0 ? 0.0 : (s->nu_r[i] - s->nu_r_prev[i]) / s->sc.dt;
    int rc = rb_dyn_rnea(s->m, ws, s->q, s->nu, a, NULL, 0, out, err);
    for (size_t i = 0; rc >= 0 && i < s->nv; i++)
        out[i] += s->arm_v[i] * a[i];
    return rc;
}
