/* Friction training specs and data: defaults, paths and located errors of the spec loader; the friction
 * targets against k_t R I_m - tau_j computed here; the kf_derivative velocities against a pipeline running
 * the kf_derivative stage on the same log and clock (training and replay see the same numbers); sessions and
 * the history rows; the training driver's results on a known friction law. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/training.h"
#include "support.h"

static const char *const J2[2] = {"a", "b"};

/* A log at 500 Hz from t0 over T samples: joint positions q = 0.5 sin(..) (+ noise), velocities, motor
 * positions and velocities (R times), currents, torques (names a, b). */
static void write_log(const char *path, double t0, size_t T, uint64_t seed)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const char *names[6] = {"joints_state/positions",  "joints_state/velocities", "motors_state/positions",
                            "motors_state/velocities", "motors_state/currents",   "est/tau"};
    rb_channel *ch[6];
    for (int c = 0; c < 6; c++) {
        cr_assert_eq(rb_log_add_channel(log, names[c], T, 2, &ch[c], &err), RB_OK);
        for (int j = 0; j < 2; j++)
            cr_assert_eq(rb_channel_set_name(ch[c], (size_t)j, J2[j], &err), RB_OK);
    }
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    const double R[2] = {100, -50};
    for (size_t k = 0; k < T; k++) {
        double t = t0 + 0.002 * (double)k;
        for (int c = 0; c < 6; c++)
            ch[c]->time[k] = t;
        for (int j = 0; j < 2; j++) {
            double w = 2 * M_PI * (0.7 + 0.4 * j), q = 0.5 * sin(w * t + j), v = 0.5 * w * cos(w * t + j);
            ch[0]->data[k * 2 + j] = q + 1e-4 * rb_rng_normal(&rng);
            ch[1]->data[k * 2 + j] = v;
            ch[2]->data[k * 2 + j] = R[j] * q + 1e-3 * rb_rng_normal(&rng);
            ch[3]->data[k * 2 + j] = R[j] * v;
            ch[4]->data[k * 2 + j] = 0.3 * sin(3 * t + j) + 0.01 * rb_rng_normal(&rng);
            ch[5]->data[k * 2 + j] = 0.2 * cos(2 * t - j);
        }
    }
    rb_write_opts wo = {.format = RB_OUT_H5, .overwrite = true};
    cr_assert_eq(rb_log_write(log, path, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
}

static rb_friction_spec *load_spec(const char *dir, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/spec.json", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    rb_friction_spec *s = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_spec_load(path, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

Test(training_friction, spec_defaults_and_paths)
{
    char *dir = test_temp_dir();
    rb_friction_spec *s = load_spec(dir, "{\"logs\": [\"l1.h5\", [\"p1.mat\", \"p2.mat\"], {\"log\": \"x.h5\", "
                                         "\"torques\": \"out/est.h5\"}],\n"
                                         " \"joints\": [\"a\", \"b\"], \"torque\": {\"channel\": \"est/tau\"},\n"
                                         " \"k_t\": [0.05], \"R\": [100, -50]}");
    cr_assert_eq(s->n_logs, 3);
    char want[600];
    snprintf(want, sizeof want, "%s/l1.h5", dir);
    cr_assert_str_eq(s->logs[0].paths[0], want);
    cr_assert_eq(s->logs[1].n_paths, 2);
    snprintf(want, sizeof want, "%s/out/est.h5", dir);
    cr_assert_str_eq(s->logs[2].torques, want);
    cr_assert_null(s->logs[0].torques);
    cr_assert_str_eq(s->joint_velocity.channel, "joints_state/velocities");
    cr_assert_str_eq(s->motor_velocity.channel, "motors_state/velocities");
    cr_assert_str_eq(s->current.channel, "motors_state/currents");
    cr_assert_str_eq(s->current.elements[1], "b", "elements default to the joints");
    cr_assert_str_eq(s->clock_channel, "joints_state/velocities");
    cr_assert(!s->joint_velocity.kf_derivative);
    cr_assert(s->k_t[0] == 0.05 && s->k_t[1] == 0.05 && s->R[1] == -50);
    cr_assert_eq(s->H, 20);
    cr_assert_eq(s->train.hidden[0], 233);
    cr_assert_eq(s->train.hidden[1], 229);
    cr_assert_eq(s->train.lambda, 0.12);
    cr_assert_eq(s->split_block, 500);
    cr_assert_eq(s->n_analytic, 0);
    cr_assert_eq(strlen(s->sha256), 64);
    rb_friction_spec_free(s);
    test_remove_tree(dir);
}

static void expect_spec_error(const char *text, const char *const *fragments)
{
    rb_friction_spec *s = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_spec_load_text(text, strlen(text), "spec.json", NULL, &s, &err), RB_ECONFIG,
                 "accepted: %s", text);
    cr_assert_null(s);
    cr_assert_null(strchr(err.msg, '\n'));
    cr_assert(strncmp(err.msg, "spec.json:", 10) == 0, "%s", err.msg);
    for (const char *const *f = fragments; *f; f++)
        cr_assert(strstr(err.msg, *f), "'%s' not in: %s", *f, err.msg);
}

#define BASE "\"logs\": [\"l.h5\"], \"joints\": [\"a\", \"b\"], \"torque\": {\"channel\": \"t\"}, "

Test(training_friction, spec_errors_are_located)
{
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"netwrok\": {}}",
                      (const char *const[]){":1:", "unknown key 'netwrok'", "network", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1, 2, 3], \"R\": [1]}", (const char *const[]){"k_t", "1 or 2 numbers", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [0]}", (const char *const[]){"R[0]", "must not be 0", NULL});
    expect_spec_error("{" BASE "\"k_t\": [-1], \"R\": [1]}", (const char *const[]){"k_t[0]", "> 0", NULL});
    expect_spec_error("{\"logs\": [\"l.h5\"], \"joints\": [\"a\", \"a\"], \"torque\": {\"channel\": \"t\"}, \"k_t\": "
                      "[1], \"R\": [1]}",
                      (const char *const[]){"joints[1]", "repeats joints[0]", NULL});
    expect_spec_error("{\"logs\": [\"l.h5\"], \"joints\": [\"a\"], \"k_t\": [1], \"R\": [1]}",
                      (const char *const[]){"missing key 'torque'", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"clock\": {\"rate\": 100, \"channel\": \"x\"}}",
                      (const char *const[]){"clock", "exactly one", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"current\": {\"channel\": \"c\", \"elements\": [\"x\"]}}",
                      (const char *const[]){"current.elements", "1 elements for 2 joints", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"current\": {\"channel\": \"c\", \"kf_derivative\": {}}}",
                      (const char *const[]){"current", "unknown key 'kf_derivative'", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"network\": {\"dropout\": 1}}",
                      (const char *const[]){"network.dropout", "[0, 1)", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"network\": {\"H\": 2.5}}",
                      (const char *const[]){"network.H", "integer", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"analytic\": [\"scv\", \"lugre\"]}",
                      (const char *const[]){"analytic[1]", "lugre", NULL});
    expect_spec_error("{" BASE "\"k_t\": [1], \"R\": [1], \"joint_velocity\": {\"channel\": \"p\", \"kf_derivative\": "
                      "{\"r\": [0]}}}",
                      (const char *const[]){"joint_velocity.kf_derivative.r[0]", "> 0", NULL});
}

/* Targets against k_t R I - tau computed from the log; rows never cross the session boundary. */
Test(training_friction, data_targets_sessions_and_rows)
{
    char *dir = test_temp_dir(), p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/l1.h5", dir);
    snprintf(p2, sizeof p2, "%s/l2.h5", dir);
    write_log(p1, 0.0, 400, 1);
    write_log(p2, 100.0, 300, 2);
    rb_friction_spec *s =
        load_spec(dir, "{\"logs\": [\"l1.h5\", \"l2.h5\"], \"joints\": [\"b\", \"a\"],\n"
                       " \"torque\": {\"channel\": \"est/tau\"}, \"k_t\": [0.05, 0.04], \"R\": [-50, 100],\n"
                       " \"window\": [0.1, 1000]}");
    rb_friction_data *d;
    rb_err err;
    cr_assert_eq(rb_friction_data_build(s, &d, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(d->n_sessions, 2);
    cr_assert_eq(d->start[1], 350, "the window drops the first 0.1 s (50 samples)");
    cr_assert_eq(d->T, 350 + 300);
    cr_assert(fabs(d->sample_period - 0.002) < 1e-12);
    rb_log *l1;
    cr_assert_eq(rb_log_read(p1, &l1, &err), RB_OK);
    const rb_channel *I = rb_log_find(l1, "motors_state/currents"), *tau = rb_log_find(l1, "est/tau"),
                     *w = rb_log_find(l1, "motors_state/velocities");
    for (size_t k = 0; k < 350; k++) { /* joint 0 is b (element 1): k_t 0.05, R -50 */
        double want = 0.05 * -50 * I->data[(k + 50) * 2 + 1] - tau->data[(k + 50) * 2 + 1];
        cr_assert(fabs(d->target[k] - want) <= 1e-12, "k %zu: %.17g vs %.17g", k, d->target[k], want);
        cr_assert_eq(d->w[k], w->data[(k + 50) * 2 + 1]);
        cr_assert_eq(d->time[k], I->time[k + 50]);
    }
    double *X, *t, *v;
    size_t n;
    cr_assert_eq(rb_friction_data_rows(d, 1, 4, &X, &t, &v, &n, &err), RB_OK);
    cr_assert_eq(n, (350 - 3) + (300 - 3), "no row spans the two sessions");
    size_t r = 350 - 3; /* the first row of the second session: its samples 0..3 */
    for (size_t j = 0; j < 4; j++) {
        cr_assert_eq(X[r * 8 + j], d->w[d->T + 350 + j], "motor velocities, oldest first");
        cr_assert_eq(X[r * 8 + 4 + j], d->v[d->T + 350 + j], "then joint velocities");
    }
    cr_assert_eq(t[r], d->target[d->T + 353]);
    cr_assert_eq(v[r], d->v[d->T + 353]);
    rb_free(X), rb_free(t), rb_free(v);
    rb_log_free(l1);
    rb_friction_data_free(d);
    rb_friction_spec_free(s);
    test_remove_tree(dir);
}

/* Positions through kf_derivative in the spec give exactly what a pipeline's kf_derivative stage gives on the
 * same log and clock. */
Test(training_friction, kf_velocities_equal_the_pipeline_stage)
{
    char *dir = test_temp_dir(), p1[512], cfg[512];
    snprintf(p1, sizeof p1, "%s/l1.h5", dir);
    write_log(p1, 0.0, 600, 3);
    rb_friction_spec *s =
        load_spec(dir, "{\"logs\": [\"l1.h5\"], \"joints\": [\"a\", \"b\"],\n"
                       " \"torque\": {\"channel\": \"est/tau\"}, \"k_t\": [0.05], \"R\": [100, -50],\n"
                       " \"clock\": {\"rate\": 400},\n"
                       " \"joint_velocity\": {\"channel\": \"joints_state/positions\", "
                       "\"kf_derivative\": {\"q\": [1e3, 5e3], \"r\": [1e-8]}},\n"
                       " \"motor_velocity\": {\"channel\": \"motors_state/positions\", "
                       "\"kf_derivative\": {\"q\": [1e7], \"r\": [1e-6], \"p0\": [1, 1e4, 1e6]}}}");
    rb_friction_data *d;
    rb_err err;
    cr_assert_eq(rb_friction_data_build(s, &d, &err), RB_OK, "%s", err.msg);
    snprintf(cfg, sizeof cfg, "%s/p.json", dir);
    FILE *f = fopen(cfg, "w");
    fputs("{\"logs\": [\"l1.h5\"], \"clock\": {\"rate\": 400},\n"
          " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"}, \"m\": {\"channel\": "
          "\"motors_state/positions\"}, \"tau\": {\"channel\": \"est/tau\"}, \"i\": {\"channel\": "
          "\"motors_state/currents\"}},\n"
          " \"stages\": [{\"id\": \"kq\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {\"x_dot\": "
          "\"v\"}, \"params\": {\"q\": [1e3, 5e3], \"r\": [1e-8]}},\n"
          "            {\"id\": \"km\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"m\"}, \"out\": {\"x_dot\": "
          "\"w\"}, \"params\": {\"q\": [1e7], \"r\": [1e-6], \"p0\": [1, 1e4, 1e6]}}],\n"
          " \"outputs\": [{\"path\": \"o.h5\", \"signals\": [\"v\", \"w\"]}]}",
          f);
    fclose(f);
    rb_registry *reg;
    rb_pipeline *p;
    rb_log *log;
    rb_run_result *res;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
    cr_assert_eq(rb_pipeline_load(cfg, reg, &p, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_read(p1, &log, &err), RB_OK);
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *v = rb_run_result_signal(res, "v"), *w = rb_run_result_signal(res, "w");
    cr_assert_eq(res->clock.n, d->T);
    for (size_t k = 0; k < d->T; k++)
        for (size_t j = 0; j < 2; j++) {
            cr_assert_eq(d->v[j * d->T + k], v->data[k * 2 + j], "joint velocity k %zu j %zu", k, j);
            cr_assert_eq(d->w[j * d->T + k], w->data[k * 2 + j], "motor velocity k %zu j %zu", k, j);
        }
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
    rb_registry_free(reg);
    rb_friction_data_free(d);
    rb_friction_spec_free(s);
    test_remove_tree(dir);
}

/* The torque from a second file (an estimates file), and the driver end to end on a log whose friction target
 * is an exact SCV curve of the joint velocity: the physics fit recovers it, the analytic fits reproduce it,
 * the network learns it and records its training in the file. */
Test(training_friction, driver_on_an_exact_scv_law)
{
    test_deadline(60);
    char *dir = test_temp_dir(), p1[512], pt[512];
    snprintf(p1, sizeof p1, "%s/l1.h5", dir);
    snprintf(pt, sizeof pt, "%s/est.h5", dir);
    write_log(p1, 0.0, 3000, 4);
    /* tau_j = k_t R I - SCV(v): an estimates file whose friction target is exactly the law */
    rb_log *log, *est;
    rb_err err;
    cr_assert_eq(rb_log_read(p1, &log, &err), RB_OK);
    const rb_channel *I = rb_log_find(log, "motors_state/currents"), *v = rb_log_find(log, "joints_state/velocities");
    const rb_friction_model law = {.kind = RB_FRICTION_SCV, .scv = {0.306, 0.601, 0.673, 0.05, 0}};
    double *tau = malloc(3000 * 2 * sizeof *tau);
    const double R[2] = {100, -50};
    for (size_t k = 0; k < 3000; k++)
        for (size_t j = 0; j < 2; j++)
            tau[k * 2 + j] = 0.05 * R[j] * I->data[k * 2 + j] - rb_friction_eval(&law, v->data[k * 2 + j]);
    cr_assert_eq(rb_log_new(&est, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(est, "tau_rnea", 3000, 2, I->time, tau, J2, NULL, &err), RB_OK);
    cr_assert_eq(rb_log_write(est, pt, NULL, &err), RB_OK, "%s", err.msg);
    rb_friction_spec *s =
        load_spec(dir, "{\"logs\": [{\"log\": \"l1.h5\", \"torques\": \"est.h5\"}], \"joints\": "
                       "[\"a\", \"b\"],\n"
                       " \"torque\": {\"channel\": \"tau_rnea\"}, \"k_t\": [0.05], \"R\": [100, -50],\n"
                       " \"network\": {\"H\": 3, \"hidden\": [16, 16], \"epochs\": 30, \"batch_size\": "
                       "64, \"learning_rate\": 0.003, \"dropout\": 0, \"lambda\": 0.2},\n"
                       " \"analytic\": [\"coulomb_viscous\", \"scv\", \"tanh6\"]}");
    rb_friction_train_opts o = {.network = true};
    rb_friction_train_result *r;
    cr_assert_eq(rb_friction_train(s, &o, &r, &err), RB_OK, "%s", err.msg);
    for (size_t j = 0; j < 2; j++) {
        const rb_friction_scv *f = &r->scv[j].scv;
        cr_log_info("joint %zu: scv %.9g %.9g %.9g %.9g, rmse %.3g; analytic %.3g %.3g %.3g; network val %.3g "
                    "(zero %.3g)",
                    j, f->F_c, f->F_s, f->F_v, f->v_s, r->scv_rmse[j], r->analytic_rmse[j], r->analytic_rmse[2 + j],
                    r->analytic_rmse[4 + j], r->file->joints[j].result.rmse_val, r->rms_target[j]);
        /* within the v_s search's resolution (1e-4 in log v_s): levels to 1e-5 N m */
        cr_assert(fabs(f->F_c - 0.306) < 1e-5 && fabs(f->F_s - 0.601) < 1e-5 && fabs(f->F_v - 0.673) < 1e-5,
                  "the exact law is recovered");
        cr_assert(fabs(f->v_s - 0.05) < 1e-4 * 0.05);
        cr_assert(r->scv_rmse[j] < 1e-6);
        cr_assert(r->analytic_rmse[2 + j] < 1e-6, "scv fit");
        cr_assert(r->analytic_rmse[4 + j] < 0.05 * r->rms_target[j], "tanh6 fit");
        cr_assert(r->analytic_rmse[j] < r->rms_target[j], "coulomb_viscous fit");
        cr_assert_eq(r->n_rows[j], 3000 - 2);
        const rb_friction_net_joint *e = &r->file->joints[j];
        cr_assert_str_eq(e->joint, J2[j]);
        cr_assert_eq(e->H, 3);
        cr_assert(e->result.rmse_val < 0.2 * r->rms_target[j], "network: %g", e->result.rmse_val);
    }
    cr_assert(fabs(r->file->sample_period - 0.002) < 1e-12);
    cr_assert_str_eq(r->file->motor_velocity, "motors_state/velocities");
    bool has_spec_sha = false;
    for (size_t i = 0; i < r->file->n_provenance; i++)
        has_spec_sha = has_spec_sha || (strcmp(r->file->provenance[i].key, "spec_sha256") == 0 &&
                                        strcmp(r->file->provenance[i].value, s->sha256) == 0);
    cr_assert(has_spec_sha);
    rb_friction_train_result_free(r);
    rb_friction_spec_free(s);
    rb_log_free(log);
    rb_log_free(est);
    free(tau);
    test_remove_tree(dir);
}

/* The shipped example: the arm_pole training spec (logs from the command line) and its replay pipeline load. */
Test(training_friction, shipped_examples_load)
{
    rb_friction_spec *s = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_spec_load(RB_SOURCE "/configs/friction/arm_pole_spec.json", &s, &err), RB_OK, "%s",
                 err.msg);
    cr_assert_eq(s->n_logs, 0);
    cr_assert(s->joint_velocity.kf_derivative);
    const char *logs[2] = {"x.mat", "y.mat"};
    cr_assert_eq(rb_friction_spec_set_logs(s, logs, 2, &err), RB_OK);
    cr_assert_eq(s->n_logs, 2);
    cr_assert_str_eq(s->logs[1].paths[0], "y.mat");
    rb_friction_spec_free(s);
    rb_registry *reg;
    rb_pipeline *p;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
    cr_assert_eq(rb_pipeline_load(RB_SOURCE "/configs/friction/arm_pole_pinn.json", reg, &p, &err), RB_OK, "%s",
                 err.msg);
    rb_pipeline_free(p);
    rb_registry_free(reg);
}

/* motor_inertia: the target loses R^2 J_m a, a the joint acceleration; checked against the analytic
 * acceleration of write_log's velocities (central differences) and against rb_kfd_run's x_ddot (kf_derivative). */
static rb_friction_data *inertia_data(const char *dir, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"logs\": [\"log.h5\"], \"joints\": [\"a\", \"b\"], \"torque\": {\"channel\": \"est/tau\"},\n"
             " \"k_t\": [0.05], \"R\": [100, -50]%s}",
             extra);
    rb_friction_spec *s = load_spec(dir, text);
    rb_friction_data *d = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_data_build(s, &d, &err), RB_OK, "%s", err.msg);
    rb_friction_spec_free(s);
    return d;
}

Test(training_friction, motor_inertia_subtracts_the_reflected_rotor_inertia)
{
    char *dir = test_temp_dir(), path[600];
    snprintf(path, sizeof path, "%s/log.h5", dir);
    write_log(path, 0.0, 400, 3);
    const double R[2] = {100, -50}, J[2] = {1e-5, 4e-5};
    rb_friction_data *plain = inertia_data(dir, ""), *with = inertia_data(dir, ", \"motor_inertia\": [1e-5, 4e-5]");
    cr_assert_eq(plain->T, with->T);
    for (size_t j = 0; j < 2; j++)
        for (size_t k = 1; k + 1 < plain->T; k++) {
            double t = plain->time[k], w = 2 * M_PI * (0.7 + 0.4 * (double)j);
            double a = -0.5 * w * w * sin(w * t + (double)j), want = R[j] * R[j] * J[j] * a;
            double got = plain->target[j * plain->T + k] - with->target[j * with->T + k];
            cr_assert(fabs(got - want) < 1e-4 * (1 + fabs(want)), "joint %zu sample %zu: %g vs %g", j, k, got, want);
        }
    rb_friction_data_free(plain);
    rb_friction_data_free(with);

    /* positions through kf_derivative: the filter's own acceleration */
    const char *kfd = ", \"joint_velocity\": {\"channel\": \"joints_state/positions\", \"kf_derivative\": "
                      "{\"q\": [100], \"r\": [1e-8]}}";
    char extra[512];
    snprintf(extra, sizeof extra, "%s, \"motor_inertia\": [1e-5, 4e-5]", kfd);
    plain = inertia_data(dir, kfd), with = inertia_data(dir, extra);
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_OK, "%s", err.msg);
    const rb_channel *q = rb_log_find(log, "joints_state/positions");
    size_t T = plain->T;
    cr_assert_eq(T, q->n_samples);
    double *z = malloc(2 * T * sizeof *z), *xdd = z + T;
    for (size_t j = 0; j < 2; j++) {
        for (size_t k = 0; k < T; k++)
            z[k] = q->data[k * 2 + j];
        rb_kfd_params par = {.noise = RB_KFD_JERK, .q = 100, .r = 1e-8, .p0 = {1, 1e2, 1e4}};
        cr_assert_eq(rb_kfd_run(&par, q->time, z, T, NULL, NULL, xdd, NULL, &err), RB_OK, "%s", err.msg);
        for (size_t k = 0; k < T; k++) {
            double want = R[j] * R[j] * J[j] * xdd[k], got = plain->target[j * T + k] - with->target[j * T + k];
            cr_assert(fabs(got - want) < 1e-12 * (1 + fabs(want)), "joint %zu sample %zu: %g vs %g", j, k, got, want);
        }
    }
    free(z);
    rb_log_free(log);
    rb_friction_data_free(plain);
    rb_friction_data_free(with);
    test_remove_tree(dir);
}
