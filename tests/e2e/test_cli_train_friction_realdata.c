/* End-to-end: roboest train-friction on logs shaped like friction data sets (a CSV that ships the measured
 * friction torque, no motor currents, no motor velocity): the direct "friction" target, analytic fits without a
 * motor velocity channel, the constant offset term carried into a friction_model stage, the early-stopping
 * report. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/friction.h"
#include "roboest/io.h"

enum { T = 6000 }; /* 6 s at 1 kHz */

static const double FC[2] = {0.4, 0.25}, FV[2] = {0.8, 1.5}, NOISE = 0.02;

static double velocity(int j, int k)
{
    double t = 1e-3 * k;
    return (j ? 0.4 : 0.6) * sin(2 * M_PI * (j ? 0.7 : 0.45) * t + j) + 0.05 * sin(2 * M_PI * 3.1 * t);
}

/* log.csv in dir: joint velocities (and motor velocities when `motor`) of joints j1, j2 and the friction torque
 * F_c sgn(v) + F_v v + offset + noise (sd NOISE). */
static void write_log(const char *dir, double offset, bool motor)
{
    char *path = test_path(dir, "log.csv");
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    fprintf(fp,
            "# source: a friction data set\ntime [s],joints_state/velocities:j1 [rad/s],"
            "joints_state/velocities:j2 [rad/s],friction:j1 [N m],friction:j2 [N m]%s\n",
            motor ? ",motors_state/velocities:j1 [rad/s],motors_state/velocities:j2 [rad/s]" : "");
    rb_rng rng;
    rb_rng_seed(&rng, 7);
    for (int k = 0; k < T; k++) {
        double v[2] = {velocity(0, k), velocity(1, k)}, f[2];
        for (int j = 0; j < 2; j++)
            f[j] = FC[j] * (v[j] > 0 ? 1 : v[j] < 0 ? -1 : 0) + FV[j] * v[j] + offset + NOISE * rb_rng_normal(&rng);
        fprintf(fp, "%.17g,%.17g,%.17g,%.17g,%.17g", 1e-3 * k, v[0], v[1], f[0], f[1]);
        if (motor)
            fprintf(fp, ",%.17g,%.17g", 100 * v[0], -160 * v[1]);
        fputc('\n', fp);
    }
    fclose(fp);
    free(path);
}

static void write_spec(const char *dir, const char *extra)
{
    char *path = test_path(dir, "spec.json"), text[1024];
    snprintf(text, sizeof text,
             "{\"logs\": [\"log.csv\"], \"joints\": [\"j1\", \"j2\"], \"friction\": {\"channel\": \"friction\"}%s}\n",
             extra ? extra : "");
    test_write_file(path, text);
    free(path);
}

/* The values of key in the "params" line of model's snippet in out (n of them). */
static void printed(const char *out, const char *model, const char *key, double *x, int n)
{
    char tag[64], k[32];
    snprintf(tag, sizeof tag, "\"params\": {\"model\": \"%s\"", model);
    const char *p = strstr(out, tag);
    cr_assert_not_null(p, "no %s snippet in: %s", model, out);
    const char *eol = strchr(p, '\n');
    snprintf(k, sizeof k, "\"%s\": [", key);
    const char *q = strstr(p, k);
    cr_assert(q && q < eol, "no %s in the %s snippet: %.*s", key, model, (int)(eol - p), p);
    q += strlen(k);
    for (int i = 0; i < n; i++) {
        char *end;
        x[i] = strtod(q, &end);
        cr_assert(end != q, "%s: not a number at %s", key, q);
        q = end + (*end == ',' ? 1 : 0);
    }
}

/* (a) + (b): the friction column is the target; the analytic fits run without any motor velocity channel and
 * recover F_c and F_v (their standard errors are ~0.1 % here) to 1 %; the RMSE is the noise's (within 5 %). */
Test(cli_train_friction_realdata, friction_channel_target_recovers_parameters)
{
    test_deadline(120);
    char *dir = test_tmpdir();
    write_log(dir, 0, false);
    write_spec(dir, NULL);
    const char *args[] = {"train-friction", "spec.json", "--fit-analytic", "coulomb_viscous", "-q", NULL};
    cli_result r = cli_run(dir, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "against the measured friction tau_F (friction)"), "%s", r.out);
    double fc[2], fv[2];
    printed(r.out, "coulomb_viscous", "F_c", fc, 2);
    printed(r.out, "coulomb_viscous", "F_v", fv, 2);
    for (int j = 0; j < 2; j++) {
        cr_assert(fabs(fc[j] - FC[j]) < 0.01 * FC[j], "j%d: F_c %g vs %g", j + 1, fc[j], FC[j]);
        cr_assert(fabs(fv[j] - FV[j]) < 0.01 * FV[j], "j%d: F_v %g vs %g", j + 1, fv[j], FV[j]);
    }
    const char *rm = strstr(r.out, "coulomb_viscous: RMSE j1 ");
    cr_assert_not_null(rm, "%s", r.out);
    double e1 = strtod(rm + strlen("coulomb_viscous: RMSE j1 "), NULL);
    cr_assert(e1 > 0.95 * NOISE && e1 < 1.05 * NOISE, "RMSE %g", e1);
    cr_assert_null(strstr(r.out, "\"offset\""), "no offset term unless asked: %s", r.out);
    cli_result_free(&r);
    free(dir);
}

/* (b): the network does need the motor velocity: one line naming the channel and the spec key, exit 3, no
 * file. */
Test(cli_train_friction_realdata, network_without_motor_velocity_names_the_channel)
{
    test_deadline(60);
    char *dir = test_tmpdir(), *net = test_path(dir, "net.json");
    write_log(dir, 0, false);
    write_spec(dir, NULL);
    const char *args[] = {"train-friction", "spec.json", "-o", "net.json", "-q", NULL};
    cli_result r = cli_run(dir, args);
    cr_assert_eq(r.status, 3, "%s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "motors_state/velocities"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "motor_velocity.channel"), "%s", r.err);
    cr_assert(!test_exists(net));
    cli_result_free(&r);
    free(net);
    free(dir);
}

/* RMSE of est.h5's tau_F against the log's friction column, per joint. */
static void stage_rmse(const char *dir, double rmse[2])
{
    char *ep = test_path(dir, "est.h5"), *lp = test_path(dir, "log.csv");
    rb_log *e = NULL, *l = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(ep, &e, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_read(lp, &l, &err), RB_OK, "%s", err.msg);
    const rb_channel *y = rb_log_find(e, "tau_F"), *t = rb_log_find(l, "friction");
    cr_assert(y && t && y->n_samples == T && t->n_samples == T);
    for (int j = 0; j < 2; j++) {
        double s = 0;
        for (size_t k = 0; k < T; k++) {
            double d = y->data[k * 2 + (size_t)j] - t->data[k * 2 + (size_t)j];
            s += d * d;
        }
        rmse[j] = sqrt(s / T);
    }
    rb_log_free(e);
    rb_log_free(l);
    free(ep);
    free(lp);
}

/* (c): with --fit-offset (or the spec key) the constant 0.1 N m is fitted (within 0.005: its standard error
 * is ~3e-4) and printed as the stage's "offset"; pasted into a friction_model stage, the stage's output
 * tracks the friction column to the noise level (without the offset parameter it could not: RMSE >= 0.1). */
Test(cli_train_friction_realdata, offset_is_fitted_and_used_by_the_stage)
{
    test_deadline(120);
    char *dir = test_tmpdir();
    write_log(dir, 0.1, false);
    write_spec(dir, ", \"analytic_offset\": true");
    const char *args[] = {"train-friction", "spec.json", "--fit-analytic", "coulomb_viscous,tanh6", "-q", NULL};
    cli_result r = cli_run(dir, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double c[2];
    printed(r.out, "coulomb_viscous", "offset", c, 2);
    for (int j = 0; j < 2; j++)
        cr_assert(fabs(c[j] - 0.1) < 0.005, "j%d: offset %g", j + 1, c[j]);
    printed(r.out, "tanh6", "offset", c, 2);
    for (int j = 0; j < 2; j++)
        cr_assert(fabs(c[j] - 0.1) < 0.01, "tanh6 j%d: offset %g", j + 1, c[j]);
    const char *p = strstr(r.out, "\"params\": {\"model\": \"coulomb_viscous\"");
    const char *eol = strchr(p, '\n');
    char *pipe = test_path(dir, "pipe.json"), text[4096];
    snprintf(text, sizeof text,
             "{\"logs\": [\"log.csv\"], \"clock\": {\"channel\": \"joints_state/velocities\"},\n"
             " \"signals\": {\"v\": {\"channel\": \"joints_state/velocities\"}},\n"
             " \"stages\": [{\"id\": \"f\", \"type\": \"friction_model\", \"in\": {\"velocity\": \"v\"},\n"
             "   \"out\": {\"tau_F\": \"tau_F\"}, %.*s}],\n"
             " \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"tau_F\"]}]}\n",
             (int)(eol - p), p);
    test_write_file(pipe, text);
    const char *run[] = {"run", "pipe.json", "-o", "out", "-q", NULL};
    cli_result q = cli_run(dir, run);
    cr_assert_eq(q.status, 0, "%s\n%s", q.err, text);
    char *est = test_path(dir, "out/est.h5"), *dst = test_path(dir, "est.h5");
    cr_assert_eq(rename(est, dst), 0);
    double rmse[2];
    stage_rmse(dir, rmse);
    for (int j = 0; j < 2; j++)
        cr_assert(rmse[j] < 1.1 * NOISE, "j%d: stage RMSE %g with the offset", j + 1, rmse[j]);
    cli_result_free(&r);
    cli_result_free(&q);
    free(est);
    free(dst);
    free(pipe);
    free(dir);
}

/* (f): early stopping reported. A learning rate of 1000 wrecks the network after its first epoch, so the first
 * epoch is kept (on this data, seed 1: for both joints): stdout says "kept epoch B of R" per joint as the file's
 * training record has them, and where B is 1 of several, stderr warns and the file's record carries the
 * warning; the file still reads back. */
Test(cli_train_friction_realdata, early_stopping_is_reported)
{
    test_deadline(120);
    char *dir = test_tmpdir(), *net = test_path(dir, "net.json");
    write_log(dir, 0, true);
    write_spec(dir,
               ",\n \"network\": {\"H\": 3, \"hidden\": [8, 8], \"epochs\": 30, \"patience\": 5, \"learning_rate\": "
               "1000, \"batch_size\": 64, \"split_block\": 100, \"seed\": 1}");
    const char *args[] = {"train-friction", "spec.json", "-o", "net.json", "-q", NULL};
    cli_result r = cli_run(dir, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    rb_friction_net_file *f = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_read(net, &f, &err), RB_OK, "%s", err.msg);
    char *text = test_read_file(net, NULL);
    cr_assert_null(strstr(text, ".scale\""), "no signal is scaled, none recorded as scaled: %s", text);
    int firsts = 0;
    for (size_t j = 0; j < 2; j++) {
        const rb_friction_net_train_result *t = &f->joints[j].result;
        char line[128], warn[128];
        snprintf(line, sizeof line, "%s                   early stopping kept epoch %zu of %zu", j ? "j2" : "j1",
                 t->best_epoch, t->epochs_run);
        cr_assert_not_null(strstr(r.out, line), "'%s' in: %s", line, r.out);
        snprintf(warn, sizeof warn, "joint %s: early stopping kept epoch 1 of %zu: the validation loss never improved",
                 j ? "j2" : "j1", t->epochs_run);
        bool first = t->best_epoch == 1 && t->epochs_run > 1;
        firsts += first;
        cr_assert_eq(strstr(r.err, warn) != NULL, first, "joint %zu: %s", j, r.err);
    }
    cr_assert_geq(firsts, 1, "the first epoch kept at this learning rate: %s", r.out);
    const char *w = strstr(text, "\"warning\": \"early stopping kept epoch 1 of ");
    cr_assert(w && (firsts == 1 || strstr(w + 1, "\"warning\": \"early stopping kept epoch 1 of ")), "%s", text);
    rb_friction_net_file_free(f);
    free(text);
    cli_result_free(&r);
    free(net);
    free(dir);
}
