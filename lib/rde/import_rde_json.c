/* roboest import-rde: the checked configuration (import_rde.c) written as a pipeline (roboest/pipeline.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "rde_internal.h"

static cJSON *numbers(const double *x, size_t n)
{
    return n ? cJSON_CreateDoubleArray(x, (int)n) : cJSON_CreateArray();
}

/* The measured IMUs' `field` (names or frames), model.ini order. */
static size_t used_imus(const rde_imus *m, bool frames, const char **out)
{
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->used[i])
            out[k++] = frames ? m->frames[i] : m->names[i];
    return k;
}

/* The measured IMUs' 3-value blocks of `values`, model.ini order. */
static size_t used_values(const rde_imus *m, const double *values, double *out)
{
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->used[i])
            for (size_t e = 0; e < 3; e++)
                out[k++] = values[3 * i + e];
    return k;
}

/* {"channel": ..., "elements": joints} or a channel array "<prefix><name>" for each name (NULL when n = 0); the
 * IMUs' "optional": a log without them still runs (ukf_torque then measures no IMU). */
static void add_signal(rb_cfg_builder *b, cJSON *signals, const char *name, const char *channel, const char *prefix,
                       const char *const *names, size_t n, const rde *r)
{
    bool optional = strcmp(name, "acc") == 0 || strcmp(name, "gyro") == 0;
    if (!channel && n == 0)
        return;
    cJSON *o = rb_cfg_add(b, signals, name, cJSON_CreateObject());
    if (!o)
        return;
    if (channel) {
        rb_cfg_add(b, o, "channel", cJSON_CreateString(channel));
        rb_cfg_add(b, o, "elements", rb_cfg_strings(r->joints, r->n));
        return;
    }
    cJSON *a = rb_cfg_add(b, o, "channel", cJSON_CreateArray());
    for (size_t i = 0; a && i < n; i++) {
        char *c = rb_asprintf("%s%s", prefix, names[i]);
        rb_cfg_add(b, a, NULL, c ? cJSON_CreateString(c) : NULL);
        rb_free(c);
    }
    if (optional)
        rb_cfg_add(b, o, "optional", cJSON_CreateBool(true));
}

/* The measured IMUs of one kind, model.ini order: names, frames, and 3 values each of r, q_bias, p0_bias. */
typedef struct imu_view {
    const char **names, **frames;
    double *r, *q_bias, *p0_bias;
    size_t n;
} imu_view;

static void add_signals(rb_cfg_builder *b, cJSON *root, const rde *r, const imu_view *acc, const imu_view *gyro)
{
    cJSON *s = rb_cfg_add(b, root, "signals", cJSON_CreateObject());
    if (!s)
        return;
    add_signal(b, s, "q", "joints_state/positions", NULL, NULL, 0, r);
    add_signal(b, s, "dq", "joints_state/velocities", NULL, NULL, 0, r);
    if (r->meas_friction) /* the network's motor velocities */
        add_signal(b, s, "wm", "motors_state/velocities", NULL, NULL, 0, r);
    add_signal(b, s, "current", "motors_state/currents", NULL, NULL, 0, r);
    add_signal(b, s, "ft", NULL, "FTs/", r->ft, r->n_ft, r);
    add_signal(b, s, "acc", NULL, "accelerometers/", acc->names, acc->n, r);
    add_signal(b, s, "gyro", NULL, "gyros/", gyro->names, gyro->n, r);
}

static void add_ports(rb_cfg_builder *b, cJSON *stage, const rde *r, const imu_view *acc, const imu_view *gyro)
{
    cJSON *in = rb_cfg_add(b, stage, "in", cJSON_CreateObject());
    const char *inputs[] = {
        "q", "dq", "current", r->n_ft ? "ft" : NULL, acc->n ? "acc" : NULL, gyro->n ? "gyro" : NULL};
    for (size_t i = 0; in && i < 6; i++)
        if (inputs[i])
            rb_cfg_add(b, in, inputs[i], cJSON_CreateString(inputs[i]));
    if (in && r->meas_friction)
        rb_cfg_add(b, in, "friction", cJSON_CreateString("friction/tau_f"));
    static const char *const outputs[] = {"tau_j",    "tau_m", "tau_f",      "dq", "ft",
                                          "contacts", "var",   "innovation", "nis"};
    cJSON *out = rb_cfg_add(b, stage, "out", cJSON_CreateObject());
    for (size_t i = 0; out && i < 9; i++) {
        char name[32];
        snprintf(name, sizeof name, "ukf/%s", outputs[i]);
        rb_cfg_add(b, out, outputs[i], cJSON_CreateString(name));
    }
}

/* One initial variance for every bias used (the stage's p0_bias); false when they differ. */
static bool one_p0_bias(const rde *r, const imu_view *acc, const imu_view *gyro, double *p0)
{
    bool any = false, same = true;
    const double *blocks[3] = {r->ft_use_bias == 1 ? r->p0_ft_bias : NULL, r->acc.use_bias == 1 ? acc->p0_bias : NULL,
                               r->gyro.use_bias == 1 ? gyro->p0_bias : NULL};
    size_t counts[3] = {6 * r->n_ft, 3 * acc->n, 3 * gyro->n};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; blocks[k] && i < counts[k]; i++) {
            same = same && (!any || blocks[k][i] == *p0);
            *p0 = blocks[k][i];
            any = true;
        }
    return same;
}

static void add_bias_params(rb_cfg_builder *b, cJSON *params, const rde *r, const imu_view *acc, const imu_view *gyro,
                            double p0_bias)
{
    rb_cfg_add(b, params, "ft_bias", cJSON_CreateBool(r->ft_use_bias == 1));
    rb_cfg_add(b, params, "acc_bias", cJSON_CreateBool(r->acc.use_bias == 1 && acc->n));
    rb_cfg_add(b, params, "gyro_bias", cJSON_CreateBool(r->gyro.use_bias == 1 && gyro->n));
    if (r->ft_use_bias == 1)
        rb_cfg_add(b, params, "q_ft_bias", numbers(r->q_ft_bias, 6 * r->n_ft));
    if (r->acc.use_bias == 1 && acc->n)
        rb_cfg_add(b, params, "q_acc_bias", numbers(acc->q_bias, 3 * acc->n));
    if (r->gyro.use_bias == 1 && gyro->n)
        rb_cfg_add(b, params, "q_gyro_bias", numbers(gyro->q_bias, 3 * gyro->n));
    if (r->ft_use_bias == 1 || (r->acc.use_bias == 1 && acc->n) || (r->gyro.use_bias == 1 && gyro->n))
        rb_cfg_add(b, params, "p0_bias", numbers(&p0_bias, 1)); /* an array, as every variance parameter */
}

static void add_params(rb_cfg_builder *b, cJSON *stage, const rde *r, const imu_view *acc, const imu_view *gyro,
                       double p0_bias)
{
    cJSON *p = rb_cfg_add(b, stage, "params", cJSON_CreateObject());
    if (!p)
        return;
    rb_cfg_add(b, p, "ft_sensors", rb_cfg_strings(r->ft, r->n_ft));
    rb_cfg_add(b, p, "contacts", rb_cfg_strings(r->contacts, r->n_c));
    rb_cfg_add(b, p, "accelerometers", rb_cfg_strings(acc->frames, acc->n));
    rb_cfg_add(b, p, "gyroscopes", rb_cfg_strings(gyro->frames, gyro->n));
    rb_cfg_add(b, p, "k_t", numbers(r->k_t, r->n));
    rb_cfg_add(b, p, "gear_ratio", numbers(r->gear, r->n));
    rb_cfg_add(b, p, "alpha", cJSON_CreateNumber(r->alpha));
    rb_cfg_add(b, p, "beta", cJSON_CreateNumber(r->beta));
    rb_cfg_add(b, p, "kappa", cJSON_CreateNumber(r->kappa));
    rb_cfg_add(b, p, "dt", cJSON_CreateNumber(r->dt));
    const struct {
        const char *key;
        const double *v;
        size_t n;
    } arrays[] = {
        {"q_dq", r->q_dq, r->n},
        {"q_tau_m", r->q_tau_m, r->n},
        {"q_tau_f", r->q_tau_f, r->n},
        {"q_ft", r->q_ft, 6 * r->n_ft},
        {"q_contact", r->q_contact, 6 * r->n_c},
        {"p0_dq", r->p0_dq, r->n},
        {"p0_tau_m", r->p0_tau_m, r->n},
        {"p0_tau_f", r->p0_tau_f, r->n},
        {"p0_ft", r->p0_ft, 6 * r->n_ft},
        {"p0_contact", r->p0_contact, 6 * r->n_c},
        {"r_dq", r->r_dq, r->n},
        {"r_current", r->r_current, r->n},
        {"r_ft", r->r_ft, 6 * r->n_ft},
        {"r_acc", acc->r, 3 * acc->n},
        {"r_gyro", gyro->r, 3 * gyro->n},
        {"r_friction", r->r_friction, r->meas_friction ? r->n : 0},
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (arrays[i].n) /* an absent sensor kind keeps the stage's default */
            rb_cfg_add(b, p, arrays[i].key, numbers(arrays[i].v, arrays[i].n));
    rb_cfg_add(b, p, "friction_dynamics", cJSON_CreateString(r->friction_rate ? "rate_model" : "random_walk"));
    if (r->friction_rate) {
        rb_cfg_add(b, p, "friction_k0", numbers(r->k0, r->n));
        rb_cfg_add(b, p, "friction_k1", numbers(r->k1, r->n));
        rb_cfg_add(b, p, "friction_k2", numbers(r->k2, r->n));
    }
    rb_cfg_add(b, p, "contact_decay", cJSON_CreateNumber(r->contact_decay));
    add_bias_params(b, p, r, acc, gyro, p0_bias);
    rb_cfg_add(b, p, "ft_offset", cJSON_CreateString("first_sample"));
}

static void add_model(rb_cfg_builder *b, cJSON *root, const rde *r, const char *urdf)
{
    cJSON *m = rb_cfg_add(b, root, "model", cJSON_CreateObject());
    if (!m)
        return;
    rb_cfg_add(b, m, "urdf", cJSON_CreateString(urdf));
    rb_cfg_add(b, m, "joints", rb_cfg_strings(r->joints, r->n));
    rb_cfg_add(b, m, "base", cJSON_CreateString(r->base));
    cJSON *clock = rb_cfg_add(b, root, "clock", cJSON_CreateObject());
    if (clock)
        rb_cfg_add(b, clock, "rate", cJSON_CreateNumber(1.0 / r->dt));
}

static void add_outputs(rb_cfg_builder *b, cJSON *root)
{
    static const char *const recorded[] = {"ukf/tau_j",    "ukf/tau_m", "ukf/tau_f",      "ukf/dq", "ukf/ft",
                                           "ukf/contacts", "ukf/var",   "ukf/innovation", "ukf/nis"};
    cJSON *outputs = rb_cfg_add(b, root, "outputs", cJSON_CreateArray());
    cJSON *o = outputs ? rb_cfg_add(b, outputs, NULL, cJSON_CreateObject()) : NULL;
    if (o) {
        rb_cfg_add(b, o, "path", cJSON_CreateString("ukf_torque.h5"));
        rb_cfg_add(b, o, "signals", rb_cfg_strings(recorded, 9));
    }
}

static int imu_view_of(const rde_imus *m, imu_view *v, rb_err *err)
{
    v->names = rb_calloc(m->n + 1, sizeof *v->names);
    v->frames = rb_calloc(m->n + 1, sizeof *v->frames);
    v->r = rb_calloc(9 * m->n + 1, sizeof *v->r);
    if (!v->names || !v->frames || !v->r)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    v->n = used_imus(m, false, v->names);
    used_imus(m, true, v->frames);
    v->q_bias = v->r + 3 * v->n;
    v->p0_bias = v->q_bias + 3 * v->n;
    used_values(m, m->r, v->r);
    used_values(m, m->q_bias, v->q_bias);
    used_values(m, m->p0_bias, v->p0_bias);
    return RB_OK;
}

static void imu_view_free(imu_view *v)
{
    rb_free(v->names);
    rb_free(v->frames);
    rb_free(v->r);
}

/* The friction network whose output the UKF measures (a "tau_F" measurement): friction_pinn on the logged motor
 * and joint velocities. */
static void add_friction_stage(rb_cfg_builder *b, cJSON *stages, const char *network)
{
    cJSON *st = rb_cfg_add(b, stages, NULL, cJSON_CreateObject());
    cJSON *in = st ? cJSON_CreateObject() : NULL, *out = st ? cJSON_CreateObject() : NULL;
    if (!st)
        return;
    rb_cfg_add(b, st, "id", cJSON_CreateString("friction"));
    rb_cfg_add(b, st, "type", cJSON_CreateString("friction_pinn"));
    if (rb_cfg_add(b, st, "in", in)) {
        rb_cfg_add(b, in, "motor_velocity", cJSON_CreateString("wm"));
        rb_cfg_add(b, in, "joint_velocity", cJSON_CreateString("dq"));
    }
    if (rb_cfg_add(b, st, "out", out))
        rb_cfg_add(b, out, "tau_F", cJSON_CreateString("friction/tau_f"));
    cJSON *p = rb_cfg_add(b, st, "params", cJSON_CreateObject());
    if (p)
        rb_cfg_add(b, p, "network", cJSON_CreateString(network));
}

int rde_pipeline_json(const rde *r, const char *urdf_in_json, const char *network_in_json, char **out, rb_err *err)
{
    *out = NULL;
    imu_view acc = {0}, gyro = {0};
    int rc = imu_view_of(&r->acc, &acc, err);
    if (!rc)
        rc = imu_view_of(&r->gyro, &gyro, err);
    double p0_bias = 0;
    if (!rc && !one_p0_bias(r, &acc, &gyro, &p0_bias))
        rc = rb_err_set(err, RB_ECONFIG,
                        "%s:%zu: the bias states have different initial_covariance values: the ukf_torque stage takes "
                        "one p0_bias",
                        r->state->file, rb_ini_entry_find(r->state, "dynamics_list")->line);
    rb_cfg_builder b = {true};
    cJSON *root = rc ? NULL : cJSON_CreateObject();
    if (root) {
        add_model(&b, root, r, urdf_in_json);
        add_signals(&b, root, r, &acc, &gyro);
        cJSON *stages = rb_cfg_add(&b, root, "stages", cJSON_CreateArray());
        if (stages && r->meas_friction)
            add_friction_stage(&b, stages, network_in_json);
        cJSON *st = stages ? rb_cfg_add(&b, stages, NULL, cJSON_CreateObject()) : NULL;
        if (st) {
            rb_cfg_add(&b, st, "id", cJSON_CreateString("ukf"));
            rb_cfg_add(&b, st, "type", cJSON_CreateString("ukf_torque"));
            add_ports(&b, st, r, &acc, &gyro);
            add_params(&b, st, r, &acc, &gyro, p0_bias);
        }
        add_outputs(&b, root);
    }
    char *text = root && b.ok ? cJSON_Print(root) : NULL;
    if (text)
        *out = rb_asprintf("%s\n", text); /* library allocations go through rb_malloc: copy */
    if (!rc && !*out)
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    cJSON_free(text);
    cJSON_Delete(root);
    imu_view_free(&acc);
    imu_view_free(&gyro);
    return rc;
}
