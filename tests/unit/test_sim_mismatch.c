/* The plant-model mismatch and the random contacts (roboest/sim_mismatch.h) on the arm on a pole
 * (configs/scenarios/arm_pole.json): the plant's bodies are the drawn ones (its joint torques are the RNEA of the drawn
 * parameters, not of the URDF's), the command delay shifts the applied current by the set samples, the friction
 * follows its law, the FT offsets drift at their drawn rates, the current sensors read their drawn offsets, level 0
 * is no mismatch bit for bit, the same seed gives the same run and another seed another, the random contacts stay in
 * their ranges without moving the random pushes, and the scenario keys' errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/dynamics.h"
#include "roboest/sim.h"
#include "sim_arm_support.h"

typedef struct trace {
    size_t n, k;
    double *tau_j, *tau_des, *cur, *tau_f, *s_dot, *tau_m;
} trace;

/* Run the scenario's sim for `steps` steps, keeping the joint truth of every sample (n joints). */
static trace run(const rb_sim_scenario *sc, size_t steps)
{
    trace tr = {sc->model->n_dofs, steps + 1, NULL, NULL, NULL, NULL, NULL, NULL};
    double **arrays[] = {&tr.tau_j, &tr.tau_des, &tr.cur, &tr.tau_f, &tr.s_dot, &tr.tau_m};
    for (size_t i = 0; i < 6; i++)
        *arrays[i] = calloc(tr.k * tr.n, sizeof(double));
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(sc, &sim, &err), RB_OK, "%s", err.msg);
    for (size_t k = 0; k < tr.k; k++) {
        const rb_sim_truth *t = rb_sim_truth_get(sim);
        memcpy(tr.tau_j + k * tr.n, t->tau_j, tr.n * sizeof(double));
        memcpy(tr.tau_des + k * tr.n, t->tau_des, tr.n * sizeof(double));
        memcpy(tr.cur + k * tr.n, t->current, tr.n * sizeof(double));
        memcpy(tr.tau_f + k * tr.n, t->tau_f, tr.n * sizeof(double));
        memcpy(tr.s_dot + k * tr.n, t->s_dot, tr.n * sizeof(double));
        memcpy(tr.tau_m + k * tr.n, t->tau_m, tr.n * sizeof(double));
        if (k + 1 < tr.k)
            cr_assert_eq(rb_sim_step(sim, &err), 1, "%s", err.msg);
    }
    rb_sim_finish(sim);
    return tr;
}

static void free_trace(trace *t)
{
    free(t->tau_j), free(t->tau_des), free(t->cur), free(t->tau_f), free(t->s_dot), free(t->tau_m);
}

static bool same(const double *a, const double *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

Test(sim_mismatch, plant_bodies_are_the_drawn_ones)
{
    rb_scenario *s = arm("\"mismatch\": {\"preset\": \"none\", \"inertia\": {\"mass_sd\": 0.1, \"com_sd\": 0.01, "
                         "\"inertia_sd\": 0.2}}");
    const rb_model *m = s->model;
    rb_sim_mismatch_draws d;
    rb_err err;
    cr_assert_eq(rb_sim_mismatch_draw(&s->sim.mismatch, m, s->sim.seed, &d, &err), RB_OK, "%s", err.msg);
    /* the mass factors are the stream's first normal draws (five per body with mass: mass, inertia, com x y z) */
    rb_rng rng;
    rb_rng_seed(&rng, s->sim.seed ^ RB_SIM_MISMATCH_STREAM);
    size_t changed = 0;
    for (size_t b = 0; b < m->n_bodies; b++) {
        const double *pi0 = m->bodies[b].inertia, *pi = d.body_pi + 10 * b;
        if (!(pi0[0] > 0)) {
            cr_expect_eq(memcmp(pi, pi0, 10 * sizeof *pi), 0, "massless body %zu changed", b);
            continue;
        }
        double z = rb_rng_normal(&rng);
        z = z > 2.5 ? 2.5 : z < -2.5 ? -2.5 : z;
        for (int i = 0; i < 4; i++)
            rb_rng_normal(&rng);
        cr_expect_float_eq(pi[0], pi0[0] * (1 + 0.1 * z), 1e-12 * pi0[0], "body %zu mass", b);
        cr_expect(rb_inertia_is_physical(pi), "body %zu not physical", b);
        changed += d.changed[b] && fabs(pi[0] - pi0[0]) > 1e-6 * pi0[0];
    }
    cr_assert_gt(changed, 2);
    /* the plant: its true joint torques are the RNEA of the drawn parameters, not of the URDF's */
    rb_sim *sim = NULL;
    cr_assert_eq(rb_sim_init(&s->sim, &sim, &err), RB_OK, "%s", err.msg);
    for (int k = 0; k < 50; k++)
        cr_assert_eq(rb_sim_step(sim, &err), 1, "%s", err.msg);
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    rb_dyn *drawn = NULL, *urdf = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &drawn, &err), RB_OK);
    cr_assert_eq(rb_dyn_alloc(m, &urdf, &err), RB_OK);
    for (size_t b = 0; b < m->n_bodies; b++)
        cr_assert_eq(rb_dyn_set_body_inertia(m, drawn, b, d.body_pi + 10 * b, &err), RB_OK, "%s", err.msg);
    double tau_drawn[16], tau_urdf[16], worst_drawn = 0, worst_urdf = 0;
    cr_assert_eq(rb_dyn_rnea(m, drawn, t->q, t->nu, t->nu_dot, NULL, 0, tau_drawn, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_rnea(m, urdf, t->q, t->nu, t->nu_dot, NULL, 0, tau_urdf, &err), RB_OK, "%s", err.msg);
    for (size_t j = 0; j < m->n_dofs; j++) {
        worst_drawn = fmax(worst_drawn, fabs(tau_drawn[j] - t->tau_j[j]));
        worst_urdf = fmax(worst_urdf, fabs(tau_urdf[j] - t->tau_j[j]));
    }
    cr_expect_lt(worst_drawn, 1e-9, "plant torque vs drawn RNEA: %g", worst_drawn);
    cr_expect_gt(worst_urdf, 1e-3, "the plant is still the URDF (%g)", worst_urdf);
    rb_dyn_free(drawn);
    rb_dyn_free(urdf);
    rb_sim_finish(sim);
    rb_sim_mismatch_draws_free(&d);
    rb_scenario_free(s);
}

Test(sim_mismatch, command_delay_shifts_the_applied_current)
{
    rb_scenario *s = arm("\"mismatch\": {\"preset\": \"none\", \"delay\": {\"command\": 3}}");
    trace tr = run(&s->sim, 200);
    const rb_sim_actuator *a = s->sim.actuators;
    for (size_t k = 0; k < tr.k; k++)
        for (size_t j = 0; j < tr.n; j++) {
            double asked = tr.tau_des[(k >= 3 ? k - 3 : 0) * tr.n + j] / (a[j].k_t * a[j].R);
            if (fabs(asked) < a[j].i_max)
                cr_assert_float_eq(tr.cur[k * tr.n + j], asked, 1e-12 * (1 + fabs(asked)), "k %zu joint %zu", k, j);
        }
    /* and it is a delay: the current differs from the one asked at the same sample */
    double diff = 0;
    for (size_t i = 0; i < tr.k * tr.n; i++)
        diff = fmax(diff, fabs(tr.cur[i] - tr.tau_des[i] / (a[i % tr.n].k_t * a[i % tr.n].R)));
    cr_expect_gt(diff, 1e-4);
    free_trace(&tr);
    rb_scenario_free(s);
}

Test(sim_mismatch, friction_follows_its_law)
{
    rb_scenario *s = arm("\"mismatch\": {\"preset\": \"none\", \"friction\": {\"scale_sd\": 0.3, \"asymmetry\": "
                         "0.2, \"load\": 0.05, \"load_v\": 0.02, \"temp_coeff\": -0.01, \"temp_offset\": 5, "
                         "\"warmup\": 2}}");
    const rb_sim_mismatch *mm = &s->sim.mismatch;
    rb_sim_mismatch_draws d;
    rb_err err;
    cr_assert_eq(rb_sim_mismatch_draw(mm, s->model, s->sim.seed, &d, &err), RB_OK, "%s", err.msg);
    trace tr = run(&s->sim, 400);
    double dt = s->sim.dt, worst = 0, change = 0;
    for (size_t k = 0; k < tr.k; k++)
        for (size_t j = 0; j < tr.n; j++) {
            rb_friction_state st;
            rb_friction_state_init(&st);
            double t = (double)k * dt, v = tr.s_dot[k * tr.n + j];
            double nominal = rb_friction_step(&s->sim.friction[j], &st, t, dt, v, 0.0, NULL);
            double sg = v > 0 ? 1 : v < 0 ? -1 : 0, temp = 1 - 0.01 * (5 + 2 * t);
            double want = d.fric_scale[j] * (1 + d.fric_asym[j] * sg) * temp * nominal +
                          0.05 * fabs(tr.tau_m[k * tr.n + j]) * tanh(v / 0.02);
            worst = fmax(worst, fabs(tr.tau_f[k * tr.n + j] - want));
            change = fmax(change, fabs(tr.tau_f[k * tr.n + j] - nominal));
        }
    cr_expect_lt(worst, 1e-12, "friction against the law: %g", worst);
    cr_expect_gt(change, 1e-3, "the friction is the model's");
    free_trace(&tr);
    rb_sim_mismatch_draws_free(&d);
    rb_scenario_free(s);
}

static const rb_channel *channel(const rb_log *log, const char *name)
{
    const rb_channel *c = rb_log_find(log, name);
    cr_assert_not_null(c, "%s", name);
    return c;
}

Test(sim_mismatch, sensor_offsets_follow_their_draws)
{
    /* upper_arm_ft_sensor: the scenario's constant offset, no noise; its offset now drifts at the drawn rate */
    rb_scenario *s = arm("\"mismatch\": {\"preset\": \"none\", \"ft\": {\"drift_force\": 0.5, \"drift_torque\": "
                         "0.05}, \"current\": {\"offset\": 0.1}}");
    rb_scenario *s0 = arm(NULL);
    rb_sim_mismatch_draws d;
    rb_err err;
    cr_assert_eq(rb_sim_mismatch_draw(&s->sim.mismatch, s->model, s->sim.seed, &d, &err), RB_OK, "%s", err.msg);
    rb_log *log = NULL, *log0 = NULL;
    cr_assert_eq(rb_scenario_run(s, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_scenario_run(s0, NULL, NULL, &log0, &err), RB_OK, "%s", err.msg);
    const rb_channel *ft = channel(log, "FTs/upper_arm_ft_sensor"), *ft0 = channel(log0, "FTs/upper_arm_ft_sensor");
    long idx = -1;
    for (size_t k = 0; k < s->model->n_ft; k++)
        if (strcmp(s->model->ft[k].name, "upper_arm_ft_sensor") == 0)
            idx = (long)k;
    cr_assert_geq(idx, 0);
    cr_assert_eq(ft->n_samples, ft0->n_samples);
    double worst = 0;
    for (size_t k = 0; k < ft->n_samples; k++)
        for (size_t i = 0; i < 6; i++) {
            double want = d.ft_rate[6 * idx + i] * ft->time[k];
            worst = fmax(worst, fabs(ft->data[6 * k + i] - ft0->data[6 * k + i] - want));
        }
    /* the truth moves with the plant only through nothing here: no feedback of the FT sensors, same run */
    cr_expect_lt(worst, 1e-9, "FT drift against rate x t: %g", worst);
    cr_expect_gt(fabs(d.ft_rate[6 * idx]), 1e-3);
    const rb_channel *cur = channel(log, "motors_state/currents"), *cur0 = channel(log0, "motors_state/currents");
    size_t n = s->model->n_dofs;
    double res = 1e-3; /* the motor_current preset's resolution */
    for (size_t k = 0; k < cur->n_samples; k += 97)
        for (size_t j = 0; j < n; j++)
            cr_expect_leq(fabs(cur->data[k * n + j] - cur0->data[k * n + j] - d.current_offset[j]), res + 1e-12,
                          "sample %zu joint %zu", k, j);
    rb_log_free(log);
    rb_log_free(log0);
    rb_sim_mismatch_draws_free(&d);
    rb_scenario_free(s);
    rb_scenario_free(s0);
}

Test(sim_mismatch, level_zero_is_no_mismatch_and_seeds_decide)
{
    rb_scenario *s0 = arm(NULL), *s = arm("\"mismatch\": \"realistic\"");
    trace base = run(&s0->sim, 300);
    rb_sim_scenario sc = s->sim;
    sc.mismatch.level = 0;
    trace zero = run(&sc, 300);
    size_t N = base.k * base.n;
    cr_expect(same(base.tau_j, zero.tau_j, N) && same(base.cur, zero.cur, N) && same(base.tau_f, zero.tau_f, N),
              "level 0 differs from no mismatch");
    trace a = run(&s->sim, 300), b = run(&s->sim, 300);
    cr_expect(same(a.tau_j, b.tau_j, N) && same(a.tau_f, b.tau_f, N), "same seed, other run");
    cr_expect_not(same(a.tau_j, base.tau_j, N), "realistic mismatch did nothing");
    sc = s->sim;
    sc.seed += 1;
    trace c = run(&sc, 300);
    cr_expect_not(same(a.tau_j, c.tau_j, N), "the seed does not change the draws");
    free_trace(&base), free_trace(&zero), free_trace(&a), free_trace(&b), free_trace(&c);
    rb_scenario_free(s0);
    rb_scenario_free(s);
}

Test(sim_mismatch, random_contacts_in_range_without_moving_the_random_pushes)
{
    rb_scenario *only = arm("\"random_pushes\": {\"frame\": \"hand_acc\", \"rate\": 1, \"force_min\": 5, "
                            "\"force_max\": 10}");
    rb_scenario *both = arm("\"random_pushes\": {\"frame\": \"hand_acc\", \"rate\": 1, \"force_min\": 5, "
                            "\"force_max\": 10}, \"random_contacts\": {\"frames\": [\"hand_acc\", \"hand_gyro\"], "
                            "\"rate\": 2, \"from\": 3, \"until\": 15, \"duration\": [0.1, 0.2], \"force\": [20, 30]}");
    only->sim.duration = both->sim.duration = 20;
    rb_sim *a = NULL, *b = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&only->sim, &a, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_sim_init(&both->sim, &b, &err), RB_OK, "%s", err.msg);
    const rb_sim_truth *ta = rb_sim_truth_get(a), *tb = rb_sim_truth_get(b);
    cr_assert_gt(ta->n_pushes, 5);
    cr_assert_gt(tb->n_pushes, ta->n_pushes + 10, "%zu contacts", tb->n_pushes - ta->n_pushes);
    cr_expect_eq(memcmp(ta->push_list, tb->push_list, ta->n_pushes * sizeof *ta->push_list), 0,
                 "the random pushes moved");
    int f0 = rb_model_frame_index(both->model, "hand_acc"), f1 = rb_model_frame_index(both->model, "hand_gyro");
    bool saw[2] = {false, false};
    for (size_t k = ta->n_pushes; k < tb->n_pushes; k++) {
        const rb_sim_push *p = &tb->push_list[k];
        double f = hypot(p->peak[0], p->peak[1]);
        cr_expect(p->start >= 3 && p->start < 15, "start %g", p->start);
        cr_expect(p->duration >= 0.1 && p->duration <= 0.2, "duration %g", p->duration);
        cr_expect(f >= 20 - 1e-9 && f <= 30 + 1e-9, "force %g", f);
        cr_expect(p->peak[2] == 0 && p->peak[3] == 0 && p->shape == RB_PUSH_HALF_SINE);
        cr_expect(p->frame == f0 || p->frame == f1);
        saw[p->frame == f1] = true;
    }
    cr_expect(saw[0] && saw[1], "one frame never drawn");
    rb_sim_finish(a);
    rb_sim_finish(b);
    rb_scenario_free(only);
    rb_scenario_free(both);
}

Test(sim_mismatch, scenario_key_errors)
{
    static const struct {
        const char *extra, *want;
    } cases[] = {
        {"\"mismatch\": \"realistc\"", "realistic"},
        {"\"mismatch\": {\"inertia\": {\"mass_sd\": -1}}", "mass_sd"},
        {"\"mismatch\": {\"friction\": {\"scael_sd\": 1}}", "scale_sd"},
        {"\"mismatch\": {\"delay\": {\"command\": -2}}", "command"},
        {"\"random_contacts\": {\"frames\": [\"hand_acc\"], \"rate\": 1}", "force"},
        {"\"random_contacts\": {\"frames\": [\"nowhere\"], \"rate\": 1, \"force\": [1, 2]}", "nowhere"},
        {"\"random_contacts\": {\"frames\": [\"hand_acc\"], \"rate\": 1, \"force\": [3, 2]}", "force"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_scenario *s = NULL;
        rb_err err;
        cr_expect_eq(load_arm(cases[i].extra, &s, &err), RB_ECONFIG, "case %zu accepted", i);
        cr_expect(strstr(err.msg, cases[i].want) != NULL, "case %zu: %s", i, err.msg);
        rb_scenario_free(s);
    }
}
