/* Payloads on several bodies (density and point modes, mass waveform segments), the controller's model set by a
 * program (rb_sim_set_model_inertia), the balance pelvis-height task and free joints, humanoid_arms.urdf. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/dynamics.h"
#include "roboest/sim.h"
#include "support.h"

#define BASE RB_SOURCE "/configs/scenarios/test.json"
#define ARM "\"model\": {\"urdf\": \"../../datasets/arm_2ft.urdf\"}"

static rb_scenario *load_text(const char *text)
{
    rb_scenario *s = NULL;
    rb_err err;
    int rc = rb_scenario_load_text(text, strlen(text), "t.json", BASE, &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return s;
}

static rb_scenario *load_file(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/configs/scenarios/%s", RB_SOURCE, name);
    rb_scenario *s = NULL;
    rb_err err;
    int rc = rb_scenario_load(path, &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return s;
}

static void expect_error(const char *text, const char *message)
{
    rb_scenario *s = (rb_scenario *)1;
    rb_err err;
    int rc = rb_scenario_load_text(text, strlen(text), "t.json", BASE, &s, &err);
    cr_assert_eq(rc, RB_ECONFIG, "rc %d: %s", rc, rc ? err.msg : "");
    cr_assert_null(s);
    cr_assert(strstr(err.msg, message), "got '%s', expected '%s'", err.msg, message);
    cr_assert_null(strchr(err.msg, '\n'));
}

static void step_to(rb_sim *s, double t_end)
{
    rb_err err;
    while (rb_sim_truth_get(s)->t < t_end - 1e-9) {
        int rc = rb_sim_step(s, &err);
        cr_assert_geq(rc, 0, "%s", err.msg);
        if (rc == 0)
            break;
    }
}

/* forearm: density, a 1 Hz sine then a 1 Hz square from 8 s (Table I); hand: a point mass stepping at 0.5 s. */
#define TWO_PAYLOADS                                                                                                   \
    "{" ARM ", \"duration\": 9, \"payload\": ["                                                                        \
    "{\"link\": \"forearm\", \"mode\": \"density\", \"segments\": ["                                                   \
    "{\"kind\": \"sine\", \"freq\": 1, \"offset\": 4.5, \"amplitude\": 3, \"until\": 8},"                              \
    "{\"kind\": \"square\", \"freq\": 1, \"offset\": 4.5, \"amplitude\": 3, \"from\": 8}]},"                           \
    "{\"link\": \"hand\", \"mode\": \"point\", \"at\": [0.02, -0.03, 0.1], \"segments\": ["                            \
    "{\"kind\": \"steps\", \"t0\": 0.5, \"amplitude\": 2}]}]}"

Test(sim_payloads, several_payloads_follow_their_waveforms)
{
    rb_scenario *sc = load_text(TWO_PAYLOADS);
    const rb_model *m = sc->model;
    cr_assert_eq(sc->sim.n_payloads, 2);
    size_t fa = (size_t)rb_model_body_index(m, "forearm"), hd = (size_t)rb_model_body_index(m, "hand");
    const double *nf = m->bodies[fa].inertia, *nh = m->bodies[hd].inertia;
    rb_sim *s = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&sc->sim, &s, &err), RB_OK, "%s", err.msg);
    const rb_sim_truth *t = rb_sim_truth_get(s);
    cr_assert_eq(t->n_payloads, 2);
    static const double times[] = {0.125, 0.4, 0.6, 7.75, 8.25, 8.75};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        step_to(s, times[i]);
        double tt = t->t;
        cr_assert_float_eq(tt, times[i], 1e-9);
        /* forearm: sine until 8 s, then the square: +amplitude for the first half of each period */
        double mf = tt < 8 ? 4.5 + 3 * sin(2 * M_PI * tt) : (fmod(tt - 8, 1.0) < 0.5 ? 7.5 : 1.5);
        const double *pf = t->payload_pi, *ph = t->payload_pi + 10;
        cr_assert_float_eq(pf[0], mf, 1e-9, "t %g: forearm mass %g vs %g", tt, pf[0], mf);
        for (int k = 1; k < 10; k++) /* density: every parameter scales, the CoM stays put */
            cr_assert_float_eq(pf[k], nf[k] * mf / nf[0], 1e-12);
        for (int k = 1; k < 4; k++)
            cr_assert_float_eq(pf[k] / pf[0], nf[k] / nf[0], 1e-12, "CoM moved");
        /* hand: nominal, then + 2 kg at `at` (parallel axes) */
        double d = tt >= 0.5 ? 2.0 : 0.0, c[3] = {0.02, -0.03, 0.1}, cc = 0.0004 + 0.0009 + 0.01;
        cr_assert_float_eq(ph[0], nh[0] + d, 1e-12);
        for (int k = 0; k < 3; k++)
            cr_assert_float_eq(ph[1 + k], nh[1 + k] + d * c[k], 1e-12);
        cr_assert_float_eq(ph[4], nh[4] + d * (cc - c[0] * c[0]), 1e-12);
        cr_assert_float_eq(ph[5], nh[5] - d * c[0] * c[1], 1e-12);
        cr_assert_float_eq(ph[8], nh[8] - d * c[1] * c[2], 1e-12);
        cr_assert_float_eq(ph[9], nh[9] + d * (cc - c[2] * c[2]), 1e-12);
        if (d > 0) { /* the CoM moves towards the point: (m c_nom + d at) / (m + d) */
            for (int k = 0; k < 3; k++)
                cr_assert_float_eq(ph[1 + k] / ph[0], (nh[1 + k] + d * c[k]) / (nh[0] + d), 1e-12);
        }
    }
    rb_sim_finish(s);
    rb_scenario_free(sc);
}

Test(sim_payloads, truth_channels_per_body_and_mass_by_body_name)
{
    rb_scenario *sc = load_text(TWO_PAYLOADS);
    sc->sim.duration = 0.7;
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_run(sc, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
    const rb_channel *mass = rb_log_find(log, "truth/payload_mass");
    const rb_channel *pf = rb_log_find(log, "truth/payload/forearm"), *ph = rb_log_find(log, "truth/payload/hand");
    cr_assert_not_null(mass);
    cr_assert_not_null(pf);
    cr_assert_not_null(ph);
    cr_assert_eq(mass->n_elements, 2);
    cr_assert_str_eq(mass->element_names[0], "forearm");
    cr_assert_str_eq(mass->element_names[1], "hand");
    cr_assert_str_eq(mass->units[0], "kg");
    for (size_t k = 0; k < mass->n_samples; k++) {
        cr_assert_eq(mass->data[2 * k], pf->data[10 * k]);
        cr_assert_eq(mass->data[2 * k + 1], ph->data[10 * k]);
    }
    rb_log_free(log);
    rb_scenario_free(sc);
}

/* The old single-object form is a one-element list, unchanged. */
Test(sim_payloads, single_object_form_is_a_one_element_list)
{
    rb_scenario *sc = load_text("{" ARM ", \"duration\": 1, \"payload\": {\"link\": \"hand\", \"kind\": \"steps\","
                                " \"t0\": 0.5, \"added\": {\"mass\": 1}}}");
    cr_assert_eq(sc->sim.n_payloads, 1);
    cr_assert_eq(sc->sim.payloads[0].mode, RB_PAYLOAD_MIX);
    cr_assert_eq(sc->sim.payloads[0].kind, RB_PAYLOAD_STEPS);
    rb_scenario_free(sc);
}

Test(sim_payloads, bad_keys_give_one_line_errors)
{
#define PL(body, rest) "{" ARM ", \"duration\": 1, \"payload\": {\"link\": \"" body "\", " rest "}}"
    expect_error(PL("forearm", "\"mode\": \"density\", \"segments\": [{\"kind\": \"constant\", \"offset\": 3, "
                               "\"until\": 2}, {\"kind\": \"constant\", \"offset\": 4, \"from\": 1.5}]"),
                 "payload.segments[1].from: segment overlaps the one before (which lasts until 2 s)");
    expect_error(PL("forearm", "\"mode\": \"densty\", \"segments\": [{\"kind\": \"constant\"}]"),
                 "payload.mode: unknown value 'densty' (did you mean 'density'?)");
    expect_error(PL("forearm", "\"mode\": \"density\", \"segments\": [{\"kind\": \"constant\", \"offset\": -2}]"),
                 "payload.segments[0].offset: must be > 0");
    expect_error(PL("forearm", "\"mode\": \"density\", \"segments\": [{\"kind\": \"sine\", \"freq\": 1, "
                               "\"offset\": 2, \"amplitude\": 3}]"),
                 "payload.segments[0]: the body mass reaches -1 kg (offset 2, amplitude 3): it must stay > 0");
    expect_error(PL("hand", "\"mode\": \"point\", \"at\": [0, 0, 0.1], \"segments\": [{\"kind\": \"steps\", "
                            "\"amplitude\": -50}]"),
                 "payload.segments[0]: the body mass reaches");
    expect_error(PL("hand", "\"mode\": \"point\", \"segments\": [{\"kind\": \"steps\", \"amplitude\": 1}]"),
                 "payload: missing key 'at'");
    expect_error(PL("hand", "\"mode\": \"density\", \"kind\": \"steps\", \"segments\": [{\"kind\": \"steps\"}]"),
                 "payload.kind: not with 'mode'");
    expect_error(PL("hand", "\"mode\": \"density\", \"segments\": [{\"kind\": \"square\", \"offset\": 1}]"),
                 "payload.segments[0]: expected one of 'period' (s) or 'freq' (Hz)");
    expect_error("{" ARM ", \"duration\": 1, \"payload\": [{\"link\": \"hand\", \"mode\": \"density\", "
                 "\"segments\": [{\"kind\": \"constant\"}]}, {\"link\": \"hand\", \"kind\": \"steps\", \"added\": "
                 "{\"mass\": 1}}]}",
                 "payload[1].link: body 'hand' has payload[0] already");
#undef PL
}

/* ---- the controller's model ------------------------------------------------------------------------------- */

/* Arm on a pole, torque controller with zero gains and constant references: the controller's desired torque is
 * the inverse dynamics of its model at the sample with zero acceleration, rb_dyn_rnea(q, nu, 0). No payload: the
 * controller shares the plant's evaluation until it is given a model of its own. */
Test(sim_payloads, model_inertia_acts_one_step_later_and_unshares_the_controller)
{
    rb_scenario *sc = load_text("{" ARM ", \"duration\": 1, \"q0\": {\"shoulder_pitch\": 0.4, \"elbow\": 0.7},"
                                " \"controller\": {\"kind\": \"torque\", \"torque_feedback\": \"none\"}}");
    const rb_model *m = sc->model;
    size_t hd = (size_t)rb_model_body_index(m, "hand"), n = m->n_dofs;
    double pi[10];
    memcpy(pi, m->bodies[hd].inertia, sizeof pi);
    pi[0] += 1.5, pi[3] += 1.5 * 0.1, pi[4] += 1.5 * 0.01, pi[7] += 1.5 * 0.01; /* 1.5 kg at z = 0.1 */
    rb_sim *a = NULL, *b = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&sc->sim, &a, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_sim_init(&sc->sim, &b, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_sim_set_model_inertia(b, hd, pi, &err), RB_OK, "%s", err.msg);
    const rb_sim_truth *ta = rb_sim_truth_get(a), *tb = rb_sim_truth_get(b);
    for (size_t j = 0; j < n; j++) /* sample 0: computed before the call */
        cr_assert_eq(ta->tau_ref[j], tb->tau_ref[j]);
    cr_assert_eq(rb_sim_step(a, &err), 1);
    cr_assert_eq(rb_sim_step(b, &err), 1);
    for (size_t j = 0; j < n; j++) /* the same state at sample 1 */
        cr_assert_eq(ta->s[j], tb->s[j]);
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    double zero[16] = {0}, want[16], nominal[16];
    cr_assert_eq(rb_dyn_rnea(m, ws, tb->q, tb->nu, zero, NULL, 0, nominal, &err), RB_OK);
    cr_assert_eq(rb_dyn_set_body_inertia(m, ws, hd, pi, &err), RB_OK);
    cr_assert_eq(rb_dyn_rnea(m, ws, tb->q, tb->nu, zero, NULL, 0, want, &err), RB_OK);
    double diff = 0.0;
    for (size_t j = 0; j < n; j++) {
        cr_assert_float_eq(tb->tau_ref[j], want[j], 1e-9, "joint %zu: %g vs %g", j, tb->tau_ref[j], want[j]);
        cr_assert_float_eq(ta->tau_ref[j], nominal[j], 1e-9);
        diff = fmax(diff, fabs(want[j] - nominal[j]));
    }
    cr_assert_gt(diff, 0.1, "the heavier hand changes the feedforward");
    /* bad values name the body */
    double bad[10] = {-1, 0, 0, 0, 0.1, 0, 0, 0.1, 0, 0.1};
    cr_assert_eq(rb_sim_set_model_inertia(b, hd, bad, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "body hand"), "%s", err.msg);
    cr_assert_eq(rb_sim_set_model_inertia(b, m->n_bodies, pi, &err), RB_EINVAL);
    rb_dyn_free(ws);
    rb_sim_finish(a);
    rb_sim_finish(b);
    rb_scenario_free(sc);
}

typedef struct feed {
    const rb_scenario *s;
    bool adapt;
    long joint;
    double se, n;
} feed;

static int feed_truth(void *u, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                      rb_err *err)
{
    (void)k, (void)t, (void)latest, (void)fresh;
    feed *f = u;
    const rb_sim_truth *tr = rb_sim_truth_get(sim);
    double e = tr->ref[f->joint] - tr->s[f->joint];
    f->se += e * e, f->n += 1;
    for (size_t p = 0; f->adapt && p < f->s->sim.n_payloads; p++) {
        int rc = rb_sim_set_model_inertia(sim, (size_t)f->s->sim.payloads[p].body, tr->payload_pi + 10 * p, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static double task_rmse(const rb_scenario *s, const char *joint, bool adapt)
{
    feed f = {s, adapt, rb_model_dof_index(s->model, joint), 0, 0};
    cr_assert_geq(f.joint, 0);
    rb_scenario_hook h = {NULL, feed_truth, &f};
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, NULL, &h, NULL, &err), RB_OK, "%s", err.msg);
    return sqrt(f.se / f.n);
}

/* Table II's situation on the forearm scenario (2 s): the controller fed the true payload tracks the elbow far
 * better than the nominal one. */
Test(sim_payloads, true_model_fed_reduces_the_elbow_task_error)
{
    rb_scenario *s = load_file("inertial_forearm.json");
    s->sim.duration = 2.0;
    double nominal = task_rmse(s, "l_elbow", false);
    double adapted = task_rmse(s, "l_elbow", true);
    cr_assert_lt(adapted, 0.5 * nominal, "elbow RMSE %g (true pi) vs %g (nominal)", adapted, nominal);
    rb_scenario_free(s);
}

/* ---- balance: pelvis height and free joints -------------------------------------------------------------- */
Test(sim_payloads, pelvis_height_truth_and_free_joints)
{
    rb_scenario *s = load_file("inertial_torso_square.json");
    s->sim.duration = 1.0;
    const rb_sim_balance *b = &s->sim.balance;
    cr_assert(b->pelvis_height.enabled);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
    const rb_channel *ph = rb_log_find(log, "truth/tasks/pelvis_height"),
                     *pos = rb_log_find(log, "truth/base/position");
    const rb_channel *ref = rb_log_find(log, "truth/joints/references");
    cr_assert_not_null(ph);
    cr_assert_str_eq(ph->element_names[0], "reference");
    cr_assert_str_eq(ph->element_names[1], "actual");
    double z0 = s->sim.q0[2], w = 2 * M_PI * b->pelvis_height.freq, worst = 0.0;
    long el = rb_model_dof_index(s->model, "l_elbow"), sp = rb_model_dof_index(s->model, "r_shoulder_roll");
    size_t n = s->model->n_dofs;
    for (size_t k = 0; k < ph->n_samples; k++) {
        double t = ph->time[k];
        cr_assert_float_eq(ph->data[2 * k], z0 + b->pelvis_height.amplitude * sin(w * t), 1e-12);
        cr_assert_eq(ph->data[2 * k + 1], pos->data[3 * k + 2]);
        worst = fmax(worst, fabs(ph->data[2 * k] - ph->data[2 * k + 1]));
        /* the arms are free joints: their references are the scenario's constants, not the IK's */
        cr_assert_eq(ref->data[n * k + (size_t)el], -1.2);
        cr_assert_eq(ref->data[n * k + (size_t)sp], -0.15);
    }
    cr_assert_lt(worst, 0.02, "the pelvis follows its reference (worst error %g m)", worst);
    rb_log_free(log);
    rb_scenario_free(s);
}

Test(sim_payloads, free_joint_follows_its_sine_under_balance)
{
    rb_scenario *s = load_file("inertial_dumbbell.json");
    s->sim.duration = 0.5;
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&s->sim, &sim, &err), RB_OK, "%s", err.msg);
    long el = rb_model_dof_index(s->model, "l_elbow");
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    for (;;) {
        double want = -1.2 + 0.7 * sin(2 * M_PI * 0.333 * t->t);
        cr_assert_float_eq(t->ref[el], want, 1e-12, "t %g", t->t);
        int rc = rb_sim_step(sim, &err);
        cr_assert_geq(rc, 0, "%s", err.msg);
        if (rc == 0)
            break;
    }
    rb_sim_finish(sim);
    rb_scenario_free(s);
}

/* ---- humanoid_arms.urdf ----------------------------------------------------------------------------------- */
Test(sim_payloads, humanoid_arms_masses_and_sensors)
{
    rb_model *m = NULL;
    rb_model_opts o = {0};
    o.floating = true;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(RB_SOURCE "/datasets/humanoid_arms.urdf", &o, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_float_eq(rb_dyn_total_mass(m), 79.7, 1e-9);
    cr_assert_eq(m->n_dofs, 23);
    static const struct {
        const char *body;
        double mass;
    } want[] = {{"torso", 30}, {"l_forearm", 4.5}, {"r_forearm", 4.5}, {"l_hand", 0.3}, {"root_link", 6}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        long b = rb_model_body_index(m, want[i].body);
        cr_assert_geq(b, 0, "%s", want[i].body);
        cr_assert_eq(m->bodies[b].inertia[0], want[i].mass, "%s", want[i].body);
    }
    /* TODO: rb_inertia_is_consistent (full consistency) once lib/dynamics has it; the solids are textbook ones */
    for (size_t b = 0; b < m->n_bodies; b++)
        cr_assert(rb_inertia_is_physical(m->bodies[b].inertia), "%s", m->bodies[b].name);
    bool lw = false, rw = false, imu = false;
    for (size_t k = 0; k < m->n_ft; k++)
        lw |= !strcmp(m->ft[k].name, "l_wrist_ft_sensor"), rw |= !strcmp(m->ft[k].name, "r_wrist_ft_sensor");
    for (size_t k = 0; k < m->n_imu; k++)
        imu |= !strcmp(m->imu[k].name, "torso_imu");
    cr_assert(lw && rw && imu);
    rb_model_free(m);
}
