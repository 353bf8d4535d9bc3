/* End-to-end: roboest train-friction on a log of `roboest simulate` (a two-joint arm with ergoCub's r_knee SCV
 * friction and an SCV elbow, noisy motor currents): the written network loads in a pipeline whose
 * friction_pinn output tracks truth/joints/friction_torques far better than zero friction; the printed
 * friction_model parameters do too; training is deterministic; bad inputs give one line, the documented exit
 * code and no file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

/* 6 s at 1 kHz: shoulder_pitch and elbow of arm_2ft (the others locked) track sines under the torque
 * controller; motor current noise 0.02 A (the sensor preset), i.e. 0.16 and 0.1 N m on the targets. A small
 * rotor inertia (J_m 1e-6) keeps tau_m - tau_j within ~0.1 N m of tau_F. */
static const char *const SCENARIO =
    "{\"name\": \"friction_e2e\",\n"
    " \"model\": {\"urdf\": \"" RB_SOURCE "/datasets/arm_2ft.urdf\", \"base\": \"base_link\",\n"
    "           \"joints\": [\"shoulder_pitch\", \"elbow\"]},\n"
    " \"duration\": 6.0, \"seed\": 3,\n"
    " \"q0\": {\"shoulder_pitch\": 0.2, \"elbow\": 0.4},\n"
    " \"references\": {\"shoulder_pitch\": {\"kind\": \"sine\", \"offset\": 0.2, \"amplitude\": 0.4, \"freq\": 0.5},\n"
    "                \"elbow\": {\"kind\": \"sine\", \"offset\": 0.4, \"amplitude\": 0.5, \"freq\": 0.9, \"phase\": "
    "1.0}},\n"
    " \"controller\": {\"kind\": \"torque\", \"gains\": {\n"
    "   \"shoulder_pitch\": {\"kp\": 100, \"kd\": 20, \"kp_tau\": 1, \"ki_tau\": 10},\n"
    "   \"elbow\": {\"kp\": 100, \"kd\": 20, \"kp_tau\": 1, \"ki_tau\": 10}}},\n"
    " \"actuators\": {\"shoulder_pitch\": {\"k_t\": 0.05, \"R\": 160, \"J_m\": 1e-6},\n"
    "               \"elbow\": {\"k_t\": 0.05, \"R\": -100, \"J_m\": 1e-6}},\n"
    " \"friction\": {\"shoulder_pitch\": {\"preset\": \"ergocub_r_knee\"},\n"
    "              \"elbow\": {\"model\": \"scv\", \"params\": [0.2, 0.4, 0.5, 0.02]}},\n"
    " \"sensors\": [{\"kind\": \"motor_current\"}]}\n";

/* A tiny network (H 5, 24/24 units, 40 epochs): about half a second of training. */
static const char *const SPEC =
    "{\"logs\": [\"%s\"],\n"
    " \"joints\": [\"shoulder_pitch\", \"elbow\"],\n"
    " \"torque\": {\"channel\": \"truth/joints/torques\"},\n"
    " \"k_t\": [0.05], \"R\": [160, -100],\n"
    " \"network\": {\"H\": 5, \"hidden\": [24, 24], \"epochs\": 40, \"batch_size\": 128, \"patience\": 10,\n"
    "             \"learning_rate\": 0.003, \"dropout\": 0.05, \"lambda\": 0.1, \"split_block\": 250, \"seed\": "
    "4}%s}\n";

static const char *const JOINTS[2] = {"shoulder_pitch", "elbow"};

static cli_result run(const char *dir, const char *const *args)
{
    cli_result r = cli_run(dir, args);
    cr_assert_null(strchr(r.err, '\r'), "no progress bar off a terminal: %s", r.err);
    return r;
}

/* Simulate the scenario into dir/log.h5 and write dir/spec.json for that log (extra: more spec keys). */
static void prepare(const char *dir, const char *log_name, const char *extra)
{
    char *scn = test_path(dir, "scenario.json"), *spec = test_path(dir, "spec.json"), text[2048];
    test_write_file(scn, SCENARIO);
    const char *sim[] = {"simulate", "scenario.json", "-o", "log.h5", "-q", NULL};
    cli_result r = run(dir, sim);
    cr_assert_eq(r.status, 0, "simulate: %s", r.err);
    cli_result_free(&r);
    snprintf(text, sizeof text, SPEC, log_name, extra ? extra : "");
    test_write_file(spec, text);
    free(scn);
    free(spec);
}

/* RMSE of signal `est` against truth/joints/friction_torques per joint, from a pipeline's output file and the
 * log (same clock: the log's joint channel); *zero gets the RMS of the truth (the zero-friction RMSE). */
static void rmse_vs_truth(const char *dir, const char *est_file, const char *est, double rmse[2], double zero[2])
{
    char *ep = test_path(dir, est_file), *lp = test_path(dir, "log.h5");
    rb_log *e = NULL, *l = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(ep, &e, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_read(lp, &l, &err), RB_OK, "%s", err.msg);
    const rb_channel *y = rb_log_find(e, est), *t = rb_log_find(l, "truth/joints/friction_torques");
    cr_assert(y && t);
    cr_assert_eq(y->n_samples, t->n_samples);
    for (int j = 0; j < 2; j++) {
        long ye = rb_channel_element_index(y, JOINTS[j]), te = rb_channel_element_index(t, JOINTS[j]);
        cr_assert(ye >= 0 && te >= 0);
        double s = 0, z = 0;
        for (size_t k = 0; k < t->n_samples; k++) {
            cr_assert_eq(y->time[k], t->time[k]);
            double d = y->data[k * y->n_elements + (size_t)ye] - t->data[k * t->n_elements + (size_t)te];
            s += d * d;
            z += t->data[k * t->n_elements + (size_t)te] * t->data[k * t->n_elements + (size_t)te];
        }
        rmse[j] = sqrt(s / (double)t->n_samples);
        zero[j] = sqrt(z / (double)t->n_samples);
    }
    rb_log_free(e);
    rb_log_free(l);
    free(ep);
    free(lp);
}

/* A pipeline over log.h5 with one friction stage (stage: the JSON of the stage object) writing est.h5. */
static void write_pipeline(const char *dir, const char *name, const char *stage)
{
    char *path = test_path(dir, name), text[4096];
    snprintf(text, sizeof text,
             "{\"logs\": [\"log.h5\"], \"clock\": {\"channel\": \"joints_state/velocities\"},\n"
             " \"signals\": {\"w\": {\"channel\": \"motors_state/velocities\", \"elements\": [\"shoulder_pitch\", "
             "\"elbow\"]},\n"
             "             \"v\": {\"channel\": \"joints_state/velocities\", \"elements\": [\"shoulder_pitch\", "
             "\"elbow\"]}},\n"
             " \"stages\": [%s],\n"
             " \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"tau_F\"]}]}\n",
             stage);
    test_write_file(path, text);
    free(path);
}

/* Trained network in a pipeline: RMSE against the true friction below 0.15 N m per joint (the targets' noise
 * is 0.1-0.16 N m, the zero-friction RMSE about 0.9) and below a quarter of zero friction's; the printed scv
 * parameters, pasted into a friction_model stage, below half of zero friction's. */
Test(cli_train_friction, trained_network_tracks_the_true_friction)
{
    test_deadline(120);
    char *dir = test_temp_dir();
    prepare(dir, "log.h5", ", \"analytic\": [\"scv\"]");
    const char *train[] = {"train-friction", "spec.json", "-o", "net.json", "-q", NULL};
    cli_result r = run(dir, train);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_str_eq(r.err, "");
    cr_assert(strstr(r.out, "shoulder_pitch") && strstr(r.out, "elbow") && strstr(r.out, "validation"), "%s", r.out);
    cr_log_info("%s", r.out);

    write_pipeline(dir, "pinn.json",
                   "{\"id\": \"pinn\", \"type\": \"friction_pinn\", \"in\": {\"motor_velocity\": \"w\", "
                   "\"joint_velocity\": \"v\"}, \"out\": {\"tau_F\": \"tau_F\"}, \"params\": {\"network\": "
                   "\"net.json\", \"history_fill\": \"model\"}}");
    const char *pinn[] = {"run", "pinn.json", "-o", ".", "-q", NULL};
    cli_result p = run(dir, pinn);
    cr_assert_eq(p.status, 0, "exit %d: %s", p.status, p.err);
    double rmse[2], zero[2];
    rmse_vs_truth(dir, "est.h5", "tau_F", rmse, zero);
    for (int j = 0; j < 2; j++) {
        cr_log_info("%s: PINN RMSE %.4g N m, zero friction %.4g N m", JOINTS[j], rmse[j], zero[j]);
        cr_assert(rmse[j] < 0.15, "%s: PINN RMSE %g", JOINTS[j], rmse[j]);
        cr_assert(rmse[j] < zero[j] / 4, "%s: PINN %g vs zero %g", JOINTS[j], rmse[j], zero[j]);
    }

    /* the printed friction_model parameters, as printed */
    const char *params = strstr(r.out, "\"params\": {\"model\": \"scv\"");
    cr_assert_not_null(params, "%s", r.out);
    const char *end = strchr(params, '\n');
    char stage[2048];
    snprintf(stage, sizeof stage,
             "{\"id\": \"fm\", \"type\": \"friction_model\", \"in\": {\"velocity\": \"v\"}, \"out\": {\"tau_F\": "
             "\"tau_F\"}, %.*s}",
             (int)(end - params), params);
    write_pipeline(dir, "fm.json", stage);
    const char *fm[] = {"run", "fm.json", "-o", ".", "-q", "--force", NULL};
    cli_result q = run(dir, fm);
    cr_assert_eq(q.status, 0, "exit %d: %s\n%s", q.status, q.err, stage);
    double fm_rmse[2];
    rmse_vs_truth(dir, "est.h5", "tau_F", fm_rmse, zero);
    for (int j = 0; j < 2; j++) {
        cr_log_info("%s: friction_model (fitted scv) RMSE %.4g N m", JOINTS[j], fm_rmse[j]);
        cr_assert(fm_rmse[j] < zero[j] / 2, "%s: %g vs zero %g", JOINTS[j], fm_rmse[j], zero[j]);
    }
    cli_result_free(&r);
    cli_result_free(&p);
    cli_result_free(&q);
    test_remove_tree(dir);
}

Test(cli_train_friction, training_is_deterministic)
{
    test_deadline(120);
    char *dir = test_temp_dir();
    prepare(dir, "log.h5", NULL);
    const char *a[] = {"train-friction", "spec.json", "-o", "a.json", "-q", NULL};
    /* the same log named on the command line instead of in the spec */
    const char *b[] = {"train-friction", "spec.json", "log.h5", "--output", "b.json", "--quiet", NULL};
    cli_result ra = run(dir, a), rb = run(dir, b);
    cr_assert_eq(ra.status, 0, "%s", ra.err);
    cr_assert_eq(rb.status, 0, "%s", rb.err);
    char *pa = test_path(dir, "a.json"), *pb = test_path(dir, "b.json");
    size_t la, lb;
    char *ta = test_read_file(pa, &la), *tb = test_read_file(pb, &lb);
    cr_assert(la > 1000 && la == lb && memcmp(ta, tb, la) == 0, "same data and seed, different files");
    cr_assert(strstr(ta, "\"format\": \"roboest-friction-network\"") && strstr(ta, "\"spec_sha256\""));
    free(ta), free(tb), free(pa), free(pb);
    cli_result_free(&ra);
    cli_result_free(&rb);
    test_remove_tree(dir);
}

/* Overwrite element `joint` of channel `name` at sample k with x, writing the log back as bad.h5. */
static void poison(const char *dir, const char *name, const char *joint, size_t k, double x)
{
    char *lp = test_path(dir, "log.h5"), *bp = test_path(dir, "bad.h5");
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_read(lp, &log, &err), RB_OK, "%s", err.msg);
    for (size_t c = 0; c < log->n_channels; c++) {
        rb_channel *ch = &log->channels[c];
        if (strcmp(ch->name, name) == 0)
            ch->data[k * ch->n_elements + (size_t)rb_channel_element_index(ch, joint)] = x;
    }
    rb_write_opts wo = {.format = RB_OUT_H5, .overwrite = true};
    cr_assert_eq(rb_log_write(log, bp, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    free(lp);
    free(bp);
}

static void expect_failure(const char *dir, const char *const *args, int status, const char *const *fragments)
{
    cli_result r = run(dir, args);
    cr_assert_eq(r.status, status, "exit %d (want %d): %s", r.status, status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    for (const char *const *f = fragments; *f; f++)
        cr_assert(strstr(r.err, *f), "'%s' not in: %s", *f, r.err);
    cli_result_free(&r);
}

Test(cli_train_friction, bad_inputs_fail_with_one_line_and_no_file)
{
    test_deadline(120);
    char *dir = test_temp_dir(), *net = test_path(dir, "net.json"), *spec = test_path(dir, "spec.json"), text[2048];
    prepare(dir, "bad.h5", NULL);
    const char *train[] = {"train-friction", "spec.json", "-o", "net.json", "-q", NULL};
    /* a NaN motor current: the elbow's friction target at sample 123 */
    poison(dir, "motors_state/currents", "elbow", 123, NAN);
    expect_failure(dir, train, CLI_EXIT_INPUT,
                   (const char *const[]){"bad.h5", "current", "motors_state/currents", "elbow", "sample 123", NULL});
    cr_assert(!test_exists(net));
    /* a current so large that k_t R I_m overflows: a numeric failure naming the joint and the sample */
    poison(dir, "motors_state/currents", "elbow", 200, 1e308);
    expect_failure(dir, train, CLI_EXIT_NUMERIC,
                   (const char *const[]){"bad.h5", "joint elbow", "friction target at sample 200", "not finite", NULL});
    cr_assert(!test_exists(net));
    /* a channel the log lacks */
    snprintf(text, sizeof text, SPEC, "log.h5", ", \"current\": {\"channel\": \"motors_state/currentz\"}");
    test_write_file(spec, text);
    expect_failure(dir, train, CLI_EXIT_INPUT,
                   (const char *const[]){"log.h5", "no channel 'motors_state/currentz'", "current.channel", NULL});
    /* an unknown spec key, located */
    snprintf(text, sizeof text, SPEC, "log.h5", ", \"analytics\": [\"scv\"]");
    test_write_file(spec, text);
    expect_failure(dir, train, CLI_EXIT_INPUT, (const char *const[]){"spec.json:", "analytics", "analytic", NULL});
    cr_assert(!test_exists(net));
    /* nothing to do */
    const char *nothing[] = {"train-friction", "spec.json", NULL};
    snprintf(text, sizeof text, SPEC, "log.h5", "");
    test_write_file(spec, text);
    expect_failure(dir, nothing, CLI_EXIT_USAGE, (const char *const[]){"nothing to do", NULL});
    const char *lugre[] = {"train-friction", "spec.json", "--fit-analytic", "scv,lugre", NULL};
    expect_failure(dir, lugre, CLI_EXIT_USAGE, (const char *const[]){"unknown model 'lugre'", NULL});
    /* an existing output without --force: refused before training, the file untouched */
    test_write_file(net, "keep");
    expect_failure(dir, train, CLI_EXIT_OUTPUT, (const char *const[]){"net.json", "exists", NULL});
    size_t len;
    char *kept = test_read_file(net, &len);
    cr_assert_str_eq(kept, "keep");
    free(kept);
    /* a network file whose first layer has the wrong input size, used by a pipeline */
    const char *ok[] = {"train-friction", "spec.json", "-o", "net.json", "-q", "--force", NULL};
    cli_result r = run(dir, ok);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *file = test_read_file(net, &len), *row = strstr(file, "\"weights\": [\n          [");
    cr_assert_not_null(row);
    char *first = row + strlen("\"weights\": [\n          ["), *comma = strchr(first, ',');
    memmove(first, comma + 2, strlen(comma + 2) + 1);
    test_write_file(net, file);
    free(file);
    write_pipeline(dir, "pinn.json",
                   "{\"id\": \"pinn\", \"type\": \"friction_pinn\", \"in\": {\"motor_velocity\": \"w\", "
                   "\"joint_velocity\": \"v\"}, \"out\": {\"tau_F\": \"tau_F\"}, \"params\": {\"network\": "
                   "\"net.json\"}}");
    const char *pinn[] = {"run", "pinn.json", "-o", ".", "-q", NULL};
    expect_failure(dir, pinn, CLI_EXIT_INPUT,
                   (const char *const[]){"stage pinn", "net.json", "joints[0] (shoulder_pitch)",
                                         "layers[0].weights row 0 has 9 values", "2 H = 10", NULL});
    char *est = test_path(dir, "est.h5");
    cr_assert(!test_exists(est));
    free(est);
    free(net);
    free(spec);
    test_remove_tree(dir);
}

Test(cli_train_friction, help_and_usage)
{
    const char *help[] = {"train-friction", "--help", NULL};
    cli_result r = cli_run(NULL, help);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "Usage: roboest train-friction") && strstr(r.out, "--fit-analytic"), "%s", r.out);
    cli_result_free(&r);
    const char *none[] = {"train-friction", NULL};
    r = cli_run(NULL, none);
    cr_assert_eq(r.status, CLI_EXIT_USAGE);
    cr_assert(strstr(r.err, "missing SPEC.json"), "%s", r.err);
    cli_result_free(&r);
    const char *main_help[] = {"--help", NULL};
    r = cli_run(NULL, main_help);
    cr_assert(strstr(r.out, "train-friction"), "%s", r.out);
    cli_result_free(&r);
}
