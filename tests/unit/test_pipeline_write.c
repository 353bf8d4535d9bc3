/* The runner's writing: outputs with provenance, all-or-nothing, runs over log files, allocation failures. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roboest/pipeline.h"
#include "pipeline_support.h"
#include "support.h"

/* ---- writing -------------------------------------------------------------------------------------- */
static char *temp_dir(void)
{
    char *dir = rb_strdup("/tmp/rb_pipe_run_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static bool exists(const char *dir, const char *name)
{
    char *path = rb_asprintf("%s/%s", dir, name);
    struct stat st;
    bool yes = stat(path, &st) == 0;
    rb_free(path);
    return yes;
}

static void remove_tree(const char *dir)
{
    char *cmd = rb_asprintf("rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    rb_free(cmd);
}

Test(pipeline_run, result_write_with_provenance)
{
    rb_pipeline *p = load(run_config);
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    char *dir = temp_dir();
    cr_assert_eq(rb_run_result_write(p, res, dir, false, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 3, "est.h5, report.md, report.json and no temporaries");
    cr_assert(exists(dir, "est.h5") && exists(dir, "report.md") && exists(dir, "report.json"));

    char *path = rb_asprintf("%s/est.h5", dir);
    rb_log *back;
    cr_assert_eq(rb_log_read(path, &back, &err), RB_OK, "%s", err.msg);
    const rb_channel *qd = rb_log_find(back, "qd_fd");
    cr_assert_not_null(qd);
    cr_assert_eq(qd->n_samples, 101);
    cr_assert_eq(qd->n_elements, 2);
    cr_assert_str_eq(qd->element_names[1], "knee");
    cr_assert_eq(qd->time[100], res->clock.t[100]);
    cr_assert_eq(qd->data[2 * 50], rb_run_result_signal(res, "qd_fd")->data[2 * 50]);
    cr_assert_str_eq(rb_log_get_attr(back, "roboest_version"), RB_VERSION);
    cr_assert_str_eq(rb_log_get_attr(back, "config_sha256"), p->config_sha256);
    cr_assert_str_eq(rb_log_get_attr(back, "config"), "run.json");
    cr_assert_str_eq(rb_log_get_attr(back, "input"), "memory");
    cr_assert_str_eq(rb_log_get_attr(back, "run"), "run/memory");
    cr_assert_null(rb_log_get_attr(back, "model"), "no model in this config");
    rb_log_free(back);

    /* an existing output without overwrite: nothing changes */
    struct stat before, after;
    cr_assert_eq(stat(path, &before), 0);
    cr_assert_eq(rb_run_result_write(p, res, dir, false, &err), RB_EEXISTS);
    cr_assert(strstr(err.msg, "est.h5"), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 3);
    cr_assert_eq(rb_run_result_write(p, res, dir, true, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(stat(path, &after), 0);
    cr_assert_eq(test_count_entries(dir), 3);
    rb_free(path);
    remove_tree(dir);
    rb_free(dir);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_run, outputs_are_all_or_nothing)
{
    rb_pipeline *p = load_edited("\"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"qd_fd\", \"q_lp\"]}]",
                                 "\"outputs\": [{\"path\": \"a.csv\", \"signals\": [\"qd_fd\"]},\n"
                                 "              {\"path\": \"missing/b.csv\", \"signals\": [\"q_lp\"]}]");
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    char *dir = temp_dir();
    cr_assert_eq(rb_run_result_write(p, res, dir, false, &err), RB_EIO);
    cr_assert(strstr(err.msg, "missing"), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0, "the second output's folder is missing: no file appears");

    /* a report that cannot be rendered after the outputs were written: all are dropped */
    char *sub = rb_asprintf("%s/missing", dir);
    cr_assert_eq(mkdir(sub, 0777), 0);
    res->report->rows[1].stats.rmse = NAN;
    cr_assert_eq(rb_run_result_write(p, res, dir, false, &err), RB_ENUMERIC);
    cr_assert_eq(test_count_entries(dir), 1, "only the folder made above");
    cr_assert_eq(test_count_entries(sub), 0);
    res->report->rows[1].stats.rmse = 0;
    cr_assert_eq(rb_run_result_write(p, res, dir, false, &err), RB_OK, "%s", err.msg);
    cr_assert(exists(dir, "a.csv") && exists(sub, "b.csv") && exists(dir, "report.md"));
    remove_tree(dir);
    rb_free(sub);
    rb_free(dir);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* Writes make_log(T, 0.01, t0) as an .h5 file at dir/name. */
static char *write_log(const char *dir, const char *name, size_t T, double t0)
{
    rb_log *log = make_log(T, 0.01, t0);
    char *path = rb_asprintf("%s/%s", dir, name);
    rb_write_opts wo = {RB_OUT_H5, false, NULL};
    rb_err err;
    cr_assert_eq(rb_log_write(log, path, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    return path;
}

static rb_pipeline *load_with_logs(const char *logs_json)
{
    char *text = rb_asprintf("{\n  \"logs\": %s,%s", logs_json, run_config + 1);
    rb_pipeline *p = load(text);
    rb_free(text);
    return p;
}

Test(pipeline_run, run_reads_logs_and_refuses_existing_outputs_first)
{
    char *dir = temp_dir();
    char *in = write_log(dir, "session_a.h5", 101, 0.0);
    char *logs = rb_asprintf("[\"%s\"]", in);
    rb_pipeline *p = load_with_logs(logs);
    char *out = rb_asprintf("%s/out", dir);
    size_t calls[3] = {0};
    rb_run_opts opts = {.out_dir = out, .progress = count_calls, .user = calls};
    rb_run_summary sum = {0};
    rb_err err;
    cr_assert_eq(rb_pipeline_run(p, &opts, &sum, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(sum.n_logs, 1);
    cr_assert_eq(sum.n_samples, 101);
    cr_assert_eq(sum.report->n_rows, 3);
    cr_assert_str_eq(sum.report->rows[0].run, "run/session_a");
    cr_assert(exists(out, "est.h5") && exists(out, "report.md") && exists(out, "report.json"));
    cr_assert_eq(test_count_entries(out), 3);
    rb_run_summary_free(&sum);

    char *est = rb_asprintf("%s/est.h5", out);
    rb_log *back;
    char hex[65];
    cr_assert_eq(rb_log_read(est, &back, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_sha256_file(in, hex, &err), RB_OK);
    cr_assert_str_eq(rb_log_get_attr(back, "input_sha256"), hex);
    cr_assert_str_eq(rb_log_get_attr(back, "input"), "session_a.h5");
    rb_log_free(back);

    /* again without overwrite: refused before any log is read (this one does not even exist) */
    calls[0] = 0;
    const char *missing[] = {"/nonexistent/session_a.h5"};
    opts.logs = missing;
    opts.n_logs = 1;
    cr_assert_eq(rb_pipeline_run(p, &opts, &sum, &err), RB_EEXISTS);
    cr_assert(strstr(err.msg, "est.h5: exists"), "%s", err.msg);
    cr_assert_eq(calls[0], 0, "no sample was run");
    opts.overwrite = true;
    cr_assert_eq(rb_pipeline_run(p, &opts, &sum, &err), RB_ENOTFOUND, "%s", err.msg);
    rb_run_summary_free(&sum);

    remove_tree(dir);
    rb_free(dir);
    rb_free(in);
    rb_free(logs);
    rb_free(out);
    rb_free(est);
    rb_pipeline_free(p);
}

Test(pipeline_run, several_logs_get_a_folder_each_and_a_combined_report)
{
    char *dir = temp_dir();
    char *a = write_log(dir, "a.h5", 101, 0.0), *b = write_log(dir, "b.h5", 51, 3.0);
    char *b2 = write_log(dir, "b2.h5", 50, 3.51);
    char *logs = rb_asprintf("[\"%s\", [\"%s\", \"%s\"]]", a, b, b2);
    rb_pipeline *p = load_with_logs(logs);
    char *out = rb_asprintf("%s/out", dir);
    rb_run_opts opts = {.out_dir = out};
    rb_run_summary sum = {0};
    rb_err err;
    cr_assert_eq(rb_pipeline_run(p, &opts, &sum, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(sum.n_logs, 2);
    cr_assert_eq(sum.n_samples, 101 + 101, "b and b2 form one session");
    cr_assert_eq(sum.report->n_rows, 6);
    char *out_a = rb_asprintf("%s/a", out), *out_b = rb_asprintf("%s/b", out);
    cr_assert(exists(out_a, "est.h5") && exists(out_b, "est.h5") && exists(out_b, "report.json"));
    cr_assert(exists(out, "report.md") && exists(out, "report.json"), "combined reports at the top");
    cr_assert_eq(test_count_entries(out), 4);
    rb_run_summary_free(&sum);

    /* the command line's logs as one session */
    const char *session[] = {b, b2};
    char *out2 = rb_asprintf("%s/out2", dir);
    rb_run_opts cat = {.out_dir = out2, .logs = session, .n_logs = 2, .concat = true};
    cr_assert_eq(rb_pipeline_run(p, &cat, &sum, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(sum.n_logs, 1);
    cr_assert(exists(out2, "est.h5"));
    rb_run_summary_free(&sum);
    /* ... or one log each, whose stems clash */
    const char *clash[] = {a, a};
    rb_run_opts twice = {.out_dir = out2, .logs = clash, .n_logs = 2, .overwrite = true};
    cr_assert_eq(rb_pipeline_run(p, &twice, NULL, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "would both write into"), "%s", err.msg);

    remove_tree(dir);
    rb_free(dir);
    rb_free(a);
    rb_free(b);
    rb_free(b2);
    rb_free(logs);
    rb_free(out);
    rb_free(out2);
    rb_free(out_a);
    rb_free(out_b);
    rb_pipeline_free(p);
}

Test(pipeline_run, no_logs_is_a_config_error)
{
    rb_pipeline *p = load(run_config);
    rb_err err;
    cr_assert_eq(rb_pipeline_run(p, NULL, NULL, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "run.json: no log to run: list \"logs\" in the config or give log files");
    rb_pipeline_free(p);
}

/* Every allocation of load + run + write fails in turn: RB_ENOMEM each time, no file, no leak (ASan). */
Test(pipeline_run, allocation_failures_are_clean)
{
    const char *text =
        "{\"clock\": {\"rate\": 100},\n"
        " \"signals\": {\"q\": {\"channel\": \"joints/q\", \"elements\": [\"knee\", \"hip\"]},\n"
        "             \"qd_true\": {\"channel\": \"joints/qd\", \"nonfinite\": \"hold\"}},\n"
        " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, "
        "\"params\": {\"cutoff_hz\": 4}},\n"
        "  {\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q_lp\"},\n"
        "   \"out\": {\"dx\": \"qd\"}},\n"
        "  {\"id\": \"m\", \"type\": \"multi\", \"in\": {\"x\": \"qd\"},\n"
        "   \"out\": {\"pair\": \"qd_pair\"}}],\n"
        " \"outputs\": [{\"path\": \"qd.csv\", \"signals\": [\"qd\", \"qd_pair\"]}],\n"
        " \"metrics\": [{\"estimate\": \"qd\", \"reference\": \"qd_true\"}],\n"
        " \"reports\": [\"r.md\"]}";
    rb_log *log = make_log(101, 0.01, 0.0);
    log->channels[1].data[5] = NAN;
    char *dir = temp_dir();
    long n;
    for (n = 0; n < 100000; n++) {
        rb_pipeline *p = NULL;
        rb_run_result *res = NULL;
        rb_err err;
        rb_err_clear(&err);
        rb_alloc_fail_after(n);
        int rc = rb_pipeline_load_text(text, strlen(text), "alloc.json", NULL, reg, &p, &err);
        if (!rc)
            rc = rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err);
        if (!rc)
            rc = rb_run_result_write(p, res, dir, false, &err);
        rb_alloc_fail_after(-1);
        rb_run_result_free(res);
        rb_pipeline_free(p);
        if (rc == RB_OK)
            break;
        cr_assert_eq(rc, RB_ENOMEM, "allocation %ld: %s %s", n, rb_status_name(rc), err.msg);
        cr_assert_eq(test_count_entries(dir), 0, "allocation %ld: a file appeared", n);
    }
    cr_assert(n > 50, "the loop reached the end after %ld allocations", n);
    cr_assert_eq(test_count_entries(dir), 2);
    remove_tree(dir);
    rb_free(dir);
    rb_log_free(log);
}
