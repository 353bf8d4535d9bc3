/* The friction network file: JSON writer (round-trip number text) and checked reader. Format in
 * roboest/friction.h ("the network file"). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "friction_internal.h"
#include "roboest/config.h"

/* Networks are small (kilobytes); the bound keeps a wrong path (a device, a huge file) out of memory. */
#define NET_FILE_MAX_BYTES ((size_t)1 << 30)

/* ---- the in-memory description ------------------------------------------------------------------ */

int rb_friction_net_file_new(rb_friction_net_file **out, rb_err *err)
{
    *out = rb_calloc(1, sizeof **out);
    return *out ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
}

void rb_friction_net_file_free(rb_friction_net_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_joints; i++) {
        rb_free(f->joints[i].joint);
        rb_friction_net_free(&f->joints[i].net);
    }
    for (size_t i = 0; i < f->n_provenance; i++) {
        rb_free(f->provenance[i].key);
        rb_free(f->provenance[i].value);
    }
    rb_free(f->joints);
    rb_free(f->provenance);
    rb_free(f->motor_velocity);
    rb_free(f->joint_velocity);
    rb_free(f);
}

int rb_friction_net_file_add(rb_friction_net_file *f, const char *joint, rb_friction_net_joint **out, rb_err *err)
{
    rb_friction_net_joint *grown = rb_realloc(f->joints, (f->n_joints + 1) * sizeof *grown);
    if (!grown)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    f->joints = grown;
    rb_friction_net_joint *j = &grown[f->n_joints];
    memset(j, 0, sizeof *j);
    if (!(j->joint = rb_strdup(joint)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    f->n_joints++;
    *out = j;
    return RB_OK;
}

int rb_friction_net_file_set(rb_friction_net_file *f, const char *key, const char *value, rb_err *err)
{
    rb_friction_net_kv *grown = rb_realloc(f->provenance, (f->n_provenance + 1) * sizeof *grown);
    if (!grown)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    f->provenance = grown;
    rb_friction_net_kv *kv = &grown[f->n_provenance];
    kv->key = rb_strdup(key);
    kv->value = rb_strdup(value);
    if (!kv->key || !kv->value) {
        rb_free(kv->key);
        rb_free(kv->value);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    f->n_provenance++;
    return RB_OK;
}

static int set_fnet_attr(void *f, const char *key, const char *value, rb_err *err)
{
    return rb_friction_net_file_set(f, key, value, err);
}

int rb_friction_net_file_set_provenance(rb_friction_net_file *f, const rb_provenance *pv, rb_err *err)
{
    return rb_provenance_each(pv, set_fnet_attr, f, err);
}

const rb_friction_net_joint *rb_friction_net_file_find(const rb_friction_net_file *f, const char *joint)
{
    for (size_t i = 0; f && joint && i < f->n_joints; i++)
        if (strcmp(f->joints[i].joint, joint) == 0)
            return &f->joints[i];
    return NULL;
}

/* ---- writing ------------------------------------------------------------------------------------- */

static void put_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}

static void put_number(FILE *fp, double x)
{
    char buf[32];
    fputs(rb_format_double(x, buf), fp);
}

static void put_numbers(FILE *fp, const double *x, size_t n)
{
    fputc('[', fp);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", fp);
        put_number(fp, x[i]);
    }
    fputc(']', fp);
}

/* {"weights": [rows], "biases": [...]} of one layer (rows x cols weights). */
static void put_layer(FILE *fp, const double *W, const double *b, size_t rows, size_t cols, bool last)
{
    fputs("        {\"weights\": [\n", fp);
    for (size_t r = 0; r < rows; r++) {
        fputs("          ", fp);
        put_numbers(fp, W + r * cols, cols);
        fputs(r + 1 < rows ? ",\n" : "\n", fp);
    }
    fputs("        ],\n         \"biases\": ", fp);
    put_numbers(fp, b, rows);
    fputs(last ? "}\n" : "},\n", fp);
}

static void put_kv_number(FILE *fp, const char *key, double x, bool last)
{
    fprintf(fp, "\"%s\": ", key);
    put_number(fp, x);
    fputs(last ? "" : ", ", fp);
}

static void put_training(FILE *fp, const rb_friction_net_joint *j)
{
    const rb_friction_net_train_opts *o = &j->train;
    const rb_friction_net_train_result *r = &j->result;
    fputs("      \"training\": {", fp);
    fprintf(fp,
            "\"samples_train\": %zu, \"samples_validation\": %zu, \"epochs\": %zu, \"epochs_run\": %zu, "
            "\"best_epoch\": %zu, ",
            r->n_train, r->n_val, o->epochs, r->epochs_run, r->best_epoch);
    put_kv_number(fp, "rmse_train", r->rmse_train, false);
    put_kv_number(fp, "rmse_validation", r->rmse_val, false);
    put_kv_number(fp, "rmse_scv_validation", r->rmse_physics_val, false);
    put_kv_number(fp, "loss_validation", r->loss_val, false);
    fputs("\n                   ", fp);
    put_kv_number(fp, "lambda", o->lambda, false);
    put_kv_number(fp, "dropout", o->dropout, false);
    put_kv_number(fp, "learning_rate", o->learning_rate, false);
    fprintf(fp, "\"batch_size\": %zu, \"patience\": %zu, \"seed\": %llu, \"split_block\": %zu", o->batch_size,
            o->patience, (unsigned long long)o->seed, j->split_block);
    char note[256];
    if (rb_friction_net_early_stopping(r, note, sizeof note)) /* only then, so other files keep their bytes */
        fprintf(fp, ",\n                   \"warning\": \"early stopping %s\"", note);
    fputs("}\n", fp);
}

static void put_joint(FILE *fp, const rb_friction_net_joint *j, bool last)
{
    const rb_fnet *n = &j->net;
    rb_friction_net_parts p = rb_friction_net_parts_of(n);
    fputs("    {\"joint\": ", fp);
    put_string(fp, j->joint);
    fprintf(fp, ", \"H\": %zu, \"hidden\": [%zu, %zu],\n", j->H, n->h1, n->h2);
    fputs("      \"normalization\": {\"mean\": ", fp);
    put_numbers(fp, n->mean, n->n_in);
    fputs(",\n                        \"iqr\": ", fp);
    put_numbers(fp, n->iqr, n->n_in);
    fputs("},\n      \"layers\": [\n", fp);
    put_layer(fp, p.W1, p.b1, n->h1, n->n_in, false);
    put_layer(fp, p.W2, p.b2, n->h2, n->h1, false);
    put_layer(fp, p.w3, p.b3, 1, n->h2, true);
    fputs("      ],\n      \"scv\": {", fp);
    const rb_friction_scv *s = &j->scv.scv;
    put_kv_number(fp, "F_c", s->F_c, false);
    put_kv_number(fp, "F_s", s->F_s, false);
    put_kv_number(fp, "F_v", s->F_v, false);
    put_kv_number(fp, "v_s", s->v_s, false);
    put_kv_number(fp, "v_eps", s->v_eps, true);
    fputs("},\n", fp);
    put_training(fp, j);
    fputs(last ? "    }\n" : "    },\n", fp);
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

static int check_for_writing(const rb_friction_net_file *f, rb_err *err)
{
    if (!(f->sample_period > 0 && isfinite(f->sample_period)))
        return rb_err_set(err, RB_EINVAL, "friction network file: sample period %g s must be finite and > 0",
                          f->sample_period);
    for (size_t i = 0; i < f->n_joints; i++) {
        const rb_friction_net_joint *j = &f->joints[i];
        const rb_fnet *n = &j->net;
        if (!j->joint || !j->joint[0] || !j->H || n->n_in != 2 * j->H || !n->theta)
            return rb_err_set(err, RB_EINVAL, "friction network file: joint %zu: no name, H 0 or %zu inputs for H %zu",
                              i, n->n_in, j->H);
        if (!all_finite(n->theta, n->n_params) || !all_finite(n->mean, n->n_in) || !all_finite(n->iqr, n->n_in))
            return rb_err_set(err, RB_EINVAL,
                              "friction network file: joint %s: a weight or normalization value is "
                              "not finite",
                              j->joint);
        rb_err local;
        if (j->scv.kind != RB_FRICTION_SCV || rb_friction_validate(&j->scv, &local))
            return rb_err_set(err, RB_EINVAL,
                              "friction network file: joint %s: the physics model is not a valid scv "
                              "model",
                              j->joint);
    }
    return RB_OK;
}

static void put_file(FILE *fp, const rb_friction_net_file *f)
{
    fprintf(fp, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"sample_period\": ", RB_FNET_FORMAT, RB_FNET_VERSION);
    put_number(fp, f->sample_period);
    fputs(",\n  \"inputs\": {\"layout\": \"motor_velocity[k-H+1..k] then joint_velocity[k-H+1..k], oldest first\", "
          "\"motor_velocity\": ",
          fp);
    put_string(fp, f->motor_velocity);
    fputs(", \"joint_velocity\": ", fp);
    put_string(fp, f->joint_velocity);
    fputs("},\n  \"provenance\": {", fp);
    for (size_t i = 0; i < f->n_provenance; i++) {
        fputs(i ? ",\n                 " : "", fp);
        put_string(fp, f->provenance[i].key);
        fputs(": ", fp);
        put_string(fp, f->provenance[i].value);
    }
    fputs("},\n  \"joints\": [\n", fp);
    for (size_t i = 0; i < f->n_joints; i++)
        put_joint(fp, &f->joints[i], i + 1 == f->n_joints);
    fputs("  ]\n}\n", fp);
}

int rb_friction_net_file_write(const rb_friction_net_file *f, const char *path, bool overwrite, rb_err *err)
{
    if (!f || !path)
        return rb_err_set(err, RB_EINVAL, "friction network file: NULL argument");
    int rc = check_for_writing(f, err);
    if (rc)
        return rb_err_prefix(err, rc, "%s: ", path);
    rb_outfile out;
    if ((rc = rb_outfile_begin(&out, path, overwrite, err)))
        return rc;
    FILE *fp = fopen(out.tmp_path, "w");
    if (!fp) {
        rc = rb_err_set(err, RB_EIO, "%s: cannot write: %s", path, strerror(errno));
        rb_outfile_abort(&out);
        return rc;
    }
    put_file(fp, f);
    bool failed = ferror(fp) != 0;
    failed = fclose(fp) != 0 || failed;
    if (failed) {
        rb_outfile_abort(&out);
        return rb_err_set(err, RB_EIO, "%s: write failed", path);
    }
    return rb_outfile_commit(&out, err);
}

/* ---- reading ------------------------------------------------------------------------------------- */

typedef struct reader {
    const char *path;
    char item[160]; /* "joints[1] (elbow): " while reading a joint */
    rb_err *err;
} reader;

static int bad(reader *r, const char *fmt, ...) RB_PRINTF(2, 3);

static int bad(reader *r, const char *fmt, ...)
{
    char what[RB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rb_err_set(r->err, RB_EINPUT, "%s: %s%s", r->path, r->item, what);
}

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static int want_number(reader *r, const cJSON *obj, const char *key, double *out)
{
    const cJSON *v = get(obj, key);
    if (!v)
        return bad(r, "missing '%s'", key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return bad(r, "%s: expected a finite number", key);
    *out = v->valuedouble;
    return RB_OK;
}

/* A positive integer (at most 2^31) under key. */
static int want_count(reader *r, const cJSON *v, const char *what, size_t *out)
{
    if (!v)
        return bad(r, "missing '%s'", what);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(x >= 1 && x <= 2147483648.0 && x == floor(x)))
        return bad(r, "%s: expected an integer >= 1", what);
    *out = (size_t)x;
    return RB_OK;
}

/* An array of exactly n finite numbers into out. */
static int want_numbers(reader *r, const cJSON *v, const char *what, size_t n, const char *expect, double *out)
{
    if (!v)
        return bad(r, "missing '%s'", what);
    if (!cJSON_IsArray(v))
        return bad(r, "%s: expected an array of numbers", what);
    size_t got = (size_t)cJSON_GetArraySize(v);
    if (got != n)
        return bad(r, "%s: %zu values, expected %s = %zu", what, got, expect, n);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
            return bad(r, "%s[%zu]: expected a finite number", what, i);
        out[i] = e->valuedouble;
    }
    return RB_OK;
}

/* layers[li]: rows x cols weights and rows biases. */
static int want_layer(reader *r, const cJSON *layers, size_t li, size_t rows, size_t cols, const char *cols_expect,
                      double *W, double *b)
{
    const cJSON *layer = cJSON_GetArrayItem(layers, (int)li);
    char what[64];
    snprintf(what, sizeof what, "layers[%zu]", li);
    if (!cJSON_IsObject(layer))
        return bad(r, "%s: expected an object with weights and biases", what);
    const cJSON *w = get(layer, "weights");
    snprintf(what, sizeof what, "layers[%zu].weights", li);
    if (!cJSON_IsArray(w))
        return bad(r, "%s: expected an array of rows", what);
    size_t got = (size_t)cJSON_GetArraySize(w);
    if (got != rows)
        return bad(r, "%s: %zu rows, expected %zu (the layer's outputs)", what, got, rows);
    size_t i = 0;
    for (const cJSON *row = w->child; row; row = row->next, i++) {
        char rw[80];
        snprintf(rw, sizeof rw, "layers[%zu].weights row %zu", li, i);
        if (!cJSON_IsArray(row))
            return bad(r, "%s: expected an array of numbers", rw);
        size_t n = (size_t)cJSON_GetArraySize(row);
        if (n != cols)
            return bad(r, "%s has %zu values, expected %s = %zu", rw, n, cols_expect, cols);
        int rc = want_numbers(r, row, rw, cols, cols_expect, W + i * cols);
        if (rc)
            return rc;
    }
    snprintf(what, sizeof what, "layers[%zu].biases", li);
    return want_numbers(r, get(layer, "biases"), what, rows, "the layer's outputs", b);
}

static int read_scv(reader *r, const cJSON *o, rb_friction_model *m)
{
    if (!cJSON_IsObject(o))
        return bad(r, "scv: expected an object {F_c, F_s, F_v, v_s, v_eps}");
    double p[5];
    static const char *const names[5] = {"F_c", "F_s", "F_v", "v_s", "v_eps"};
    reader sub = *r;
    snprintf(sub.item, sizeof sub.item, "%.150sscv: ", r->item); /* item names are short: 150 bytes is room */
    for (size_t i = 0; i < 5; i++) {
        int rc = want_number(&sub, o, names[i], &p[i]);
        if (rc)
            return rc;
    }
    rb_err local;
    if (rb_friction_build("scv", p, 5, m, &local))
        return bad(r, "scv: %s", local.msg);
    return RB_OK;
}

static size_t opt_count(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e18 ? (size_t)v->valuedouble : 0;
}

static double opt_number(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The informative training record, as far as it is present. */
static void read_training(const cJSON *o, rb_friction_net_joint *j)
{
    rb_friction_net_train_opts_init(&j->train);
    j->train.hidden[0] = j->net.h1;
    j->train.hidden[1] = j->net.h2;
    if (!cJSON_IsObject(o))
        return;
    rb_friction_net_train_result *res = &j->result;
    res->n_train = opt_count(o, "samples_train");
    res->n_val = opt_count(o, "samples_validation");
    res->epochs_run = opt_count(o, "epochs_run");
    res->best_epoch = opt_count(o, "best_epoch");
    res->rmse_train = opt_number(o, "rmse_train");
    res->rmse_val = opt_number(o, "rmse_validation");
    res->rmse_physics_val = opt_number(o, "rmse_scv_validation");
    res->loss_val = opt_number(o, "loss_validation");
    j->train.epochs = opt_count(o, "epochs");
    j->train.batch_size = opt_count(o, "batch_size");
    j->train.patience = opt_count(o, "patience");
    j->train.seed = opt_count(o, "seed");
    j->train.lambda = opt_number(o, "lambda");
    j->train.dropout = opt_number(o, "dropout");
    j->train.learning_rate = opt_number(o, "learning_rate");
    j->split_block = opt_count(o, "split_block");
}

static int read_joint(reader *r, const cJSON *o, rb_friction_net_file *f, size_t index)
{
    snprintf(r->item, sizeof r->item, "joints[%zu]: ", index);
    if (!cJSON_IsObject(o))
        return bad(r, "expected an object");
    const cJSON *name = get(o, "joint");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return bad(r, "joint: expected a non-empty string");
    snprintf(r->item, sizeof r->item, "joints[%zu] (%.100s): ", index, name->valuestring);
    if (rb_friction_net_file_find(f, name->valuestring))
        return bad(r, "joint '%s' appears twice", name->valuestring);
    size_t H, h[2];
    int rc = want_count(r, get(o, "H"), "H", &H);
    if (rc)
        return rc;
    if (H > (1u << 19))
        return bad(r, "H: %zu is too large", H);
    const cJSON *hidden = get(o, "hidden");
    if (!cJSON_IsArray(hidden) || cJSON_GetArraySize(hidden) != 2)
        return bad(r, "hidden: expected two layer sizes");
    if ((rc = want_count(r, hidden->child, "hidden[0]", &h[0])) ||
        (rc = want_count(r, hidden->child->next, "hidden[1]", &h[1])))
        return rc;
    if (h[0] > (1u << 16) || h[1] > (1u << 16))
        return bad(r, "hidden: layer sizes above 65536");
    rb_friction_net_joint *j;
    if ((rc = rb_friction_net_file_add(f, name->valuestring, &j, r->err)))
        return rc;
    j->H = H;
    if ((rc = rb_friction_net_alloc(&j->net, 2 * H, h[0], h[1], r->err)))
        return rc;
    rb_fnet *n = &j->net;
    rb_friction_net_parts p = rb_friction_net_parts_of(n);
    const cJSON *norm = get(o, "normalization"), *layers = get(o, "layers");
    if (!cJSON_IsObject(norm))
        return bad(r, "normalization: expected an object {mean, iqr}");
    if ((rc = want_numbers(r, get(norm, "mean"), "normalization.mean", 2 * H, "2 H", n->mean)) ||
        (rc = want_numbers(r, get(norm, "iqr"), "normalization.iqr", 2 * H, "2 H", n->iqr)))
        return rc;
    for (size_t i = 0; i < 2 * H; i++)
        if (!(n->iqr[i] > 0))
            return bad(r, "normalization.iqr[%zu]: %g must be > 0", i, n->iqr[i]);
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) != 3)
        return bad(r, "layers: expected 3 layers (two hidden, one output)");
    if ((rc = want_layer(r, layers, 0, h[0], 2 * H, "2 H", p.W1, p.b1)) ||
        (rc = want_layer(r, layers, 1, h[1], h[0], "hidden[0]", p.W2, p.b2)) ||
        (rc = want_layer(r, layers, 2, 1, h[1], "hidden[1]", p.w3, p.b3)))
        return rc;
    if ((rc = read_scv(r, get(o, "scv"), &j->scv)))
        return rc;
    read_training(get(o, "training"), j);
    return RB_OK;
}

static int read_header(reader *r, const cJSON *root, rb_friction_net_file *f)
{
    if (!cJSON_IsObject(root))
        return bad(r, "not a friction network file (expected a JSON object)");
    const cJSON *fmt = get(root, "format"), *ver = get(root, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, RB_FNET_FORMAT) != 0)
        return bad(r, "not a friction network file (\"format\" is not \"%s\")", RB_FNET_FORMAT);
    if (!cJSON_IsNumber(ver))
        return bad(r, "version: expected a number");
    if (ver->valuedouble != RB_FNET_VERSION)
        return bad(r, "unsupported version %g (this roboest reads %d)", ver->valuedouble, RB_FNET_VERSION);
    int rc = want_number(r, root, "sample_period", &f->sample_period);
    if (rc)
        return rc;
    if (!(f->sample_period > 0))
        return bad(r, "sample_period: %g must be > 0", f->sample_period);
    const cJSON *in = get(root, "inputs"), *prov = get(root, "provenance");
    const cJSON *mv = get(in, "motor_velocity"), *jv = get(in, "joint_velocity");
    if ((cJSON_IsString(mv) && !(f->motor_velocity = rb_strdup(mv->valuestring))) ||
        (cJSON_IsString(jv) && !(f->joint_velocity = rb_strdup(jv->valuestring))))
        return rb_err_set(r->err, RB_ENOMEM, "out of memory");
    for (const cJSON *kv = cJSON_IsObject(prov) ? prov->child : NULL; kv; kv = kv->next)
        if (cJSON_IsString(kv) && (rc = rb_friction_net_file_set(f, kv->string, kv->valuestring, r->err)))
            return rc;
    return RB_OK;
}

int rb_friction_net_file_read(const char *path, rb_friction_net_file **out, rb_err *err)
{
    if (!path || !out)
        return rb_err_set(err, RB_EINVAL, "friction network file: NULL argument");
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    int rc = rb_file_read_all(path, NET_FILE_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    reader r = {.path = path, .err = err};
    rb_friction_net_file *f = NULL;
    rb_err parse_err;
    if ((rc = rb_cfg_parse_json(path, text, len, &root, &parse_err)) != RB_OK) /* a data file, not a config */
        rc = rb_err_set(err, RB_EINPUT, "%s", parse_err.msg);
    else if ((rc = rb_friction_net_file_new(&f, err)) == RB_OK && (rc = read_header(&r, root, f)) == RB_OK) {
        const cJSON *joints = get(root, "joints");
        if (!cJSON_IsArray(joints) || cJSON_GetArraySize(joints) == 0)
            rc = bad(&r, "joints: expected a non-empty array");
        size_t i = 0;
        for (const cJSON *j = rc ? NULL : joints->child; j && !rc; j = j->next, i++)
            rc = read_joint(&r, j, f, i);
    }
    cJSON_Delete(root);
    rb_free(text);
    if (rc)
        rb_friction_net_file_free(f);
    else
        *out = f;
    return rc;
}
