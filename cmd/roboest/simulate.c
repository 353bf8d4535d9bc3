/* roboest simulate: run a scenario, sample its sensors and write a robot-logger log with the truth beside it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "roboest/io.h"
#include "roboest/pipeline.h"

static const char *const SIMULATE_HELP =
    "Usage: roboest simulate SCENARIO.json -o LOG [--force] [-q]\n"
    "\n"
    "Runs the scenario's simulation (model, references or CoM balancing, controller, actuators,\n"
    "friction, contacts and contact events, pushes, payload changes), samples its sensors and writes\n"
    "LOG (.mat: robot-logger MATLAB v7.3; .h5: roboest HDF5) through a temporary file: on any error\n"
    "nothing is written. The same scenario and seed give the same bytes. The scenario keys\n"
    "are documented in configs/README.md (\"Scenarios\").\n"
    "\n"
    "What the robot logs (root struct robot_logger_device in .mat), element names and units:\n"
    "  joints_state/positions, velocities, accelerations   joints; rad, rad/s, rad/s^2\n"
    "  joints_state/desired_torques                        joints; N m (controller output)\n"
    "  motors_state/positions, velocities, currents        joints; rad, rad/s (rotor side), A\n"
    "  FTs/<name>              fx fy fz mx my mz; N, N m     (one per \"ft\" sensor)\n"
    "  accelerometers/<name>   x y z; m/s^2                  (one per \"accelerometer\" sensor)\n"
    "  gyros/<name>            x y z; rad/s                  (one per \"gyroscope\" sensor)\n"
    "  orientations/<name>     roll pitch yaw; rad           (one per \"orientation\" sensor: the frame's\n"
    "                          world orientation R = Rz(yaw) Ry(pitch) Rx(roll), wrapped into [-pi, pi))\n"
    "Positions and currents go through the scenario's encoder / current sensors when given (else they\n"
    "are exact); velocities, accelerations and desired torques are exact, at log_rate.\n"
    "\n"
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
    "  truth/pushes                    <i>_fx ... <i>_mz per push (world axes), N, N m\n"
    "  truth/base/position, orientation (qw qx qy qz), twist and acceleration (body-fixed, linear first)\n"
    "  truth/com                       centre of mass of the plant (payload included), world, m\n"
    "  truth/payload/<body>            m hx hy hz Ixx Ixy Ixz Iyy Iyz Izz about the body frame (with a payload)\n"
    "  truth/energy                    kinetic potential, J\n"
    "Attributes: roboest_version, scenario, scenario_sha256, model, seed (a .mat puts them in the root\n"
    "struct roboest_provenance), yarp_robot_name and description_list.\n"
    "\n"
    "  -o, --output LOG  output file (.mat or .h5); its folder must exist\n"
    "  --force           overwrite LOG\n"
    "  -q, --quiet       no progress bar (it is shown only when stderr is a terminal)\n"
    "  -h, --help        this help\n"
    "\n" CLI_EXIT_CODES_HELP;

typedef enum src {
    S_JPOS, S_JVEL, S_JACC, S_TAU_DES, S_MPOS, S_MVEL, S_MCUR, S_FT, S_ACC, S_GYRO, S_RPY,
    T_JPOS, T_JVEL, T_JACC, T_REF, T_TAUJ, T_TAUF, T_MTAU, T_MCUR, T_MCUR_CMD, T_MPOS, T_MVEL, T_MACC,
    T_AT_LIMIT, T_CONTACT, T_CONTACT_ACTIVE, T_PUSHES, T_BASE_POS, T_BASE_QUAT, T_BASE_TWIST, T_BASE_ACC, T_COM, T_PAYLOAD,
    T_ENERGY
} src;

/* One logged channel: where its true values come from, its sensor (noise-free unless configured), samples. */
typedef struct rec {
    char *name;
    src source;
    size_t index, n;
    const char *const *elements; /* n names, or NULL: generated into names */
    const char *unit;            /* every element's unit, or NULL: from the sensor kind */
    rb_sensor sensor;
    bool has_sensor;
    bool due;                    /* a sample is due at the current step */
    size_t count;
    double *time, *data, *truth;
} rec;

typedef struct recorder {
    rec *recs;
    size_t n, cap, max_samples;
    const rb_model *m;
    rb_dyn *ws;        /* the plant's kinematics for the centre of mass */
    int payload_body;  /* -1: none */
    const char **contact_names; /* the contacts' frame names (element names of truth/contacts_active) */
    double com[3];     /* of the current sample */
} recorder;

static const char *const WRENCH[] = {"fx", "fy", "fz", "mx", "my", "mz"};
static const char *const XYZ[] = {"x", "y", "z"};
static const char *const QUAT[] = {"qw", "qx", "qy", "qz"};
static const char *const TWIST[] = {"vx", "vy", "vz", "wx", "wy", "wz"};
static const char *const ENERGY[] = {"kinetic", "potential"};
static const char *const RPY[] = {"roll", "pitch", "yaw"};
static const char *const INERTIAL[] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};

static int add_rec(recorder *r, const char *name, src source, size_t index, size_t n, const char *const *elements,
                   const char *unit, const rb_sensor_params *params, uint64_t seed, double log_rate, rb_err *err)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 32;
        rec *grown = rb_realloc(r->recs, cap * sizeof *grown);
        if (!grown)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        r->recs = grown;
        r->cap = cap;
    }
    rec *c = &r->recs[r->n++];
    memset(c, 0, sizeof *c);
    c->source = source;
    c->index = index;
    c->n = n;
    c->elements = elements;
    c->unit = unit;
    c->name = rb_strdup(name);
    c->time = rb_malloc(r->max_samples * sizeof *c->time);
    c->data = rb_malloc(r->max_samples * n * sizeof *c->data);
    c->truth = rb_malloc(n * sizeof *c->truth);
    if (!c->name || !c->time || !c->data || !c->truth)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_sensor_params p = params ? *params : rb_sensor_params_default(name, n);
    if (!params)
        p.rate_hz = log_rate;
    c->has_sensor = true;
    return rb_sensor_init(&c->sensor, &p, seed, 0.0, err);
}

static void recorder_free(recorder *r)
{
    for (size_t i = 0; i < r->n; i++) {
        rec *c = &r->recs[i];
        rb_free(c->name);
        rb_free(c->time);
        rb_free(c->data);
        rb_free(c->truth);
        if (c->has_sensor)
            rb_sensor_free(&c->sensor);
    }
    rb_free(r->recs);
    rb_free(r->contact_names);
    rb_dyn_free(r->ws);
}

static void copy(double *dst, const double *src_, size_t n) { memcpy(dst, src_, n * sizeof *dst); }

/* The true values of a channel at the current sample. */
static void truth_of(const recorder *r, const rec *c, const rb_sim_truth *t, double *v)
{
    size_t n = t->n;
    switch (c->source) {
    case S_JPOS: case T_JPOS: copy(v, t->s, n); break;
    case S_JVEL: case T_JVEL: copy(v, t->s_dot, n); break;
    case S_JACC: case T_JACC: copy(v, t->s_ddot, n); break;
    case S_TAU_DES: copy(v, t->tau_des, n); break;
    case S_MPOS: case T_MPOS: copy(v, t->motor_pos, n); break;
    case S_MVEL: case T_MVEL: copy(v, t->motor_vel, n); break;
    case T_MACC: copy(v, t->motor_acc, n); break;
    case S_MCUR: case T_MCUR: copy(v, t->current, n); break;
    case T_MCUR_CMD: copy(v, t->current_cmd, n); break;
    case T_REF: copy(v, t->ref, n); break;
    case T_TAUJ: copy(v, t->tau_j, n); break;
    case T_TAUF: copy(v, t->tau_f, n); break;
    case T_MTAU: copy(v, t->tau_m, n); break;
    case S_FT: copy(v, t->ft + 6 * c->index, 6); break;
    case S_ACC: copy(v, t->frame_acc + 6 * c->index, 3); break;
    case S_GYRO: copy(v, t->frame_vel + 6 * c->index + 3, 3); break;
    case S_RPY: rb_m3_to_rpy(t->frame_pose[c->index].R, v); break;
    case T_CONTACT: copy(v, t->contact_wrench + 6 * c->index, 6); break;
    case T_CONTACT_ACTIVE:
        for (size_t k = 0; k < c->n; k++)
            v[k] = t->contact_active[k];
        break;
    case T_PAYLOAD: copy(v, t->payload_pi, 10); break;
    case T_AT_LIMIT:
        for (size_t j = 0; j < n; j++)
            v[j] = t->at_limit[j];
        break;
    case T_PUSHES: copy(v, t->push_wrench, c->n); break;
    case T_BASE_POS: copy(v, t->base_pose.p, 3); break;
    case T_BASE_QUAT: rb_quat_from_m3(t->base_pose.R, v); break;
    case T_BASE_TWIST: copy(v, t->base_twist, 6); break;
    case T_BASE_ACC: copy(v, t->base_acc, 6); break;
    case T_COM: copy(v, r->com, 3); break;
    case T_ENERGY: v[0] = t->kinetic; v[1] = t->potential; break;
    }
}

/* Centre of mass of the plant in the world: sum_i (m_i p_i + R_i h_i) / sum_i m_i over the bodies (world pose
 * p_i, R_i; parameters m_i, h_i = m_i c_i), the payload body with its current parameters. */
static int plant_com(recorder *r, const rb_sim_truth *t, rb_err *err)
{
    int rc = rb_dyn_kinematics(r->m, r->ws, t->q, NULL, NULL, err);
    if (rc < 0)
        return rc;
    double mass = 0.0, sum[3] = {0.0, 0.0, 0.0};
    for (size_t b = 0; b < r->m->n_bodies; b++) {
        const double *pi = (int)b == r->payload_body ? t->payload_pi : r->m->bodies[b].inertia;
        const rb_xform *X = rb_dyn_body_pose(r->ws, b);
        double Rh[3];
        rb_m3_mul_v(X->R, pi + 1, Rh);
        for (int i = 0; i < 3; i++)
            sum[i] += pi[0] * X->p[i] + Rh[i];
        mass += pi[0];
    }
    for (int i = 0; i < 3; i++)
        r->com[i] = mass > 0 ? sum[i] / mass : 0.0;
    return RB_OK;
}

/* The truth parts a channel's values need beyond the state (computed only at the samples that log them). */
static unsigned parts_of(src source)
{
    switch (source) {
    case S_FT: return RB_SIM_TRUTH_FT;
    case S_ACC: case S_GYRO: case S_RPY: return RB_SIM_TRUTH_FRAMES;
    case T_ENERGY: return RB_SIM_TRUTH_ENERGY;
    default: return 0;
    }
}

/* One simulation step's samples: only the channels due now read the truth, and the engine computes the
 * sensor-side parts of the truth (frames, FT wrenches, energy) only when a due channel needs them. */
static int sample(recorder *r, rb_sim *sim, rb_err *err)
{
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    unsigned parts = 0;
    bool com = false;
    for (size_t i = 0; i < r->n; i++) {
        rec *c = &r->recs[i];
        c->due = c->count < r->max_samples && rb_sensor_due(&c->sensor, t->t);
        if (c->due) {
            parts |= parts_of(c->source);
            com = com || c->source == T_COM;
        }
    }
    int rc = parts ? rb_sim_truth_compute(sim, parts, err) : RB_OK;
    if (!rc && com)
        rc = plant_com(r, t, err);
    for (size_t i = 0; !rc && i < r->n; i++) {
        rec *c = &r->recs[i];
        if (!c->due)
            continue;
        truth_of(r, c, t, c->truth);
        if (rb_sensor_step(&c->sensor, t->t, c->truth, c->data + c->count * c->n, c->time + c->count))
            c->count++;
    }
    return rc;
}

static const rb_scenario_sensor *configured(const rb_scenario *s, rb_scn_source source)
{
    for (size_t i = 0; i < s->n_sensors; i++)
        if (s->sensors[i].source == source)
            return &s->sensors[i];
    return NULL;
}

/* Every channel, in the order they are written. */
static int build_recorder(const rb_scenario *s, const rb_sim_truth *t, recorder *r, rb_err *err)
{
    const rb_model *m = s->model;
    const char *const *J = (const char *const *)m->dof_names;
    size_t n = m->n_dofs;
    uint64_t seed = s->sim.seed;
    double lr = s->log_rate;
    const rb_scenario_sensor *sj = configured(s, RB_SCN_JOINT_POS), *sm = configured(s, RB_SCN_MOTOR_POS),
                             *sc = configured(s, RB_SCN_MOTOR_CURRENT);
    int rc = add_rec(r, "joints_state/positions", S_JPOS, 0, n, J, "rad", sj ? &sj->params : NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "joints_state/velocities", S_JVEL, 0, n, J, "rad/s", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "joints_state/accelerations", S_JACC, 0, n, J, "rad/s^2", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "joints_state/desired_torques", S_TAU_DES, 0, n, J, "N m", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "motors_state/positions", S_MPOS, 0, n, J, "rad", sm ? &sm->params : NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "motors_state/velocities", S_MVEL, 0, n, J, "rad/s", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "motors_state/currents", S_MCUR, 0, n, J, "A", sc ? &sc->params : NULL, seed, lr, err);
    for (size_t i = 0; !rc && i < s->n_sensors; i++) {
        const rb_scenario_sensor *ss = &s->sensors[i];
        if (ss->source == RB_SCN_FT)
            rc = add_rec(r, ss->channel, S_FT, ss->index, 6, WRENCH, NULL, &ss->params, seed, lr, err);
        else if (ss->source == RB_SCN_ACC)
            rc = add_rec(r, ss->channel, S_ACC, ss->index, 3, XYZ, "m/s^2", &ss->params, seed, lr, err);
        else if (ss->source == RB_SCN_GYRO)
            rc = add_rec(r, ss->channel, S_GYRO, ss->index, 3, XYZ, "rad/s", &ss->params, seed, lr, err);
        else if (ss->source == RB_SCN_ORIENTATION)
            rc = add_rec(r, ss->channel, S_RPY, ss->index, 3, RPY, "rad", &ss->params, seed, lr, err);
    }
    static const struct {
        const char *name;
        src source;
        const char *unit;
    } joint_truth[] = {
        {"truth/joints/positions", T_JPOS, "rad"},       {"truth/joints/velocities", T_JVEL, "rad/s"},
        {"truth/joints/accelerations", T_JACC, "rad/s^2"}, {"truth/joints/references", T_REF, "rad"},
        {"truth/joints/torques", T_TAUJ, "N m"},         {"truth/joints/friction_torques", T_TAUF, "N m"},
        {"truth/motors/torques", T_MTAU, "N m"},         {"truth/motors/currents", T_MCUR, "A"},
        {"truth/motors/current_commands", T_MCUR_CMD, "A"}, {"truth/motors/positions", T_MPOS, "rad"},
        {"truth/motors/velocities", T_MVEL, "rad/s"},    {"truth/motors/accelerations", T_MACC, "rad/s^2"},
    };
    for (size_t i = 0; !rc && i < sizeof joint_truth / sizeof joint_truth[0]; i++)
        rc = add_rec(r, joint_truth[i].name, joint_truth[i].source, 0, n, J, joint_truth[i].unit, NULL, seed, lr,
                     err);
    if (!rc && s->sim.joint_limits)
        rc = add_rec(r, "truth/joints/at_limit", T_AT_LIMIT, 0, n, J, "n.d.", NULL, seed, lr, err);
    for (size_t k = 0; !rc && k < t->n_contacts; k++) {
        char name[300];
        snprintf(name, sizeof name, "truth/contacts/%s", m->frames[s->sim.contacts[k].frame].name);
        rc = add_rec(r, name, T_CONTACT, k, 6, WRENCH, NULL, NULL, seed, lr, err);
    }
    if (!rc && t->n_contacts && !(r->contact_names = rb_malloc(t->n_contacts * sizeof *r->contact_names)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t k = 0; !rc && k < t->n_contacts; k++)
        r->contact_names[k] = m->frames[s->sim.contacts[k].frame].name;
    if (!rc && t->n_contacts)
        rc = add_rec(r, "truth/contacts_active", T_CONTACT_ACTIVE, 0, t->n_contacts, r->contact_names, "n.d.", NULL,
                     seed, lr, err);
    if (!rc && t->n_pushes)
        rc = add_rec(r, "truth/pushes", T_PUSHES, 0, 6 * t->n_pushes, NULL, NULL, NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/base/position", T_BASE_POS, 0, 3, XYZ, "m", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/base/orientation", T_BASE_QUAT, 0, 4, QUAT, "n.d.", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/base/twist", T_BASE_TWIST, 0, 6, TWIST, NULL, NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/base/acceleration", T_BASE_ACC, 0, 6, TWIST, NULL, NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/com", T_COM, 0, 3, XYZ, "m", NULL, seed, lr, err);
    if (!rc && s->sim.payload.kind != RB_PAYLOAD_NONE) {
        char name[300];
        snprintf(name, sizeof name, "truth/payload/%s", m->bodies[s->sim.payload.body].name);
        rc = add_rec(r, name, T_PAYLOAD, 0, 10, INERTIAL, NULL, NULL, seed, lr, err);
    }
    if (!rc)
        rc = add_rec(r, "truth/energy", T_ENERGY, 0, 2, ENERGY, "J", NULL, seed, lr, err);
    return rc;
}

/* Unit of element i when the channel has no single unit. */
static const char *unit_of(const rec *c, size_t i)
{
    switch (c->source) {
    case S_FT: case T_CONTACT: case T_PUSHES: return i % 6 < 3 ? "N" : "N m";
    case T_BASE_TWIST: return i < 3 ? "m/s" : "rad/s";
    case T_BASE_ACC: return i < 3 ? "m/s^2" : "rad/s^2";
    case T_PAYLOAD: return i == 0 ? "kg" : i < 4 ? "kg m" : "kg m^2";
    default: return c->unit ? c->unit : "n.d.";
    }
}

static int to_log(const recorder *r, rb_log *log, rb_err *err)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < r->n; i++) {
        const rec *c = &r->recs[i];
        rb_channel *ch = NULL;
        rc = rb_log_add_channel(log, c->name, c->count, c->n, &ch, err);
        if (rc)
            break;
        memcpy(ch->time, c->time, c->count * sizeof *c->time);
        memcpy(ch->data, c->data, c->count * c->n * sizeof *c->data);
        for (size_t e = 0; !rc && e < c->n; e++) {
            char gen[32];
            if (!c->elements)
                snprintf(gen, sizeof gen, "%zu_%s", e / 6, WRENCH[e % 6]);
            rc = rb_channel_set_name(ch, e, c->elements ? c->elements[e] : gen, err);
            if (!rc)
                rc = rb_channel_set_unit(ch, e, unit_of(c, e), err);
        }
    }
    return rc;
}

static int set_attrs(const rb_scenario *s, rb_log *log, rb_err *err)
{
    const rb_model *m = s->model;
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)s->sim.seed);
    size_t len = 1;
    for (size_t j = 0; j < m->n_dofs; j++)
        len += strlen(m->dof_names[j]) + 1;
    char *list = rb_malloc(len);
    if (!list)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    list[0] = '\0';
    for (size_t j = 0; j < m->n_dofs; j++) {
        if (j)
            strcat(list, ",");
        strcat(list, m->dof_names[j]);
    }
    int rc = rb_log_set_attr(log, "roboest_version", RB_VERSION, err);
    if (!rc)
        rc = rb_log_set_attr(log, "scenario", s->name, err);
    if (!rc)
        rc = rb_log_set_attr(log, "scenario_sha256", s->sha256, err);
    if (!rc)
        rc = rb_log_set_attr(log, "model", rb_path_basename(s->urdf), err);
    if (!rc)
        rc = rb_log_set_attr(log, "seed", seed, err);
    if (!rc)
        rc = rb_log_set_attr(log, "yarp_robot_name", m->name ? m->name : "roboest_sim", err);
    if (!rc)
        rc = rb_log_set_attr(log, "description_list", list, err);
    rb_free(list);
    return rc;
}

static int simulate(const rb_scenario *s, const char *out, const rb_write_opts *wo, bool quiet, rb_err *err)
{
    rb_sim *sim = NULL;
    recorder r = {0};
    rb_log *log = NULL;
    rb_sim_scenario sc = s->sim;
    sc.truth_on_demand = true; /* sample() asks for the sensor-side truth at the samples that log it */
    int rc = rb_sim_init(&sc, &sim, err);
    if (rc)
        return rc;
    size_t steps = rb_sim_n_steps(sim);
    r.max_samples = steps + 1;
    r.m = s->model;
    r.payload_body = s->sim.payload.kind != RB_PAYLOAD_NONE ? s->sim.payload.body : -1;
    rc = rb_dyn_alloc(s->model, &r.ws, err);
    if (!rc)
        rc = build_recorder(s, rb_sim_truth_get(sim), &r, err);
    cli_progress progress;
    cli_progress_init(&progress, "simulate", quiet);
    for (size_t k = 0; !rc; k++) {
        if ((rc = sample(&r, sim, err)))
            break;
        if (k % 256 == 0)
            cli_progress_update(&progress, k, steps);
        int st = rb_sim_step(sim, err);
        if (st == 0)
            break;
        if (st < 0)
            rc = st;
    }
    cli_progress_done(&progress);
    if (!rc)
        rc = rb_log_new(&log, err);
    if (!rc)
        rc = to_log(&r, log, err);
    if (!rc)
        rc = set_attrs(s, log, err);
    if (!rc)
        rc = rb_log_write(log, out, wo, err);
    rb_log_free(log);
    recorder_free(&r);
    rb_sim_finish(sim);
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
        case 'h': fputs(SIMULATE_HELP, stdout); return EXIT_OK;
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
    if (rb_out_format_from_path(out, &wo.format, &err) != RB_OK || (wo.format != RB_OUT_H5 && wo.format != RB_OUT_MAT73))
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
    return rc == RB_OK ? EXIT_OK : cli_fail(&err);
}
