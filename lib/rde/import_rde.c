/* roboest import-rde: the public UKF joint-torque estimator's .ini configuration read and checked (the
 * mapping: roboest/rde.h, rb_rde_import_dir); import_rde_json.c writes the pipeline. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rde_internal.h"

/* ---- messages ------------------------------------------------------------------------------------- */

/* RB_ECONFIG "<group where>: <what>". */
static int fail_in(rde *r, const rb_ini_group *g, const char *fmt, ...) RB_PRINTF(3, 4);

static int fail_in(rde *r, const rb_ini_group *g, const char *fmt, ...)
{
    char what[RB_ERR_MSG_MAX], where[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    rb_ini_group_where(g, where, sizeof where);
    return rb_err_set(r->err, RB_ECONFIG, "%s: %s", where, what);
}

static long index_of(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; names && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (long)i;
    return -1;
}

static bool listed(const char *const *names, size_t n, const char *name) { return index_of(names, n, name) >= 0; }

/* A list of names: non-empty when required, no name twice. */
static int unique_names(rde *r, const rb_ini_group *g, const char *key, bool non_empty, const char *const **out,
                        size_t *n)
{
    int rc = rb_ini_get_strings(g, key, true, out, n, r->err);
    if (rc)
        return rc;
    const rb_ini_entry *e = rb_ini_entry_find(g, key);
    if (non_empty && *n == 0)
        return rde_fail_at(r, RB_ECONFIG, e, "key '%s': the list is empty", key);
    for (size_t i = 1; i < *n; i++)
        if (index_of(*out, i, (*out)[i]) >= 0)
            return rde_fail_at(r, RB_ECONFIG, e, "key '%s': '%s' is listed twice", key, (*out)[i]);
    return RB_OK;
}

/* Keys of g outside `known` become notes (they do not change the filter). */
static int note_unknown_keys(rde *r, const rb_ini_group *g, const char *const *known, size_t n_known)
{
    for (size_t i = 0; i < g->n_entries; i++) {
        const rb_ini_entry *e = &g->entries[i];
        if (!listed(known, n_known, e->key)) {
            int rc = rde_note(r, "%s:%zu: key '%s' is not used by the import", e->file, e->line, e->key);
            if (rc)
                return rc;
        }
    }
    return RB_OK;
}

/* ---- config.ini [GENERAL], model.ini, ukf.ini ----------------------------------------------------------- */
static int read_general(rde *r, bool urdf_given)
{
    static const char *const known[] = {"robot_name", "dataset", "urdf_path", "sampling_time"};
    r->general = rb_ini_group_find(&r->ini->root, "GENERAL");
    if (!r->general)
        return fail_in(r, &r->ini->root, "missing group [GENERAL]");
    static const char *const groups[] = {"GENERAL", "MODEL", "UKF"};
    const rb_ini_group *root = &r->ini->root;
    int rc = note_unknown_keys(r, r->general, known, 4);
    if (!rc)
        rc = note_unknown_keys(r, root, NULL, 0);
    for (size_t i = 0; !rc && i < root->n_groups; i++)
        if (!listed(groups, 3, root->groups[i].name))
            rc = rde_note(r, "%s:%zu: group [%s] is not used by the import", root->file,
                          root->groups[i].line ? root->groups[i].line : 1, root->groups[i].name);
    if (!rc)
        rc = rb_ini_get_number(r->general, "sampling_time", true, &r->dt, r->err);
    if (!rc && !(r->dt > 0))
        rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(r->general, "sampling_time"), "sampling_time must be > 0 s");
    if (!rc)
        rc = rb_ini_get_string(r->general, "urdf_path", !urdf_given, &r->urdf_path, r->err);
    r->urdf_entry = rb_ini_entry_find(r->general, "urdf_path");
    const rb_ini_entry *dataset = rb_ini_entry_find(r->general, "dataset");
    if (!rc && dataset)
        rc = rde_note(r, "%s:%zu: dataset '%s' is not mapped: give the log to 'roboest run PIPELINE LOG'",
                      dataset->file, dataset->line, dataset->is_list ? "(list)" : dataset->values[0]);
    return rc;
}

/* names and frames of an [ACCELEROMETER] / [GYROSCOPE] group (absent: none). */
static int read_imus(rde *r, const char *group, rde_imus *imus)
{
    imus->use_bias = -1;
    imus->group = rb_ini_group_find(r->model_ini, group);
    if (!imus->group)
        return RB_OK;
    size_t n_frames = 0;
    int rc = unique_names(r, imus->group, "names", false, &imus->names, &imus->n);
    if (!rc)
        rc = rb_ini_get_strings(imus->group, "frames", true, &imus->frames, &n_frames, r->err);
    if (!rc && n_frames != imus->n)
        rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(imus->group, "frames"), "[%s] lists %zu frames for %zu names",
                         group, n_frames, imus->n);
    static const char *const known[] = {"names", "frames"};
    return rc ? rc : note_unknown_keys(r, imus->group, known, 2);
}

static int read_ft_group(rde *r)
{
    r->ft_group = rb_ini_group_find(r->model_ini, "FT");
    if (!r->ft_group)
        return RB_OK;
    static const char *const known[] = {"names", "frames", "associated_joints"};
    int rc = unique_names(r, r->ft_group, "names", false, &r->ft, &r->n_ft);
    for (size_t k = 1; k < 3 && !rc; k++) {
        const char *const *list = NULL;
        size_t n = 0;
        rc = rb_ini_get_strings(r->ft_group, known[k], false, &list, &n, r->err);
        if (!rc && list && n != r->n_ft)
            rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(r->ft_group, known[k]), "[FT] lists %zu %s for %zu names",
                             n, known[k], r->n_ft);
        if (k == 1)
            r->ft_frames = list;
        else
            r->ft_joints = list;
    }
    return rc ? rc : note_unknown_keys(r, r->ft_group, known, 3);
}

static int read_model_ini(rde *r)
{
    static const char *const known[] = {"joint_list", "base_link"};
    static const char *const groups[] = {"FT", "EXTERNAL_CONTACT", "ACCELEROMETER", "GYROSCOPE"};
    r->model_ini = rb_ini_group_find(&r->ini->root, "MODEL");
    if (!r->model_ini)
        return fail_in(r, &r->ini->root, "missing group MODEL (config.ini: [include MODEL \"model.ini\"])");
    int rc = unique_names(r, r->model_ini, "joint_list", true, &r->joints, &r->n);
    if (!rc)
        rc = rb_ini_get_string(r->model_ini, "base_link", true, &r->base, r->err);
    r->joints_entry = rb_ini_entry_find(r->model_ini, "joint_list");
    r->base_entry = rb_ini_entry_find(r->model_ini, "base_link");
    if (!rc)
        rc = note_unknown_keys(r, r->model_ini, known, 2);
    if (!rc)
        rc = read_ft_group(r);
    r->contact_group = rb_ini_group_find(r->model_ini, "EXTERNAL_CONTACT");
    if (!rc && r->contact_group)
        rc = unique_names(r, r->contact_group, "frames", false, &r->contacts, &r->n_c);
    if (!rc)
        rc = read_imus(r, "ACCELEROMETER", &r->acc);
    if (!rc)
        rc = read_imus(r, "GYROSCOPE", &r->gyro);
    for (size_t i = 0; !rc && i < r->model_ini->n_groups; i++) {
        const rb_ini_group *g = &r->model_ini->groups[i];
        if (!listed(groups, 4, g->name))
            rc = rde_note(r, "%s:%zu: group [%s] is not used by the import", g->file, g->line ? g->line : 1, g->name);
    }
    return rc;
}

/* One block of doubles and one of flags for every array of the struct. */
static int alloc_arrays(rde *r)
{
    size_t n = r->n, nf = r->n_ft, nc = r->n_c, na = r->acc.n, ng = r->gyro.n;
    size_t n_doubles = 14 * n + 30 * nf + 12 * nc + 9 * na + 9 * ng, n_flags = 3 * nf + nc + 2 * na + 2 * ng;
    r->arena = rb_calloc(n_doubles + 1, sizeof *r->arena);
    r->flags = rb_calloc(n_flags + 1, sizeof *r->flags);
    if (!r->arena || !r->flags)
        return rb_err_set(r->err, RB_ENOMEM, "out of memory");
    double *d = r->arena;
    double **per_joint[] = {&r->q_dq, &r->p0_dq, &r->q_tau_m, &r->p0_tau_m,  &r->q_tau_f, &r->p0_tau_f, &r->k0,
                            &r->k1,   &r->k2,    &r->r_dq,    &r->r_current, &r->gear,    &r->k_t,      &r->r_friction};
    for (size_t i = 0; i < 14; i++, d += n)
        *per_joint[i] = d;
    double **per_ft[] = {&r->q_ft, &r->p0_ft, &r->q_ft_bias, &r->p0_ft_bias, &r->r_ft};
    for (size_t i = 0; i < 5; i++, d += 6 * nf)
        *per_ft[i] = d;
    r->q_contact = d, d += 6 * nc;
    r->p0_contact = d, d += 6 * nc;
    rde_imus *imus[] = {&r->acc, &r->gyro};
    bool *f = r->flags;
    r->ft_state_seen = f, f += nf;
    r->ft_bias_seen = f, f += nf;
    r->ft_meas_seen = f, f += nf;
    r->contact_seen = f, f += nc;
    for (size_t k = 0; k < 2; k++) {
        rde_imus *m = imus[k];
        m->r = d, d += 3 * m->n;
        m->q_bias = d, d += 3 * m->n;
        m->p0_bias = d, d += 3 * m->n;
        m->used = f, f += m->n;
        m->bias_seen = f, f += m->n;
    }
    r->ft_use_bias = -1;
    return RB_OK;
}

static int read_ukf_ini(rde *r)
{
    static const char *const known[] = {"alpha", "beta", "kappa"};
    r->ukf = rb_ini_group_find(&r->ini->root, "UKF");
    if (!r->ukf)
        return fail_in(r, &r->ini->root, "missing group UKF (config.ini: [include UKF \"ukf.ini\"])");
    int rc = rb_ini_get_number(r->ukf, "alpha", true, &r->alpha, r->err);
    if (!rc)
        rc = rb_ini_get_number(r->ukf, "beta", true, &r->beta, r->err);
    if (!rc)
        rc = rb_ini_get_number(r->ukf, "kappa", true, &r->kappa, r->err);
    if (!rc)
        rc = note_unknown_keys(r, r->ukf, known, 3);
    r->state = rb_ini_group_find(r->ukf, "UKF_STATE");
    r->meas = rb_ini_group_find(r->ukf, "UKF_MEASUREMENT");
    if (!rc && !r->state)
        rc = fail_in(r, r->ukf, "missing group UKF_STATE (ukf.ini: [include UKF_STATE \"ukf/ukf_state.ini\"])");
    if (!rc && !r->meas)
        rc = fail_in(r, r->ukf,
                     "missing group UKF_MEASUREMENT (ukf.ini: [include UKF_MEASUREMENT \"ukf/ukf_measurement.ini\"])");
    return rc;
}

/* ---- blocks ---------------------------------------------------------------------------------------------- */
typedef struct block {
    const rb_ini_group *g;
    const char *id;    /* the group's name */
    const char *name;  /* its `name` */
    const char *model; /* its `dynamic_model` */
    const rb_ini_entry *model_entry;
} block;

/* The [id] group named by a dynamics_list entry, with its name and dynamic_model. */
static int open_block(rde *r, const rb_ini_group *parent, const rb_ini_entry *list, const char *id, block *b)
{
    b->g = rb_ini_group_find(parent, id);
    b->id = id;
    if (!b->g)
        return rde_fail_at(r, RB_ECONFIG, list, "dynamics_list names '%s' but there is no [%s] group", id, id);
    const rb_ini_entry *newer = rb_ini_entry_find(b->g, "variable_name");
    if (newer)
        return rde_fail_at(
            r, RB_ECONFIG, newer,
            "[%s]: 'variable_name' is the newer bipedal-locomotion-framework format, which is not imported "
            "(blocks with 'name', as in paper_sorrentino_2024_icra, are)",
            id);
    int rc = rb_ini_get_string(b->g, "name", true, &b->name, r->err);
    if (!rc)
        rc = rb_ini_get_string(b->g, "dynamic_model", true, &b->model, r->err);
    b->model_entry = rb_ini_entry_find(b->g, "dynamic_model");
    return rc;
}

/* Every key of the block is among `allowed`. */
static int check_keys(rde *r, const block *b, const char *const *allowed, size_t n)
{
    for (size_t i = 0; i < b->g->n_entries; i++) {
        const rb_ini_entry *e = &b->g->entries[i];
        if (listed(allowed, n, e->key))
            continue;
        rb_suggest s;
        rb_suggest_init(&s, e->key);
        for (size_t k = 0; k < n; k++)
            rb_suggest_consider(&s, allowed[k]);
        const char *best = rb_suggest_best(&s);
        return rde_fail_at(r, RB_ECONFIG, e, "[%s]: unknown key '%s' for dynamic_model %s%s%s%s", b->id, e->key,
                           b->model, best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
    }
    return RB_OK;
}

/* `count` variances (>= 0) of key into dst. */
static int variances(rde *r, const block *b, const char *key, double *dst, size_t count)
{
    int rc = rb_ini_get_numbers(b->g, key, true, dst, count, r->err);
    for (size_t i = 0; !rc && i < count; i++)
        if (dst[i] < 0)
            rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, key),
                             "[%s]: key '%s': element %zu is a negative variance", b->id, key, i + 1);
    return rc;
}

/* The optional `elements`: `count` of them, equal to `expected` when given. */
static int check_elements(rde *r, const block *b, const char *const *expected, size_t count)
{
    const char *const *el;
    size_t n = 0;
    int rc = rb_ini_get_strings(b->g, "elements", false, &el, &n, r->err);
    const rb_ini_entry *e = rb_ini_entry_find(b->g, "elements");
    if (rc || !e)
        return rc;
    if (n != count)
        return rde_fail_at(r, RB_ECONFIG, e, "[%s]: %zu elements for a block of %zu", b->id, n, count);
    for (size_t i = 0; expected && i < n; i++)
        if (strcmp(el[i], expected[i]) != 0)
            return rde_fail_at(r, RB_ECONFIG, e, "[%s]: element %zu is '%s' where MODEL joint_list has '%s'", b->id,
                               i + 1, el[i], expected[i]);
    return RB_OK;
}

/* The block's state or measurement `what` was already given by another block. */
static int twice(rde *r, const block *b, const char *what, const char *first)
{
    return rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "name"), "[%s]: %s '%s' is given twice (also by [%s])",
                       b->id, what, b->name, first ? first : "an earlier block");
}

static int wrong_model(rde *r, const block *b, const char *kind, const char *needed)
{
    return rde_fail_at(r, RB_ECONFIG, b->model_entry, "[%s]: the %s '%s' needs dynamic_model %s, not '%s'", b->id, kind,
                       b->name, needed, b->model);
}

/* ---- state blocks ---------------------------------------------------------------------------------------- */
typedef enum state_model {
    SM_JOINT_VELOCITY,
    SM_ZERO_VELOCITY,
    SM_FRICTION,
    SM_EXTERNAL_CONTACT,
    SM_UNKNOWN
} state_model;

static state_model state_model_of(const char *m)
{
    if (strcmp(m, "JointVelocityStateDynamics") == 0)
        return SM_JOINT_VELOCITY;
    if (strcmp(m, "ZeroVelocityStateDynamics") == 0 || strcmp(m, "ZeroVelocityDynamics") == 0)
        return SM_ZERO_VELOCITY;
    if (strcmp(m, "FrictionTorqueStateDynamics") == 0)
        return SM_FRICTION;
    if (strcmp(m, "ExternalContactStateDynamics") == 0)
        return SM_EXTERNAL_CONTACT;
    return SM_UNKNOWN;
}

/* The keys of a state block: the first 5 for every model, then friction_k0..2 (FrictionTorqueStateDynamics). */
static const char *const STATE_KEYS[] = {"name",          "elements",    "covariance",  "initial_covariance",
                                         "dynamic_model", "friction_k0", "friction_k1", "friction_k2"};
static const char *const CONTACT_KEYS[] = {"name",          "elements", "covariance", "initial_covariance",
                                           "dynamic_model", "k"};

/* covariance -> q, initial_covariance -> p0 (count values each); elements checked. */
static int state_values(rde *r, const block *b, const char *const *keys, size_t n_keys, const char *const *joints,
                        double *q, double *p0, size_t count)
{
    int rc = check_keys(r, b, keys, n_keys);
    if (!rc)
        rc = variances(r, b, "covariance", q, count);
    if (!rc)
        rc = variances(r, b, "initial_covariance", p0, count);
    return rc ? rc : check_elements(r, b, joints, count);
}

static int per_joint_state(rde *r, const block *b, const char **seen, state_model needed, state_model m, double *q,
                           double *p0)
{
    static const char *const names[] = {"JointVelocityStateDynamics", "ZeroVelocityStateDynamics"};
    if (*seen)
        return twice(r, b, "state", *seen);
    if (m != needed)
        return wrong_model(r, b, "state", names[needed]);
    *seen = b->id;
    return state_values(r, b, STATE_KEYS, 5, r->joints, q, p0, r->n);
}

static int friction_state(rde *r, const block *b, state_model m)
{
    if (r->state_tau_f)
        return twice(r, b, "state", r->state_tau_f);
    if (m != SM_FRICTION && m != SM_ZERO_VELOCITY)
        return wrong_model(r, b, "state", "FrictionTorqueStateDynamics or ZeroVelocityStateDynamics");
    r->state_tau_f = b->id;
    r->friction_rate = m == SM_FRICTION;
    int rc = state_values(r, b, STATE_KEYS, m == SM_FRICTION ? 8 : 5, r->joints, r->q_tau_f, r->p0_tau_f, r->n);
    double *k[] = {r->k0, r->k1, r->k2};
    for (size_t i = 0; !rc && r->friction_rate && i < 3; i++)
        rc = rb_ini_get_numbers(b->g, STATE_KEYS[5 + i], true, k[i], r->n, r->err);
    return rc;
}

static int contact_state(rde *r, const block *b, state_model m, size_t i)
{
    if (r->contact_seen[i])
        return twice(r, b, "contact state", NULL);
    if (m != SM_ZERO_VELOCITY && m != SM_EXTERNAL_CONTACT)
        return wrong_model(r, b, "contact state", "ZeroVelocityStateDynamics or ExternalContactStateDynamics");
    r->contact_seen[i] = true;
    double k = 0;
    bool with_k = m == SM_EXTERNAL_CONTACT;
    int rc = state_values(r, b, CONTACT_KEYS, with_k ? 6 : 5, NULL, r->q_contact + 6 * i, r->p0_contact + 6 * i, 6);
    if (!rc && with_k)
        rc = rb_ini_get_number(b->g, "k", true, &k, r->err);
    if (!rc && !(k >= 0))
        rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "k"), "[%s]: k must be >= 0 (1/s)", b->id);
    if (!rc && r->decay_block && k != r->contact_decay)
        rc = rde_fail_at(
            r, RB_ECONFIG, b->model_entry,
            "[%s]: contact decay k = %g differs from [%s]'s %g: the ukf_torque stage takes one contact_decay", b->id, k,
            r->decay_block, r->contact_decay);
    r->contact_decay = k;
    r->decay_block = b->id;
    return rc;
}

/* <sensor>_bias: an FT, accelerometer or gyroscope of model.ini. false when `name` is none. */
static bool bias_target(rde *r, const char *name, double **q, double **p0, bool **seen, size_t *width)
{
    size_t len = strlen(name), suffix = strlen("_bias");
    if (len <= suffix || strcmp(name + len - suffix, "_bias") != 0)
        return false;
    char sensor[256];
    snprintf(sensor, sizeof sensor, "%.*s", (int)(len - suffix), name);
    long i = index_of(r->ft, r->n_ft, sensor);
    if (i >= 0) {
        *q = r->q_ft_bias + 6 * i, *p0 = r->p0_ft_bias + 6 * i, *seen = &r->ft_bias_seen[i], *width = 6;
        return true;
    }
    rde_imus *imus[] = {&r->acc, &r->gyro};
    for (size_t k = 0; k < 2; k++) {
        i = index_of(imus[k]->names, imus[k]->n, sensor);
        if (i >= 0) {
            *q = imus[k]->q_bias + 3 * i, *p0 = imus[k]->p0_bias + 3 * i, *seen = &imus[k]->bias_seen[i], *width = 3;
            return true;
        }
    }
    return false;
}

static int unknown_state(rde *r, const block *b)
{
    return rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "name"),
                       "[%s]: name '%s' is not a state of the public estimator: not ds, tau_m, tau_F, an FT sensor of "
                       "model.ini [FT] names, a frame of [EXTERNAL_CONTACT] frames, nor <sensor>_bias of one of them",
                       b->id, b->name);
}

static int state_block(rde *r, const block *b)
{
    state_model m = state_model_of(b->model);
    if (m == SM_UNKNOWN)
        return rde_fail_at(r, RB_ECONFIG, b->model_entry,
                           "[%s]: unknown dynamic_model '%s' (state models: JointVelocityStateDynamics, "
                           "ZeroVelocityStateDynamics, FrictionTorqueStateDynamics, ExternalContactStateDynamics)",
                           b->id, b->model);
    if (strcmp(b->name, "ds") == 0)
        return per_joint_state(r, b, &r->state_ds, SM_JOINT_VELOCITY, m, r->q_dq, r->p0_dq);
    if (strcmp(b->name, "tau_m") == 0)
        return per_joint_state(r, b, &r->state_tau_m, SM_ZERO_VELOCITY, m, r->q_tau_m, r->p0_tau_m);
    if (strcmp(b->name, "tau_F") == 0)
        return friction_state(r, b, m);
    long i = index_of(r->ft, r->n_ft, b->name);
    if (i >= 0) {
        if (r->ft_state_seen[i])
            return twice(r, b, "FT state", NULL);
        if (m != SM_ZERO_VELOCITY)
            return wrong_model(r, b, "FT state", "ZeroVelocityStateDynamics");
        r->ft_state_seen[i] = true;
        return state_values(r, b, STATE_KEYS, 5, NULL, r->q_ft + 6 * i, r->p0_ft + 6 * i, 6);
    }
    i = index_of(r->contacts, r->n_c, b->name);
    if (i >= 0)
        return contact_state(r, b, m, (size_t)i);
    double *q, *p0;
    bool *seen;
    size_t width;
    if (!bias_target(r, b->name, &q, &p0, &seen, &width))
        return unknown_state(r, b);
    if (*seen)
        return twice(r, b, "bias state", NULL);
    if (m != SM_ZERO_VELOCITY)
        return wrong_model(r, b, "bias state", "ZeroVelocityStateDynamics");
    *seen = true;
    return state_values(r, b, STATE_KEYS, 5, NULL, q, p0, width);
}

/* ---- measurement blocks ------------------------------------------------------------------------------------ */
static const char *const MEAS_KEYS[] = {"name",     "elements",   "covariance",     "dynamic_model",
                                        "use_bias", "gear_ratio", "torque_constant"};

/* Keys, covariance -> r (count), elements; the use_bias value into *use_bias (absent: false). */
static int meas_values(rde *r, const block *b, size_t n_keys, const char *const *joints, double *rv, size_t count,
                       bool *use_bias)
{
    *use_bias = false;
    int rc = check_keys(r, b, MEAS_KEYS, n_keys);
    if (!rc)
        rc = variances(r, b, "covariance", rv, count);
    if (!rc)
        rc = rb_ini_get_bool(b->g, "use_bias", false, use_bias, r->err);
    return rc ? rc : check_elements(r, b, joints, count);
}

/* Every sensor of a kind shares one use_bias (the stage's ft_bias / acc_bias / gyro_bias). */
static int agree_use_bias(rde *r, const block *b, bool use_bias, int *current, const char **first)
{
    if (*current >= 0 && *current != (int)use_bias)
        return rde_fail_at(
            r, RB_ECONFIG, rb_ini_entry_find(b->g, "name"),
            "[%s]: use_bias %d differs from [%s]'s %d: the ukf_torque stage estimates the biases of every "
            "sensor of a kind or of none",
            b->id, (int)use_bias, *first, *current);
    *current = use_bias;
    *first = b->id;
    return RB_OK;
}

static int joint_measurement(rde *r, const block *b, bool current)
{
    const char **seen = current ? &r->meas_current : &r->meas_ds;
    const char *needed = current ? "MotorCurrentMeasurementDynamics" : "ConstantMeasurementModel";
    if (*seen)
        return twice(r, b, "measurement", *seen);
    if (strcmp(b->model, needed) != 0)
        return wrong_model(r, b, "measurement", needed);
    *seen = b->id;
    bool use_bias;
    int rc = meas_values(r, b, current ? 7 : 5, r->joints, current ? r->r_current : r->r_dq, r->n, &use_bias);
    if (!rc && use_bias)
        rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "use_bias"), "[%s]: no bias is estimated for '%s'",
                         b->id, b->name);
    if (!rc && current)
        rc = rb_ini_get_numbers(b->g, "gear_ratio", true, r->gear, r->n, r->err);
    if (!rc && current)
        rc = rb_ini_get_numbers(b->g, "torque_constant", true, r->k_t, r->n, r->err);
    for (size_t j = 0; !rc && current && j < r->n; j++) {
        if (r->gear[j] == 0)
            rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "gear_ratio"), "[%s]: gear_ratio of %s is 0", b->id,
                             r->joints[j]);
        else if (!(r->k_t[j] > 0))
            rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "torque_constant"),
                             "[%s]: torque_constant of %s must be > 0 (N m/A; the sign is the gear ratio's)", b->id,
                             r->joints[j]);
    }
    return rc;
}

/* The friction network's output measured (the newer design): a friction_pinn stage on the given network feeds
 * ukf_torque's friction input, with this block's covariance as r_friction. */
static int friction_measurement(rde *r, const block *b)
{
    if (!r->friction_network)
        return rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "name"),
                           "[%s]: a friction torque measurement reads a friction network: give it with "
                           "--friction-network FILE (a network of 'roboest train-friction')",
                           b->id);
    if (r->meas_friction)
        return twice(r, b, "measurement", r->meas_friction);
    r->meas_friction = b->id;
    bool use_bias;
    int rc = meas_values(r, b, 5, r->joints, r->r_friction, r->n, &use_bias);
    if (!rc && use_bias)
        rc = rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "use_bias"), "[%s]: no bias is estimated for '%s'",
                         b->id, b->name);
    return rc;
}

static int imu_measurement(rde *r, const block *b, rde_imus *imus, size_t i, const char *needed)
{
    if (imus->used[i])
        return twice(r, b, "measurement", NULL);
    if (strcmp(b->model, needed) != 0)
        return wrong_model(r, b, "measurement", needed);
    imus->used[i] = true;
    bool use_bias;
    int rc = meas_values(r, b, 5, NULL, imus->r + 3 * i, 3, &use_bias);
    return rc ? rc : agree_use_bias(r, b, use_bias, &imus->use_bias, &imus->bias_block);
}

static int measurement_block(rde *r, const block *b)
{
    static const char *const models[] = {"ConstantMeasurementModel", "MotorCurrentMeasurementDynamics",
                                         "AccelerometerMeasurementDynamics", "GyroscopeMeasurementDynamics"};
    if (!listed(models, 4, b->model))
        return rde_fail_at(
            r, RB_ECONFIG, b->model_entry,
            "[%s]: unknown dynamic_model '%s' (measurement models: ConstantMeasurementModel, "
            "MotorCurrentMeasurementDynamics, AccelerometerMeasurementDynamics, GyroscopeMeasurementDynamics)",
            b->id, b->model);
    if (strcmp(b->name, "ds") == 0 || strcmp(b->name, "i_m") == 0)
        return joint_measurement(r, b, strcmp(b->name, "i_m") == 0);
    if (strcmp(b->name, "tau_F") == 0)
        return friction_measurement(r, b);
    long i = index_of(r->ft, r->n_ft, b->name);
    if (i >= 0) {
        if (r->ft_meas_seen[i])
            return twice(r, b, "FT measurement", NULL);
        if (strcmp(b->model, "ConstantMeasurementModel") != 0)
            return wrong_model(r, b, "FT measurement", "ConstantMeasurementModel");
        r->ft_meas_seen[i] = true;
        bool use_bias;
        int rc = meas_values(r, b, 5, NULL, r->r_ft + 6 * i, 6, &use_bias);
        return rc ? rc : agree_use_bias(r, b, use_bias, &r->ft_use_bias, &r->ft_bias_block);
    }
    if ((i = index_of(r->acc.names, r->acc.n, b->name)) >= 0)
        return imu_measurement(r, b, &r->acc, (size_t)i, "AccelerometerMeasurementDynamics");
    if ((i = index_of(r->gyro.names, r->gyro.n, b->name)) >= 0)
        return imu_measurement(r, b, &r->gyro, (size_t)i, "GyroscopeMeasurementDynamics");
    return rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(b->g, "name"),
                       "[%s]: name '%s' is not a measurement of the public estimator: not ds, i_m, an FT sensor of "
                       "model.ini [FT] names, nor a name of [ACCELEROMETER] / [GYROSCOPE] names",
                       b->id, b->name);
}

/* Every block of group g's dynamics_list through `one`; groups left out of the list become notes. */
static int read_blocks(rde *r, const rb_ini_group *g, int (*one)(rde *, const block *))
{
    const char *const *list;
    size_t n = 0;
    int rc = rb_ini_get_strings(g, "dynamics_list", true, &list, &n, r->err);
    const rb_ini_entry *e = rb_ini_entry_find(g, "dynamics_list");
    for (size_t i = 0; !rc && i < n; i++) {
        block b;
        if (index_of(list, i, list[i]) >= 0)
            return rde_fail_at(r, RB_ECONFIG, e, "dynamics_list names '%s' twice", list[i]);
        rc = open_block(r, g, e, list[i], &b);
        if (!rc)
            rc = one(r, &b);
    }
    for (size_t i = 0; !rc && i < g->n_groups; i++)
        if (!listed(list, n, g->groups[i].name))
            rc = rde_note(r, "%s:%zu: [%s] is not in dynamics_list: ignored, as by the public estimator",
                          g->groups[i].file, g->groups[i].line, g->groups[i].name);
    static const char *const known[] = {"dynamics_list"};
    return rc ? rc : note_unknown_keys(r, g, known, 1);
}

/* ---- completeness ------------------------------------------------------------------------------------------- */
static int need(rde *r, const rb_ini_group *g, bool present, const char *what)
{
    if (present)
        return RB_OK;
    return rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(g, "dynamics_list"), "dynamics_list has no block for %s", what);
}

/* Bias states of a kind: required for every measured sensor when its measurements use a bias, else notes. */
static int check_biases(rde *r, const char *kind, const char *const *names, size_t n, const bool *measured,
                        const bool *seen, int use_bias, const char *bias_block)
{
    char what[512];
    for (size_t i = 0; i < n; i++) {
        int rc = RB_OK;
        if (use_bias == 1 && measured[i] && !seen[i]) {
            snprintf(what, sizeof what, "'%s_bias' (the %s measurements use a bias: use_bias 1 in [%s])", names[i],
                     kind, bias_block);
            rc = need(r, r->state, false, what);
        } else if (seen[i] && (use_bias != 1 || !measured[i])) {
            rc = rde_note(r, "state %s_bias is not used: %s", names[i],
                          measured[i] ? "its measurements have use_bias 0" : "the sensor is not measured");
        }
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int check_complete(rde *r)
{
    int rc = need(r, r->state, r->state_ds, "the joint velocity state (name \"ds\")");
    if (!rc)
        rc = need(r, r->state, r->state_tau_m, "the motor torque state (name \"tau_m\")");
    if (!rc)
        rc = need(r, r->state, r->state_tau_f, "the friction torque state (name \"tau_F\")");
    if (!rc)
        rc = need(r, r->meas, r->meas_ds, "the joint velocity measurement (name \"ds\")");
    if (!rc)
        rc = need(r, r->meas, r->meas_current, "the motor current measurement (name \"i_m\")");
    if (!rc && r->friction_network && !r->meas_friction)
        rc = rb_err_set(r->err, RB_ECONFIG,
                        "%s: --friction-network %s: no friction torque measurement (name \"tau_F\") reads it",
                        r->meas->file, r->friction_network);
    char what[300];
    for (size_t i = 0; !rc && i < r->n_ft; i++) {
        snprintf(what, sizeof what, "the FT sensor '%s' of model.ini [FT] names", r->ft[i]);
        rc = need(r, r->state, r->ft_state_seen[i], what);
        if (!rc)
            rc = need(r, r->meas, r->ft_meas_seen[i], what);
    }
    for (size_t i = 0; !rc && i < r->n_c; i++) {
        snprintf(what, sizeof what, "the contact '%s' of model.ini [EXTERNAL_CONTACT] frames", r->contacts[i]);
        rc = need(r, r->state, r->contact_seen[i], what);
    }
    if (!rc) /* every FT is measured by now */
        rc = check_biases(r, "FT", r->ft, r->n_ft, r->ft_meas_seen, r->ft_bias_seen, r->ft_use_bias, r->ft_bias_block);
    rde_imus *imus[] = {&r->acc, &r->gyro};
    const char *kinds[] = {"accelerometer", "gyroscope"}, *groups[] = {"ACCELEROMETER", "GYROSCOPE"};
    for (size_t k = 0; !rc && k < 2; k++) {
        rde_imus *m = imus[k];
        rc = check_biases(r, kinds[k], m->names, m->n, m->used, m->bias_seen, m->use_bias, m->bias_block);
        const rb_ini_entry *e = m->group ? rb_ini_entry_find(m->group, "names") : NULL;
        for (size_t i = 0; !rc && i < m->n; i++)
            if (!m->used[i])
                rc = rde_note(r, "%s:%zu: [%s] '%s' is not in the measurement dynamics_list: not used", e->file,
                              e->line, groups[k], m->names[i]);
    }
    return rc;
}

/* ---- paths ---------------------------------------------------------------------------------------------- */
/* The config.ini of `dir` (a folder, or the file itself) into r->config and its folder into *folder. */
static int config_path(rde *r, const char *dir, char **folder)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return rb_err_set(r->err, RB_ENOTFOUND, "%s: no such folder", dir);
    if (S_ISDIR(st.st_mode)) {
        r->config = rb_asprintf("%s/config.ini", dir);
        *folder = rb_strdup(dir);
    } else {
        r->config = rb_strdup(dir);
        const char *base = rb_path_basename(dir);
        *folder = base == dir ? rb_strdup(".") : rb_strndup(dir, (size_t)(base - dir - 1));
        if (*folder && !**folder) { /* "/config.ini" */
            rb_free(*folder);
            *folder = rb_strdup("/");
        }
    }
    if (!r->config || !*folder)
        return rb_err_set(r->err, RB_ENOMEM, "out of memory");
    if (!rde_is_file(r->config))
        return rb_err_set(r->err, RB_ENOTFOUND,
                          "%s: no such file (the public estimator's configuration folder holds "
                          "config.ini)",
                          r->config);
    return RB_OK;
}

/* ---- entry points ------------------------------------------------------------------------------------------- */
static void rde_free(rde *r)
{
    rb_ini_free(r->ini);
    rb_free(r->config);
    rb_free(r->urdf);
    rb_model_free(r->model);
    rb_free(r->arena);
    rb_free(r->flags);
}

static int read_config(rde *r, const char *folder, const rb_rde_import_opts *opts)
{
    r->friction_network = opts ? opts->friction_network : NULL;
    if (r->friction_network && !rde_is_file(r->friction_network))
        return rb_err_set(r->err, RB_ENOTFOUND, "%s: no such file (--friction-network)", r->friction_network);
    int rc = rb_ini_load(r->config, &r->ini, r->err);
    if (!rc)
        rc = read_general(r, opts && opts->urdf);
    if (!rc)
        rc = read_model_ini(r);
    if (!rc)
        rc = alloc_arrays(r);
    if (!rc)
        rc = read_ukf_ini(r);
    if (!rc)
        rc = read_blocks(r, r->state, state_block);
    if (!rc)
        rc = read_blocks(r, r->meas, measurement_block);
    if (!rc)
        rc = check_complete(r);
    if (!rc && opts && opts->urdf) {
        if (!rde_is_file(opts->urdf))
            return rb_err_set(r->err, RB_ENOTFOUND, "%s: no such file (--urdf)", opts->urdf);
        if (!(r->urdf = rb_strdup(opts->urdf)))
            return rb_err_set(r->err, RB_ENOMEM, "out of memory");
    } else if (!rc) {
        rc = rde_find_urdf(r, folder);
    }
    return rc ? rc : rde_load_model(r);
}

void rb_rde_import_free(rb_rde_import *imp)
{
    if (!imp)
        return;
    rb_free(imp->json);
    rb_free(imp->urdf);
    for (size_t i = 0; i < imp->n_notes; i++)
        rb_free(imp->notes[i]);
    rb_free(imp->notes);
    memset(imp, 0, sizeof *imp);
}

/* A file as the pipeline names it: relative to the pipeline's folder (out_dir), so that moving the folder with
 * the files it names keeps the pipeline working (a pipeline's paths resolve against its own folder); absolute
 * without out_dir. */
static int path_in_json(rde *r, const char *out_dir, const char *path, char **out)
{
    if (out_dir)
        return rde_relative_path(r, out_dir, path, out);
    char *abs = realpath(path, NULL);
    *out = abs ? rb_strdup(abs) : NULL;
    int rc = *out ? RB_OK
                  : rb_err_set(r->err, abs ? RB_ENOMEM : RB_ENOTFOUND, "%s: %s", path,
                               abs ? "out of memory" : "cannot resolve the path");
    free(abs);
    return rc;
}

int rb_rde_import_dir(const char *dir, const rb_rde_import_opts *opts, rb_rde_import *out, rb_err *err)
{
    memset(out, 0, sizeof *out);
    rde r = {.err = err};
    char *folder = NULL, *urdf_json = NULL, *network_json = NULL, *json = NULL, *out_dir = NULL;
    int rc = config_path(&r, dir, &folder);
    if (!rc)
        rc = read_config(&r, folder, opts);
    if (!rc && opts && opts->out_path && !(out_dir = rde_folder_of(opts->out_path)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc)
        rc = path_in_json(&r, out_dir, r.urdf, &urdf_json);
    if (!rc && r.friction_network)
        rc = path_in_json(&r, out_dir, r.friction_network, &network_json);
    if (!rc)
        rc = rde_pipeline_json(&r, urdf_json, network_json, &json, err);
    if (!rc) {
        out->json = json, json = NULL;
        out->urdf = r.urdf, r.urdf = NULL;
        out->n_joints = r.n, out->n_ft = r.n_ft, out->n_contacts = r.n_c;
        for (size_t i = 0; i < r.acc.n; i++)
            out->n_acc += r.acc.used[i];
        for (size_t i = 0; i < r.gyro.n; i++)
            out->n_gyro += r.gyro.used[i];
        out->notes = r.notes, out->n_notes = r.n_notes;
        r.notes = NULL, r.n_notes = 0;
    }
    for (size_t i = 0; i < r.n_notes; i++)
        rb_free(r.notes[i]);
    rb_free(r.notes);
    rb_free(json);
    rb_free(urdf_json);
    rb_free(network_json);
    rb_free(out_dir);
    rb_free(folder);
    rde_free(&r);
    return rc;
}
