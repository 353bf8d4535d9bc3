/* End-to-end: a stored run of roboest compare --resume belongs to the bytes of the files its pipeline's stages
 * name (a friction network), not only to their paths: after the network file changes in place, the run is made
 * again; with the file unchanged it is read back. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

/* The paper's current-minus-PINN pipeline with its URDF absolute and its network a copy in dir (net.json). */
static char *make_suite(const char *dir)
{
    char *pipe_text = test_read_file(RB_SOURCE "/configs/paper/humanoid_current_minus_pinn.json", NULL);
    cr_assert_not_null(pipe_text);
    const char *from = "\"../../datasets/humanoid_lower_body.urdf\"";
    char *at = strstr(pipe_text, from);
    cr_assert_not_null(at, "the pipeline's URDF path moved");
    const char *net_from = "\"humanoid_friction_pinn.json\"";
    char *net_at = strstr(pipe_text, net_from);
    cr_assert_not_null(net_at, "the pipeline's network path moved");
    size_t cap = strlen(pipe_text) + 4096;
    char *out = malloc(cap);
    int n = snprintf(out, cap, "%.*s\"%s/datasets/humanoid_lower_body.urdf\"%.*s\"net.json\"%s", (int)(at - pipe_text),
                     pipe_text, RB_SOURCE, (int)(net_at - (at + strlen(from))), at + strlen(from),
                     net_at + strlen(net_from));
    cr_assert(n > 0 && (size_t)n < cap);
    char *pipe = test_path(dir, "p.json"), *net = test_path(dir, "net.json"), *suite = test_path(dir, "s.json");
    test_write_file(pipe, out);
    char *net_text = test_read_file(RB_SOURCE "/configs/paper/humanoid_friction_pinn.json", NULL);
    cr_assert_not_null(net_text);
    test_write_file(net, net_text);
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"files\", \"variants\": [{\"name\": \"pinn\", \"pipeline\": \"p.json\", \"estimate\": "
             "\"tau_hat\"}],\n \"logs\": [\"%s/datasets/humanoid_balance.mat\"], \"reference\": "
             "\"truth/joints/torques\", \"joints\": [\"r_knee\"], \"window\": [1, 3]}\n",
             RB_SOURCE);
    test_write_file(suite, text);
    free(pipe_text), free(out), free(net_text), free(pipe), free(net);
    return suite;
}

static void run_expect(const char *suite, const char *out, const char *stderr_has)
{
    const char *args[] = {"compare", suite, "-o", out, "--resume", "--force", "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, stderr_has), "stderr has '%s': %s", stderr_has, r.err);
    cli_result_free(&r);
}

Test(cli_compare_resume_files, a_changed_network_file_is_run_again_an_unchanged_one_read_back)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *out = test_path(dir, "out"),
         *net = test_path(dir, "net.json");
    run_expect(suite, out, "1 run computed, 0 read");
    run_expect(suite, out, "0 runs computed, 1 read");
    /* the same network, other bytes (a trailing newline): the stored run is not this file's */
    size_t len = 0;
    char *text = test_read_file(net, &len);
    char *more = malloc(len + 2);
    memcpy(more, text, len);
    more[len] = '\n', more[len + 1] = 0;
    test_write_file(net, more);
    run_expect(suite, out, "1 run computed, 0 read");
    free(text), free(more), free(net), free(out), free(suite), free(dir);
}

/* The SHA-256 of a file by coreutils' sha256sum, an implementation other than the library's. */
static void sha256sum(const char *path, char sha[65])
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    cr_assert_eq(fscanf(f, "%64s", sha), 1);
    pclose(f);
}

/* A report and an output record the bytes of the model and of the network file, not only their names: the same
 * file names with other bytes give other results, and a reader must be able to tell. */
Test(cli_compare_resume_files, reports_and_outputs_record_the_model_and_network_checksums)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *out = test_path(dir, "out"),
         *net = test_path(dir, "net.json"), *pipe = test_path(dir, "p.json"), *run_out = test_path(dir, "run");
    char net_sha[65], urdf_sha[65];
    sha256sum(net, net_sha);
    sha256sum(RB_SOURCE "/datasets/humanoid_lower_body.urdf", urdf_sha);

    cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    cJSON *rep = test_read_json(out, "report.json");
    const cJSON *pv = cJSON_GetObjectItem(rep, "provenance");
    const char *got = cJSON_GetStringValue(cJSON_GetObjectItem(pv, "variant pinn: stages.pinn.network_sha256"));
    cr_expect(got && strcmp(got, net_sha) == 0, "report: network %s, sha256sum %s", got ? got : "(none)", net_sha);
    got = cJSON_GetStringValue(cJSON_GetObjectItem(pv, "variant pinn: model_sha256"));
    cr_expect(got && strcmp(got, urdf_sha) == 0, "report: model %s, sha256sum %s", got ? got : "(none)", urdf_sha);
    cJSON_Delete(rep);

    r = cli_run(NULL,
                (const char *[]){"run", pipe, RB_SOURCE "/datasets/humanoid_balance.mat", "-o", run_out, "-q", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *h5 = test_path(run_out, "torques.h5");
    rb_log *log = NULL;
    rb_err err = {0};
    cr_assert_eq(rb_log_read(h5, &log, &err), RB_OK, "%s", err.msg);
    got = test_log_attr(log, "stages.pinn.network_sha256");
    cr_expect(got && strcmp(got, net_sha) == 0, "output: network %s, sha256sum %s", got ? got : "(none)", net_sha);
    got = test_log_attr(log, "model_sha256");
    cr_expect(got && strcmp(got, urdf_sha) == 0, "output: model %s, sha256sum %s", got ? got : "(none)", urdf_sha);
    rb_log_free(log);
    free(h5), free(run_out), free(pipe), free(net), free(out), free(suite), free(dir);
}
