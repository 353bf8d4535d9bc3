/* Friction training specs: JSON text -> validated rb_friction_spec. Keys are documented in roboest/training.h;
 * messages and suggestions come from the configuration toolkit (roboest/config.h). */
#include <math.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/pipeline.h"
#include "roboest/training.h"

typedef struct fsp {
    rb_cfg c;
    rb_friction_spec *s;
} fsp;

/* An integer >= lo (and <= 2^53) at the current path. */
static int want_integer(rb_cfg *c, const cJSON *v, double lo, double *out)
{
    double x;
    int rc = rb_cfg_want_number(c, v, &x);
    if (!rc && !(x == floor(x) && fabs(x) <= 9007199254740992.0))
        rc = rb_cfg_error(c, "expected an integer");
    if (!rc && x < lo)
        rc = rb_cfg_error(c, "must be >= %g", lo);
    if (!rc)
        *out = x;
    return rc;
}

/* Optional integer member >= lo into a size_t (or a uint64_t when seed). */
static int opt_count(rb_cfg *c, const cJSON *obj, const char *key, double lo, size_t *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    double x;
    int rc = want_integer(c, v, lo, &x);
    if (!rc && x > 1e9)
        rc = rb_cfg_error(c, "must be <= 1e9");
    if (!rc)
        *out = (size_t)x;
    rb_cfg_pop(c);
    return rc;
}

/* A number array of 1 or n_joints values expanded into out (n_joints, allocated). */
static int joint_numbers(fsp *x, const cJSON *v, rb_cfg_rule rule, double **out)
{
    rb_cfg *c = &x->c;
    size_t n = x->s->n_joints;
    if (!cJSON_IsArray(v) || (cJSON_GetArraySize(v) != 1 && (size_t)cJSON_GetArraySize(v) != n))
        return rb_cfg_error(c, "expected an array of 1 or %zu numbers (one per joint)", n);
    if (!(*out = rb_calloc(n, sizeof **out)))
        return rb_cfg_nomem(c);
    size_t i = 0;
    double first = 0;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        double y;
        rc = rb_cfg_want_number(c, e, &y);
        if (!rc)
            rc = rb_cfg_check_rule(c, y, rule);
        if (!rc)
            (*out)[i] = y;
        if (i == 0)
            first = y;
        rb_cfg_pop(c);
    }
    for (size_t j = i; !rc && j < n; j++)
        (*out)[j] = first;
    return rc;
}

/* A non-empty array of non-empty strings. */
static int want_strings(rb_cfg *c, const cJSON *v, const char *what, char ***out, size_t *n)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of %s", what);
    *n = (size_t)cJSON_GetArraySize(v);
    if (!(*out = rb_calloc(*n, sizeof **out)))
        return rb_cfg_nomem(c);
    size_t i = 0;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = rb_cfg_want_string(c, e, false, &(*out)[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- sections ---------------------------------------------------------------------------------------- */

static int parse_joints(rb_cfg *c, const cJSON *v)
{
    fsp *x = (fsp *)c;
    int rc = want_strings(c, v, "joint names", &x->s->joints, &x->s->n_joints);
    size_t dup, first;
    if (!rc)
        rc = rb_cfg_find_duplicate(c, (const char *const *)x->s->joints, x->s->n_joints, &dup, &first);
    if (!rc && dup != SIZE_MAX) {
        rb_cfg_push_index(c, dup);
        rc = rb_cfg_error(c, "joint '%s' repeats joints[%zu]", x->s->joints[dup], first);
        rb_cfg_pop(c);
    }
    return rc;
}

/* One session: a path or an array of paths. */
static int parse_session(fsp *x, const cJSON *v, rb_friction_spec_log *log)
{
    rb_cfg *c = &x->c;
    char **rel = NULL;
    size_t n = 0;
    int rc;
    if (cJSON_IsString(v)) {
        n = 1;
        if (!(rel = rb_calloc(1, sizeof *rel)))
            return rb_cfg_nomem(c);
        rc = rb_cfg_want_string(c, v, false, &rel[0]);
    } else {
        rc = want_strings(c, v, "log paths", &rel, &n);
    }
    if (!rc && !(log->paths = rb_calloc(n, sizeof *log->paths)))
        rc = rb_cfg_nomem(c);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!(log->paths[i] = rb_path_relative_to(c->base_file, rel[i])))
            rc = rb_cfg_nomem(c);
        log->n_paths++;
    }
    rb_strings_free(rel, n);
    return rc;
}

static int parse_log(fsp *x, const cJSON *v, rb_friction_spec_log *log)
{
    rb_cfg *c = &x->c;
    if (!cJSON_IsObject(v))
        return parse_session(x, v, log);
    static const char *const keys[] = {"log", "torques"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    const cJSON *lv = rb_cfg_member(v, "log");
    if (!rc && !lv)
        rc = rb_cfg_error(c, "missing key 'log'");
    if (!rc) {
        rb_cfg_push_key(c, "log", 0);
        rc = parse_session(x, lv, log);
        rb_cfg_pop(c);
    }
    char *torques = NULL;
    if (!rc)
        rc = rb_cfg_member_string(c, v, "torques", false, &torques);
    if (!rc && torques && !(log->torques = rb_path_relative_to(c->base_file, torques)))
        rc = rb_cfg_nomem(c);
    rb_free(torques);
    return rc;
}

static int parse_logs(rb_cfg *c, const cJSON *v)
{
    fsp *x = (fsp *)c;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of logs");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->logs = rb_calloc(n, sizeof *x->s->logs)))
        return rb_cfg_nomem(c);
    x->s->n_logs = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = parse_log(x, e, &x->s->logs[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_kf(fsp *x, const cJSON *v, rb_friction_spec_signal *sig)
{
    static const char *const keys[] = {"q", "r", "p0"};
    rb_cfg *c = &x->c;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    const char *names[2] = {"q", "r"};
    double **dst[2] = {&sig->q, &sig->r}, defs[2] = {RB_KFD_DEFAULT_Q, RB_KFD_DEFAULT_R};
    for (int k = 0; !rc && k < 2; k++) {
        const cJSON *a = rb_cfg_member(v, names[k]);
        if (a) {
            rb_cfg_push_key(c, names[k], 0);
            rc = joint_numbers(x, a, k == 0 ? RB_CFG_NON_NEGATIVE : RB_CFG_POSITIVE, dst[k]);
            rb_cfg_pop(c);
        } else if (!(*dst[k] = rb_calloc(x->s->n_joints, sizeof **dst[k]))) {
            rc = rb_cfg_nomem(c);
        } else {
            for (size_t j = 0; j < x->s->n_joints; j++)
                (*dst[k])[j] = defs[k];
        }
    }
    const cJSON *p0 = rb_cfg_member(v, "p0");
    if (!rc && p0) {
        rb_cfg_push_key(c, "p0", 0);
        if (!cJSON_IsArray(p0) || cJSON_GetArraySize(p0) != 3)
            rc = rb_cfg_error(c, "expected 3 numbers > 0 (variances of x, x_dot, x_ddot)");
        size_t i = 0;
        for (const cJSON *e = rc ? NULL : p0->child; e && !rc; e = e->next, i++) {
            rb_cfg_push_index(c, i);
            rc = rb_cfg_want_number(c, e, &sig->p0[i]);
            if (!rc)
                rc = rb_cfg_check_rule(c, sig->p0[i], RB_CFG_POSITIVE);
            rb_cfg_pop(c);
        }
        rb_cfg_pop(c);
    }
    if (!rc)
        sig->kf_derivative = true;
    return rc;
}

/* A channel binding; `velocity` allows kf_derivative; `def` the default channel (NULL: required). */
static int parse_signal(fsp *x, const cJSON *root, const char *key, const char *def, bool velocity,
                        rb_friction_spec_signal *sig)
{
    static const char *const keys[] = {"channel", "elements", "scale", "unit", "kf_derivative"};
    rb_cfg *c = &x->c;
    size_t n = x->s->n_joints;
    sig->p0[0] = RB_KFD_DEFAULT_P0_X, sig->p0[1] = RB_KFD_DEFAULT_P0_V, sig->p0[2] = RB_KFD_DEFAULT_P0_A;
    sig->scale = 1;
    const cJSON *v = rb_cfg_member(root, key);
    if (!v && !def)
        return rb_cfg_error(c, "missing key '%s'", key);
    rb_cfg_push_key(c, key, 0);
    int rc = RB_OK;
    if (v) {
        rc = rb_cfg_check_object(c, v, keys, velocity ? 5 : 4);
        if (!rc)
            rc = rb_cfg_member_string(c, v, "channel", true, &sig->channel);
        if (!rc) /* the pipeline's keys and rules: a deg/s log reads as rad/s here as at replay */
            rc = rb_binding_scale_unit(c, v, &sig->scale, &sig->unit);
        const cJSON *e = rb_cfg_member(v, "elements"), *kf = rb_cfg_member(v, "kf_derivative");
        if (!rc && e) {
            rb_cfg_push_key(c, "elements", 0);
            size_t got = 0;
            rc = want_strings(c, e, "element names", &sig->elements, &got);
            if (!rc && got != n)
                rc = rb_cfg_error(c, "%zu elements for %zu joints (one per joint, in joint order)", got, n);
            if (rc && got != n) { /* keep the free loop within what was allocated */
                rb_strings_free(sig->elements, got);
                sig->elements = NULL;
            }
            rb_cfg_pop(c);
        }
        if (!rc && kf) {
            rb_cfg_push_key(c, "kf_derivative", 0);
            rc = parse_kf(x, kf, sig);
            rb_cfg_pop(c);
        }
    } else if (!(sig->channel = rb_strdup(def))) {
        rc = rb_cfg_nomem(c);
    }
    if (!rc && !sig->elements) {
        if (!(sig->elements = rb_calloc(n, sizeof *sig->elements)))
            rc = rb_cfg_nomem(c);
        for (size_t j = 0; !rc && j < n; j++)
            if (!(sig->elements[j] = rb_strdup(x->s->joints[j])))
                rc = rb_cfg_nomem(c);
    }
    rb_cfg_pop(c);
    return rc;
}

/* "friction": a channel that holds the friction torque itself (measured, e.g. a friction data set's), the
 * target instead of k_t R I_m - tau_j; the keys of that residual are then errors, not silently unused. */
static int parse_direct_target(fsp *x, const cJSON *root)
{
    static const char *const residual[] = {"torque", "current", "k_t", "R", "motor_inertia"};
    for (size_t i = 0; i < sizeof residual / sizeof residual[0]; i++)
        if (rb_cfg_member(root, residual[i])) {
            rb_cfg_push_key(&x->c, residual[i], 0);
            int rc = rb_cfg_error(&x->c, "not used with 'friction' (the target is then the friction channel, not "
                                         "k_t R I_m - tau_j): remove one of the two");
            rb_cfg_pop(&x->c);
            return rc;
        }
    return parse_signal(x, root, "friction", NULL, false, &x->s->friction);
}

static int parse_clock(rb_cfg *c, const cJSON *v)
{
    fsp *x = (fsp *)c;
    static const char *const keys[] = {"rate", "channel"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    bool has_rate = rb_cfg_member(v, "rate") != NULL, has_channel = rb_cfg_member(v, "channel") != NULL;
    if (!rc && has_rate == has_channel)
        rc = rb_cfg_error(c, "give exactly one of 'rate' (Hz) and 'channel'");
    if (!rc && has_rate)
        rc = rb_cfg_member_number(c, v, "rate", RB_CFG_POSITIVE, &x->s->clock_rate);
    if (!rc && has_channel)
        rc = rb_cfg_member_string(c, v, "channel", true, &x->s->clock_channel);
    return rc;
}

static int parse_network(rb_cfg *c, const cJSON *v)
{
    fsp *x = (fsp *)c;
    static const char *const keys[] = {"H",      "hidden",     "dropout",  "lambda", "learning_rate",
                                       "epochs", "batch_size", "patience", "seed",   "split_block"};
    rb_friction_net_train_opts *o = &x->s->train;
    int rc = rb_cfg_check_object(c, v, keys, sizeof keys / sizeof keys[0]);
    if (!rc)
        rc = opt_count(c, v, "H", 1, &x->s->H);
    const cJSON *h = rb_cfg_member(v, "hidden");
    if (!rc && h) {
        rb_cfg_push_key(c, "hidden", 0);
        if (!cJSON_IsArray(h) || cJSON_GetArraySize(h) != 2)
            rc = rb_cfg_error(c, "expected two layer sizes [h1, h2]");
        size_t i = 0;
        for (const cJSON *e = rc ? NULL : h->child; e && !rc; e = e->next, i++) {
            rb_cfg_push_index(c, i);
            double y;
            rc = want_integer(c, e, 1, &y);
            if (!rc && y > 65536)
                rc = rb_cfg_error(c, "must be <= 65536");
            if (!rc)
                o->hidden[i] = (size_t)y;
            rb_cfg_pop(c);
        }
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_member_number(c, v, "dropout", RB_CFG_UNIT_OPEN, &o->dropout);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "lambda", RB_CFG_UNIT_CLOSED, &o->lambda);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "learning_rate", RB_CFG_POSITIVE, &o->learning_rate);
    if (!rc)
        rc = opt_count(c, v, "epochs", 1, &o->epochs);
    if (!rc)
        rc = opt_count(c, v, "batch_size", 1, &o->batch_size);
    if (!rc)
        rc = opt_count(c, v, "patience", 0, &o->patience);
    if (!rc)
        rc = opt_count(c, v, "split_block", 1, &x->s->split_block);
    const cJSON *seed = rb_cfg_member(v, "seed");
    if (!rc && seed) {
        rb_cfg_push_key(c, "seed", 0);
        double y;
        rc = want_integer(c, seed, 0, &y);
        if (!rc)
            o->seed = (uint64_t)y;
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_scv(rb_cfg *c, const cJSON *v)
{
    fsp *x = (fsp *)c;
    static const char *const keys[] = {"v_eps", "v_s", "v_s_min", "v_s_max", "grid"};
    rb_friction_fit_opts *o = &x->s->scv;
    int rc = rb_cfg_check_object(c, v, keys, 5);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "v_eps", RB_CFG_NON_NEGATIVE, &o->v_eps);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "v_s", RB_CFG_POSITIVE, &o->v_s);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "v_s_min", RB_CFG_POSITIVE, &o->v_s_min);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "v_s_max", RB_CFG_POSITIVE, &o->v_s_max);
    if (!rc && o->v_s_min > 0 && o->v_s_max > 0 && !(o->v_s_max > o->v_s_min)) {
        rb_cfg_push_key(c, "v_s_max", 0);
        rc = rb_cfg_error(c, "must be greater than v_s_min (%g)", o->v_s_min);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = opt_count(c, v, "grid", 3, &o->grid);
    return rc;
}

static int parse_analytic(rb_cfg *c, const cJSON *v)
{
    fsp *x = (fsp *)c;
    static const char *const models[] = {"coulomb_viscous", "scv", "tanh6", NULL};
    static const rb_friction_kind kinds[] = {RB_FRICTION_CV, RB_FRICTION_SCV, RB_FRICTION_TANH6};
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > 3)
        return rb_cfg_error(c, "expected an array of up to 3 model names (coulomb_viscous, scv, tanh6)");
    size_t i = 0;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        size_t k = 0;
        rc = rb_cfg_want_choice(c, e, models, &k);
        for (size_t j = 0; !rc && j < x->s->n_analytic; j++)
            if (x->s->analytic[j] == kinds[k])
                rc = rb_cfg_error(c, "model %s is listed twice", models[k]);
        if (!rc)
            x->s->analytic[x->s->n_analytic++] = kinds[k];
        rb_cfg_pop(c);
    }
    return rc;
}

static int numbers_section(fsp *x, const cJSON *root, const char *key, rb_cfg_rule rule, double **out)
{
    const cJSON *v = rb_cfg_member(root, key);
    if (!v)
        return rb_cfg_error(&x->c, "missing key '%s'", key);
    rb_cfg_push_key(&x->c, key, 0);
    int rc = joint_numbers(x, v, rule, out);
    rb_cfg_pop(&x->c);
    return rc;
}

static int parse_root(fsp *x, const cJSON *root)
{
    static const char *const keys[] = {
        "logs",     "joints",         "joint_velocity", "motor_velocity", "current", "torque",   "k_t",
        "R",        "clock",          "window",         "network",        "scv",     "analytic", "motor_inertia",
        "friction", "analytic_offset"};
    rb_cfg *c = &x->c;
    rb_friction_spec *s = x->s;
    rb_friction_net_train_opts_init(&s->train);
    /* signals a spec leaves out (friction, or current and torque beside it) scale by 1 too */
    s->joint_velocity.scale = s->motor_velocity.scale = s->current.scale = s->torque.scale = s->friction.scale = 1;
    s->H = 20;
    s->split_block = 500;
    int rc = rb_cfg_check_object(c, root, keys, sizeof keys / sizeof keys[0]);
    if (!rc)
        rc = rb_cfg_with_member(c, root, "joints", true, parse_joints);
    if (!rc)
        rc = rb_cfg_with_member(c, root, "logs", false, parse_logs);
    if (!rc)
        rc = parse_signal(x, root, "joint_velocity", "joints_state/velocities", true, &s->joint_velocity);
    if (!rc)
        rc = parse_signal(x, root, "motor_velocity", "motors_state/velocities", true, &s->motor_velocity);
    if (!rc && rb_cfg_member(root, "friction"))
        rc = parse_direct_target(x, root);
    if (!rc && !s->friction.channel)
        rc = parse_signal(x, root, "current", "motors_state/currents", false, &s->current);
    if (!rc && !s->friction.channel)
        rc = parse_signal(x, root, "torque", NULL, false, &s->torque);
    if (!rc && !s->friction.channel)
        rc = numbers_section(x, root, "k_t", RB_CFG_POSITIVE, &s->k_t);
    if (!rc && !s->friction.channel)
        rc = numbers_section(x, root, "R", RB_CFG_NON_ZERO, &s->R);
    if (!rc && rb_cfg_member(root, "motor_inertia"))
        rc = numbers_section(x, root, "motor_inertia", RB_CFG_NON_NEGATIVE, &s->J_m);
    const cJSON *off = rb_cfg_member(root, "analytic_offset");
    if (!rc && off) {
        rb_cfg_push_key(c, "analytic_offset", 0);
        if (!cJSON_IsBool(off))
            rc = rb_cfg_error(c, "expected true or false");
        s->analytic_offset = cJSON_IsTrue(off);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_with_member(c, root, "clock", false, parse_clock);
    if (!rc && !s->clock_rate && !s->clock_channel && !(s->clock_channel = rb_strdup(s->joint_velocity.channel)))
        rc = rb_cfg_nomem(c);
    const cJSON *window = rb_cfg_member(root, "window");
    if (!rc && window) {
        rb_cfg_push_key(c, "window", 0);
        rc = rb_cfg_want_window(c, window, false, &s->window);
        s->has_window = !rc;
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_with_member(c, root, "network", false, parse_network);
    if (!rc)
        rc = rb_cfg_with_member(c, root, "scv", false, parse_scv);
    if (!rc)
        rc = rb_cfg_with_member(c, root, "analytic", false, parse_analytic);
    return rc;
}

static void free_signal(rb_friction_spec_signal *sig, size_t n)
{
    rb_free(sig->channel);
    rb_free(sig->unit);
    rb_strings_free(sig->elements, sig->elements ? n : 0);
    rb_free(sig->q);
    rb_free(sig->r);
}

void rb_friction_spec_free(rb_friction_spec *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->logs && i < s->n_logs; i++) {
        rb_strings_free(s->logs[i].paths, s->logs[i].n_paths);
        rb_free(s->logs[i].torques);
    }
    rb_free(s->logs);
    rb_friction_spec_signal *sigs[5] = {&s->joint_velocity, &s->motor_velocity, &s->current, &s->torque, &s->friction};
    for (int i = 0; i < 5; i++)
        free_signal(sigs[i], s->n_joints);
    rb_strings_free(s->joints, s->n_joints);
    rb_free(s->k_t);
    rb_free(s->R);
    rb_free(s->J_m);
    rb_free(s->clock_channel);
    rb_free(s->path);
    rb_free(s->sha256);
    rb_free(s);
}

static int init_spec(void *doc, const char *file, const char *name, const char *sha256)
{
    (void)name;
    rb_friction_spec *s = doc;
    s->sha256 = rb_strdup(sha256);
    s->path = rb_strdup(file);
    return s->sha256 && s->path ? RB_OK : RB_ENOMEM;
}

static int parse_spec(const rb_cfg *c, const cJSON *root, void *doc, const void *unused)
{
    (void)unused;
    fsp x = {*c, doc};
    return parse_root(&x, root);
}

static void free_spec(void *doc) { rb_friction_spec_free(doc); }

static const rb_cfg_format spec_format = {"spec.json", "spec",     true,     sizeof(rb_friction_spec),
                                          init_spec,   parse_spec, free_spec};

int rb_friction_spec_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                               rb_friction_spec **out, rb_err *err)
{
    return rb_cfg_load_text(&spec_format, text, len, name_for_messages, base_file, NULL, (void **)out, err);
}

int rb_friction_spec_set_logs(rb_friction_spec *s, const char *const *paths, size_t n, rb_err *err)
{
    rb_friction_spec_log *logs = rb_calloc(n ? n : 1, sizeof *logs);
    if (!logs)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = RB_OK;
    for (size_t i = 0; i < n && rc == RB_OK; i++) {
        logs[i].paths = rb_calloc(1, sizeof *logs[i].paths);
        if (!logs[i].paths || !(logs[i].paths[0] = rb_strdup(paths[i])))
            rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        logs[i].n_paths = logs[i].paths ? 1 : 0;
    }
    rb_friction_spec_log *old = rc ? logs : s->logs;
    size_t n_old = rc ? n : s->n_logs;
    for (size_t i = 0; i < n_old; i++) {
        rb_strings_free(old[i].paths, old[i].n_paths);
        rb_free(old[i].torques);
    }
    rb_free(old);
    if (rc == RB_OK) {
        s->logs = logs;
        s->n_logs = n;
    }
    return rc;
}

int rb_friction_spec_load(const char *path, rb_friction_spec **out, rb_err *err)
{
    return rb_cfg_load(&spec_format, path, NULL, (void **)out, err);
}
