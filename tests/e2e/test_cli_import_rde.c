/* End-to-end: roboest import-rde on the two configurations shipped in ../shared/models/rde_configs (read in
 * place), every number checked by an independent Python reading of the .ini files, determinism, --print-config
 * once the ukf_torque stage is registered, and the failure modes (one line, exit code, no output file). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

#define RDE_CONFIGS RB_SHARED "/models/rde_configs"
#define ERGOCUB RDE_CONFIGS "/ergoCubSN000_r_leg"
#define FOUR_JOINTS RDE_CONFIGS "/four_joints_two_sensors"
#define FOUR_URDF RB_SHARED "/models/four_joints_two_sensors.urdf"

static cli_result import(const char *dir, const char *out, const char *extra)
{
    const char *args[] = {"import-rde", dir, "-o", out, extra, NULL};
    return cli_run(NULL, args);
}

/* The independent check (tests/e2e/rde_check.py) of every mapped number and binding. */
static void python_check(const char *config_dir, const char *pipeline)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/e2e/rde_check.py '%s' '%s' > /dev/null", RB_SOURCE, config_dir,
             pipeline);
    cr_assert_eq(system(cmd), 0, "rde_check.py finds differences: %s", cmd);
}

static void shipped_config(const char *dir, int n_lines_min)
{
    char *tmp = test_tmpdir(), *out = test_path(tmp, "pipeline.json");
    cli_result r = import(dir, out, NULL);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.out), 1, "one summary line: %s", r.out);
    cr_assert(strstr(r.out, "ukf_torque on "), "%s", r.out);
    cr_assert_geq(test_count_lines(r.err), n_lines_min, "the notes: %s", r.err);
    cr_assert(strncmp(r.err, "roboest: note: ", 15) == 0, "%s", r.err);
    python_check(dir, out);
    /* the same again, byte for byte; and an existing file needs --force */
    size_t n1 = 0, n2 = 0;
    char *first = test_read_file(out, &n1);
    cli_result again = import(dir, out, NULL);
    cr_assert_eq(again.status, CLI_EXIT_OUTPUT, "%s", again.err);
    cli_result forced = import(dir, out, "--force");
    cr_assert_eq(forced.status, 0, "%s", forced.err);
    char *second = test_read_file(out, &n2);
    cr_assert_eq(n1, n2);
    cr_assert(memcmp(first, second, n1) == 0, "the same configuration gives the same bytes");
    cr_assert_eq(test_count_entries(tmp), 1, "no temporary file left behind");
    /* roboest run --print-config takes it once the ukf_torque stage is registered */
    const char *stages[] = {"stages", NULL};
    cli_result st = cli_run(NULL, stages);
    if (strstr(st.out, "\nukf_torque\n") || strncmp(st.out, "ukf_torque\n", 11) == 0) {
        const char *args[] = {"run", out, "--print-config", NULL};
        cli_result pc = cli_run(NULL, args);
        cr_assert_eq(pc.status, 0, "run --print-config: %s", pc.err);
        cr_assert(strstr(pc.out, "\"ukf_torque\""), "%s", pc.out);
        cli_result_free(&pc);
    } else {
        cr_log_info("ukf_torque is not registered yet: --print-config not tried (the unit tests load the pipeline "
                    "with a stand-in stage)");
    }
    cli_result_free(&st);
    free(first), free(second);
    cli_result_free(&r), cli_result_free(&again), cli_result_free(&forced);
    free(out), free(tmp);
}

Test(cli_import_rde, ergocub_r_leg)
{
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg");
    test_need_shared("models/ergoCubSN000.urdf");
    shipped_config(ERGOCUB, 5);
}

Test(cli_import_rde, four_joints_two_sensors)
{
    test_need_shared("models/rde_configs/four_joints_two_sensors");
    test_need_shared("models/four_joints_two_sensors.urdf");
    shipped_config(FOUR_JOINTS, 14);
}

Test(cli_import_rde, help_and_usage)
{
    const char *help[] = {"import-rde", "--help", NULL};
    cli_result r = cli_run(NULL, help);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "Usage: roboest import-rde DIR -o PIPELINE.json"), "%s", r.out);
    cr_assert(strstr(r.out, "Exit codes:"));
    cli_result_free(&r);
    const char *main_help[] = {"--help", NULL};
    r = cli_run(NULL, main_help);
    cr_assert(strstr(r.out, "  import-rde DIR -o PIPELINE.json"), "%s", r.out);
    cli_result_free(&r);
    const char *no_out[] = {"import-rde", ERGOCUB, NULL};
    r = cli_run(NULL, no_out);
    cr_assert_eq(r.status, CLI_EXIT_USAGE);
    cr_assert_str_eq(r.err, "roboest import-rde: missing -o PIPELINE.json (see 'roboest import-rde --help')\n");
    cli_result_free(&r);
    const char *bad_opt[] = {"import-rde", ERGOCUB, "-o", "x.json", "--urfd", "a", NULL};
    r = cli_run(NULL, bad_opt);
    cr_assert_eq(r.status, CLI_EXIT_USAGE);
    cr_assert_eq(test_count_lines(r.err), 1);
    cli_result_free(&r);
}

/* ---- failures: one line, exit code, no file ---------------------------------------------------------------- */
static const char *const CONFIG = "[GENERAL]\nurdf_path \"four_joints_two_sensors.urdf\"\nsampling_time 0.01\n"
                                  "[include MODEL \"model.ini\"]\n[include UKF \"ukf.ini\"]\n";
static const char *const MODEL = "joint_list (\"joint_1\", \"joint_2\", \"joint_3\", \"joint_4\")\n"
                                 "base_link \"base_link\"\n"
                                 "[FT]\nnames (\"ft_1\")\n";
static const char *const UKF = "alpha 1.0\nbeta 2.0\nkappa 0.0\n"
                               "[include UKF_STATE \"ukf/ukf_state.ini\"]\n"
                               "[include UKF_MEASUREMENT \"ukf/ukf_measurement.ini\"]\n";
static const char *const STATE =
    "dynamics_list (\"DS\", \"TAU_M\", \"TAU_F\", \"FT_1\")\n"
    "[DS]\nname \"ds\"\ncovariance (1, 1, 1, 1)\ninitial_covariance (1, 1, 1, 1)\n"
    "dynamic_model \"JointVelocityStateDynamics\"\n"
    "[TAU_M]\nname \"tau_m\"\ncovariance (1, 1, 1, 1)\ninitial_covariance (1, 1, 1, 1)\n"
    "dynamic_model \"ZeroVelocityStateDynamics\"\n"
    "[TAU_F]\nname \"tau_F\"\ncovariance (1, 1, 1, 1)\ninitial_covariance (1, 1, 1, 1)\n"
    "dynamic_model \"ZeroVelocityStateDynamics\"\n"
    "[FT_1]\nname \"ft_1\"\ncovariance (1, 1, 1, 1, 1, 1)\ninitial_covariance (1, 1, 1, 1, 1, 1)\n"
    "dynamic_model \"ZeroVelocityStateDynamics\"\n";
static const char *const MEAS =
    "dynamics_list (\"DS\", \"I_M\", \"FT_1\")\n"
    "[DS]\nname \"ds\"\ncovariance (1, 1, 1, 1)\ndynamic_model \"ConstantMeasurementModel\"\n"
    "[I_M]\nname \"i_m\"\ncovariance (1, 1, 1, 1)\ngear_ratio (100, 100, 100, 100)\n"
    "torque_constant (0.1, 0.1, 0.1, 0.1)\n"
    "dynamic_model \"MotorCurrentMeasurementDynamics\"\n"
    "[FT_1]\nname \"ft_1\"\ncovariance (1, 1, 1, 1, 1, 1)\n"
    "dynamic_model \"ConstantMeasurementModel\"\n";

/* A small configuration in a new folder, one file's text replaced when `file` is given. */
static char *small_config(const char *file, const char *text)
{
    char *dir = test_tmpdir(), *ukf = test_path(dir, "ukf");
    cr_assert_eq(mkdir(ukf, 0755), 0);
    const char *names[] = {"config.ini", "model.ini", "ukf.ini", "ukf/ukf_state.ini", "ukf/ukf_measurement.ini"};
    const char *texts[] = {CONFIG, MODEL, UKF, STATE, MEAS};
    for (int i = 0; i < 5; i++) {
        char *path = test_path(dir, names[i]);
        test_write_file(path, file && strcmp(file, names[i]) == 0 ? text : texts[i]);
        free(path);
    }
    free(ukf);
    return dir;
}

/* Import dir with --urdf into a fresh output folder: exit `status`, one line on stderr containing `part`,
 * nothing written. */
static void expect_failure(const char *dir, int status, const char *part)
{
    char *out_dir = test_tmpdir(), *out = test_path(out_dir, "pipeline.json");
    const char *args[] = {"import-rde", dir, "-o", out, "--urdf", FOUR_URDF, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, status, "exit %d: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strncmp(r.err, "roboest: ", 9) == 0, "%s", r.err);
    cr_assert(strstr(r.err, part), "'%s' not in: %s", part, r.err);
    cr_assert_str_eq(r.out, "");
    cr_assert_eq(test_count_entries(out_dir), 0, "nothing written");
    cli_result_free(&r);
    free(out), free(out_dir);
}

Test(cli_import_rde, the_small_configuration_works)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    char *dir = small_config(NULL, NULL);
    char *out_dir = test_tmpdir(), *out = test_path(out_dir, "p.json");
    const char *args[] = {"import-rde", dir, "-o", out, "--urdf", FOUR_URDF, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "", "nothing unmapped");
    python_check(dir, out);
    cli_result_free(&r);
    free(out), free(out_dir), free(dir);
}

Test(cli_import_rde, bad_inputs)
{
    expect_failure("/nonexistent/rde", CLI_EXIT_INPUT, "/nonexistent/rde: no such folder");
    char *dir = test_tmpdir();
    expect_failure(dir, CLI_EXIT_INPUT, "config.ini: no such file");
    free(dir);
    dir = small_config("model.ini", "joint_list (\"joint_1\", \"joint_2\",\n\"joint_3\"\n[FT]\nnames (\"ft_1\")\n");
    expect_failure(dir, CLI_EXIT_INPUT, "model.ini:1: unterminated list for key 'joint_list' (found '[' on line 3)");
    free(dir);
    dir = small_config("model.ini", "joint_list (\"joint_1\", \"joint_2\", \"joint_3\", \"joint_4\")\n"
                                    "base_link base link\n");
    expect_failure(dir, CLI_EXIT_INPUT, "model.ini:2: key 'base_link': more than one value");
    free(dir);
    dir = small_config("ukf/ukf_state.ini", "dynamics_list (\"DS\", \"TAU_M\", \"TAU_F\", \"FT_1\")\n"
                                            "[DS]\nname \"ds\"\ncovariance (1, 1, 1, 1)\n"
                                            "initial_covariance (1, 1, 1, 1)\n"
                                            "dynamic_model \"SecondOrderStateDynamics\"\n");
    expect_failure(dir, CLI_EXIT_INPUT, "ukf_state.ini:6: [DS]: unknown dynamic_model 'SecondOrderStateDynamics'");
    free(dir);
    dir = small_config("ukf/ukf_measurement.ini", "dynamics_list (\"DS\", \"I_M\", \"FT_X\")\n"
                                                  "[DS]\nname \"ds\"\ncovariance (1, 1, 1, 1)\n"
                                                  "dynamic_model \"ConstantMeasurementModel\"\n"
                                                  "[I_M]\nname \"i_m\"\ncovariance (1, 1, 1, 1)\n"
                                                  "gear_ratio (1, 1, 1, 1)\ntorque_constant (1, 1, 1, 1)\n"
                                                  "dynamic_model \"MotorCurrentMeasurementDynamics\"\n"
                                                  "[FT_X]\nname \"ft_2\"\ncovariance (1, 1, 1, 1, 1, 1)\n"
                                                  "dynamic_model \"ConstantMeasurementModel\"\n");
    expect_failure(dir, CLI_EXIT_INPUT, "ukf_measurement.ini:13: [FT_X]: name 'ft_2' is not a measurement");
    free(dir);
    dir = small_config("model.ini", "joint_list (\"joint_1\", \"joint_2\", \"joint_3\", \"joint_4\")\n"
                                    "base_link \"base_link\"\n[FT]\nnames (\"ft_9\")\n");
    expect_failure(dir, CLI_EXIT_INPUT, "ukf_state.ini:18: [FT_1]: name 'ft_1' is not a state");
    free(dir);
    dir = small_config("config.ini", "[GENERAL]\nurdf_path \"x.urdf\"\nsampling_time 0.01\n"
                                     "[include MODEL \"model.ini\"]\n[include UKF \"ukf_typo.ini\"]\n");
    expect_failure(dir, CLI_EXIT_INPUT, "config.ini:5: include file 'ukf_typo.ini' not found");
    free(dir);
}

Test(cli_import_rde, output_folder_must_exist)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    char *dir = small_config(NULL, NULL);
    const char *args[] = {"import-rde", dir, "-o", "/nonexistent/p.json", "--urdf", FOUR_URDF, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_OUTPUT, "%s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cli_result_free(&r);
    free(dir);
}
