/* roboest simulate: run a scenario, sample its sensors and write a robot-logger log with the truth beside it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "roboest/io.h"
#include "roboest/sim.h"

static const char *const SIMULATE_HELP =
    "Usage: roboest simulate SCENARIO.json -o LOG [--force] [-q]\n"
    "\n"
    "Runs the scenario's simulation (model, references, CoM balancing, a walking gait or a jet\n"
    "flight controller, joint controller, actuators, friction, contacts (rigid, or sticking and\n"
    "slipping on a floor) and contact events, pushes, payload changes), samples its sensors and\n"
    "writes LOG (.mat: robot-logger MATLAB v7.3; .h5: roboest HDF5) through a temporary file: on any error\n"
    "nothing is written. The same scenario and seed give the same bytes. The scenario keys\n"
    "are documented in configs/README.md (\"Scenarios\").\n"
    "\n"
    "What the robot logs (root struct robot_logger_device in .mat), element names and units:\n"
    "  joints_state/positions, velocities, accelerations   joints; rad, rad/s, rad/s^2\n"
    "  joints_state/desired_torques                        joints; N m (controller output)\n"
    "  motors_state/positions, velocities, currents        joints; rad, rad/s (rotor side), A\n"
    "  FTs/<name>              fx fy fz mx my mz; N, N m     (one per \"ft\" sensor)\n"
    "  FTs_raw/<name>          sg0 .. sg5; counts            (one per \"ft_raw\" sensor: K w + offset, quantized)\n"
    "  accelerometers/<name>   x y z; m/s^2                  (one per \"accelerometer\" sensor)\n"
    "  gyros/<name>            x y z; rad/s                  (one per \"gyroscope\" sensor)\n"
    "  orientations/<name>     roll pitch yaw; rad           (one per \"orientation\" sensor: the frame's\n"
    "                          world orientation R = Rz(yaw) Ry(pitch) Rx(roll), wrapped into [-pi, pi))\n"
    "  temperatures/<FT>       degC (FT sensors with temperature_drift);  scales/<contact frame>  kg\n"
    "  jets/throttles, jets/rotor_speed_error    one element per jet (its frame); n.d., rpm (desired - measured)\n"
    "Positions and currents go through the scenario's encoder / current sensors when given (else they\n"
    "are exact); velocities, accelerations and desired torques are exact, at log_rate.\n"
    "\n";

/* The help in two parts: one string literal stays within the 4095 characters C requires compilers to take. */
static const char *const SIMULATE_HELP_TRUTH =
    "The truth, noise-free at log_rate, under the root truth/ (a field `truth` of the .mat root):\n"
    "  truth/joints/{positions,velocities,accelerations,references}   rad, rad/s, rad/s^2, rad\n"
    "  truth/joints/torques            joint-side torque tau_j, N m\n"
    "  truth/joints/friction_torques   tau_F (tau_j = tau_m - tau_F - R^2 J_m s_ddot), N m\n"
    "  truth/motors/torques            k_t R I_m at the gear output, N m\n"
    "  truth/motors/{currents,current_commands}                    A (saturated, commanded)\n"
    "  truth/motors/{positions,velocities,accelerations}           rotor side, rad, rad/s, rad/s^2\n"
    "                                  (with k_gear: R (s + tau_g / k_gear), the gear's windup included)\n"
    "  truth/joints/at_limit           1 on a position limit, else 0 (with joint_limits)\n"
    "  truth/contacts/<frame>          fx fy fz mx my mz on the robot (world axes), N, N m\n"
    "  truth/contacts_active           1 (active) or 0 per contact, named after its frame\n"
    "  truth/contacts/slip_velocity    <frame>_x <frame>_y per contact: world x-y slip velocity, m/s (0 in\n"
    "                                  stick); truth/contacts/slipping, pulling (f_n < 0): 0 or 1; and\n"
    "                                  truth/contacts/friction_ratio |f_t| / f_n (with the scenario key floor)\n"
    "  truth/pushes                    <i>_fx ... <i>_mz per push (world axes), N, N m\n"
    "  truth/jets/{thrusts,thrust_rates}  delivered thrust per jet, N, N/s\n"
    "  truth/flight/{com_ref,desired_thrusts}  the flight controller's CoM reference (m) and thrusts (N)\n"
    "  truth/base/position, orientation (qw qx qy qz), twist and acceleration (body-fixed, linear first)\n"
    "  truth/com                       centre of mass of the plant (payload included), world, m\n"
    "  truth/orientations/<name>       each orientation sensor's noise-free roll pitch yaw, rad\n"
    "  truth/com_velocity, truth/com_acceleration   its velocity and acceleration, m/s, m/s^2 (with gait)\n"
    "  truth/payload/<body>            m hx hy hz Ixx Ixy Ixz Iyy Iyz Izz about the body frame (with a payload)\n"
    "  truth/payload_mass              each payload body's mass, kg, elements named after the bodies\n"
    "  truth/tasks/pelvis_height       reference actual: the base height and its reference, m (balance.pelvis_height)\n"
    "  truth/gait/phase                0 double support, 1 left support (left foot on the ground), 2 right\n"
    "  truth/gait/com_ref, zmp_ref     the planned CoM (x y z) and the ZMP reference (x y), world, m\n"
    "  truth/gait/feet_ref, zmp        the feet's references (l_x .. r_z) and the contact wrenches' ZMP (x y), m\n"
    "  truth/energy                    kinetic potential, J\n"
    "Attributes: roboest_version, scenario, scenario_sha256, model, seed (a .mat puts them in the root\n"
    "struct roboest_provenance), yarp_robot_name and description_list.\n"
    "The scenario key log_channels (names, or prefixes ending in '/' such as \"truth/base/\") keeps only\n"
    "the channels it matches, in this order; an entry matching none is an error.\n"
    "\n"
    "  -o, --output LOG  output file (.mat or .h5); its folder must exist\n"
    "  --force           overwrite LOG\n"
    "  -q, --quiet       no progress bar (it is shown only when stderr is a terminal)\n"
    "  -h, --help        this help\n"
    "\n" CLI_EXIT_CODES_HELP;

/* The progress bar, from the run's per-sample hook (every 256 samples, as the steps go). */
static int show_progress(void *user, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                         rb_err *err)
{
    (void)t, (void)latest, (void)fresh, (void)err;
    if (k % 256 == 0)
        cli_progress_update(user, k, rb_sim_n_steps(sim));
    return RB_OK;
}

static int simulate(const rb_scenario *s, const char *out, const rb_write_opts *wo, bool quiet, rb_err *err)
{
    rb_log *log = NULL;
    cli_progress progress;
    cli_progress_init(&progress, "simulate", quiet);
    rb_scenario_hook hook = {.sample = show_progress, .user = &progress};
    int rc = rb_scenario_run(s, NULL, &hook, &log, err);
    cli_progress_done(&progress);
    if (!rc)
        rc = rb_log_write(log, out, wo, err);
    rb_log_free(log);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *out = NULL;
    bool quiet = false, force = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case 'F': force = true; break;
        case 'q': quiet = true; break;
        case 'h': fputs(SIMULATE_HELP, stdout), fputs(SIMULATE_HELP_TRUTH, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error("simulate", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("simulate", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("simulate", "missing SCENARIO.json");
    if (optind + 1 < argc)
        return cli_usage_error("simulate", "unexpected argument '%s'", argv[optind + 1]);
    if (!out)
        return cli_usage_error("simulate", "missing -o LOG");
    rb_err err;
    rb_write_opts wo = {.overwrite = force};
    if (rb_out_format_from_path(out, &wo.format, &err) != RB_OK ||
        (wo.format != RB_OUT_H5 && wo.format != RB_OUT_MAT73))
        return cli_usage_error("simulate", "'%s': the log must end in .mat or .h5", out);
    struct stat st;
    if (!force && stat(out, &st) == 0) {
        rb_err_set(&err, RB_EEXISTS, "%s: exists (use --force to overwrite)", out);
        return cli_fail(&err);
    }
    rb_scenario *s = NULL;
    int rc = rb_scenario_load(argv[optind], &s, &err);
    if (!rc)
        rc = simulate(s, out, &wo, quiet, &err);
    rb_scenario_free(s);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
