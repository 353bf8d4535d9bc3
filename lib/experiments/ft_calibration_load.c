/* In-situ FT calibration: JSON text -> validated rb_ftcal_config (the model, the FT sensor, the accelerometer's
 * rotation into the sensor frame, the data sets with their added loads in the sensor frame, the truth of a
 * simulated sensor). Keys are documented in roboest/experiments.h and configs/README.md. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "experiments_internal.h"

typedef struct fload {
    rb_cfg c;
    rb_ftcal_config *cfg;
} fload;

static rb_ftcal_config *cfg_of(rb_cfg *c) { return ((fload *)c)->cfg; }

static int parse_name(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    rb_free(cfg->name);
    cfg->name = NULL;
    return rb_cfg_want_string(c, v, false, &cfg->name);
}

static int parse_model(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    int rc = rb_cfg_want_string(c, v, false, &cfg->urdf);
    if (!rc)
        rc = rb_cfg_resolve_path(c, &cfg->urdf);
    rb_err e;
    if (!rc && rb_model_load_urdf(cfg->urdf, NULL, &cfg->model, &e) != RB_OK)
        rc = rb_cfg_relay(c, &e);
    return rc;
}

static int parse_ft(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    int rc = rb_cfg_want_string(c, v, false, &cfg->ft);
    if (rc || rb_model_ft_index(cfg->model, cfg->ft) >= 0)
        return rc;
    const rb_model *m = cfg->model;
    const char **names = rb_malloc((m->n_ft ? m->n_ft : 1) * sizeof *names);
    if (!names)
        return rb_cfg_nomem(c);
    for (size_t i = 0; i < m->n_ft; i++)
        names[i] = m->ft[i].name;
    rc = rb_experiments_unknown_name(c, "FT sensor", cfg->ft, (const char *const *)names, m->n_ft);
    rb_free(names);
    return rc;
}

static int parse_raw(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    rb_free(cfg->raw);
    cfg->raw = NULL;
    return rb_cfg_want_string(c, v, false, &cfg->raw);
}

/* A model frame, or an IMU sensor's name; -1 with an error when neither. */
static int want_frame(rb_cfg *c, const rb_model *m, const char *name, long *frame)
{
    *frame = rb_model_frame_index(m, name);
    for (size_t i = 0; *frame < 0 && i < m->n_imu; i++)
        if (strcmp(m->imu[i].name, name) == 0)
            *frame = m->imu[i].frame;
    if (*frame >= 0)
        return RB_OK;
    const char **names = rb_malloc((m->n_frames ? m->n_frames : 1) * sizeof *names);
    if (!names)
        return rb_cfg_nomem(c);
    for (size_t i = 0; i < m->n_frames; i++)
        names[i] = m->frames[i].name;
    int rc = rb_experiments_unknown_name(c, "frame", name, (const char *const *)names, m->n_frames);
    rb_free(names);
    return rc;
}

static int parse_acc(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    static const char *const keys[] = {"channel", "frame"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "channel", true, &cfg->acc);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "frame", false, &cfg->acc_frame);
    if (!rc && !cfg->acc_frame) {
        const char *leaf = strrchr(cfg->acc, '/');
        if (!(cfg->acc_frame = rb_strdup(leaf ? leaf + 1 : cfg->acc)))
            rc = rb_cfg_nomem(c);
    }
    return rc;
}

static int parse_gyro(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"channel"};
    int rc = rb_cfg_check_object(c, v, keys, 1);
    return rc ? rc : rb_cfg_member_string(c, v, "channel", true, &cfg_of(c)->gyro);
}

static int parse_convention(rb_cfg *c, const cJSON *v)
{
    static const char *const choices[] = {"plus", "minus", NULL};
    size_t k = 0;
    int rc = rb_cfg_want_choice(c, v, choices, &k);
    cfg_of(c)->convention = (rb_ftcal_convention)k;
    return rc;
}

static int parse_offset(rb_cfg *c, const cJSON *v)
{
    static const char *const choices[] = {"least_squares", "ellipsoid", NULL};
    size_t k = 0;
    int rc = rb_cfg_want_choice(c, v, choices, &k);
    cfg_of(c)->offset = (rb_ftcal_offset_method)k;
    return rc;
}

static int parse_rows(rb_cfg *c, const cJSON *v)
{
    static const char *const choices[] = {"windows", "samples", NULL};
    size_t k = 0;
    int rc = rb_cfg_want_choice(c, v, choices, &k);
    cfg_of(c)->per_sample = k == 1;
    return rc;
}

static int parse_static(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    static const char *const keys[] = {"window", "gyro_max", "acc_std_max", "min_duration", "trim"};
    cfg->stat.min_duration = NAN;
    int rc = rb_cfg_check_object(c, v, keys, 5);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "window", RB_CFG_POSITIVE, &cfg->stat.window);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "gyro_max", RB_CFG_POSITIVE, &cfg->stat.gyro_max);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "acc_std_max", RB_CFG_POSITIVE, &cfg->stat.acc_std_max);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "min_duration", RB_CFG_NON_NEGATIVE, &cfg->stat.min_duration);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "trim", RB_CFG_NON_NEGATIVE, &cfg->trim);
    return rc;
}

static int parse_holdout(rb_cfg *c, const cJSON *v)
{
    double k = 0;
    int rc = rb_cfg_want_integer(c, v, 0, &k);
    if (!rc && k == 1)
        rc = rb_cfg_error(c, "1 would hold out every pose: 0 (none) or at least 2");
    cfg_of(c)->holdout = (size_t)k;
    return rc;
}

/* The calibration body (the accelerometer's) and a frame on it: its rotation and origin in the FT reading frame. */
static void in_sensor_frame(const rb_model *m, int frame, int sensor, double R[9], double p[3])
{
    const rb_xform *F = &m->frames[frame].X_body, *S = &m->frames[sensor].X_body;
    double d[3] = {F->p[0] - S->p[0], F->p[1] - S->p[1], F->p[2] - S->p[2]};
    for (size_t i = 0; i < 3; i++) {
        p[i] = 0;
        for (size_t k = 0; k < 3; k++) {
            p[i] += S->R[3 * k + i] * d[k];
            R[3 * i + k] = 0;
            for (size_t l = 0; l < 3; l++)
                R[3 * i + k] += S->R[3 * l + i] * F->R[3 * l + k];
        }
    }
}

static int body_of_calibration(rb_cfg *c, rb_ftcal_config *cfg, int *body)
{
    const rb_model *m = cfg->model;
    const rb_ft_sensor *ft = &m->ft[rb_model_ft_index(m, cfg->ft)];
    long af;
    rb_cfg_push_key(c, "accelerometer", 0);
    int rc = want_frame(c, m, cfg->acc_frame, &af);
    int b = rc ? -1 : m->frames[af].body;
    if (!rc && b != ft->child_body && b != ft->parent_body)
        rc = rb_cfg_error(c,
                          "frame '%s' is on body '%s', not on either side of FT sensor %s ('%s' / '%s'): the "
                          "accelerometer must ride on the body the sensor carries",
                          cfg->acc_frame, m->bodies[b].name, cfg->ft, m->bodies[ft->child_body].name,
                          m->bodies[ft->parent_body].name);
    rb_cfg_pop(c);
    if (rc)
        return rc;
    double p[3];
    in_sensor_frame(m, (int)af, ft->frame, cfg->R_sa, p);
    cfg->body_sign = b == ft->child_body ? -(double)ft->sign : (double)ft->sign;
    *body = b;
    if (m->frames[ft->frame].body != b)
        return rb_cfg_error(c, "FT sensor %s reads in a frame of body '%s', not of the accelerometer's body '%s'",
                            cfg->ft, m->bodies[m->frames[ft->frame].body].name, m->bodies[b].name);
    /* the body's own parameters are the load only when nothing hangs beyond it */
    cfg->truth_body_known = b == ft->child_body;
    for (size_t i = 0; i < m->n_bodies; i++)
        if (m->bodies[i].parent == b)
            cfg->truth_body_known = false;
    const double *inr = m->bodies[b].inertia;
    const rb_xform *S = &m->frames[ft->frame].X_body;
    cfg->truth_phi[0] = inr[0];
    for (size_t i = 0; i < 3; i++) {
        double v = 0;
        for (size_t k = 0; k < 3; k++)
            v += S->R[3 * k + i] * (inr[1 + k] - inr[0] * S->p[k]);
        cfg->truth_phi[1 + i] = v;
    }
    return RB_OK;
}

static int one_set(rb_cfg *c, const cJSON *v, size_t i, int body, rb_ftcal_set_cfg *s)
{
    rb_ftcal_config *cfg = cfg_of(c);
    static const char *const keys[] = {"name", "log", "added_mass", "added_com", "frame"};
    int rc = rb_cfg_check_object(c, v, keys, 5);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "name", false, &s->name);
    if (!rc && !s->name && !(s->name = rb_asprintf("set%zu", i)))
        rc = rb_cfg_nomem(c);
    if (!rc && !rb_cfg_valid_name(s->name)) {
        rb_cfg_push_key(c, "name", 0);
        rc = rb_cfg_error(c, "'%s' is not a name (letters, digits, '_' and '-', starting with a letter or '_')",
                          s->name);
        rb_cfg_pop(c);
    }
    if (!rc && !rb_cfg_member(v, "log"))
        rc = rb_cfg_error(c, "missing key 'log'");
    if (!rc) {
        rb_cfg_push_key(c, "log", 0);
        rc = rb_cfg_want_session(c, rb_cfg_member(v, "log"), &s->log);
        rb_cfg_pop(c);
    }
    if (!rc && !rb_cfg_member(v, "added_mass"))
        rc = rb_cfg_error(c, "missing key 'added_mass' (kg, 0 for none)");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "added_mass", RB_CFG_NON_NEGATIVE, &s->added_mass);
    double com[3] = {0, 0, 0};
    const cJSON *cv = rb_cfg_member(v, "added_com");
    if (!rc && cv) {
        rb_cfg_push_key(c, "added_com", 0);
        if (!cJSON_IsArray(cv) || cJSON_GetArraySize(cv) != 3)
            rc = rb_cfg_error(c, "expected [x, y, z] (m)");
        size_t k = 0;
        for (const cJSON *e = cv->child; !rc && e; e = e->next, k++) {
            rb_cfg_push_index(c, k);
            rc = rb_cfg_want_number(c, e, &com[k]);
            rb_cfg_pop(c);
        }
        rb_cfg_pop(c);
    }
    const rb_model *m = cfg->model;
    int sensor = m->ft[rb_model_ft_index(m, cfg->ft)].frame;
    long frame = sensor;
    char *fname = NULL;
    if (!rc)
        rc = rb_cfg_member_string(c, v, "frame", false, &fname);
    if (!rc && fname) {
        rb_cfg_push_key(c, "frame", 0);
        rc = want_frame(c, m, fname, &frame);
        if (!rc && m->frames[frame].body != body)
            rc = rb_cfg_error(c, "frame '%s' is on body '%s', not on the calibration body '%s'", fname,
                              m->bodies[m->frames[frame].body].name, m->bodies[body].name);
        rb_cfg_pop(c);
    }
    rb_free(fname);
    if (!rc) {
        double R[9], p[3];
        in_sensor_frame(m, (int)frame, sensor, R, p);
        for (size_t a = 0; a < 3; a++)
            s->added_com[a] = p[a] + R[3 * a] * com[0] + R[3 * a + 1] * com[1] + R[3 * a + 2] * com[2];
    }
    return rc;
}

static int parse_sets(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of data sets ({\"log\", \"added_mass\", ...})");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (n > RB_FTCAL_MAX_SETS)
        return rb_cfg_error(c, "%zu data sets: at most %d", n, RB_FTCAL_MAX_SETS);
    if (!(cfg->sets = rb_calloc(n, sizeof *cfg->sets)))
        return rb_cfg_nomem(c);
    int body = -1, rc = RB_OK;
    rb_cfg_pop(c); /* the accelerometer's errors are reported at the top level */
    rc = body_of_calibration(c, cfg, &body);
    rb_cfg_push_key(c, "datasets", 0);
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        cfg->n_sets = i + 1;
        rc = one_set(c, e, i, body, &cfg->sets[i]);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(cfg->sets[k].name, cfg->sets[i].name) == 0)
                rc = rb_cfg_error(c, "data set name '%s' is already used by datasets[%zu]", cfg->sets[i].name, k);
        rb_cfg_pop(c);
    }
    return rc;
}

/* The truth of a simulated sensor: C = gain^-1, o from its offset in the convention. */
static int parse_truth(rb_cfg *c, const cJSON *v)
{
    rb_ftcal_config *cfg = cfg_of(c);
    static const char *const keys[] = {"scenario"};
    int rc = rb_cfg_check_object(c, v, keys, 1);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "scenario", true, &cfg->truth_scenario);
    if (rc)
        return rc;
    rb_cfg_push_key(c, "scenario", 0);
    rc = rb_cfg_resolve_path(c, &cfg->truth_scenario);
    rb_scenario *s = NULL;
    rb_err e;
    if (!rc && rb_scenario_load(cfg->truth_scenario, &s, &e) != RB_OK)
        rc = rb_cfg_relay(c, &e);
    const rb_scenario_sensor *ss = NULL;
    for (size_t i = 0; !rc && i < s->n_sensors; i++)
        if (s->sensors[i].source == RB_SCN_FT_RAW && strcmp(s->model->ft[s->sensors[i].index].name, cfg->ft) == 0)
            ss = &s->sensors[i];
    if (!rc && !ss)
        rc = rb_cfg_error(c, "the scenario has no \"ft_raw\" sensor on FT sensor %s", cfg->ft);
    if (!rc) {
        double A[36];
        lapack_int piv[6];
        memcpy(A, ss->params.gain, sizeof A);
        if (LAPACKE_dgetrf(LAPACK_ROW_MAJOR, 6, 6, A, 6, piv) != 0 || LAPACKE_dgetri(LAPACK_ROW_MAJOR, 6, A, 6, piv))
            rc = rb_cfg_error(c, "the sensor's gain is singular");
        memcpy(cfg->truth_C, A, sizeof A);
        for (size_t l = 0; l < 6; l++) {
            double off = rb_sensor_vec_at(ss->params.offset, l) + rb_sensor_vec_at(ss->params.bias, l);
            cfg->truth_o[l] = cfg->convention == RB_FTCAL_PLUS ? -off : off;
        }
        cfg->raw_range = rb_sensor_vec_at(ss->params.hi, 0) - rb_sensor_vec_at(ss->params.lo, 0);
        if (!isfinite(cfg->raw_range))
            cfg->raw_range = 0;
        cfg->has_truth_sensor = !rc;
    }
    rb_cfg_pop(c);
    rb_scenario_free(s);
    return rc;
}

/* convention before truth (the true o is given in it); model, ft, accelerometer before the data sets. */
static const rb_cfg_section sections[] = {
    {"name", false, parse_name},
    {"model", true, parse_model},
    {"ft", true, parse_ft},
    {"raw", false, parse_raw},
    {"accelerometer", true, parse_acc},
    {"gyroscope", true, parse_gyro},
    {"convention", false, parse_convention},
    {"offset", false, parse_offset},
    {"static", false, parse_static},
    {"rows", false, parse_rows},
    {"holdout", false, parse_holdout},
    {"datasets", true, parse_sets},
    {"truth", false, parse_truth},
};

void rb_ftcal_config_free(rb_ftcal_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; cfg->sets && i < cfg->n_sets; i++) {
        rb_free(cfg->sets[i].name);
        rb_strings_free(cfg->sets[i].log.paths, cfg->sets[i].log.n_paths);
    }
    rb_free(cfg->sets);
    rb_model_free(cfg->model);
    char *strs[] = {cfg->name, cfg->path, cfg->sha256, cfg->urdf,           cfg->ft,
                    cfg->raw,  cfg->acc,  cfg->gyro,   cfg->truth_scenario, cfg->acc_frame};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        rb_free(strs[i]);
    rb_free(cfg);
}

static int init_cfg(void *doc, const char *file, const char *name, const char *sha256)
{
    rb_ftcal_config *cfg = doc;
    cfg->sha256 = rb_strdup(sha256);
    cfg->path = rb_strdup(file);
    cfg->name = rb_strdup(name);
    cfg->stat = (rb_ftcal_static_opts){0.3, 0.03, 0.1, NAN}; /* room for the preset IMU noise */
    cfg->trim = 0.05;
    cfg->holdout = 4;
    return cfg->sha256 && cfg->path && cfg->name ? RB_OK : RB_ENOMEM;
}

static int parse_cfg(const rb_cfg *c, const cJSON *root, void *doc, const void *arg)
{
    (void)arg;
    fload x = {*c, doc};
    int rc = rb_cfg_sections(&x.c, root, sections, sizeof sections / sizeof sections[0]);
    rb_ftcal_config *cfg = x.cfg;
    if (!rc && isnan(cfg->stat.min_duration))
        cfg->stat.min_duration = cfg->stat.window;
    if (!rc && !cfg->raw && !(cfg->raw = rb_asprintf("FTs_raw/%s", cfg->ft)))
        rc = rb_cfg_nomem(&x.c);
    return rc;
}

static void free_cfg(void *doc) { rb_ftcal_config_free(doc); }

static const rb_cfg_format ftcal_format = {"calibrate_ft.json", "calibrate_ft", true, sizeof(rb_ftcal_config), init_cfg,
                                           parse_cfg,           free_cfg};

int rb_ftcal_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                       rb_ftcal_config **out, rb_err *err)
{
    return rb_cfg_load_text(&ftcal_format, text, len, name_for_messages, base_file, NULL, (void **)out, err);
}

int rb_ftcal_load(const char *path, rb_ftcal_config **out, rb_err *err)
{
    return rb_cfg_load(&ftcal_format, path, NULL, (void **)out, err);
}
