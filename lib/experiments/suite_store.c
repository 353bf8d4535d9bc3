/* A suite's (variant, log) run as bytes and as a file: the byte form (little-endian, doubles by their bits, a
 * SHA-256 over everything before it), the run's key (what its result depends on), and the store of results under
 * an output folder (written to a temporary, then renamed). */
#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "experiments_internal.h"

/* "RBSUITE" + 0x1a stops a terminal's `type`; the version follows. */
static const unsigned char MAGIC[8] = {'R', 'B', 'S', 'U', 'I', 'T', 'E', 0x1a};
#define VERSION 1u
#define HEADER 12 /* magic, version */
#define TRAILER 32

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

rb_suite_pair *rb_suite_pair_alloc(size_t n_joints, size_t n_traces)
{
    rb_suite_pair *r = rb_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->n_joints = n_joints;
    r->n_traces = n_traces;
    r->joints = rb_calloc(n_joints ? n_joints : 1, sizeof *r->joints);
    r->stats = rb_calloc(n_joints + 1, sizeof *r->stats);
    r->traces = rb_calloc(n_traces ? n_traces : 1, sizeof *r->traces);
    if (!r->joints || !r->stats || !r->traces) {
        rb_suite_pair_free(r);
        return NULL;
    }
    return r;
}

void rb_suite_pair_free(rb_suite_pair *r)
{
    if (!r)
        return;
    rb_free(r->input_sha256);
    rb_strings_free(r->joints, r->n_joints);
    rb_free(r->settle_why);
    rb_free(r->stats);
    rb_strings_free(r->warnings, r->n_warnings);
    for (size_t k = 0; r->traces && k < r->n_traces; k++) {
        rb_suite_pair_trace *t = &r->traces[k];
        rb_free(t->est_t), rb_free(t->est_y), rb_free(t->ref_t), rb_free(t->ref_y), rb_free(t->unit);
    }
    rb_free(r->traces);
    rb_free(r->shaded);
    rb_free(r);
}

const char *rb_suite_pair_key_of(const rb_suite_pair *r) { return r->key; }

/* ---- writing ----------------------------------------------------------------------------------------------- */
typedef struct wbuf {
    unsigned char *p;
    size_t len, cap;
    bool failed;
} wbuf;

static void put(wbuf *b, const void *data, size_t n)
{
    if (b->failed || n == 0) /* data may be NULL then */
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *grown = rb_realloc(b->p, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->p = grown, b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_u64(wbuf *b, uint64_t v)
{
    unsigned char o[8];
    for (int i = 0; i < 8; i++)
        o[i] = (unsigned char)(v >> (8 * i));
    put(b, o, 8);
}

static void put_f64(wbuf *b, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(b, v);
}

static void put_str(wbuf *b, const char *s) /* NULL and "" differ: length + 1, 0 for NULL */
{
    size_t n = s ? strlen(s) : 0;
    put_u64(b, s ? n + 1 : 0);
    put(b, s, n);
}

static void put_f64s(wbuf *b, const double *d, size_t n)
{
    put_u64(b, n);
    for (size_t i = 0; i < n; i++)
        put_f64(b, d[i]);
}

static void put_stats(wbuf *b, const rb_stats *st)
{
    put_u64(b, st->n);
    const double d[] = {st->mse,          st->rmse,      st->mae,        st->max_abs,         st->mean_abs_est,
                        st->mean_abs_ref, st->min_est,   st->max_est,    st->mean_est,        st->count_zero_est,
                        st->rms_est,      st->rise_time, st->step_delay, st->steps_unsettled, st->event_peak,
                        st->event_max};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        put_f64(b, d[i]);
    put_u64(b, st->n_steps);
    put_u64(b, st->n_events);
}

int rb_suite_pair_encode(const rb_suite_pair *r, unsigned char **bytes, size_t *len, rb_err *err)
{
    wbuf b = {0};
    put(&b, MAGIC, 8);
    unsigned char ver[4] = {VERSION & 0xff, (VERSION >> 8) & 0xff, 0, 0};
    put(&b, ver, 4);
    put(&b, r->key, 64);
    put_str(&b, r->input_sha256);
    put_u64(&b, r->n_joints);
    for (size_t j = 0; j < r->n_joints; j++)
        put_str(&b, r->joints[j]);
    put_f64(&b, r->t_start);
    put_str(&b, r->settle_why);
    put_u64(&b, r->n_samples);
    for (size_t j = 0; j <= r->n_joints; j++)
        put_stats(&b, &r->stats[j]);
    put_u64(&b, r->has_confusion);
    if (r->has_confusion) {
        put_u64(&b, r->confusion.n_rows);
        put_u64(&b, r->confusion.n_cols);
        for (size_t i = 0; i < r->confusion.n_rows * r->confusion.n_cols; i++)
            put_f64(&b, r->confusion.counts[i]);
    }
    put_u64(&b, r->n_warnings);
    for (size_t w = 0; w < r->n_warnings; w++)
        put_str(&b, r->warnings[w]);
    put_u64(&b, r->n_traces);
    for (size_t k = 0; k < r->n_traces; k++) {
        const rb_suite_pair_trace *t = &r->traces[k];
        put_f64s(&b, t->est_t, t->est_n);
        put_f64s(&b, t->est_y, t->est_n);
        put_f64s(&b, t->ref_t, t->ref_n);
        put_f64s(&b, t->ref_y, t->ref_n);
        put_str(&b, t->unit);
    }
    put_u64(&b, r->n_shaded);
    for (size_t i = 0; i < r->n_shaded; i++) {
        put_f64(&b, r->shaded[i].t0);
        put_f64(&b, r->shaded[i].t1);
    }
    if (!b.failed) {
        rb_sha256 h;
        char hex[65];
        rb_sha256_init(&h);
        rb_sha256_update(&h, b.p, b.len);
        rb_sha256_final(&h, hex);
        unsigned char sum[TRAILER];
        for (int i = 0; i < TRAILER; i++) {
            unsigned hi, lo;
            sscanf(hex + 2 * i, "%1x%1x", &hi, &lo);
            sum[i] = (unsigned char)(hi << 4 | lo);
        }
        put(&b, sum, TRAILER);
    }
    if (b.failed) {
        rb_free(b.p);
        return nomem(err);
    }
    *bytes = b.p;
    *len = b.len;
    return RB_OK;
}

/* ---- reading: every count checked against the bytes left before anything is allocated ----------------------- */
typedef struct rbuf {
    const unsigned char *p;
    size_t len, at;
    bool short_read;
} rbuf;

static uint64_t get_u64(rbuf *b)
{
    if (b->len - b->at < 8) {
        b->short_read = true;
        b->at = b->len;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b->p[b->at + (size_t)i];
    b->at += 8;
    return v;
}

static double get_f64(rbuf *b)
{
    uint64_t v = get_u64(b);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

/* A count of items of `size` bytes each that the rest of the bytes can hold (else short_read and 0). */
static size_t get_count(rbuf *b, size_t size)
{
    uint64_t n = get_u64(b);
    if (b->short_read || n > (b->len - b->at) / size) {
        b->short_read = true;
        return 0;
    }
    return (size_t)n;
}

static int get_str(rbuf *b, char **out)
{
    size_t n = get_count(b, 1);
    *out = NULL;
    if (b->short_read || n == 0)
        return RB_OK;
    if (n - 1 > b->len - b->at) {
        b->short_read = true;
        return RB_OK;
    }
    if (!(*out = rb_strndup((const char *)b->p + b->at, n - 1)))
        return RB_ENOMEM;
    b->at += n - 1;
    return RB_OK;
}

static int get_f64s(rbuf *b, double **out, size_t *n)
{
    *n = get_count(b, 8);
    if (b->short_read || !(*out = rb_malloc((*n ? *n : 1) * sizeof **out)))
        return b->short_read ? RB_OK : RB_ENOMEM;
    for (size_t i = 0; i < *n; i++)
        (*out)[i] = get_f64(b);
    return RB_OK;
}

static void get_stats(rbuf *b, rb_stats *st)
{
    st->n = (size_t)get_u64(b);
    double *d[] = {&st->mse,          &st->rmse,      &st->mae,        &st->max_abs,         &st->mean_abs_est,
                   &st->mean_abs_ref, &st->min_est,   &st->max_est,    &st->mean_est,        &st->count_zero_est,
                   &st->rms_est,      &st->rise_time, &st->step_delay, &st->steps_unsettled, &st->event_peak,
                   &st->event_max};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        *d[i] = get_f64(b);
    st->n_steps = (size_t)get_u64(b);
    st->n_events = (size_t)get_u64(b);
}

static int get_body(rbuf *b, rb_suite_pair **out, rb_err *err)
{
    char *input = NULL;
    int rc = get_str(b, &input);
    size_t n_joints = rc ? 0 : get_count(b, 8);
    rb_suite_pair *r = rc || b->short_read ? NULL : rb_suite_pair_alloc(n_joints, 0);
    if (!rc && !b->short_read && !r)
        rc = RB_ENOMEM;
    if (!r) {
        rb_free(input);
        return rc ? nomem(err) : RB_OK;
    }
    *out = r;
    r->input_sha256 = input;
    memcpy(r->key, b->p + HEADER, 64);
    for (size_t j = 0; !rc && j < n_joints; j++)
        rc = get_str(b, &r->joints[j]);
    r->t_start = get_f64(b);
    if (!rc)
        rc = get_str(b, &r->settle_why);
    r->n_samples = (size_t)get_u64(b);
    for (size_t j = 0; j <= n_joints; j++)
        get_stats(b, &r->stats[j]);
    r->has_confusion = get_u64(b) != 0;
    if (r->has_confusion) {
        size_t rows = (size_t)get_u64(b), cols = (size_t)get_u64(b);
        if (rows == 0 || cols == 0 || rows > RB_CONFUSION_MAX || cols > RB_CONFUSION_MAX)
            b->short_read = true;
        else if (!(rc = rb_confusion_init(&r->confusion, rows, cols, err)))
            for (size_t i = 0; i < rows * cols; i++)
                r->confusion.counts[i] = get_f64(b);
    }
    size_t n_warnings = rc ? 0 : get_count(b, 8);
    if (!rc && n_warnings && !(r->warnings = rb_calloc(n_warnings, sizeof *r->warnings)))
        rc = RB_ENOMEM;
    for (size_t w = 0; !rc && w < n_warnings; w++, r->n_warnings++)
        rc = get_str(b, &r->warnings[w]);
    size_t n_traces = rc ? 0 : get_count(b, 40);
    rb_suite_pair_trace *traces = n_traces ? rb_calloc(n_traces, sizeof *traces) : NULL;
    if (!rc && n_traces && !traces)
        rc = RB_ENOMEM;
    if (traces) {
        rb_free(r->traces);
        r->traces = traces, r->n_traces = n_traces;
    }
    for (size_t k = 0; !rc && k < n_traces; k++) {
        rb_suite_pair_trace *t = &r->traces[k];
        size_t n1 = 0, n2 = 0, n3 = 0, n4 = 0;
        rc = get_f64s(b, &t->est_t, &n1);
        if (!rc)
            rc = get_f64s(b, &t->est_y, &n2);
        if (!rc)
            rc = get_f64s(b, &t->ref_t, &n3);
        if (!rc)
            rc = get_f64s(b, &t->ref_y, &n4);
        if (!rc)
            rc = get_str(b, &t->unit);
        if (n1 != n2 || n3 != n4)
            b->short_read = true;
        t->est_n = n1, t->ref_n = n3;
    }
    size_t n_shaded = rc ? 0 : get_count(b, 16);
    if (!rc && !(r->shaded = rb_calloc(n_shaded ? n_shaded : 1, sizeof *r->shaded)))
        rc = RB_ENOMEM;
    for (size_t i = 0; !rc && i < n_shaded; i++, r->n_shaded++) {
        r->shaded[i].t0 = get_f64(b);
        r->shaded[i].t1 = get_f64(b);
    }
    return rc == RB_ENOMEM ? nomem(err) : rc;
}

int rb_suite_pair_decode(const unsigned char *bytes, size_t len, const char *what, rb_suite_pair **out, rb_err *err)
{
    *out = NULL;
    if (len < 8 || memcmp(bytes, MAGIC, 8) != 0)
        return rb_err_set(err, RB_EINPUT, "%s: not a roboest suite run result (no RBSUITE header)", what);
    if (len < HEADER)
        return rb_err_set(err, RB_EINPUT, "%s: truncated (%zu bytes)", what, len);
    unsigned version =
        (unsigned)bytes[8] | (unsigned)bytes[9] << 8 | (unsigned)bytes[10] << 16 | (unsigned)bytes[11] << 24;
    if (version != VERSION)
        return rb_err_set(err, RB_EINPUT, "%s: format version %u; this roboest reads version %u", what, version,
                          VERSION);
    if (len < HEADER + 64 + TRAILER)
        return rb_err_set(err, RB_EINPUT, "%s: truncated (%zu bytes)", what, len);
    rb_sha256 h;
    char hex[65], stored[65];
    rb_sha256_init(&h);
    rb_sha256_update(&h, bytes, len - TRAILER);
    rb_sha256_final(&h, hex);
    for (int i = 0; i < TRAILER; i++)
        snprintf(stored + 2 * i, 3, "%02x", bytes[len - TRAILER + (size_t)i]);
    if (strcmp(hex, stored) != 0)
        return rb_err_set(err, RB_EINPUT, "%s: checksum mismatch: the file is corrupt or truncated", what);
    for (size_t i = HEADER; i < HEADER + 64; i++)
        if (!((bytes[i] >= '0' && bytes[i] <= '9') || (bytes[i] >= 'a' && bytes[i] <= 'f')))
            return rb_err_set(err, RB_EINPUT, "%s: malformed key", what);
    rbuf b = {bytes, len - TRAILER, HEADER + 64, false};
    rb_suite_pair *r = NULL;
    int rc = get_body(&b, &r, err);
    if (!rc && (b.short_read || !r))
        rc = rb_err_set(err, RB_EINPUT, "%s: malformed: a count runs past the end of the data", what);
    if (!rc && b.at != b.len)
        rc = rb_err_set(err, RB_EINPUT, "%s: malformed: %zu bytes after the data", what, b.len - b.at);
    if (rc)
        rb_suite_pair_free(r);
    else
        *out = r;
    return rc;
}

/* ---- keys ------------------------------------------------------------------------------------------------------ */
static void hash_text(rb_sha256 *h, const char *tag, const char *s)
{
    rb_sha256_update(h, tag, strlen(tag) + 1);
    rb_sha256_update(h, s ? s : "(none)", strlen(s ? s : "(none)") + 1);
}

static void hash_double(rb_sha256 *h, const char *tag, double d)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%a", d);
    hash_text(h, tag, buf);
}

static void hash_window(rb_sha256 *h, const char *tag, bool has, const rb_window *w)
{
    hash_text(h, tag, has ? (w->from_start ? "from_start" : "absolute") : "none");
    if (has) {
        hash_double(h, "t0", w->t0);
        hash_double(h, "t1", w->t1);
    }
}

static int hash_stage_file(void *ctx, const rb_config_stage *st, const char *param, const char *path, rb_err *err)
{
    (void)st;
    char file_sha[65];
    int rc = rb_sha256_file(path, file_sha, err);
    if (!rc)
        hash_text(ctx, param, file_sha);
    return rc;
}

int rb_suite_pipeline_sha(const rb_suite *s, size_t v, char sha[65], rb_err *err)
{
    const rb_pipeline *p = s->variants[v].pipeline;
    char *json = rb_pipeline_resolved_json(p);
    if (!json)
        return nomem(err);
    rb_sha256 h;
    rb_sha256_init(&h);
    hash_text(&h, "resolved", json);
    hash_text(&h, "config_sha256", p->config_sha256);
    rb_free(json);
    char urdf[65] = "";
    if (p->model_urdf) {
        int rc = rb_sha256_file(p->model_urdf, urdf, err);
        if (rc)
            return rc;
    }
    hash_text(&h, "urdf_sha256", urdf);
    int rc = rb_pipeline_stage_files(p, hash_stage_file, &h, err); /* a friction network ... */
    if (!rc)
        rb_sha256_final(&h, sha);
    return rc;
}

/* Everything of the suite that run (v, l) depends on, besides the bytes of the pipeline and of the files. */
void rb_suite_pair_key(const rb_suite *s, const char *const *pipeline_sha, size_t v, size_t l, const char *input_sha,
                       const char *ref_sha, const char *log0_sha, char key[65])
{
    const rb_suite_variant *var = &s->variants[v];
    rb_sha256 h;
    rb_sha256_init(&h);
    hash_text(&h, "roboest suite run", "1");
    hash_text(&h, "pipeline", pipeline_sha[v]);
    hash_text(&h, "pipeline_path", var->pipeline_path);
    hash_text(&h, "estimate", var->estimate);
    hash_window(&h, "variant window", var->has_window, &var->window);
    for (size_t i = 0; i < s->logs[l].n_paths; i++)
        hash_text(&h, "log path", s->logs[l].paths[i]);
    hash_text(&h, "input_sha256", input_sha);
    hash_text(&h, "reference", s->reference);
    hash_text(&h, "reference interp", s->reference_interp == RB_INTERP_HOLD ? "hold" : "linear");
    hash_text(&h, "reference_log", s->reference_log.path);
    if (s->reference_log.path) {
        hash_text(&h, "reference_log sha256", ref_sha);
        hash_double(&h, "reference_log offset", s->reference_log.has_offset ? s->reference_log.time_offset : NAN);
    }
    for (size_t j = 0; j < s->n_joints; j++)
        hash_text(&h, "joint", s->joints[j]);
    if (!s->n_joints) { /* the first log's reference channel names them */
        for (size_t i = 0; i < s->logs[0].n_paths; i++)
            hash_text(&h, "joints from", s->logs[0].paths[i]);
        hash_text(&h, "joints from sha256", log0_sha);
    }
    hash_window(&h, "window", s->has_window, &s->window);
    hash_double(&h, "settle", s->has_settle ? s->settle : NAN);
    if (!s->has_window && !s->has_settle) /* the start-up skipped is the largest of every variant's */
        for (size_t k = 0; k < s->n_variants; k++) {
            hash_text(&h, "settle variant", s->variants[k].name);
            hash_text(&h, "settle pipeline", pipeline_sha[k]);
        }
    hash_double(&h, "steps", s->step_min_jump);
    hash_text(&h, "events", s->events_channel);
    hash_double(&h, "events a", s->events_a);
    hash_double(&h, "events b", s->events_b);
    hash_text(&h, "contact", s->contact_channel);
    hash_double(&h, "contact threshold", s->contact_threshold);
    for (size_t i = 0; i < s->n_labels; i++)
        hash_text(&h, "label", s->labels[i]);
    for (size_t i = 0; i < s->n_reference_labels; i++)
        hash_text(&h, "reference label", s->reference_labels[i]);
    hash_text(&h, "where", s->confusion_where);
    char idx[32];
    snprintf(idx, sizeof idx, "%zu", s->n_traces);
    hash_text(&h, "traces", idx);
    for (size_t k = 0; k < s->n_traces; k++)
        if (s->traces[k].log == l) {
            snprintf(idx, sizeof idx, "%zu", k);
            hash_text(&h, "trace", idx);
            hash_text(&h, "trace joint", s->traces[k].joint);
            hash_window(&h, "trace window", true, &s->traces[k].window);
        }
    rb_sha256_final(&h, key);
}

int rb_suite_session_sha(const rb_cfg_session *ses, char **out, rb_err *err)
{
    char *s = rb_malloc(ses->n_paths * 65 + 1);
    if (!s)
        return nomem(err);
    s[0] = '\0';
    for (size_t i = 0; i < ses->n_paths; i++) {
        char hex[65];
        int rc = rb_sha256_file(ses->paths[i], hex, err);
        if (rc) {
            rb_free(s);
            return rc;
        }
        if (i)
            strcat(s, ",");
        strcat(s, hex);
    }
    *out = s;
    return RB_OK;
}

int rb_suite_keys(const rb_suite *s, char (*keys)[65], rb_err *err)
{
    size_t V = s->n_variants, L = s->n_logs;
    char(*psha)[65] = rb_calloc(V, sizeof *psha);
    const char **pp = rb_calloc(V, sizeof *pp);
    char **lsha = rb_calloc(L, sizeof *lsha), **rsha = rb_calloc(L, sizeof *rsha);
    int rc = psha && pp && lsha && rsha ? RB_OK : nomem(err);
    for (size_t v = 0; !rc && v < V; v++) {
        rc = rb_suite_pipeline_sha(s, v, psha[v], err);
        pp[v] = psha[v];
    }
    for (size_t l = 0; !rc && l < L; l++) {
        rc = rb_suite_session_sha(&s->logs[l], &lsha[l], err);
        char *path = NULL;
        if (!rc && s->reference_log.path &&
            !(rc = rb_reference_log_path(&s->reference_log, s->logs[l].paths[0], &path, err))) {
            if (!(rsha[l] = rb_malloc(65)))
                rc = nomem(err);
            else
                rc = rb_sha256_file(path, rsha[l], err);
        }
        rb_free(path);
    }
    for (size_t v = 0; !rc && v < V; v++)
        for (size_t l = 0; l < L; l++)
            rb_suite_pair_key(s, pp, v, l, lsha[l], rsha[l], lsha[0], keys[v * L + l]);
    rb_free(psha);
    rb_free(pp);
    rb_strings_free(lsha, lsha ? L : 0);
    rb_strings_free(rsha, rsha ? L : 0);
    return rc;
}

/* ---- the store: dir/<key>.rbres -------------------------------------------------------------------------------- */
int rb_suite_store_load(const char *dir, const char *key, rb_suite_pair **out, rb_err *err)
{
    *out = NULL;
    char *name = rb_asprintf("%s.rbres", key), *path = name ? rb_path_in(dir, name) : NULL;
    rb_free(name);
    if (!path)
        return nomem(err);
    /* read directly, not noted as an input (rb_input_note): a stored run that is corrupt is written again */
    unsigned char *bytes = NULL;
    size_t size = 0;
    int rc = RB_OK;
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f)
        rc = errno == ENOENT ? rb_err_set(err, RB_ENOTFOUND, "%s: no such file", path)
                             : rb_err_set(err, RB_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    else if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        rc = rb_err_set(err, RB_EINPUT, "%s: not a regular file", path);
    else if (!(bytes = rb_malloc(st.st_size ? (size_t)st.st_size : 1)))
        rc = nomem(err);
    else if ((size = fread(bytes, 1, (size_t)st.st_size, f)) != (size_t)st.st_size)
        rc = rb_err_set(err, RB_EINPUT, "%s: read error", path);
    if (f)
        fclose(f);
    if (!rc)
        rc = rb_suite_pair_decode(bytes, size, path, out, err);
    if (!rc && strcmp((*out)->key, key) != 0) {
        rc = rb_err_set(err, RB_EINPUT, "%s: the result of another run (key %.12s...)", path, (*out)->key);
        rb_suite_pair_free(*out);
        *out = NULL;
    }
    rb_free(bytes);
    rb_free(path);
    return rc;
}

int rb_suite_store_save(const char *dir, const rb_suite_pair *r, rb_err *err)
{
    unsigned char *bytes = NULL;
    size_t len = 0;
    char *name = rb_asprintf("%s.rbres", r->key);
    if (!name)
        return nomem(err);
    int rc = rb_suite_pair_encode(r, &bytes, &len, err);
    if (!rc) {
        char *path = rb_path_in(dir, name);
        rb_outfile of = {0};
        FILE *f = NULL;
        rc = path ? rb_outfile_begin(&of, path, true, err) : nomem(err);
        if (!rc && (!(f = fopen(of.tmp_path, "wb")) || fwrite(bytes, 1, len, f) != len))
            rc = rb_err_set(err, RB_EIO, "%s: cannot write: %s", of.tmp_path, strerror(errno));
        if (f && fclose(f) != 0 && !rc)
            rc = rb_err_set(err, RB_EIO, "%s: cannot write: %s", of.tmp_path, strerror(errno));
        if (!rc)
            rc = rb_outfile_commit(&of, err);
        else if (path)
            rb_outfile_abort(&of);
        rb_free(path);
    }
    rb_free(bytes);
    rb_free(name);
    return rc;
}
