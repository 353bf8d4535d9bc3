/* lib/sim: the simulation engine (rigid-body plant with contacts, joint controllers, actuators, friction,
 * pushes, contact events, payload). The physics is documented in roboest/sim.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

/* The small dense linear algebra (dense.c) under the names the physics below uses. */
static bool chol(double *A, size_t n) { return sim_chol(A, n); }
static void chol_solve(const double *L, size_t n, double *x) { sim_chol_solve(L, n, x); }
static void pose_error(const rb_xform *X, const rb_xform *ref, double e[6]) { sim_pose_error(X, ref, e); }

/* ---- the plant ------------------------------------------------------------------------------------------
 * plant_eval at one state (q, nu): the active contacts' constraint rows, the bias forces with the pushes in
 * effect and (with_mass) M(q) with the factorization of M + diag(R^2 J_m); plant_solve then gives nu_dot for
 * the held torques tau_net and the held joints. The stiction decision and the RK4 stages reuse the parts that
 * do not change (M depends on q only). */

/* Rows c = -J_dot nu - kd v - kp e of the active contacts, J the MIXED Jacobians (plant kinematic state). */
static int contact_rows(rb_sim *s, rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv, rows = 0;
    rb_mat J6 = rb_mat_view(s->J6, 6, nv, nv);
    for (size_t k = 0; k < s->nc; k++) {
        if (!s->active[k])
            continue;
        const rb_sim_contact *ct = &s->contacts[k];
        double jdn[6], v[6], e[6] = {0, 0, 0, 0, 0, 0};
        rb_xform X;
        int rc;
        if ((rc = rb_dyn_frame_jacobian(m, s->plant, (size_t)ct->frame, RB_DYN_MIXED, &J6, err)) < 0 ||
            (rc = rb_dyn_frame_jdot_nu(m, s->plant, (size_t)ct->frame, RB_DYN_MIXED, jdn, err)) < 0 ||
            (rc = rb_dyn_frame_velocity(m, s->plant, (size_t)ct->frame, RB_DYN_MIXED, v, err)) < 0 ||
            (rc = rb_dyn_frame_pose(m, s->plant, (size_t)ct->frame, &X, err)) < 0)
            return rc;
        /* with a floor, the reference moved by the contact's slip (contact_friction.c) */
        const rb_xform *ref = s->fr ? sim_fric_follow(s, k, &X, v) : &s->cref[k];
        double kp = 0.0, kd = 0.0;
        if (ct->baumgarte_T > 0) {
            kp = 1.0 / (ct->baumgarte_T * ct->baumgarte_T), kd = 2.0 / ct->baumgarte_T;
            pose_error(&X, ref, e);
        }
        for (int r = 0; r < ct->dim; r++) {
            memcpy(s->Jc + rows * nv, s->J6 + (size_t)r * nv, nv * sizeof *s->Jc);
            s->c[rows] = -jdn[r] - kd * v[r] - kp * e[r];
            rows++;
        }
    }
    s->ncr = rows;
    return RB_OK;
}

/* M + diag(R^2 J_m) in the tree order into L, factored L^T L. */
static int factor_mass(rb_sim *s, rb_err *err)
{
    size_t nv = s->nv;
    for (size_t k = 0; k < nv; k++) {
        const double *Mk = s->Mraw + s->vperm[k] * nv;
        double *Lk = s->L + k * nv;
        Lk[k] = Mk[s->vperm[k]] + s->arm_v[s->vperm[k]];
        for (int i = s->vpar[k]; i >= 0; i = s->vpar[i])
            Lk[i] = Mk[s->vperm[i]];
    }
    if (!tree_ltl(s->L, s->vpar, nv))
        return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: mass matrix not positive definite", s->t);
    return RB_OK;
}

static bool any_active(const rb_sim *s)
{
    for (size_t k = 0; k < s->nc; k++)
        if (s->active[k])
            return true;
    return false;
}

/* at_sample: (q, nu) is the current sample's state (the kinematic state then serves the truth). */
static int plant_eval(rb_sim *s, const double *q, const double *nu, bool with_mass, bool at_sample, rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv;
    int rc;
    s->kin = KIN_NONE;
    s->ncr = 0;
    if (any_active(s)) {
        if ((rc = rb_dyn_kinematics(m, s->plant, q, nu, NULL, err)) < 0 || (rc = contact_rows(s, err)) < 0)
            return rc;
        s->kin = at_sample ? KIN_VEL : KIN_NONE;
    }
    if (with_mass) {
        rb_mat Mv = rb_mat_view(s->Mraw, nv, nv, nv);
        if ((rc = rb_dyn_mass_matrix(m, s->plant, q, &Mv, err)) < 0 || (rc = factor_mass(s, err)) < 0)
            return rc;
    }
    return rb_dyn_rnea(m, s->plant, q, nu, NULL, s->ext, s->n_ext_push, s->h, err);
}

/* x <- M^-1 x for x in the velocity order (through the tree order; scratch s->tmp). */
static void mass_solve(rb_sim *s, const double *b, double *x)
{
    size_t nv = s->nv;
    for (size_t k = 0; k < nv; k++)
        s->tmp[k] = b[s->vperm[k]];
    tree_solve_lt(s->L, s->vpar, nv, s->tmp);
    tree_solve_l(s->L, s->vpar, nv, s->tmp);
    for (size_t k = 0; k < nv; k++)
        x[s->vperm[k]] = s->tmp[k];
}

/* y . z with y supported on the chain of leaf (leaf < 0: anywhere). */
static double chain_dot(const rb_sim *s, int leaf, const double *y, const double *z)
{
    if (leaf < 0)
        return sim_dot(y, z, s->nv);
    double x = 0.0;
    for (int k = leaf; k >= 0; k = s->vpar[k])
        x += y[k] * z[k];
    return x;
}

/* Constraint row r: J (velocity order; NULL: the unit row of coordinate `unit`), non-zero only on the chain of
 * tree position leaf (< 0: anywhere). Its Y row = L^-T J^T (tree order; it stays on that chain) and
 * lam = c - J a0. */
static void constraint_row(rb_sim *s, size_t r, const double *J, size_t unit, int leaf, double c)
{
    size_t nv = s->nv;
    double *y = s->Y + r * nv, ja = 0.0;
    if (!J) {
        memset(y, 0, nv * sizeof *y);
        y[s->vpos[unit]] = 1.0;
        ja = s->a0[unit];
    } else if (leaf < 0) {
        for (size_t k = 0; k < nv; k++)
            y[k] = J[s->vperm[k]];
        ja = sim_dot(J, s->a0, nv);
    } else {
        memset(y, 0, nv * sizeof *y);
        for (int k = leaf; k >= 0; k = s->vpar[k])
            y[k] = J[s->vperm[k]], ja += y[k] * s->a0[s->vperm[k]];
    }
    s->yleaf[r] = leaf;
    if (leaf >= 0)
        tree_solve_lt_chain(s->L, s->vpar, nv, leaf, y);
    else
        tree_solve_lt(s->L, s->vpar, nv, y);
    s->lam[r] = c - ja;
}

/* nu_dot of the last plant_eval's state: a0 = M^-1 ([0; tau_net] - h), then the constraint rows (the active
 * contacts, the held joints) J a = c by the Schur complement S = J M^-1 J^T = Y^T Y, Y = L^-T J^T (tree order):
 * lambda = S^-1 (c - J a0), a = a0 + L^-1 (Y lambda). Writes the contact wrenches (6 per scenario contact, zero
 * when inactive) into cw (may be NULL) and the generalized force on every held joint into hold (n).
 * Slipping contacts (roboest/sim_contact.h): their released rows are left out and a normal row's force acts along
 * its force row F (J_f = J_n - mu d^T J_t): S = Y^T F, not symmetric, solved by LU; a = a0 + L^-1 (F lambda). */
static int plant_solve(rb_sim *s, const unsigned char *held, double *nu_dot, double *cw, double *hold, rb_err *err)
{
    size_t nv = s->nv, n = s->n, vo = s->voff;
    for (size_t i = 0; i < nv; i++)
        s->a0[i] = (i >= vo ? s->tau_net[i - vo] : 0.0) - s->h[i];
    mass_solve(s, s->a0, s->a0);
    memcpy(nu_dot, s->a0, nv * sizeof *nu_dot);

    size_t rows = 0, jr = 0;
    for (size_t k = 0; k < s->nc; k++)
        for (int r = 0; s->active[k] && r < s->contacts[k].dim; r++, jr++)
            if (!s->fr || !sim_fric_released(s->fr, k, r))
                constraint_row(s, rows++, s->Jc + jr * nv, 0, s->cleaf[k], s->c[jr]);
    const double *const *F = s->fr ? sim_fric_force_rows(s, rows) : NULL; /* NULL: symmetric */
    for (size_t j = 0; j < n; j++)
        if (held[j])
            constraint_row(s, rows++, NULL, vo + j, (int)s->vpos[vo + j], 0.0);
    if (rows > 0) {
        for (size_t r = 0; r < rows; r++)
            for (size_t r2 = 0; r2 <= r; r2++) {
                int leaf = s->yleaf[r] >= 0 ? s->yleaf[r] : s->yleaf[r2];
                const double *yr = s->Y + r * nv, *y2 = s->Y + r2 * nv;
                s->S[r * rows + r2] = s->S[r2 * rows + r] = chain_dot(s, leaf, yr, y2);
                if (F && (F[r] || F[r2])) { /* Y_r . F_r2 and Y_r2 . F_r */
                    s->S[r * rows + r2] = chain_dot(s, leaf, yr, F[r2] ? F[r2] : y2);
                    s->S[r2 * rows + r] = chain_dot(s, leaf, y2, F[r] ? F[r] : yr);
                }
            }
        if (F ? !sim_fric_lu_solve(s, rows) : !chol(s->S, rows))
            return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: contact system singular (redundant contacts?)", s->t);
        if (!F)
            chol_solve(s->S, rows, s->lam);
        memset(s->tmp, 0, nv * sizeof *s->tmp);
        for (size_t r = 0; r < rows; r++) {
            const double *y = F && F[r] ? F[r] : s->Y + r * nv;
            double l = s->lam[r];
            if (s->yleaf[r] < 0)
                for (size_t k = 0; k < nv; k++)
                    s->tmp[k] += y[k] * l;
            else
                for (int k = s->yleaf[r]; k >= 0; k = s->vpar[k])
                    s->tmp[k] += y[k] * l;
        }
        tree_solve_l(s->L, s->vpar, nv, s->tmp);
        for (size_t k = 0; k < nv; k++)
            nu_dot[s->vperm[k]] += s->tmp[k];
    }
    rows = 0;
    if (cw)
        memset(cw, 0, 6 * s->nc * sizeof *cw);
    for (size_t k = 0; k < s->nc; k++) {
        if (!s->active[k])
            continue;
        for (int r = 0; r < s->contacts[k].dim; r++)
            if (!s->fr || !sim_fric_released(s->fr, k, r)) {
                if (cw)
                    cw[6 * k + (size_t)r] = s->lam[rows];
                rows++;
            }
    }
    if (cw && s->fr)
        sim_fric_wrenches(s, cw);
    for (size_t j = 0; j < n; j++) {
        hold[j] = 0.0;
        if (held[j]) {
            hold[j] = s->lam[rows++];
            nu_dot[vo + j] = 0.0; /* exact: the Schur solve leaves round-off of order 1e-19 */
        }
    }
    for (size_t i = 0; i < nv; i++)
        if (!isfinite(nu_dot[i]))
            return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: non-finite acceleration", s->t);
    return RB_OK;
}

/* ---- controller helpers (nominal model, controller workspace) --------------------------------------- */

/* Gravity compensation (n) at the sample's q: fixed base g_s; floating base with contacts the contact-consistent
 * one (a gait's PD: of the inverse dynamics of the IK's motion instead of g, sim_gait_dynamics). The contact Jacobians
 * are the plant's rows of this sample (kinematics only: the same for the nominal model). */
static int gravity_comp(rb_sim *s, double *tau, rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv, vo = s->voff, rows = s->ncr;
    int rc;
    /* the plant's workspace when it holds the nominal model: its joint transforms at q are ready */
    rb_dyn *ws = s->share_ctrl ? s->plant : s->ctrl;
    bool dyn = s->gait && s->sc.ctrl == RB_CTRL_PD && s->sc.gait.feedforward == RB_GAIT_FF_DYNAMICS;
    if ((rc = dyn ? sim_gait_dynamics(s, ws, s->gv, err) : rb_dyn_gravity_forces(m, ws, s->q, s->gv, err)) < 0)
        return rc;
    for (size_t j = 0; j < s->n; j++)
        tau[j] = s->gv[vo + j];
    if (!m->floating || rows == 0)
        return RB_OK;
    /* (J_cb^T J_cb + eps) x = g_b, lambda = J_cb x, tau = g_s - J_cs^T lambda */
    double G[36], x[6];
    for (int i = 0; i < 6; i++) {
        x[i] = s->gv[i];
        for (int j = 0; j < 6; j++) {
            double a = 0.0;
            for (size_t r = 0; r < rows; r++)
                a += s->Jc[r * nv + (size_t)i] * s->Jc[r * nv + (size_t)j];
            G[6 * i + j] = a + (i == j ? 1e-12 : 0.0);
        }
    }
    if (!chol(G, 6))
        return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: gravity compensation: contact system singular", s->t);
    chol_solve(G, 6, x);
    for (size_t r = 0; r < rows; r++) {
        double l = 0.0;
        for (int i = 0; i < 6; i++)
            l += s->Jc[r * nv + (size_t)i] * x[i];
        for (size_t j = 0; j < s->n; j++)
            tau[j] -= s->Jc[r * nv + vo + j] * l;
    }
    return RB_OK;
}

/* ---- per-sample computation ----------------------------------------------------------------------------- */

static double push_shape(const rb_sim_push *p, double t)
{
    if (!(t >= p->start && t < p->start + p->duration) || p->duration <= 0)
        return 0.0;
    double u = (t - p->start) / p->duration;
    switch (p->shape) {
    case RB_PUSH_HALF_SINE: return sin(M_PI * u);
    case RB_PUSH_TRIANGLE: return 1.0 - fabs(2.0 * u - 1.0);
    default: return 1.0;
    }
}

int sim_activate_contact(rb_sim *s, size_t k, rb_err *err)
{
    s->kin = KIN_NONE;
    int rc = rb_dyn_kinematics(s->m, s->plant, s->q, NULL, NULL, err);
    if (rc < 0)
        return rc;
    if ((rc = rb_dyn_frame_pose(s->m, s->plant, (size_t)s->contacts[k].frame, &s->cref[k], err)) < 0)
        return rc;
    s->active[k] = 1;
    return RB_OK;
}

/* Contact events, the payload, the pushes and the jets at the sample's time; the pushes in effect and the jets head
 * s->ext. */
static int sample_inputs(rb_sim *s, rb_err *err)
{
    double t = s->t;
    int rc;
    while (s->next_event < s->sc.n_events && s->events[s->next_event].t <= t + 1e-12) {
        const rb_sim_contact_event *ev = &s->events[s->next_event++];
        if (ev->active && !s->active[ev->contact]) {
            if ((rc = sim_activate_contact(s, ev->contact, err)) < 0)
                return rc;
        } else if (!ev->active) {
            s->active[ev->contact] = 0;
        }
    }
    if (s->gait) { /* the gait's contact switching, then its references */
        size_t landing = sim_gait_phase(s);
        if (landing != SIZE_MAX && (rc = sim_activate_contact(s, landing, err)) < 0)
            return rc;
        sim_gait_refs(s);
    }
    if ((rc = sim_payload_sample(s, err)) < 0)
        return rc;
    s->n_ext_push = 0;
    for (size_t k = 0; k < s->npush; k++) {
        double a = push_shape(&s->pushes[k], t);
        for (int i = 0; i < 6; i++)
            s->pw[6 * k + (size_t)i] = a * s->pushes[k].peak[i];
        if (a == 0.0)
            continue; /* not in effect: left out of the dynamics passes */
        rb_ext_wrench *e = &s->ext[s->n_ext_push++];
        e->frame = s->pushes[k].frame, e->rep = RB_DYN_MIXED;
        memcpy(e->w, s->pw + 6 * k, sizeof e->w);
    }
    return sim_jets_sample(s, err);
}

/* The controller model's new values (sim_ctrl_model_sample), then the joint references (scenario curves, or the
 * IK's under balance or gait: ik.c) at the sample. */
static int sample_refs(rb_sim *s, rb_err *err)
{
    if (sim_ik_on(s))
        return sim_ik_refs(s, err);
    int rc = sim_ctrl_model_sample(s, err);
    if (rc < 0)
        return rc;
    for (size_t j = 0; j < s->n; j++) {
        double r[3];
        rb_sim_ref_eval(&s->refs[j], s->t, r);
        s->ref[j] = r[0], s->ref_d[j] = r[1], s->ref_dd[j] = r[2];
    }
    return RB_OK;
}

/* tau_des += M_ss acc (M: nv x nv, velocity order). */
static void add_mass_times(const rb_sim *s, const double *M, const double *acc, double *tau)
{
    size_t nv = s->nv, vo = s->voff;
    for (size_t i = 0; i < s->n; i++)
        tau[i] += sim_dot(M + (vo + i) * nv + vo, acc, s->n);
}

/* The torque loop on top of the desired joint torque tau_ref (in tau_des): the rotor's inertial torque for the
 * joint acceleration asked for (acc), the PI on the torque error of the feedback in use, the friction
 * compensation. */
static void torque_loop(rb_sim *s, const double *acc)
{
    double dt = s->sc.dt;
    for (size_t j = 0; j < s->n; j++) {
        double e = 0.0, rotor = act_armature(&s->act[j]) * acc[j];
        bool pi = true;
        switch (s->sc.torque_feedback) {
        case RB_TFB_TRUTH:
            /* The first sample starts the loop settled (no torque error), as a robot that was already
             * holding its pose when logging began: no kick from an empty torque history. */
            e = s->step == 0 ? 0.0 : s->tau_ref[j] - s->tau_prev[j];
            break;
        case RB_TFB_EXTERNAL:
            pi = isfinite(s->tau_hat[j]);
            e = pi ? s->tau_ref[j] - s->tau_hat[j] : 0.0;
            break;
        default: pi = false; break;
        }
        if (pi) {
            s->int_e[j] += e * dt;
            s->tau_des[j] += rotor + s->gains[j].kp_tau * e + s->gains[j].ki_tau * s->int_e[j];
        } else {
            s->tau_des[j] += rotor;
        }
        if (s->sc.friction_compensation && isfinite(s->tau_f_hat[j]))
            s->tau_des[j] += s->tau_f_hat[j];
    }
}

int rb_sim_set_torque_feedback(rb_sim *s, const double *tau_hat, const double *tau_f_hat, rb_err *err)
{
    if (!s)
        return rb_err_set(err, RB_EINVAL, "rb_sim_set_torque_feedback: NULL engine");
    if (tau_hat)
        memcpy(s->tau_hat, tau_hat, s->n * sizeof *s->tau_hat);
    if (tau_f_hat)
        memcpy(s->tau_f_hat, tau_f_hat, s->n * sizeof *s->tau_f_hat);
    return RB_OK;
}

/* The joint controller: tau_des (the motor torque asked for). The plant's M(q) and bias forces serve as the
 * nominal model's when they are the same (no payload; no push in effect for the bias forces). */
static int controller(rb_sim *s, rb_err *err)
{
    const rb_model *m = s->m;
    size_t n = s->n, nv = s->nv, vo = s->voff;
    const double *sq = s->q + (s->nq - n), *sv = s->nu + vo;
    int rc;
    switch (s->sc.ctrl) {
    case RB_CTRL_NONE: memset(s->tau_des, 0, n * sizeof *s->tau_des); break;
    case RB_CTRL_PD:
        if (s->sc.gravity_comp) {
            if ((rc = gravity_comp(s, s->tau_des, err)) < 0)
                return rc;
        } else {
            memset(s->tau_des, 0, n * sizeof *s->tau_des);
        }
        for (size_t j = 0; j < n; j++)
            s->tau_des[j] += s->gains[j].kp * (s->ref[j] - sq[j]) + s->gains[j].kd * (s->ref_d[j] - sv[j]);
        break;
    case RB_CTRL_TORQUE: {
        /* joint acceleration asked for, in hold (n) */
        double *acc = s->hold;
        for (size_t j = 0; j < n; j++)
            acc[j] = s->ref_dd[j] + s->gains[j].kp * (s->ref[j] - sq[j]) + s->gains[j].kd * (s->ref_d[j] - sv[j]);
        if (!m->floating) {
            if (s->share_ctrl && s->n_ext_push == 0) { /* ID = M acc + h */
                memcpy(s->tau_des, s->h, n * sizeof *s->tau_des);
                add_mass_times(s, s->Mraw, acc, s->tau_des);
            } else if ((rc = rb_dyn_rnea(m, s->ctrl, s->q, s->nu, acc, NULL, 0, s->tau_des, err)) < 0) {
                return rc;
            }
        } else {
            if ((rc = gravity_comp(s, s->tau_des, err)) < 0)
                return rc;
            const double *M = s->Mraw;
            if (!s->share_ctrl) {
                rb_mat Mv = rb_mat_view(s->AtA, nv, nv, nv);
                if ((rc = rb_dyn_mass_matrix(m, s->ctrl, s->q, &Mv, err)) < 0)
                    return rc;
                M = s->AtA;
            }
            add_mass_times(s, M, acc, s->tau_des);
        }
        memcpy(s->tau_ref, s->tau_des, n * sizeof *s->tau_ref);
        torque_loop(s, acc);
        return RB_OK;
    }
    }
    memcpy(s->tau_ref, s->tau_des, n * sizeof *s->tau_ref);
    return RB_OK;
}

/* The command the driver applies: tau_des, or with a bus delay (mismatch) the one of command_delay samples before
 * (the first command fills the line: a loop that was already running). */
static const double *applied_command(rb_sim *s)
{
    if (!s->mm_on || s->ring_len <= 1)
        return s->tau_des;
    size_t n = s->n, L = s->ring_len;
    double *slot = s->cmd_ring + n * (s->ring_pos % L);
    memcpy(slot, s->tau_des, n * sizeof *slot);
    if (s->ring_pos == 0)
        for (size_t k = 1; k < L; k++)
            memcpy(s->cmd_ring + n * k, s->tau_des, n * sizeof *slot);
    const double *old = s->cmd_ring + n * ((s->ring_pos + 1) % L);
    s->ring_pos++;
    return old;
}

/* Ideal current loop with saturation: tau_m. */
static void actuators(rb_sim *s)
{
    const double *cmd = applied_command(s);
    for (size_t j = 0; j < s->n; j++) {
        const rb_sim_actuator *a = &s->act[j];
        double kt = act_kt(a), R = act_R(a), i_cmd = cmd[j] / (kt * R), i = i_cmd;
        if (a->i_max > 0 && isfinite(a->i_max))
            i = i > a->i_max ? a->i_max : i < -a->i_max ? -a->i_max : i;
        s->cur_cmd[j] = i_cmd, s->cur[j] = i, s->tau_m[j] = kt * R * i;
    }
    sim_elastic_sample(s);
}

/* Friction: static and LuGre kinds once per step; stiction joints decide held or slipping with the torque
 * holding them would take (a solve with the candidates held). A joint that sticks again stops (s_dot = 0):
 * then the velocity-dependent parts of the plant are evaluated again. */
static int friction(rb_sim *s, rb_err *err)
{
    size_t n = s->n, vo = s->voff;
    const double *sv = s->nu + vo;
    double t = s->t, dt = s->sc.dt;
    bool any_stiction = false;
    int rc;
    for (size_t j = 0; j < n; j++) {
        s->held[j] = 0;
        if (s->fric[j].kind == RB_FRICTION_STICTION) {
            any_stiction = true;
            if (s->fst[j].stuck || fabs(sv[j]) < s->fric[j].stiction.v_stick)
                s->held[j] = 1; /* candidate: what torque would holding it take? */
            s->tau_f[j] = 0.0;
        } else {
            s->tau_f[j] = rb_friction_step(&s->fric[j], &s->fst[j], t, dt, sv[j], 0.0, NULL);
            if (s->mm_on)
                s->tau_f[j] = rb_sim_mismatch_friction(&s->sc.mismatch, s->mmd.fric_scale[j], s->mmd.fric_asym[j],
                                                       s->tau_f[j], sv[j], s->tau_m[j], t);
        }
        s->tau_net[j] = sim_drive(s, j) - (s->held[j] ? 0.0 : s->tau_f[j]);
    }
    if (!any_stiction)
        return RB_OK;
    if ((rc = plant_solve(s, s->held, s->nu_dot, NULL, s->hold, err)) < 0)
        return rc;
    bool stopped = false;
    for (size_t j = 0; j < n; j++) {
        if (s->fric[j].kind != RB_FRICTION_STICTION)
            continue;
        /* held candidate: the friction torque needed to hold it is -hold (it enters as -tau_F); a slipping
         * joint: the motor torque (approximation used only for the direction at rest) */
        double applied = s->held[j] ? -s->hold[j] : s->tau_m[j];
        bool stuck = false;
        double tf = rb_friction_step(&s->fric[j], &s->fst[j], t, dt, sv[j], applied, &stuck);
        s->held[j] = stuck;
        s->tau_f[j] = tf;
        s->tau_net[j] = sim_drive(s, j) - (stuck ? 0.0 : tf);
        if (stuck && s->nu[vo + j] != 0.0) {
            s->nu[vo + j] = 0.0; /* re-sticking is an inelastic stop */
            stopped = true;
        }
    }
    return stopped ? plant_eval(s, s->q, s->nu, false, true, err) : RB_OK;
}

/* The step's final solve; with a floor, the contacts' stick / slip decision around it (roboest/sim_contact.h). */
static int contact_solve(rb_sim *s, rb_err *err)
{
    int rc;
    if (s->fr)
        sim_fric_begin(s);
    do
        rc = plant_solve(s, s->held, s->nu_dot, s->cw, s->hold, err);
    while (rc >= 0 && s->fr && sim_fric_update(s));
    if (rc >= 0 && s->fr)
        sim_fric_end(s);
    return rc;
}

/* Joint torque, and the rotor side with the gear's windup (k_gear > 0). */
static void joint_outputs(rb_sim *s)
{
    size_t n = s->n, vo = s->voff;
    const double *sq = s->q + (s->nq - n), *sv = s->nu + vo;
    double dt = s->sc.dt;
    for (size_t j = 0; j < n; j++) {
        const rb_sim_actuator *a = &s->act[j];
        if (s->held[j])
            s->tau_f[j] = -s->hold[j];
        s->stuck[j] = s->held[j];
        double R = act_R(a), sdd = s->nu_dot[vo + j];
        s->tau_j[j] = sim_drive(s, j) - s->tau_f[j] - s->arm_v[vo + j] * sdd; /* elastic: the rotor is not here */
        if (s->tau_s && act_armature(a) > 0) { /* the motor encoder reads the rotor behind the spring */
            s->mpos[j] = R * s->el_th[j], s->mvel[j] = R * s->el_thd[j];
            s->macc[j] = R * (s->tau_m[j] - s->tau_s[j]) / act_armature(a);
            continue;
        }
        if (!(a->k_gear > 0)) {
            s->mpos[j] = R * sq[j], s->mvel[j] = R * sv[j], s->macc[j] = R * sdd;
            continue;
        }
        double tau_g = s->tau_m[j] - act_armature(a) * sdd;
        double wd = s->step == 0 ? 0.0 : (tau_g - s->tau_g_prev[j]) / (dt * a->k_gear);
        double wdd = s->step == 0 ? 0.0 : (wd - s->wdot_prev[j]) / dt;
        s->mpos[j] = R * (sq[j] + tau_g / a->k_gear);
        s->mvel[j] = R * (sv[j] + wd);
        s->macc[j] = R * (sdd + wdd);
        s->tau_g_prev[j] = tau_g, s->wdot_prev[j] = wd;
    }
}

/* ---- per-sample computation ----------------------------------------------------------------------------- */

int sim_compute_sample(rb_sim *s, rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv;
    int rc;
    s->truth.valid = 0;
    if ((rc = sample_inputs(s, err)) < 0 || (rc = plant_eval(s, s->q, s->nu, true, true, err)) < 0 ||
        (rc = sample_refs(s, err)) < 0 || (rc = controller(s, err)) < 0)
        return rc;
    actuators(s);
    if ((rc = friction(s, err)) < 0 || (rc = contact_solve(s, err)) < 0 ||
        (sim_elastic_implicit(s) && (rc = contact_solve(s, err)) < 0) || (s->gait && (rc = sim_gait_zmp(s, err)) < 0))
        return rc;
    joint_outputs(s);

    rb_sim_truth *tr = &s->truth;
    tr->t = s->t;
    if (m->floating) {
        rb_m3_from_quat(s->q + 3, tr->base_pose.R);
        memcpy(tr->base_pose.p, s->q, sizeof tr->base_pose.p);
        memcpy(tr->base_twist, s->nu, sizeof tr->base_twist);
        memcpy(tr->base_acc, s->nu_dot, sizeof tr->base_acc);
    }
    for (size_t i = 0; i < nv; i++)
        if (!isfinite(s->nu[i]))
            return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: non-finite velocity", s->t);
    return s->sc.truth_on_demand ? RB_OK : rb_sim_truth_compute(s, RB_SIM_TRUTH_ALL, err);
}

void sim_apply_limits(rb_sim *s)
{
    const rb_model *m = s->m;
    size_t n = s->n, vo = s->voff;
    double *sq = s->q + (s->nq - n), *sv = s->nu + vo;
    for (size_t j = 0; j < n; j++) {
        double lo = m->dof_lower[j], hi = m->dof_upper[j];
        unsigned char at = 0;
        if (sq[j] >= hi) {
            sq[j] = hi, at = 1;
            if (sv[j] > 0.0)
                sv[j] = 0.0;
        } else if (sq[j] <= lo) {
            sq[j] = lo, at = 1;
            if (sv[j] < 0.0)
                sv[j] = 0.0;
        }
        s->at_limit[j] = at;
    }
}

/* ---- stepping ------------------------------------------------------------------------------------------- */

int rb_sim_step(rb_sim *s, rb_err *err)
{
    if (!s)
        return rb_err_set(err, RB_EINVAL, "rb_sim_step: NULL engine");
    if (s->step >= s->n_steps)
        return 0;
    const rb_model *m = s->m;
    size_t nv = s->nv, n = s->n, vo = s->voff;
    double dt = s->sc.dt;
    int rc;
    for (size_t j = 0; j < n; j++)
        s->tau_prev[j] = s->tau_j[j];
    if (s->sc.method == RB_SIM_RK4) {
        /* k1 = (nu, nu_dot) of the sample; stages at q (+) c dt nu_i, nu + c dt a_i */
        double *kv = s->kv, *ka = s->ka;
        memcpy(kv, s->nu, nv * sizeof *kv);
        memcpy(ka, s->nu_dot, nv * sizeof *ka);
        static const double cst[3] = {0.5, 0.5, 1.0};
        for (int st = 1; st < 4; st++) {
            double h = cst[st - 1] * dt;
            rb_dyn_integrate(m, s->q, kv + (size_t)(st - 1) * nv, h, s->qs);
            for (size_t i = 0; i < nv; i++)
                s->nus[i] = s->nu[i] + h * ka[(size_t)(st - 1) * nv + i];
            memcpy(kv + (size_t)st * nv, s->nus, nv * sizeof *kv);
            if ((rc = plant_eval(s, s->qs, s->nus, true, false, err)) < 0 ||
                (rc = plant_solve(s, s->held, ka + (size_t)st * nv, NULL, s->hold, err)) < 0)
                return rc;
        }
        for (size_t i = 0; i < nv; i++) {
            s->nus[i] = (kv[i] + 2 * kv[nv + i] + 2 * kv[2 * nv + i] + kv[3 * nv + i]) / 6.0;
            s->nu[i] += dt * (ka[i] + 2 * ka[nv + i] + 2 * ka[2 * nv + i] + ka[3 * nv + i]) / 6.0;
        }
        rb_dyn_integrate(m, s->q, s->nus, dt, s->q);
        sim_elastic_advance(s);
    } else {
        sim_elastic_advance(s);
        for (size_t i = 0; i < nv; i++)
            s->nu[i] += dt * s->nu_dot[i];
        rb_dyn_integrate(m, s->q, s->nu, dt, s->q);
    }
    for (size_t j = 0; j < n; j++)
        if (s->held[j])
            s->nu[vo + j] = 0.0; /* exact already; clears round-off */
    if (s->sc.joint_limits)
        sim_apply_limits(s);
    if (sim_ik_on(s)) {
        memcpy(s->nu_r_prev, s->nu_r, nv * sizeof *s->nu_r);
        rb_dyn_integrate(m, s->q_r, s->nu_r, dt, s->q_r);
    }
    sim_jets_advance(s);
    s->step++;
    s->t = (double)s->step * dt;
    if ((rc = sim_compute_sample(s, err)) < 0)
        return rc;
    return 1;
}

const rb_sim_truth *rb_sim_truth_get(const rb_sim *sim) { return sim ? &sim->truth : NULL; }
size_t rb_sim_n_steps(const rb_sim *sim) { return sim ? sim->n_steps : 0; }
