/* The momentum-based thrust EKF (roboest/observers.h, rb_tekf) on data built here: four jets on the floating humanoid
 * lower body (datasets/humanoid_lower_body.urdf; frames picked as jets, thrust axes tilted so that A has rank 4),
 * their true thrusts from the jet model integrated finely (rb_jet_step at 10 kHz), the robot standing still (the
 * paper's scales) or moving, and the foot wrenches that close the centroidal balance
 * L_dot = W_feet - m g e3 + A T, checked against the RNEA (the base rows vanish with the jets and feet as external
 * wrenches). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/dynamics.h"
#include "roboest/observers.h"

#define URDF RB_SOURCE "/datasets/humanoid_lower_body.urdf"
#define NJ 4
#define H_FINE 1e-4

static const char *const jet_frames[NJ] = {"l_hip_1", "r_hip_1", "chest", "torso_1"};
static const double jet_axes[NJ][3] = {{0.2, 0.4, 1}, {0.2, -0.4, 1}, {-0.3, 0, 1}, {0, 0.3, 1}};
static const char *const jet_presets[NJ] = {"ironcub_p100", "ironcub_p100", "ironcub_p220_gazebo",
                                            "ironcub_p220_gazebo"};

typedef struct rig {
    rb_model *m;
    rb_dyn *ws;
    rb_tekf_jet jets[NJ];
    rb_tekf_foot feet[2];
    double mass;
} rig;

static void rig_init(rig *r)
{
    rb_model_opts o = {.floating = true};
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(URDF, &o, &r->m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_alloc(r->m, &r->ws, &err), RB_OK);
    for (int i = 0; i < NJ; i++) {
        long f = rb_model_frame_index(r->m, jet_frames[i]);
        cr_assert(f >= 0);
        r->jets[i].frame = (int)f;
        double len = sqrt(jet_axes[i][0] * jet_axes[i][0] + jet_axes[i][1] * jet_axes[i][1] + 1);
        for (int a = 0; a < 3; a++)
            r->jets[i].axis[a] = jet_axes[i][a] / len;
        cr_assert_eq(rb_jet_preset(jet_presets[i], &r->jets[i].params, NULL, &err), RB_OK, "%s", err.msg);
    }
    r->feet[0] = (rb_tekf_foot){(int)rb_model_frame_index(r->m, "l_sole"), RB_DYN_BODY};
    r->feet[1] = (rb_tekf_foot){(int)rb_model_frame_index(r->m, "r_sole"), RB_DYN_BODY};
    r->mass = rb_dyn_total_mass(r->m);
}

static void rig_free(rig *r)
{
    rb_dyn_free(r->ws);
    rb_model_free(r->m);
}

static rb_tekf_config base_config(rig *r, rb_tekf_variant v)
{
    rb_tekf_config c;
    rb_tekf_config_init(&c);
    c.jets = r->jets, c.n_jets = NJ, c.feet = r->feet, c.n_feet = 2, c.variant = v;
    return c;
}

static rb_tekf *make(rig *r, const rb_tekf_config *c)
{
    rb_tekf *e = NULL;
    rb_err err;
    cr_assert_eq(rb_tekf_alloc(r->m, c, &e, &err), RB_OK, "%s", err.msg);
    return e;
}

/* The throttle of jet i at t: off, a ramp to 80 (the chest jets 70), a hold, a ramp down to 45, a hold. */
static double throttle(int i, double t)
{
    double hi = i < 2 ? 80 : 70, lo = 45;
    if (t < 0.5)
        return 0;
    if (t < 3)
        return hi * (t - 0.5) / 2.5;
    if (t < 6)
        return hi;
    if (t < 8)
        return hi + (lo - hi) * (t - 6) / 2;
    return lo;
}

/* The motion at t: standing still (base 0.9 m up), or moving (base swaying and yawing, every joint oscillating). */
static void motion(const rb_model *m, double t, bool moving, double *q, double *nu)
{
    rb_dyn_neutral(m, q);
    memset(nu, 0, m->nv * sizeof *nu);
    q[2] = 0.9;
    if (!moving)
        return;
    double yaw = 0.3 * sin(0.7 * t), yaw_d = 0.21 * cos(0.7 * t);
    double pd[3] = {0.1 * 1.1 * cos(1.1 * t), 0.05 * 0.9 * cos(0.9 * t), 0.02 * 2 * cos(2 * t)};
    q[0] = 0.1 * sin(1.1 * t), q[1] = 0.05 * sin(0.9 * t), q[2] = 0.9 + 0.02 * sin(2 * t);
    q[3] = cos(yaw / 2), q[4] = 0, q[5] = 0, q[6] = sin(yaw / 2);
    /* body-fixed twist: v_B = R^T p_dot, w_B = [0, 0, yaw_dot] */
    nu[0] = cos(yaw) * pd[0] + sin(yaw) * pd[1];
    nu[1] = -sin(yaw) * pd[0] + cos(yaw) * pd[1];
    nu[2] = pd[2];
    nu[5] = yaw_d;
    for (size_t j = 0; j < m->n_dofs; j++) {
        double w = 0.8 + 0.15 * (double)j, a = 0.15;
        q[7 + j] = a * sin(w * t + 0.3 * (double)j);
        nu[6 + j] = a * w * cos(w * t + 0.3 * (double)j);
    }
}

/* Centroidal momentum and CoM at t. */
static void momentum(rig *r, double t, bool moving, double L[6], double c[3])
{
    double q[64], nu[64];
    rb_err err;
    motion(r->m, t, moving, q, nu);
    cr_assert_eq(rb_dyn_kinematics(r->m, r->ws, q, nu, NULL, &err), RB_OK);
    cr_assert_eq(rb_dyn_centroidal_momentum(r->m, r->ws, L, c, &err), RB_OK);
}

/* The jets' wrench about the CoM at t (world axes) for thrusts T, and the foot frames' poses. */
static void jets_wrench(rig *r, double t, bool moving, const double *T, double Wj[6], rb_xform feet[2], double c[3])
{
    double q[64], nu[64], L[6];
    rb_err err;
    motion(r->m, t, moving, q, nu);
    cr_assert_eq(rb_dyn_kinematics(r->m, r->ws, q, nu, NULL, &err), RB_OK);
    cr_assert_eq(rb_dyn_centroidal_momentum(r->m, r->ws, L, c, &err), RB_OK);
    memset(Wj, 0, 6 * sizeof *Wj);
    for (int i = 0; i < NJ; i++) {
        rb_xform X;
        cr_assert_eq(rb_dyn_frame_pose(r->m, r->ws, (size_t)r->jets[i].frame, &X, &err), RB_OK);
        double f[3], rr[3], mo[3];
        rb_m3_mul_v(X.R, r->jets[i].axis, f);
        for (int a = 0; a < 3; a++)
            f[a] *= T[i], rr[a] = X.p[a] - c[a];
        rb_v3_cross(rr, f, mo);
        for (int a = 0; a < 3; a++)
            Wj[a] += f[a], Wj[3 + a] += mo[a];
    }
    for (int k = 0; k < 2; k++)
        cr_assert_eq(rb_dyn_frame_pose(r->m, r->ws, (size_t)r->feet[k].frame, &feet[k], &err), RB_OK);
}

/* The foot wrenches (each foot's axes about its origin, ON the robot) that close the balance at t: the support
 * W_G = L_dot + m g e3 - W_jets about the CoM, a share `left` on the left foot, the rest on the right. */
static void foot_wrenches(rig *r, double t, bool moving, const double *T, double left, double w[12])
{
    double Wj[6], c[3], Lp[6], Lm[6], cc[3], WG[6];
    rb_xform F[2];
    const double h = 1e-5;
    momentum(r, t + h, moving, Lp, cc);
    momentum(r, t - h, moving, Lm, cc);
    jets_wrench(r, t, moving, T, Wj, F, c);
    for (int a = 0; a < 6; a++)
        WG[a] = (Lp[a] - Lm[a]) / (2 * h) - Wj[a] + (a == 2 ? r->mass * 9.81 : 0);
    for (int k = 0; k < 2; k++) {
        double share[6];
        for (int a = 0; a < 6; a++)
            share[a] = (k == 0 ? left : 1 - left) * WG[a];
        rb_xform XG = F[k]; /* the foot's pose in G[I]: world axes, origin at the CoM */
        for (int a = 0; a < 3; a++)
            XG.p[a] -= c[a];
        rb_xform_force_inv(&XG, share, w + 6 * k);
    }
}

/* ---- a run --------------------------------------------------------------------------------------------------- */
typedef struct scenario {
    double dt, duration;
    bool moving;
    double noise_f, noise_m;                /* std of the foot wrench noise, N and N m */
    double bias_fz;                         /* added to both feet's fz, N */
    double fail_from, fail_to, fail_factor; /* jet 0 delivers fail_factor of its thrust in [from, to) */
    double rpm_err;                         /* the rotor speed error of jet 0 during the failure */
    double err_from;                        /* errors measured from this time */
    bool zero_after;                        /* throttles 0 from t = 8 s */
} scenario;

typedef struct result {
    double max_err[NJ], rms_err[NJ];
    double max_L_err;
    double roughness; /* mean |T_k - 2 T_{k-1} + T_{k-2}| over the window, all jets */
    double min_T;
    double fail_err; /* max |T_0 error| in the failure window, from 0.5 s after its start */
    long sched_steps_in, sched_steps_out_late, sched_steps_before;
    double var_T0_fail, var_T0_before, var_T0_after;
    rb_tekf_diag diag;
} result;

static uint64_t lcg = 12345;
static double gauss(void)
{
    double s = 0;
    for (int i = 0; i < 12; i++) {
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        s += (double)(lcg >> 11) / 9007199254740992.0;
    }
    return s - 6;
}

static double scen_throttle(const scenario *s, int i, double t) { return s->zero_after && t >= 8 ? 0 : throttle(i, t); }

static result run(rig *r, rb_tekf *e, const scenario *s)
{
    result res;
    memset(&res, 0, sizeof res);
    res.min_T = INFINITY;
    lcg = 12345;
    double T[NJ] = {0}, Td[NJ] = {0}, tf = 0, prev[2][NJ] = {{0}};
    size_t N = (size_t)llround(s->duration / s->dt), n_win = 0, n_rough = 0;
    rb_err err;
    for (size_t k = 0; k <= N; k++) {
        double t = (double)k * s->dt;
        while (tf < t - 1e-12) { /* the truth, finely */
            for (int i = 0; i < NJ; i++)
                rb_jet_step(&r->jets[i].params, scen_throttle(s, i, tf), H_FINE, &T[i], &Td[i]);
            tf += H_FINE;
        }
        bool failing = t >= s->fail_from && t < s->fail_to;
        double Tact[NJ], u[NJ], w[12], q[64], nu[64], rpm[NJ] = {0};
        for (int i = 0; i < NJ; i++)
            Tact[i] = T[i] * (i == 0 && failing ? s->fail_factor : 1), u[i] = scen_throttle(s, i, t);
        if (failing)
            rpm[0] = s->rpm_err;
        foot_wrenches(r, t, s->moving, Tact, 0.55, w);
        for (int a = 0; a < 12; a++)
            w[a] += (a % 6 < 3 ? s->noise_f : s->noise_m) * gauss() + (a % 6 == 2 ? s->bias_fz : 0);
        motion(r->m, t, s->moving, q, nu);
        cr_assert_eq(rb_tekf_step(e, k, t, q, nu, u, w, rpm, &err), RB_OK, "sample %zu: %s", k, err.msg);
        rb_tekf_out o;
        rb_tekf_get_out(e, &o);
        for (int i = 0; i < NJ; i++)
            res.min_T = fmin(res.min_T, o.T[i]);
        if (t >= s->err_from) {
            n_win++;
            for (int i = 0; i < NJ; i++) {
                double d = fabs(o.T[i] - Tact[i]);
                res.max_err[i] = fmax(res.max_err[i], d);
                res.rms_err[i] += d * d;
            }
            for (int a = 0; a < 6; a++)
                res.max_L_err = fmax(res.max_L_err, fabs(o.L[a] - o.L_meas[a]));
            for (int i = 0; i < NJ; i++)
                res.roughness += fabs(o.T[i] - 2 * prev[0][i] + prev[1][i]);
            n_rough++;
        }
        if (failing && t >= s->fail_from + 0.5) /* after the onset's transient */
            res.fail_err = fmax(res.fail_err, fabs(o.T[0] - Tact[0]));
        if (s->rpm_err > 0) {
            /* high on [from, to), then the hold of 0.5 s after the last high sample (to - dt) */
            bool in = t >= s->fail_from && t < s->fail_to + 0.5 - 1e-9;
            if (o.scheduled[0] && in)
                res.sched_steps_in++;
            if (o.scheduled[0] && !in && t >= s->fail_from)
                res.sched_steps_out_late++;
            if (o.scheduled[0] && t < s->fail_from)
                res.sched_steps_before++;
            if (fabs(t - (s->fail_from - 0.1)) < s->dt / 2)
                res.var_T0_before = o.var[0];
            if (fabs(t - (s->fail_from + 1)) < s->dt / 2)
                res.var_T0_fail = o.var[0];
            if (fabs(t - (s->fail_to + 1.5)) < s->dt / 2)
                res.var_T0_after = o.var[0];
        }
        memcpy(prev[1], prev[0], sizeof prev[0]);
        memcpy(prev[0], o.T, sizeof prev[0]);
    }
    for (int i = 0; i < NJ; i++)
        res.rms_err[i] = sqrt(res.rms_err[i] / (double)(n_win ? n_win : 1));
    res.roughness /= (double)(NJ * (n_rough ? n_rough : 1));
    rb_tekf_get_diag(e, &res.diag);
    return res;
}

static const scenario STAND = {.dt = 1e-3,
                               .duration = 10,
                               .noise_f = 2,
                               .noise_m = 0.2,
                               .fail_from = INFINITY,
                               .fail_to = INFINITY,
                               .err_from = 4};

static double worst(const double *v)
{
    double m = 0;
    for (int i = 0; i < NJ; i++)
        m = fmax(m, v[i]);
    return m;
}

static result run_variant(rb_tekf_variant v, const scenario *s)
{
    rig r;
    rig_init(&r);
    rb_tekf_config c = base_config(&r, v);
    rb_tekf *e = make(&r, &c);
    result res = run(&r, e, s);
    rb_tekf_free(e);
    rig_free(&r);
    return res;
}

/* The generator: with the jets and the feet as external wrenches, the RNEA of the standing robot needs no base
 * wrench (the balance the data is built on is the robot's, in roboest's conventions). */
Test(observers_thrust, generator_balances_the_rnea)
{
    rig r;
    rig_init(&r);
    double T[NJ] = {60, 50, 120, 90}, w[12], q[64], nu[64], tau[64];
    foot_wrenches(&r, 0, false, T, 0.3, w);
    motion(r.m, 0, false, q, nu);
    rb_ext_wrench ext[NJ + 2];
    rb_err err;
    cr_assert_eq(rb_dyn_kinematics(r.m, r.ws, q, nu, NULL, &err), RB_OK);
    for (int i = 0; i < NJ; i++) {
        rb_xform X;
        cr_assert_eq(rb_dyn_frame_pose(r.m, r.ws, (size_t)r.jets[i].frame, &X, &err), RB_OK);
        ext[i] = (rb_ext_wrench){.frame = r.jets[i].frame, .rep = RB_DYN_MIXED};
        rb_m3_mul_v(X.R, r.jets[i].axis, ext[i].w);
        for (int a = 0; a < 3; a++)
            ext[i].w[a] *= T[i];
    }
    for (int k = 0; k < 2; k++) {
        ext[NJ + k] = (rb_ext_wrench){.frame = r.feet[k].frame, .rep = RB_DYN_BODY};
        memcpy(ext[NJ + k].w, w + 6 * k, sizeof ext[NJ + k].w);
    }
    cr_assert_eq(rb_dyn_rnea(r.m, r.ws, q, nu, NULL, ext, NJ + 2, tau, &err), RB_OK, "%s", err.msg);
    for (int a = 0; a < 6; a++)
        cr_expect(fabs(tau[a]) < 1e-9 * r.mass * 9.81, "base row %d: %g", a, tau[a]);
    rig_free(&r);
}

Test(observers_thrust, combined_converges_to_the_true_thrusts)
{
    result res = run_variant(RB_TEKF_COMBINED, &STAND);
    cr_log_info("combined: max err %g %g %g %g N, rms %g %g %g %g N, roughness %g", res.max_err[0], res.max_err[1],
                res.max_err[2], res.max_err[3], res.rms_err[0], res.rms_err[1], res.rms_err[2], res.rms_err[3],
                res.roughness);
    for (int i = 0; i < NJ; i++)
        cr_expect(res.max_err[i] < 1.5, "jet %d: max error %g N after 4 s (thrusts 40-200 N)", i, res.max_err[i]);
    cr_expect(res.max_L_err < 1, "momentum estimate off the measured by %g", res.max_L_err);
}

Test(observers_thrust, combined_tracks_a_moving_robot)
{
    scenario s = STAND;
    s.moving = true;
    result res = run_variant(RB_TEKF_COMBINED, &s);
    cr_log_info("moving: max err %g %g %g %g N, L err %g", res.max_err[0], res.max_err[1], res.max_err[2],
                res.max_err[3], res.max_L_err);
    for (int i = 0; i < NJ; i++)
        cr_expect(res.max_err[i] < 1.5, "jet %d: max error %g N", i, res.max_err[i]);
    cr_expect(res.max_L_err < 1, "momentum estimate off the measured by %g", res.max_L_err);
}

Test(observers_thrust, centroidal_only_converges_but_is_noisier)
{
    result comb = run_variant(RB_TEKF_COMBINED, &STAND), cen = run_variant(RB_TEKF_CENTROIDAL_ONLY, &STAND);
    cr_log_info("centroidal: max err %g N (combined %g), roughness %g (combined %g)", worst(cen.max_err),
                worst(comb.max_err), cen.roughness, comb.roughness);
    cr_expect(worst(cen.max_err) < 15, "centroidal only: max error %g N", worst(cen.max_err));
    cr_expect(cen.roughness > 2 * comb.roughness, "centroidal roughness %g, combined %g", cen.roughness,
              comb.roughness);
    cr_expect(worst(cen.rms_err) > worst(comb.rms_err), "rms %g vs %g", worst(cen.rms_err), worst(comb.rms_err));
}

/* Jets only: the Euler integration of the model from rest with the throttles alone, whatever the feet say. */
Test(observers_thrust, jets_only_follows_the_model_open_loop)
{
    rig r;
    rig_init(&r);
    rb_tekf_config c = base_config(&r, RB_TEKF_JETS_ONLY);
    rb_tekf *e = make(&r, &c), *e_biased = make(&r, &c);
    double T[NJ] = {0}, Td[NJ] = {0}, q[64], nu[64], w[12], wb[12], dt = 2e-3, maxdiff = 0, maxbias = 0, Tmax = 0;
    double Tzero[NJ] = {0};
    rb_err err;
    for (size_t k = 0; k < 5000; k++) {
        double t = (double)k * dt, u[NJ];
        for (int i = 0; i < NJ; i++)
            u[i] = throttle(i, t);
        motion(r.m, t, false, q, nu);
        foot_wrenches(&r, t, false, Tzero, 0.5, w); /* feet carrying the whole weight: no thrust seen */
        for (int a = 0; a < 12; a++)
            wb[a] = w[a] + (a % 6 == 2 ? 80 : 0);
        cr_assert_eq(rb_tekf_step(e, k, t, q, nu, u, w, NULL, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_tekf_step(e_biased, k, t, q, nu, u, wb, NULL, &err), RB_OK, "%s", err.msg);
        rb_tekf_out o, ob;
        rb_tekf_get_out(e, &o);
        rb_tekf_get_out(e_biased, &ob);
        for (int i = 0; i < NJ; i++) {
            maxdiff = fmax(maxdiff, fabs(o.T[i] - T[i]));
            maxbias = fmax(maxbias, fabs(o.T[i] - ob.T[i]) + fabs(o.T_dot[i] - ob.T_dot[i]));
            Tmax = fmax(Tmax, T[i]);
        }
        /* the reference: explicit Euler with this sample's throttle for the next interval, T >= 0 with T_dot >= 0
         * (T_max, T_dot <= 0 there) */
        for (int i = 0; i < NJ; i++) {
            double a = rb_jet_accel(&r.jets[i].params, T[i], Td[i], u[i]);
            T[i] += dt * Td[i], Td[i] += dt * a;
            if (T[i] < 0)
                T[i] = 0, Td[i] = fmax(Td[i], 0);
            else if (T[i] > r.jets[i].params.T_max)
                T[i] = r.jets[i].params.T_max, Td[i] = fmin(Td[i], 0);
        }
    }
    cr_log_info("jets only: max |T - Euler| %g N (T up to %g N), biased feet change T by %g", maxdiff, Tmax, maxbias);
    cr_expect(Tmax > 50, "the jets never ran: T max %g", Tmax);
    cr_expect(maxdiff < 1e-9 * Tmax, "T off the model's Euler integration by %g N", maxdiff);
    cr_expect(maxbias == 0, "the feet changed T by %g", maxbias);
    rb_tekf_free(e);
    rb_tekf_free(e_biased);
    rig_free(&r);
}

/* The same continuous problem at 250, 500 and 1000 Hz: the open-loop model's error (explicit Euler against the
 * 10 kHz truth) shrinks about in proportion to dt, and so does the combined filter's on noise-free data. */
Test(observers_thrust, discretization_converges_as_dt_shrinks)
{
    const double dts[3] = {4e-3, 2e-3, 1e-3};
    double jo[3], co[3];
    for (int d = 0; d < 3; d++) {
        scenario s = STAND;
        s.dt = dts[d], s.noise_f = s.noise_m = 0, s.err_from = 0.5;
        jo[d] = worst(run_variant(RB_TEKF_JETS_ONLY, &s).max_err);
        s.err_from = 4;
        co[d] = worst(run_variant(RB_TEKF_COMBINED, &s).rms_err);
    }
    cr_log_info("jets only max err %g %g %g N; combined rms %g %g %g N", jo[0], jo[1], jo[2], co[0], co[1], co[2]);
    for (int d = 1; d < 3; d++) {
        cr_expect(jo[d] < 0.7 * jo[d - 1], "jets only at dt %g: %g N, at %g: %g N", dts[d], jo[d], dts[d - 1],
                  jo[d - 1]);
        cr_expect(co[d] < co[d - 1], "combined at dt %g: %g N, at %g: %g N", dts[d], co[d], dts[d - 1], co[d - 1]);
    }
}

static result run_failure(bool sched)
{
    rig r;
    rig_init(&r);
    rb_tekf_config c = base_config(&r, RB_TEKF_COMBINED);
    c.schedule = sched;
    rb_tekf *e = make(&r, &c);
    scenario s = STAND;
    s.fail_from = 5, s.fail_to = 7, s.fail_factor = 0.6, s.rpm_err = 3000;
    result res = run(&r, e, &s);
    rb_tekf_free(e);
    rig_free(&r);
    return res;
}

/* Sec. V-E: jet 0 delivers 60 % of its thrust for 2 s with its rotor speed error high. Scheduled exactly while the
 * error is high and for the hold after; its variance raised then and back after; the failure followed better. */
Test(observers_thrust, scheduling_follows_a_failing_jet)
{
    result on = run_failure(true), off = run_failure(false);
    cr_log_info("failure: err %g N scheduled, %g N not; var %g / %g / %g; steps in %ld, late %ld, before %ld",
                on.fail_err, off.fail_err, on.var_T0_before, on.var_T0_fail, on.var_T0_after, on.sched_steps_in,
                on.sched_steps_out_late, on.sched_steps_before);
    cr_expect_eq(on.sched_steps_in, 2500, "scheduled on %ld samples of [5, 7.5)", on.sched_steps_in);
    cr_expect_eq(on.sched_steps_out_late + on.sched_steps_before, 0, "scheduled outside the failure and hold");
    cr_expect(on.var_T0_fail > 5 * on.var_T0_before, "variance %g during, %g before", on.var_T0_fail, on.var_T0_before);
    cr_expect(on.var_T0_after < 2 * on.var_T0_before, "variance %g after, %g before", on.var_T0_after,
              on.var_T0_before);
    cr_expect(on.fail_err < 0.5 * off.fail_err, "failure error %g N scheduled, %g N not", on.fail_err, off.fail_err);
    cr_expect_eq(off.diag.scheduled_steps, 0);
}

/* The jets shut off while the feet report 30 N more load than there is: T would go negative; it is held at 0. */
Test(observers_thrust, thrust_is_clamped_at_zero)
{
    scenario s = STAND;
    s.zero_after = true, s.bias_fz = 15, s.duration = 14;
    result res = run_variant(RB_TEKF_CENTROIDAL_ONLY, &s);
    cr_log_info("min T %g, clamped %ld", res.min_T, res.diag.clamped_thrust);
    cr_expect(res.min_T >= 0, "T reached %g", res.min_T);
    cr_expect(res.diag.clamped_thrust > 0, "nothing was clamped");
}

/* +-5 %: seeded (same seed, same parameters; another seed, others), each coefficient within its bound. */
Test(observers_thrust, perturbation_is_seeded_and_bounded)
{
    rig r;
    rig_init(&r);
    rb_tekf_config c = base_config(&r, RB_TEKF_COMBINED);
    c.perturb = 0.05, c.seed = 7;
    rb_tekf *a = make(&r, &c), *b = make(&r, &c);
    c.seed = 8;
    rb_tekf *d = make(&r, &c);
    c.perturb = 0;
    rb_tekf *z = make(&r, &c);
    bool differs = false;
    double max_rel = 0;
    for (size_t i = 0; i < NJ; i++) {
        const double *pa = (const double *)rb_tekf_jet_params(a, i), *pb = (const double *)rb_tekf_jet_params(b, i);
        const double *pd = (const double *)rb_tekf_jet_params(d, i), *pz = (const double *)rb_tekf_jet_params(z, i);
        const double *p0 = (const double *)&r.jets[i].params;
        cr_expect_eq(memcmp(pa, pb, sizeof(rb_jet_params)), 0, "jet %zu: same seed, other parameters", i);
        cr_expect_eq(memcmp(pz, p0, sizeof(rb_jet_params)), 0, "jet %zu: perturbed without a perturbation", i);
        for (int j = 0; j < 10; j++) {
            double rel = fabs(pa[j] - p0[j]) / fabs(p0[j]);
            max_rel = fmax(max_rel, rel);
            cr_expect(rel <= 0.05, "jet %zu coefficient %d: %g from %g", i, j, pa[j], p0[j]);
            differs |= pa[j] != pd[j];
        }
        cr_expect_eq(pa[10], p0[10], "T_max perturbed");
    }
    cr_expect(differs, "seeds 7 and 8 gave the same parameters");
    cr_expect(max_rel > 0.03, "largest change %g: not spread over +-5 %%", max_rel);
    rb_tekf_free(a), rb_tekf_free(b), rb_tekf_free(d), rb_tekf_free(z);
    rig_free(&r);
}

Test(observers_thrust, steps_allocate_nothing)
{
    if (!test_alloc_count_works())
        cr_skip_test("allocation counting does not work under valgrind");
    test_alloc_count_init();
    rig r;
    rig_init(&r);
    rb_tekf_config c = base_config(&r, RB_TEKF_COMBINED);
    c.schedule = true;
    rb_tekf *e = make(&r, &c);
    double q[64], nu[64], w[12], T[NJ] = {50, 50, 100, 100}, rpm[NJ] = {0, 5000, 0, NAN};
    long allocs = 0;
    rb_err err;
    for (size_t k = 0; k < 50; k++) {
        double t = 1e-3 * (double)k, u[NJ] = {40, NAN, 60, 200};
        motion(r.m, t, true, q, nu);
        foot_wrenches(&r, t, true, T, 0.5, w);
        w[3] = NAN;
        test_alloc_count = 0;
        test_alloc_counting = 1;
        int rc = rb_tekf_step(e, k, t, q, nu, u, w, rpm, &err);
        test_alloc_counting = 0;
        allocs += test_alloc_count;
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
    }
    cr_expect_eq(allocs, 0, "%ld allocations in 50 steps", allocs);
    rb_tekf_free(e);
    rig_free(&r);
}

Test(observers_thrust, set_up_refusals_name_the_cause)
{
    rig r;
    rig_init(&r);
    rb_tekf *e = NULL;
    rb_err err;
    rb_tekf_config c = base_config(&r, RB_TEKF_COMBINED);
    c.mass = r.mass * 1.03;
    cr_expect_eq(rb_tekf_alloc(r.m, &c, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "mass") && strstr(err.msg, "2 %"), "%s", err.msg);
    c.mass = r.mass * 1.015;
    cr_expect_eq(rb_tekf_alloc(r.m, &c, &e, &err), RB_OK, "%s", err.msg);
    rb_tekf_free(e);
    rb_tekf_jet j[NJ];
    memcpy(j, r.jets, sizeof j);
    memset(j[2].axis, 0, sizeof j[2].axis);
    c = base_config(&r, RB_TEKF_COMBINED);
    c.jets = j;
    cr_expect_eq(rb_tekf_alloc(r.m, &c, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "chest") && strstr(err.msg, "axis"), "%s", err.msg);
    rig_free(&r);
}

/* A throttle out of range: clamped and counted, or refused naming the sample and the jet; a NaN throttle: the last. */
Test(observers_thrust, throttle_policies)
{
    rig r;
    rig_init(&r);
    rb_tekf_config c = base_config(&r, RB_TEKF_JETS_ONLY);
    rb_tekf *e = make(&r, &c), *ref = make(&r, &c);
    c.throttle_error = true;
    rb_tekf *strict = make(&r, &c);
    double q[64], nu[64], w[12], Tz[NJ] = {0};
    rb_err err;
    motion(r.m, 0, false, q, nu);
    foot_wrenches(&r, 0, false, Tz, 0.5, w);
    for (size_t k = 0; k < 100; k++) {
        double t = 1e-2 * (double)k, u[NJ] = {150, 60, k >= 50 ? NAN : 60, 60}, uref[NJ] = {120, 60, 60, 60};
        cr_assert_eq(rb_tekf_step(e, k, t, q, nu, u, w, NULL, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_tekf_step(ref, k, t, q, nu, uref, w, NULL, &err), RB_OK, "%s", err.msg);
    }
    rb_tekf_out o, oref;
    rb_tekf_get_out(e, &o);
    rb_tekf_get_out(ref, &oref);
    for (int i = 0; i < NJ; i++)
        cr_expect_eq(o.T[i], oref.T[i], "jet %d: %g, clamped / held reference %g", i, o.T[i], oref.T[i]);
    rb_tekf_diag d;
    rb_tekf_get_diag(e, &d);
    cr_expect_eq(d.clamped_throttle, 100);
    cr_expect_eq(d.nan_throttle, 50);
    double u[NJ] = {60, 60, 60, 130};
    cr_expect_eq(rb_tekf_step(strict, 3, 0, q, nu, u, w, NULL, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "sample 3") && strstr(err.msg, "torso_1") && strstr(err.msg, "130"), "%s", err.msg);
    rb_tekf_free(e), rb_tekf_free(ref), rb_tekf_free(strict);
    rig_free(&r);
}

/* Jets off (zero throttle) while the feet carry less than the weight for a while (a phantom upward force the
 * estimator puts on the jets): the fitted model is unstable there (K_D > 0), so unless the state stays in the jet's
 * range the T_dot covariance grows without bound and the update fails. T stays in [0, T_max], P bounded. */
Test(observers_thrust, jets_off_phantom_lift_keeps_the_covariance_bounded)
{
    rig r;
    rig_init(&r);
    rb_tekf_config c = base_config(&r, RB_TEKF_COMBINED);
    rb_tekf *e = make(&r, &c);
    double q[64], nu[64], w[12], dt = 1e-2, u[NJ] = {0}, max_var = 0, min_T = 0, over = 0;
    rb_err err;
    for (size_t k = 0; k < 1000; k++) {
        double t = (double)k * dt, phantom[NJ];
        for (int i = 0; i < NJ; i++)
            phantom[i] = t >= 1 && t < 2 ? 60 : 0;
        motion(r.m, t, false, q, nu);
        foot_wrenches(&r, t, false, phantom, 0.5, w);
        int rc = rb_tekf_step(e, k, t, q, nu, u, w, NULL, &err);
        cr_assert_eq(rc, RB_OK, "sample %zu: %s", k, err.msg);
        rb_tekf_out o;
        rb_tekf_get_out(e, &o);
        for (size_t j = 0; j < 2 * NJ; j++)
            max_var = fmax(max_var, o.var[j]);
        for (int i = 0; i < NJ; i++)
            min_T = fmin(min_T, o.T[i]), over = fmax(over, o.T[i] - r.jets[i].params.T_max);
    }
    cr_log_info("jets off, phantom lift: max var of T, T_dot %g; min T %g; max T - T_max %g", max_var, min_T, over);
    cr_expect(isfinite(max_var) && max_var < 1e4, /* P0 and Q are 10 */ "T or T_dot variance grew to %g", max_var);
    cr_expect(min_T >= 0 && over <= 0, "T left [0, T_max]: min %g, over %g", min_T, over);
    rb_tekf_free(e);
    rig_free(&r);
}
