/* roboest import-rde: the public UKF joint-torque estimator's .ini configuration -> a pipeline file. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "roboest/rde.h"

static const char *const IMPORT_RDE_HELP =
    "Usage: roboest import-rde DIR -o PIPELINE.json [--urdf PATH] [--friction-network FILE] [--force]\n"
    "\n"
    "Converts the configuration of the public UKF joint-torque estimator (robot-dynamics-estimation: the\n"
    "folder holding config.ini, model.ini, ukf.ini, ukf/ukf_state.ini, ukf/ukf_measurement.ini) into a\n"
    "roboest pipeline that runs the ukf_torque stage on robot-logger channels. Every covariance, friction\n"
    "coefficient, gear ratio and torque constant is carried over unchanged; the model is checked against\n"
    "the URDF (joints, base link, FT sensors, contact and IMU frames). Then:\n"
    "  roboest run PIPELINE.json LOG.mat -o OUT     (estimates in OUT/ukf_torque.h5)\n"
    "\n"
    "What the pipeline reads from the log (elements: MODEL joint_list):\n"
    "  joints_state/positions, joints_state/velocities, motors_state/currents,\n"
    "  FTs/<[FT] name>, accelerometers/<[ACCELEROMETER] name>, gyros/<[GYROSCOPE] name>\n"
    "and with --friction-network motors_state/velocities. The IMU bindings are optional: a log without\n"
    "those channels binds them 0 wide (a warning says so). The clock rate is 1 / sampling_time. What is\n"
    "not mapped is printed as notes on stderr; the full mapping is in configs/README.md (\"Pipelines from\n"
    "the public estimator\") and roboest/rde.h.\n"
    "\n"
    "  DIR               the configuration folder (or its config.ini)\n"
    "  -o, --output FILE the pipeline to write (its folder must exist); the URDF and network paths in it\n"
    "                    are relative to that folder, so moving the folder with them keeps it working\n"
    "  --urdf PATH       the robot's URDF; default: config.ini's urdf_path, looked for in DIR, DIR/.. and\n"
    "                    DIR/../.. (as written, then by file name)\n"
    "  --friction-network FILE\n"
    "                    the friction network (of 'roboest train-friction') whose output a friction torque\n"
    "                    measurement (name \"tau_F\" in ukf_measurement.ini) reads: a friction_pinn stage\n"
    "                    feeds the UKF's friction input; required with such a measurement\n"
    "  --force           overwrite FILE\n"
    "  -h, --help        this help\n"
    "\n" CLI_EXIT_CODES_HELP;

static int write_text(const char *path, const char *text, bool force, rb_err *err)
{
    rb_outfile of;
    int rc = rb_outfile_begin(&of, path, force, err);
    if (rc)
        return rc;
    FILE *f = fopen(of.tmp_path, "wb");
    bool ok = f && fwrite(text, 1, strlen(text), f) == strlen(text);
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        rb_outfile_abort(&of);
        return rb_err_set(err, RB_EIO, "%s: cannot write", path);
    }
    return rb_outfile_commit(&of, err);
}

int cmd_import_rde(int argc, char **argv)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"urdf", required_argument, NULL, 'u'},
                                            {"friction-network", required_argument, NULL, 'n'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *cmd = "import-rde";
    rb_rde_import_opts o = {0};
    bool force = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
        switch (opt) {
        case 'o': o.out_path = optarg; break;
        case 'u': o.urdf = optarg; break;
        case 'n': o.friction_network = optarg; break;
        case 'F': force = true; break;
        case 'h': fputs(IMPORT_RDE_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "missing DIR");
    if (optind + 1 < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    if (!o.out_path)
        return cli_usage_error(cmd, "missing -o PIPELINE.json");
    rb_err err;
    rb_rde_import imp;
    int rc = rb_rde_import_dir(argv[optind], &o, &imp, &err);
    if (!rc)
        rc = write_text(o.out_path, imp.json, force, &err);
    if (!rc) {
        for (size_t i = 0; i < imp.n_notes; i++)
            fprintf(stderr, "roboest: note: %s\n", imp.notes[i]);
        printf("%s: ukf_torque on %zu joints, %zu FT sensors, %zu contacts, %zu accelerometers, %zu gyroscopes "
               "(model %s)\n",
               o.out_path, imp.n_joints, imp.n_ft, imp.n_contacts, imp.n_acc, imp.n_gyro, imp.urdf);
    }
    rb_rde_import_free(&imp);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
