/* End-to-end: roboest simulate on the inertial_* scenarios (seed 001) for 1 s each: they run, the robot stays up
 * (the CoM near its balance reference), and the log holds what an inertial-parameter estimator reads. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

/* text with the first occurrence of `from` replaced by `to` (malloc'd; text freed). */
static char *replace(char *text, const char *from, const char *to)
{
    char *at = strstr(text, from);
    cr_assert_not_null(at, "'%s' not found", from);
    size_t head = (size_t)(at - text), len = strlen(text) + strlen(to) + 1;
    char *out = malloc(len);
    snprintf(out, len, "%.*s%s%s", (int)head, text, to, at + strlen(from));
    free(text);
    return out;
}

/* The scenario with a 1 s duration and the model path made absolute, in dir. */
static char *one_second(const char *dir, const char *name)
{
    char src[1024], urdf[1024], file[256];
    snprintf(src, sizeof src, "%s/configs/scenarios/%s.json", RB_SOURCE, name);
    snprintf(urdf, sizeof urdf, "\"%s/datasets/humanoid_arms.urdf\"", RB_SOURCE);
    size_t len = 0;
    char *text = test_read_file(src, &len);
    cr_assert_not_null(text, "%s", src);
    char *d = strstr(text, "\"duration\": ");
    cr_assert_not_null(d);
    char dur[64];
    snprintf(dur, sizeof dur, "%.*s", (int)(strchr(d, ',') - d), d);
    text = replace(text, dur, "\"duration\": 1.0");
    text = replace(text, "\"../../datasets/humanoid_arms.urdf\"", urdf);
    snprintf(file, sizeof file, "%s.json", name);
    char *path = test_path(dir, file);
    test_write_file(path, text);
    free(text);
    return path;
}

static void run_one(const char *name)
{
    char *dir = test_tmpdir(), *scn = one_second(dir, name), *out = test_path(dir, "out.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s", name, r.status, r.err);
    cli_result_free(&r);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    static const char *const need[] = {"joints_state/positions",
                                       "joints_state/velocities",
                                       "truth/joints/torques",
                                       "truth/contacts/l_foot_front_contact",
                                       "truth/contacts/r_foot_front_contact",
                                       "FTs/l_foot_front_ft_sensor",
                                       "FTs/r_foot_front_ft_sensor",
                                       "FTs/l_wrist_ft_sensor",
                                       "truth/base/position",
                                       "truth/base/orientation",
                                       "truth/base/twist",
                                       "truth/payload_mass"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const rb_channel *ch = rb_log_find(log, need[i]);
        cr_assert_not_null(ch, "%s: no channel %s", name, need[i]);
        cr_assert_eq(ch->n_samples, 1001, "%s: %s has %zu samples", name, need[i], ch->n_samples);
        for (size_t k = 0; k < ch->n_samples * ch->n_elements; k++)
            cr_assert(isfinite(ch->data[k]), "%s: %s not finite", name, need[i]);
    }
    /* standing: the base stays within a few centimetres of its start */
    const rb_channel *pos = rb_log_find(log, "truth/base/position");
    for (size_t k = 0; k < pos->n_samples; k++)
        for (int i = 0; i < 3; i++)
            cr_assert_lt(fabs(pos->data[3 * k + (size_t)i] - pos->data[(size_t)i]), 0.06, "%s: base moved at %g s",
                         name, pos->time[k]);
    rb_log_free(log);
    free(out);
    free(scn);
    free(dir);
}

Test(cli_simulate_inertial, torso_square) { run_one("inertial_torso_square"); }
Test(cli_simulate_inertial, forearm) { run_one("inertial_forearm"); }
Test(cli_simulate_inertial, low_excitation) { run_one("inertial_low_excitation"); }
Test(cli_simulate_inertial, impacts) { run_one("inertial_impacts"); }
Test(cli_simulate_inertial, dumbbell) { run_one("inertial_dumbbell"); }
