/* Scenario runs: simulate a loaded scenario, measure every sensor, record every channel (sensors and truth) and
 * build the log `roboest simulate` writes; a hook lets a program act inside the loop (roboest/sim.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"
#include "scenario_internal.h"

typedef enum src {
    S_JPOS,
    S_JVEL,
    S_JACC,
    S_TAU_DES,
    S_MPOS,
    S_MVEL,
    S_MCUR,
    S_FT,
    S_FT_RAW, /* the FT's true wrench; its sensor's gain makes the counts */
    S_ACC,
    S_GYRO,
    S_RPY,
    S_TEMP,
    S_SCALE,
    S_THROTTLE,
    S_RPM_ERR,
    T_JPOS,
    T_JVEL,
    T_JACC,
    T_REF,
    T_TAUJ,
    T_TAUF,
    T_MTAU,
    T_MCUR,
    T_MCUR_CMD,
    T_MPOS,
    T_MVEL,
    T_MACC,
    T_AT_LIMIT,
    T_CONTACT,
    T_CONTACT_ACTIVE,
    T_SLIP_VEL, /* floor friction (roboest/sim_contact.h) */
    T_SLIPPING,
    T_FRIC_RATIO,
    T_PULLING,
    T_PUSHES,
    T_JET_THRUST,
    T_JET_RATE,
    T_FLIGHT_REF,
    T_FLIGHT_TDES,
    T_BASE_POS,
    T_BASE_QUAT,
    T_BASE_TWIST,
    T_BASE_ACC,
    T_COM,
    T_COM_VEL,
    T_COM_ACC,
    T_PAYLOAD,
    T_PAYLOAD_MASS,
    T_PELVIS,
    T_GAIT_PHASE,
    T_GAIT_COM_REF,
    T_GAIT_ZMP_REF,
    T_GAIT_FEET_REF,
    T_GAIT_ZMP,
    T_ENERGY
} src;

/* One logged channel: where its true values come from, its sensor (noise-free unless configured), samples. */
typedef struct rec {
    char *name;
    src source;
    size_t index, n;
    const char **elements; /* n element names (static, the model's, or in `generated`) */
    const char **units;    /* n units (static strings) */
    char *generated;       /* generated element names (truth/pushes: <i>_fx ...), or NULL */
    const double *tdrift;  /* FT: its temperature drift (6, per kelvin), or NULL */
    const double *mm_rate; /* FT: its offset's drift rate under a mismatch (6, per s), or NULL */
    const double *mm_off;  /* motor currents: their offsets under a mismatch (n), or NULL */
    double *dline;         /* the bus delay under a mismatch: `delay` rows of n, the oldest at dpos % delay */
    size_t delay, dpos;
    rb_sensor sensor;
    bool has_sensor;
    bool kept;                   /* written to the log (log_channels), else only its latest row is kept */
    bool due;                    /* a sample is due at the current step */
    size_t count;                /* samples measured so far */
    double *time, *data, *truth; /* every sample (a log is built), else only the latest row */
} rec;

typedef struct recorder {
    rec *recs;
    size_t n, cap, max_samples;
    bool keep_all;              /* keep every sample of the kept channels (the log), else only the latest rows */
    bool measure_all;           /* measure the channels the log does not keep too (a hook reads them) */
    bool names_only;            /* only the channels' names (the scenario loader checks log_channels) */
    const rb_scenario *s;       /* its log_channels choose the kept channels */
    const char **contact_names; /* the contacts' frame names (element names of truth/contacts_active) */
    const char **payload_names; /* the payload bodies' names (element names of truth/payload_mass) */
    const char **jet_names;     /* the jets' frame names (element names of jets/... and truth/jets/...) */
    char *slip_buf;             /* truth/contacts/slip_velocity's element names <frame>_x, <frame>_y */
    const char **slip_names;
    rb_channel_info *channels; /* the hook's view of recs */
    const double **latest;     /* per channel: its newest row, NULL before its first sample */
    bool *fresh;               /* per channel: measured at the current sample */
} recorder;

static const char *const WRENCH[] = {"fx", "fy", "fz", "mx", "my", "mz"};
static const char *const GAUGES[] = {"sg0", "sg1", "sg2", "sg3", "sg4", "sg5"};
static const char *const XYZ[] = {"x", "y", "z"};
static const char *const QUAT[] = {"qw", "qx", "qy", "qz"};
static const char *const TWIST[] = {"vx", "vy", "vz", "wx", "wy", "wz"};
static const char *const ENERGY[] = {"kinetic", "potential"};
static const char *const RPY[] = {"roll", "pitch", "yaw"};
static const char *const PELVIS[] = {"reference", "actual"};
static const char *const PHASE[] = {"phase"};
static const char *const FEET[] = {"l_x", "l_y", "l_z", "r_x", "r_y", "r_z"};
static const char *const INERTIAL[] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};

/* Unit of element i (unit: the channel's single unit, or NULL when it has none). */
static const char *unit_of(src source, const char *unit, size_t i)
{
    switch (source) {
    case S_FT:
    case T_CONTACT:
    case T_PUSHES: return i % 6 < 3 ? "N" : "N m";
    case T_BASE_TWIST: return i < 3 ? "m/s" : "rad/s";
    case T_BASE_ACC: return i < 3 ? "m/s^2" : "rad/s^2";
    case T_PAYLOAD: return i == 0 ? "kg" : i < 4 ? "kg m" : "kg m^2";
    default: return unit ? unit : "n.d.";
    }
}

/* Element names and units of a channel (elements NULL: "<i>_fx" ... per wrench of 6). */
static int describe(rec *c, const char *const *elements, const char *unit, rb_err *err)
{
    enum { GEN = 32 };
    c->elements = rb_malloc(c->n * sizeof *c->elements);
    c->units = rb_malloc(c->n * sizeof *c->units);
    if (!elements)
        c->generated = rb_malloc(c->n * GEN);
    if (!c->elements || !c->units || (!elements && !c->generated))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t e = 0; e < c->n; e++) {
        if (elements) {
            c->elements[e] = elements[e];
        } else {
            snprintf(c->generated + e * GEN, GEN, "%zu_%s", e / 6, WRENCH[e % 6]);
            c->elements[e] = c->generated + e * GEN;
        }
        c->units[e] = unit_of(c->source, unit, e);
    }
    return RB_OK;
}

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
    c->name = rb_strdup(name);
    if (r->names_only)
        return c->name ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
    c->source = source;
    c->index = index;
    c->n = n;
    c->kept = sim_scn_log_keeps(r->s, name);
    size_t rows = r->keep_all && c->kept ? r->max_samples : 1;
    c->time = rb_malloc(rows * sizeof *c->time);
    c->data = rb_malloc(rows * n * sizeof *c->data);
    c->truth = rb_malloc(n * sizeof *c->truth);
    if (!c->name || !c->time || !c->data || !c->truth)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = describe(c, elements, unit, err);
    if (rc)
        return rc;
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
        rb_free(c->elements);
        rb_free(c->units);
        rb_free(c->generated);
        rb_free(c->time);
        rb_free(c->data);
        rb_free(c->truth);
        rb_free(c->dline);
        if (c->has_sensor)
            rb_sensor_free(&c->sensor);
    }
    rb_free(r->recs);
    rb_free(r->contact_names);
    rb_free(r->payload_names);
    rb_free(r->jet_names);
    rb_free(r->slip_buf);
    rb_free(r->slip_names);
    rb_free(r->channels);
    rb_free(r->latest);
    rb_free(r->fresh);
}

static void copy(double *dst, const double *src_, size_t n) { memcpy(dst, src_, n * sizeof *dst); }

/* The true values of a channel at the current sample (s: the scenario, for the temperature and the scales; ct: the
 * floor's friction truth, NULL without a floor). */
static void truth_of(const rb_scenario *s, const rec *c, const rb_sim_truth *t, const rb_sim_contact_truth *ct,
                     double *v)
{
    size_t n = t->n;
    double dT = rb_scn_temperature_at(&s->temperature, t->t) - s->temperature.t0;
    switch (c->source) {
    case S_JPOS:
    case T_JPOS: copy(v, t->s, n); break;
    case S_JVEL:
    case T_JVEL: copy(v, t->s_dot, n); break;
    case S_JACC:
    case T_JACC: copy(v, t->s_ddot, n); break;
    case S_TAU_DES: copy(v, t->tau_des, n); break;
    case S_MPOS:
    case T_MPOS: copy(v, t->motor_pos, n); break;
    case S_MVEL:
    case T_MVEL: copy(v, t->motor_vel, n); break;
    case T_MACC: copy(v, t->motor_acc, n); break;
    case S_MCUR:
        copy(v, t->current, n);
        for (size_t i = 0; c->mm_off && i < n; i++)
            v[i] += c->mm_off[i];
        break;
    case T_MCUR: copy(v, t->current, n); break;
    case T_MCUR_CMD: copy(v, t->current_cmd, n); break;
    case T_REF: copy(v, t->ref, n); break;
    case T_TAUJ: copy(v, t->tau_j, n); break;
    case T_TAUF: copy(v, t->tau_f, n); break;
    case T_MTAU: copy(v, t->tau_m, n); break;
    case S_FT:
    case S_FT_RAW:
        copy(v, t->ft + 6 * c->index, 6);
        for (size_t i = 0; c->tdrift && i < 6; i++)
            v[i] += c->tdrift[i] * dT;
        for (size_t i = 0; c->mm_rate && i < 6; i++)
            v[i] += c->mm_rate[i] * t->t;
        break;
    case S_TEMP: v[0] = s->temperature.t0 + dT; break;
    case S_SCALE: {
        const rb_scn_scale *sc = &s->scales[c->index];
        const double *g = s->model->gravity;
        v[0] = t->contact_wrench[6 * sc->contact + 2] / sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) +
               sc->drift_per_kelvin * dT;
        break;
    }
    case S_THROTTLE: copy(v, t->jet_throttle, c->n); break;
    case S_RPM_ERR:
        for (size_t k = 0; k < c->n; k++)
            v[k] = t->jet_rpm_des[k] - t->jet_rpm[k];
        break;
    case T_JET_THRUST: copy(v, t->jet_thrust, c->n); break;
    case T_JET_RATE: copy(v, t->jet_thrust_rate, c->n); break;
    case T_FLIGHT_REF: copy(v, t->com_ref, 3); break;
    case T_FLIGHT_TDES: copy(v, t->jet_thrust_des, c->n); break;
    case S_ACC: copy(v, t->frame_acc + 6 * c->index, 3); break;
    case S_GYRO: copy(v, t->frame_vel + 6 * c->index + 3, 3); break;
    case S_RPY: rb_m3_to_rpy(t->frame_pose[c->index].R, v); break;
    case T_CONTACT: copy(v, t->contact_wrench + 6 * c->index, 6); break;
    case T_CONTACT_ACTIVE:
        for (size_t k = 0; k < c->n; k++)
            v[k] = t->contact_active[k];
        break;
    case T_SLIP_VEL: copy(v, ct->slip_velocity, c->n); break;
    case T_FRIC_RATIO: copy(v, ct->friction_ratio, c->n); break;
    case T_SLIPPING:
    case T_PULLING:
        for (size_t k = 0; k < c->n; k++)
            v[k] = (c->source == T_SLIPPING ? ct->slipping : ct->pulling)[k];
        break;
    case T_PAYLOAD: copy(v, t->payload_pi + 10 * c->index, 10); break;
    case T_PAYLOAD_MASS:
        for (size_t k = 0; k < c->n; k++)
            v[k] = t->payload_pi[10 * k];
        break;
    case T_PELVIS:
        v[0] = t->pelvis_height_ref;
        v[1] = t->base_pose.p[2];
        break;
    case T_AT_LIMIT:
        for (size_t j = 0; j < n; j++)
            v[j] = t->at_limit[j];
        break;
    case T_PUSHES: copy(v, t->push_wrench, c->n); break;
    case T_BASE_POS: copy(v, t->base_pose.p, 3); break;
    case T_BASE_QUAT: rb_quat_from_m3(t->base_pose.R, v); break;
    case T_BASE_TWIST: copy(v, t->base_twist, 6); break;
    case T_BASE_ACC: copy(v, t->base_acc, 6); break;
    case T_COM: copy(v, t->com, 3); break;
    case T_COM_VEL: copy(v, t->com_vel, 3); break;
    case T_COM_ACC: copy(v, t->com_acc, 3); break;
    case T_GAIT_PHASE: v[0] = (double)t->gait.phase; break;
    case T_GAIT_COM_REF: copy(v, t->com_ref, 3); break;
    case T_GAIT_ZMP_REF: copy(v, t->gait.zmp_ref, 2); break;
    case T_GAIT_FEET_REF: copy(v, t->gait.feet_ref, 6); break;
    case T_GAIT_ZMP: copy(v, t->gait.zmp, 2); break;
    case T_ENERGY:
        v[0] = t->kinetic;
        v[1] = t->potential;
        break;
    }
}

/* The truth parts a channel's values need beyond the state (computed only at the samples that log them). */
static unsigned parts_of(src source)
{
    switch (source) {
    case S_FT:
    case S_FT_RAW: return RB_SIM_TRUTH_FT;
    case S_ACC:
    case S_GYRO:
    case S_RPY: return RB_SIM_TRUTH_FRAMES;
    case T_ENERGY: return RB_SIM_TRUTH_ENERGY;
    case T_COM: return RB_SIM_TRUTH_COM;
    case T_COM_VEL:
    case T_COM_ACC: return RB_SIM_TRUTH_COM_MOTION;
    default: return 0;
    }
}

/* A measurement through the bus delay: y out is the one measured `delay` samples before (the first fills the line). */
static void delay_line(rec *c, double *y)
{
    double *slot = c->dline + c->n * (c->dpos++ % c->delay);
    for (size_t k = 0; c->count == 0 && k < c->delay; k++)
        memcpy(c->dline + c->n * k, y, c->n * sizeof *y);
    for (size_t i = 0; i < c->n; i++) {
        double v = slot[i];
        slot[i] = y[i], y[i] = v;
    }
}

/* The sensor side of a mismatch: the FT offsets' drift, the current sensors' offset, noise and step, the bus delay
 * of the measurements (not of the logged command nor the thrust experiments' channels). */
static int mismatch_sensors(recorder *r, const rb_sim_mismatch_draws *mmd, rb_err *err)
{
    for (size_t i = 0; i < r->n; i++) {
        rec *c = &r->recs[i];
        if (c->source == S_FT)
            c->mm_rate = mmd->ft_rate + 6 * c->index;
        else if (c->source == S_MCUR) {
            c->mm_off = mmd->current_offset;
            for (size_t k = 0; k < c->n; k++) {
                c->sensor.noise_std[k] = hypot(c->sensor.noise_std[k], mmd->current_noise);
                c->sensor.resolution[k] = fmax(c->sensor.resolution[k], mmd->current_resolution);
            }
        }
        bool measured = c->source <= S_RPY && c->source != S_TAU_DES;
        double d = measured ? floor(mmd->measurement_delay * c->sensor.rate_hz + 0.5) : 0.0;
        if (d >= 1) {
            c->delay = (size_t)d;
            if (!(c->dline = rb_calloc(c->delay * c->n, sizeof *c->dline)))
                return rb_err_set(err, RB_ENOMEM, "out of memory");
        }
    }
    return RB_OK;
}

/* One simulation step's samples: only the channels due now read the truth, and the engine computes the
 * sensor-side parts of the truth (frames, FT wrenches, energy, CoM) only when a due channel needs them. */
static int sample(recorder *r, rb_sim *sim, rb_err *err)
{
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    unsigned parts = 0;
    for (size_t i = 0; i < r->n; i++) {
        rec *c = &r->recs[i];
        c->due = (c->kept || r->measure_all) && c->count < r->max_samples && rb_sensor_due(&c->sensor, t->t);
        r->fresh[i] = false;
        if (c->due)
            parts |= parts_of(c->source);
    }
    int rc = parts ? rb_sim_truth_compute(sim, parts, err) : RB_OK;
    for (size_t i = 0; !rc && i < r->n; i++) {
        rec *c = &r->recs[i];
        if (!c->due)
            continue;
        truth_of(r->s, c, t, rb_sim_contact_truth_get(sim), c->truth);
        size_t row = r->keep_all && c->kept ? c->count : 0;
        if (rb_sensor_step(&c->sensor, t->t, c->truth, c->data + row * c->n, c->time + row)) {
            if (c->delay)
                delay_line(c, c->data + row * c->n);
            r->latest[i] = c->data + row * c->n;
            r->fresh[i] = true;
            c->count++;
        }
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

/* The thrust experiments' channels (after the sensors): temperatures/<FT leaf> (the FT sensors drifting with the
 * temperature), scales/<contact frame>, jets/throttles, jets/rotor_speed_error. */
static int add_thrust_channels(const rb_scenario *s, const rb_sim_scenario *sc, recorder *r, rb_err *err)
{
    const rb_model *m = s->model;
    uint64_t seed = sc->seed;
    double lr = s->log_rate;
    static const char *const DEG[] = {"temperature"}, *const KG[] = {"weight"};
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < s->n_sensors; i++) {
        const rb_scenario_sensor *ss = &s->sensors[i];
        if (!ss->temperature_log)
            continue;
        char name[300];
        const char *leaf = strchr(ss->channel, '/');
        snprintf(name, sizeof name, "temperatures/%s", leaf ? leaf + 1 : ss->channel);
        rb_sensor_params p = rb_sensor_params_default(name, 1);
        p.rate_hz = lr;
        p.noise_std.all = s->temperature.noise;
        p.resolution.all = s->temperature.resolution;
        rc = add_rec(r, name, S_TEMP, i, 1, DEG, "degC", &p, seed, lr, err);
    }
    for (size_t k = 0; !rc && k < s->n_scales; k++) {
        const rb_scn_scale *scale = &s->scales[k];
        char name[300];
        snprintf(name, sizeof name, "scales/%s", m->frames[sc->contacts[scale->contact].frame].name);
        rb_sensor_params p = rb_sensor_params_default(name, 1);
        p.rate_hz = scale->rate > 0 ? scale->rate : lr;
        p.noise_std.all = scale->noise;
        p.resolution.all = scale->resolution;
        rc = add_rec(r, name, S_SCALE, k, 1, KG, "kg", &p, seed, lr, err);
    }
    size_t nj = sc->n_jets;
    if (rc || nj == 0)
        return rc;
    if (!(r->jet_names = rb_malloc(nj * sizeof *r->jet_names)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t k = 0; k < nj; k++)
        r->jet_names[k] = m->frames[sc->jets[k].frame].name;
    rc = add_rec(r, "jets/throttles", S_THROTTLE, 0, nj, r->jet_names, "n.d.", NULL, seed, lr, err);
    if (!rc) {
        rb_sensor_params p = rb_sensor_params_default("jets/rotor_speed_error", nj);
        p.rate_hz = lr;
        p.noise_std.each = s->jet_noise && sc->n_jets == s->sim.n_jets ? s->jet_noise : NULL;
        rc = add_rec(r, "jets/rotor_speed_error", S_RPM_ERR, 0, nj, r->jet_names, "rpm", &p, seed, lr, err);
    }
    return rc;
}

/* The joint-level channels a robot logs, then the scenario's sensors. */
static int add_robot_channels(const rb_scenario *s, const rb_sim_scenario *sc, recorder *r, rb_err *err)
{
    const rb_model *m = s->model;
    const char *const *J = (const char *const *)m->dof_names;
    size_t n = m->n_dofs;
    uint64_t seed = sc->seed;
    double lr = s->log_rate;
    const rb_scenario_sensor *sj = configured(s, RB_SCN_JOINT_POS), *sm = configured(s, RB_SCN_MOTOR_POS),
                             *sk = configured(s, RB_SCN_MOTOR_CURRENT);
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
        rc = add_rec(r, "motors_state/currents", S_MCUR, 0, n, J, "A", sk ? &sk->params : NULL, seed, lr, err);
    for (size_t i = 0; !rc && i < s->n_sensors; i++) {
        const rb_scenario_sensor *ss = &s->sensors[i];
        if (ss->source == RB_SCN_FT)
            rc = add_rec(r, ss->channel, S_FT, ss->index, 6, WRENCH, NULL, &ss->params, seed, lr, err);
        else if (ss->source == RB_SCN_FT_RAW)
            rc = add_rec(r, ss->channel, S_FT_RAW, ss->index, 6, GAUGES, "counts", &ss->params, seed, lr, err);
        else if (ss->source == RB_SCN_ACC)
            rc = add_rec(r, ss->channel, S_ACC, ss->index, 3, XYZ, "m/s^2", &ss->params, seed, lr, err);
        else if (ss->source == RB_SCN_GYRO)
            rc = add_rec(r, ss->channel, S_GYRO, ss->index, 3, XYZ, "rad/s", &ss->params, seed, lr, err);
        else if (ss->source == RB_SCN_ORIENTATION)
            rc = add_rec(r, ss->channel, S_RPY, ss->index, 3, RPY, "rad", &ss->params, seed, lr, err);
        if (!rc && ss->temperature_log)
            r->recs[r->n - 1].tdrift = ss->temperature_drift;
    }
    return rc ? rc : add_thrust_channels(s, sc, r, err);
}

/* With a floor: truth/contacts/{slip_velocity,slipping,friction_ratio,pulling} (roboest/sim_contact.h). */
static int add_friction_channels(const rb_scenario *s, const rb_sim_scenario *sc, recorder *r, rb_err *err)
{
    const rb_model *m = s->model;
    size_t nc = sc->n_contacts, len = 0;
    for (size_t k = 0; k < nc; k++)
        len += 2 * (strlen(m->frames[sc->contacts[k].frame].name) + 3);
    if (!(r->slip_buf = rb_malloc(len)) || !(r->slip_names = rb_malloc(2 * nc * sizeof *r->slip_names)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    char *at = r->slip_buf;
    for (size_t e = 0; e < 2 * nc; e++) {
        r->slip_names[e] = at;
        at += sprintf(at, "%s_%s", m->frames[sc->contacts[e / 2].frame].name, XYZ[e % 2]) + 1;
    }
    uint64_t seed = sc->seed;
    double lr = s->log_rate;
    int rc =
        add_rec(r, "truth/contacts/slip_velocity", T_SLIP_VEL, 0, 2 * nc, r->slip_names, "m/s", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/contacts/slipping", T_SLIPPING, 0, nc, r->contact_names, "n.d.", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/contacts/friction_ratio", T_FRIC_RATIO, 0, nc, r->contact_names, "n.d.", NULL, seed, lr,
                     err);
    if (!rc)
        rc = add_rec(r, "truth/contacts/pulling", T_PULLING, 0, nc, r->contact_names, "n.d.", NULL, seed, lr, err);
    return rc;
}

/* The gait's truth: truth/gait/{phase, com_ref, zmp_ref, feet_ref, zmp} (roboest/sim_gait.h). */
static int add_gait_channels(const rb_sim_scenario *sc, recorder *r, rb_err *err)
{
    uint64_t seed = sc->seed;
    double lr = r->s->log_rate;
    int rc = add_rec(r, "truth/gait/phase", T_GAIT_PHASE, 0, 1, PHASE, "n.d.", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/gait/com_ref", T_GAIT_COM_REF, 0, 3, XYZ, "m", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/gait/zmp_ref", T_GAIT_ZMP_REF, 0, 2, XYZ, "m", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/gait/feet_ref", T_GAIT_FEET_REF, 0, 6, FEET, "m", NULL, seed, lr, err);
    if (!rc)
        rc = add_rec(r, "truth/gait/zmp", T_GAIT_ZMP, 0, 2, XYZ, "m", NULL, seed, lr, err);
    return rc;
}

/* The truth channels, noise-free at log_rate. */
static int add_truth_channels(const rb_scenario *s, const rb_sim_scenario *sc, const rb_sim_truth *t, recorder *r,
                              rb_err *err)
{
    const rb_model *m = s->model;
    const char *const *J = (const char *const *)m->dof_names;
    size_t n = m->n_dofs;
    uint64_t seed = sc->seed;
    double lr = s->log_rate;
    static const struct {
        const char *name;
        src source;
        const char *unit;
    } joint_truth[] = {
        {"truth/joints/positions", T_JPOS, "rad"},
        {"truth/joints/velocities", T_JVEL, "rad/s"},
        {"truth/joints/accelerations", T_JACC, "rad/s^2"},
        {"truth/joints/references", T_REF, "rad"},
        {"truth/joints/torques", T_TAUJ, "N m"},
        {"truth/joints/friction_torques", T_TAUF, "N m"},
        {"truth/motors/torques", T_MTAU, "N m"},
        {"truth/motors/currents", T_MCUR, "A"},
        {"truth/motors/current_commands", T_MCUR_CMD, "A"},
        {"truth/motors/positions", T_MPOS, "rad"},
        {"truth/motors/velocities", T_MVEL, "rad/s"},
        {"truth/motors/accelerations", T_MACC, "rad/s^2"},
    };
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < sizeof joint_truth / sizeof joint_truth[0]; i++)
        rc = add_rec(r, joint_truth[i].name, joint_truth[i].source, 0, n, J, joint_truth[i].unit, NULL, seed, lr, err);
    if (!rc && sc->joint_limits)
        rc = add_rec(r, "truth/joints/at_limit", T_AT_LIMIT, 0, n, J, "n.d.", NULL, seed, lr, err);
    for (size_t k = 0; !rc && k < t->n_contacts; k++) {
        char name[300];
        snprintf(name, sizeof name, "truth/contacts/%s", m->frames[sc->contacts[k].frame].name);
        rc = add_rec(r, name, T_CONTACT, k, 6, WRENCH, NULL, NULL, seed, lr, err);
    }
    if (!rc && t->n_contacts && !(r->contact_names = rb_malloc(t->n_contacts * sizeof *r->contact_names)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t k = 0; !rc && k < t->n_contacts; k++)
        r->contact_names[k] = m->frames[sc->contacts[k].frame].name;
    if (!rc && t->n_contacts)
        rc = add_rec(r, "truth/contacts_active", T_CONTACT_ACTIVE, 0, t->n_contacts, r->contact_names, "n.d.", NULL,
                     seed, lr, err);
    if (!rc && t->n_contacts && sc->floor.enabled)
        rc = add_friction_channels(s, sc, r, err);
    if (!rc && t->n_pushes)
        rc = add_rec(r, "truth/pushes", T_PUSHES, 0, 6 * t->n_pushes, NULL, NULL, NULL, seed, lr, err);
    if (!rc && sc->n_jets)
        rc = add_rec(r, "truth/jets/thrusts", T_JET_THRUST, 0, sc->n_jets, r->jet_names, "N", NULL, seed, lr, err);
    if (!rc && sc->n_jets)
        rc = add_rec(r, "truth/jets/thrust_rates", T_JET_RATE, 0, sc->n_jets, r->jet_names, "N/s", NULL, seed, lr, err);
    if (!rc && sc->flight.enabled)
        rc = add_rec(r, "truth/flight/com_ref", T_FLIGHT_REF, 0, 3, XYZ, "m", NULL, seed, lr, err);
    if (!rc && sc->flight.enabled)
        rc = add_rec(r, "truth/flight/desired_thrusts", T_FLIGHT_TDES, 0, sc->n_jets, r->jet_names, "N", NULL, seed, lr,
                     err);
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
    /* each orientation sensor's noise-free reading: what an attitude estimator is scored against */
    for (size_t i = 0; !rc && i < s->n_sensors; i++) {
        const rb_scenario_sensor *ss = &s->sensors[i];
        char name[300];
        if (ss->source != RB_SCN_ORIENTATION)
            continue;
        snprintf(name, sizeof name, "truth/%s", ss->channel);
        rc = add_rec(r, name, S_RPY, ss->index, 3, RPY, "rad", NULL, seed, lr, err);
    }
    if (!rc && sc->gait.enabled)
        rc = add_rec(r, "truth/com_velocity", T_COM_VEL, 0, 3, XYZ, "m/s", NULL, seed, lr, err);
    if (!rc && sc->gait.enabled)
        rc = add_rec(r, "truth/com_acceleration", T_COM_ACC, 0, 3, XYZ, "m/s^2", NULL, seed, lr, err);
    for (size_t k = 0; !rc && k < sc->n_payloads; k++) {
        char name[300];
        snprintf(name, sizeof name, "truth/payload/%s", m->bodies[sc->payloads[k].body].name);
        rc = add_rec(r, name, T_PAYLOAD, k, 10, INERTIAL, NULL, NULL, seed, lr, err);
    }
    if (!rc && sc->n_payloads && !(r->payload_names = rb_malloc(sc->n_payloads * sizeof *r->payload_names)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t k = 0; !rc && k < sc->n_payloads; k++)
        r->payload_names[k] = m->bodies[sc->payloads[k].body].name;
    if (!rc && sc->n_payloads)
        rc = add_rec(r, "truth/payload_mass", T_PAYLOAD_MASS, 0, sc->n_payloads, r->payload_names, "kg", NULL, seed, lr,
                     err);
    if (!rc && sc->balance.enabled && sc->balance.pelvis_height.enabled)
        rc = add_rec(r, "truth/tasks/pelvis_height", T_PELVIS, 0, 2, PELVIS, "m", NULL, seed, lr, err);
    if (!rc && sc->gait.enabled)
        rc = add_gait_channels(sc, r, err);
    if (!rc)
        rc = add_rec(r, "truth/energy", T_ENERGY, 0, 2, ENERGY, "J", NULL, seed, lr, err);
    return rc;
}

/* Every channel, in the order they are written, and the hook's view of them. */
static int build_recorder(const rb_scenario *s, const rb_sim_scenario *sc, const rb_sim_truth *t, recorder *r,
                          rb_err *err)
{
    int rc = add_robot_channels(s, sc, r, err);
    if (!rc)
        rc = add_truth_channels(s, sc, t, r, err);
    if (rc)
        return rc;
    r->channels = rb_calloc(r->n, sizeof *r->channels);
    r->latest = rb_calloc(r->n, sizeof *r->latest);
    r->fresh = rb_calloc(r->n, sizeof *r->fresh);
    if (!r->channels || !r->latest || !r->fresh)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n; i++) {
        const rec *c = &r->recs[i];
        r->channels[i] = (rb_channel_info){c->name, c->n, c->elements, c->units};
    }
    return RB_OK;
}

static int to_log(const recorder *r, rb_log *log, rb_err *err)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < r->n; i++) {
        const rec *c = &r->recs[i];
        if (!c->kept)
            continue;
        rb_channel *ch = NULL;
        rc = rb_log_add_channel(log, c->name, c->count, c->n, &ch, err);
        if (rc)
            break;
        memcpy(ch->time, c->time, c->count * sizeof *c->time);
        memcpy(ch->data, c->data, c->count * c->n * sizeof *c->data);
        for (size_t e = 0; !rc && e < c->n; e++) {
            rc = rb_channel_set_name(ch, e, c->elements[e], err);
            if (!rc)
                rc = rb_channel_set_unit(ch, e, c->units[e], err);
        }
    }
    return rc;
}

static int set_provenance(const rb_scenario *s, const rb_sim_scenario *sc, rb_log *log, rb_err *err)
{
    const rb_model *m = s->model;
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)sc->seed);
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
    rb_provenance pv = {0, NULL, NULL};
    int rc = rb_provenance_init(&pv, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "scenario", s->name, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "scenario_sha256", s->sha256, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "model", rb_path_basename(s->urdf), err);
    if (!rc)
        rc = rb_provenance_add(&pv, "seed", seed, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "yarp_robot_name", m->name ? m->name : "roboest_sim", err);
    if (!rc)
        rc = rb_provenance_add(&pv, "description_list", list, err);
    if (!rc)
        rc = rb_log_set_provenance(log, &pv, err);
    rb_provenance_free(&pv);
    rb_free(list);
    return rc;
}

/* The loop: measure the sample, let the hook act, step. */
static int run_loop(recorder *r, rb_sim *sim, const rb_scenario_hook *hook, rb_err *err)
{
    int rc = RB_OK;
    for (size_t k = 0; !rc; k++) {
        if ((rc = sample(r, sim, err)))
            break;
        if (hook && hook->sample &&
            (rc = hook->sample(hook->user, sim, k, rb_sim_truth_get(sim)->t, r->latest, r->fresh, err)))
            break;
        int st = rb_sim_step(sim, err);
        if (st == 0)
            break;
        if (st < 0)
            rc = st;
    }
    return rc;
}

int rb_scenario_run(const rb_scenario *s, const rb_sim_scenario *simsc, const rb_scenario_hook *hook, rb_log **out,
                    rb_err *err)
{
    if (out)
        *out = NULL;
    if (!s || !s->model)
        return rb_err_set(err, RB_EINVAL, "rb_scenario_run: NULL scenario");
    rb_sim *sim = NULL;
    recorder r = {0};
    rb_log *log = NULL;
    rb_sim_scenario sc = simsc ? *simsc : s->sim;
    sc.truth_on_demand = true; /* sample() asks for the sensor-side truth at the samples that log it */
    int rc = rb_sim_init(&sc, &sim, err);
    if (rc)
        return rc;
    r.max_samples = rb_sim_n_steps(sim) + 1;
    r.keep_all = out != NULL;
    r.measure_all = hook && hook->sample; /* the hook reads every channel, kept or not */
    r.s = s;
    rc = build_recorder(s, &sc, rb_sim_truth_get(sim), &r, err);
    const rb_sim_mismatch_draws *mmd = rb_sim_mismatch_get(sim);
    if (!rc && mmd)
        rc = mismatch_sensors(&r, mmd, err);
    if (!rc && hook && hook->start)
        rc = hook->start(hook->user, r.channels, r.n, err);
    if (!rc)
        rc = run_loop(&r, sim, hook, err);
    if (!rc && out) {
        rc = rb_log_new(&log, err);
        if (!rc)
            rc = to_log(&r, log, err);
        if (!rc)
            rc = set_provenance(s, &sc, log, err);
        if (!rc)
            *out = log, log = NULL;
    }
    rb_log_free(log);
    recorder_free(&r);
    rb_sim_finish(sim);
    return rc;
}

bool sim_scn_entry_matches(const char *entry, const char *channel)
{
    size_t n = strlen(entry);
    return n && entry[n - 1] == '/' ? strncmp(entry, channel, n) == 0 : strcmp(entry, channel) == 0;
}

bool sim_scn_log_keeps(const rb_scenario *s, const char *channel)
{
    if (!s->log_channels)
        return true;
    for (size_t i = 0; i < s->n_log_channels; i++)
        if (sim_scn_entry_matches(s->log_channels[i], channel))
            return true;
    return false;
}

int sim_scn_channel_names(const rb_scenario *s, char ***names, size_t *n, rb_err *err)
{
    *names = NULL;
    *n = 0;
    recorder r = {.names_only = true, .s = s};
    rb_sim_truth t = {0};
    t.n_contacts = s->sim.n_contacts;
    t.n_pushes = s->sim.n_pushes + (s->sim.random_pushes.rate > 0) + (s->sim.random_contacts.rate > 0);
    int rc = add_robot_channels(s, &s->sim, &r, err);
    if (!rc)
        rc = add_truth_channels(s, &s->sim, &t, &r, err);
    if (!rc && !(*names = rb_calloc(r.n ? r.n : 1, sizeof **names)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < r.n; i++) {
        (*names)[i] = r.recs[i].name;
        r.recs[i].name = NULL;
    }
    if (!rc)
        *n = r.n;
    recorder_free(&r);
    return rc;
}
