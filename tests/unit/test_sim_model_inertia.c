/* The controller's model given other inertial parameters (rb_sim_set_model_inertia) on the balancing humanoid
 * (configs/scenarios/inertial_forearm.json): a small change moves the torques a little (the balance CoM
 * reference follows the model's CoM, no IK jolt), the true parameters track better over a whole run, and the CoM
 * Jacobian of a workspace with changed parameters is the derivative of its CoM. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/dynamics.h"
#include "roboest/sim.h"
#include "support.h"

static rb_scenario *load_forearm(void)
{
    rb_scenario *s = NULL;
    rb_err err;
    int rc = rb_scenario_load(RB_SOURCE "/configs/scenarios/inertial_forearm.json", &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return s;
}

static long forearm(const rb_scenario *s)
{
    long b = rb_model_body_index(s->model, "l_forearm");
    cr_assert_geq(b, 0);
    return b;
}

/* Run s (its duration), giving the controller pi for the forearm at sample 0 when pi is not NULL; the joint
 * torques of every sample into tau ((n_steps + 1) x n). Returns the number of samples. */
static size_t run_torques(const rb_scenario *s, const double *pi, double *tau, double *q0)
{
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&s->sim, &sim, &err), RB_OK, "%s", err.msg);
    size_t n = s->model->n_dofs, ns = rb_sim_n_steps(sim);
    const rb_sim_truth *tr = rb_sim_truth_get(sim);
    if (q0)
        memcpy(q0, tr->q, s->model->nq * sizeof *q0);
    for (size_t k = 0; k <= ns; k++) {
        memcpy(tau + k * n, tr->tau_j, n * sizeof *tau);
        if (k == 0 && pi)
            cr_assert_eq(rb_sim_set_model_inertia(sim, (size_t)forearm(s), pi, &err), RB_OK, "%s", err.msg);
        if (k < ns)
            cr_assert_eq(rb_sim_step(sim, &err), 1, "%s", err.msg);
    }
    rb_sim_finish(sim);
    return ns + 1;
}

/* The controller told the forearm is 1 % heavier (its parameters scaled, the CoM kept): every joint torque of the
 * following 0.1 s moves by no more than a few times the change of the gravity forces it explains (before the fix,
 * the IK corrected the model's CoM step of ~0.2 mm within ik_T: an acceleration spike of tens of N m). */
Test(sim_model_inertia, a_one_percent_change_moves_the_torques_by_what_it_explains)
{
    rb_scenario *s = load_forearm();
    s->sim.duration = 0.1;
    const rb_model *m = s->model;
    size_t n = m->n_dofs, nv = m->nv, ns = (size_t)llround(s->sim.duration / s->sim.dt) + 1;
    double pi[10], *q0 = calloc(m->nq, sizeof *q0), *g0 = calloc(nv, sizeof *g0), *g1 = calloc(nv, sizeof *g1);
    double *ta = calloc(ns * n, sizeof *ta), *tb = calloc(ns * n, sizeof *tb);
    for (int i = 0; i < 10; i++)
        pi[i] = 1.01 * m->bodies[forearm(s)].inertia[i];
    cr_assert_eq(run_torques(s, NULL, ta, q0), ns);
    cr_assert_eq(run_torques(s, pi, tb, NULL), ns);

    /* the change's own size: the largest change of the gravity forces (base wrench and joints) at q0 */
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_gravity_forces(m, ws, q0, g0, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_set_body_inertia(m, ws, (size_t)forearm(s), pi, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_gravity_forces(m, ws, q0, g1, &err), RB_OK, "%s", err.msg);
    double dg = 0.0, worst = 0.0;
    for (size_t i = 0; i < nv; i++)
        dg = fmax(dg, fabs(g1[i] - g0[i]));
    size_t kw = 0, jw = 0;
    for (size_t k = 0; k < ns; k++)
        for (size_t j = 0; j < n; j++)
            if (fabs(tb[k * n + j] - ta[k * n + j]) > worst)
                worst = fabs(tb[k * n + j] - ta[k * n + j]), kw = k, jw = j;
    cr_assert_gt(dg, 0.0);
    /* the feedforward's change plus the torque loop's and the plant's response to it */
    cr_assert_lt(worst, 3.0 * dg, "joint %s at sample %zu: torque changed by %g N m, gravity forces by %g",
                 m->dof_names[jw], kw, worst, dg);
    rb_dyn_free(ws);
    free(q0), free(g0), free(g1), free(ta), free(tb);
    rb_scenario_free(s);
}

typedef struct score {
    bool adapt;
    long body;
    double se_joints, se_com, n;
} score;

static int feed_truth(void *u, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                      rb_err *err)
{
    (void)k, (void)t, (void)latest, (void)fresh;
    score *f = u;
    const rb_sim_truth *tr = rb_sim_truth_get(sim);
    for (size_t j = 0; j < tr->n; j++)
        f->se_joints += (tr->ref[j] - tr->s[j]) * (tr->ref[j] - tr->s[j]);
    for (int i = 0; i < 2; i++)
        f->se_com += (tr->com_ref[i] - tr->com[i]) * (tr->com_ref[i] - tr->com[i]);
    f->n += 1;
    return f->adapt ? rb_sim_set_model_inertia(sim, (size_t)f->body, tr->payload_pi, err) : 0;
}

static score run_scored(const rb_scenario *s, bool adapt)
{
    score f = {adapt, forearm(s), 0, 0, 0};
    rb_scenario_hook h = {NULL, feed_truth, &f};
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, NULL, &h, NULL, &err), RB_OK, "%s", err.msg);
    f.se_joints = sqrt(f.se_joints / (f.n * (double)s->model->n_dofs));
    f.se_com = sqrt(f.se_com / (2 * f.n));
    return f;
}

/* The whole run (the 1 Hz sine, then the square): the controller that knows the forearm's true parameters at
 * every sample tracks the joint references and balances (the CoM's horizontal sway) better than the nominal one.
 * Before the fix every change of the model's CoM jolted the IK and the oracle's sway was no better. */
Test(sim_model_inertia, the_true_parameters_track_and_balance_better_over_the_whole_run)
{
    rb_scenario *s = load_forearm();
    score nominal = run_scored(s, false), oracle = run_scored(s, true);
    cr_assert_lt(oracle.se_joints, 0.5 * nominal.se_joints, "joint RMSE %g (true pi) vs %g (nominal)", oracle.se_joints,
                 nominal.se_joints);
    cr_assert_lt(oracle.se_com, 0.9 * nominal.se_com, "CoM sway RMSE %g m (true pi) vs %g m (nominal)", oracle.se_com,
                 nominal.se_com);
    rb_scenario_free(s);
}

/* rb_dyn_com_jacobian on a workspace whose forearm is 3 kg heavier than the model's: J nu is the derivative of
 * rb_dyn_com along nu (central difference), the workspace's total mass, not the model's. */
Test(sim_model_inertia, com_jacobian_is_the_derivative_of_the_workspace_com)
{
    rb_scenario *s = load_forearm();
    const rb_model *m = s->model;
    size_t nq = m->nq, nv = m->nv;
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    double pi[10];
    const double *nom = m->bodies[forearm(s)].inertia;
    for (int i = 0; i < 10; i++)
        pi[i] = (nom[0] + 3.0) / nom[0] * nom[i];
    cr_assert_eq(rb_dyn_set_body_inertia(m, ws, (size_t)forearm(s), pi, &err), RB_OK, "%s", err.msg);
    double *q = calloc(nq, sizeof *q), *qp = calloc(nq, sizeof *qp), *qm = calloc(nq, sizeof *qm);
    double *nu = calloc(nv, sizeof *nu), *J = calloc(3 * nv, sizeof *J);
    memcpy(q, s->sim.q0, nq * sizeof *q);
    for (size_t i = 0; i < nv; i++)
        nu[i] = 0.1 * sin(1.0 + (double)i);
    rb_mat Jm = rb_mat_view(J, 3, nv, nv);
    double c[3], cp[3], cm[3], h = 1e-6;
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_com_jacobian(m, ws, &Jm, c, &err), RB_OK, "%s", err.msg);
    rb_dyn_integrate(m, q, nu, h, qp);
    rb_dyn_integrate(m, q, nu, -h, qm);
    cr_assert_eq(rb_dyn_kinematics(m, ws, qp, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_com(m, ws, cp, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_kinematics(m, ws, qm, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_com(m, ws, cm, &err), RB_OK, "%s", err.msg);
    for (int r = 0; r < 3; r++) {
        double jn = 0.0, fd = (cp[r] - cm[r]) / (2 * h);
        for (size_t i = 0; i < nv; i++)
            jn += J[(size_t)r * nv + i] * nu[i];
        cr_assert(fabs(jn - fd) < 1e-7 + 1e-5 * fabs(fd), "row %d: J nu %.9g, d com / dt %.9g", r, jn, fd);
    }
    rb_dyn_free(ws);
    free(q), free(qp), free(qm), free(nu), free(J);
    rb_scenario_free(s);
}
