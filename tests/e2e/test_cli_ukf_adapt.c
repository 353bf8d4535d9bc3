/* End-to-end: ukf_torque's online friction correction on the second robot (datasets/leg_pole_second_robot.mat,
 * the network trained on leg_pole_free), and r_friction without a friction input as a configuration error. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PAPER RB_SOURCE "/configs/paper"

/* configs/paper/<from> with absolute paths, written into dir as name, with `extra` inserted into the UKF's
 * parameters (before "ft_offset"). */
static char *copy_pipeline(const char *from, const char *dir, const char *name, const char *extra)
{
    size_t len = 0;
    char *full = test_path(PAPER, from), *src = test_read_file(full, &len);
    free(full);
    cr_assert(src);
    size_t cap = len + 4096;
    char *out = calloc(cap, 1);
    const char *p = src;
    struct {
        const char *from, *to;
    } subs[] = {{"\"../../datasets/", "\"" RB_SOURCE "/datasets/"},
                {"\"leg_friction_pinn.json\"", "\"" PAPER "/leg_friction_pinn.json\""},
                {"\"ft_offset\"", NULL}};
    size_t o = 0;
    while (*p) {
        bool hit = false;
        for (size_t s = 0; s < 3 && !hit; s++)
            if (strncmp(p, subs[s].from, strlen(subs[s].from)) == 0) {
                o += (size_t)snprintf(out + o, cap - o, "%s%s", subs[s].to ? subs[s].to : extra,
                                      subs[s].to ? "" : subs[s].from);
                p += strlen(subs[s].from);
                hit = true;
            }
        if (!hit)
            out[o++] = *p++;
    }
    char *path = test_path(dir, name);
    test_write_file(path, out);
    free(src);
    free(out);
    return path;
}

Test(cli_ukf_adapt, correction_beats_the_uncorrected_filter_on_the_second_robot)
{
    test_deadline(120);
    const char *log = RB_SOURCE "/datasets/leg_pole_second_robot.mat";
    cr_assert(test_exists(log), "%s is missing: run scripts/make-datasets.sh", log);
    char *dir = test_tmpdir();
    char *plain = copy_pipeline("leg_ukf_pinn.json", dir, "pinn.json", "");
    char *adapt =
        copy_pipeline("leg_ukf_pinn.json", dir, "adapt.json", "\"friction_correction\": [\"coulomb\", \"viscous\"], ");
    char suite[4096];
    snprintf(suite, sizeof suite,
             "{\"name\": \"second robot\", \"variants\": ["
             "{\"name\": \"ukf_nofric\", \"pipeline\": \"%s/leg_ukf_nofric.json\", \"estimate\": \"tau_hat\"},"
             "{\"name\": \"ukf_pinn\", \"pipeline\": \"%s\", \"estimate\": \"tau_hat\"},"
             "{\"name\": \"ukf_pinn_adapt\", \"pipeline\": \"%s\", \"estimate\": \"tau_hat\"}],"
             " \"logs\": [\"%s\"], \"reference\": \"truth/joints/torques\", \"statistics\": [\"rmse\"],"
             " \"window\": [0.5, 5.0]}",
             PAPER, plain, adapt, log);
    char *sp = test_path(dir, "suite.json"), *out = test_path(dir, "out"), *report = test_path(out, "report.json");
    test_write_file(sp, suite);
    cli_result r = cli_run(NULL, (const char *[]){"compare", sp, "-o", out, "-q", "--threads", "2", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "compare: %s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"check", report, "--rule", "ukf_pinn_adapt.rmse < ukf_pinn.rmse", "--rule",
                                       "ukf_pinn_adapt.rmse < ukf_nofric.rmse", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "check: %s%s", r.out, r.err);
    cli_result_free(&r);
    free(plain), free(adapt), free(sp), free(out), free(report), free(dir);
}

Test(cli_ukf_adapt, r_friction_without_a_friction_input_is_a_config_error)
{
    char *dir = test_tmpdir();
    char *path = copy_pipeline("leg_ukf_nofric.json", dir, "p.json", "\"r_friction\": [0.01], ");
    char *out = test_path(dir, "out");
    cli_result r =
        cli_run(NULL, (const char *[]){"run", path, RB_SOURCE "/datasets/leg_pole_free.mat", "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "status %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "r_friction needs the friction input"), "%s", r.err);
    cr_assert(!test_exists(out), "no output left");
    cli_result_free(&r);
    free(path), free(out), free(dir);
}
