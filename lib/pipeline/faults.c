/* The sensor-fault monitor of a run: the "faults" config section, its resolved form, and the tallies of a run
 * (stuck and saturated samples of every bound channel element, innovation outliers of the stages that show
 * them, metrics.h rb_fault_*), gathered once the stages have stepped. */
#include <math.h>
#include <string.h>

#include "pipeline_internal.h"

void rb_pipeline_faults_default(rb_pipeline *p)
{
    p->faults_enabled = true;
    p->faults = (rb_fault_opts){.stuck_window = 200, .saturation_window = 100, .k_sigma = 8.0, .settle = 0.5};
}

static int window_key(rb_cfg *c, const cJSON *v, const char *key, size_t *out)
{
    const cJSON *w = rb_cfg_member(v, key);
    if (!w)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    double x;
    int rc = rb_cfg_want_integer(c, w, 0, &x);
    if (!rc)
        *out = (size_t)x;
    rb_cfg_pop(c);
    return rc;
}

int rb_pipeline_parse_faults(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"enabled",           "stuck_window", "stuck_tolerance",
                                       "saturation_window", "k_sigma",      "settle"};
    rb_pipeline *p = ((pload *)c)->p;
    int rc = rb_cfg_check_object(c, v, keys, sizeof keys / sizeof keys[0]);
    const cJSON *en = rc ? NULL : rb_cfg_member(v, "enabled");
    if (en) {
        rb_cfg_push_key(c, "enabled", 0);
        rc = cJSON_IsBool(en) ? RB_OK : rb_cfg_error(c, "expected true or false");
        p->faults_enabled = cJSON_IsTrue(en);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = window_key(c, v, "stuck_window", &p->faults.stuck_window);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "stuck_tolerance", RB_CFG_NON_NEGATIVE, &p->faults.stuck_tolerance);
    if (!rc)
        rc = window_key(c, v, "saturation_window", &p->faults.saturation_window);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "k_sigma", RB_CFG_NON_NEGATIVE, &p->faults.k_sigma);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "settle", RB_CFG_NON_NEGATIVE, &p->faults.settle);
    return rc;
}

void rb_pipeline_faults_resolved(rb_cfg_builder *b, cJSON *root, const rb_pipeline *p)
{
    cJSON *f = rb_cfg_add(b, root, "faults", cJSON_CreateObject());
    if (!f)
        return;
    rb_cfg_add(b, f, "enabled", cJSON_CreateBool(p->faults_enabled));
    rb_cfg_add(b, f, "stuck_window", cJSON_CreateNumber((double)p->faults.stuck_window));
    rb_cfg_add(b, f, "stuck_tolerance", cJSON_CreateNumber(p->faults.stuck_tolerance));
    rb_cfg_add(b, f, "saturation_window", cJSON_CreateNumber((double)p->faults.saturation_window));
    rb_cfg_add(b, f, "k_sigma", cJSON_CreateNumber(p->faults.k_sigma));
    rb_cfg_add(b, f, "settle", cJSON_CreateNumber(p->faults.settle));
}

/* ---- a run's tallies ----------------------------------------------------------------------------------------- */
typedef struct entry {
    const char *signal, *element;
    const rb_channel *ch; /* NULL: a stage's signal */
    size_t index;         /* the channel's element, or the signal's */
    size_t sig;           /* signal-table index */
    rb_fault_tally tally[RB_FAULT_N_KINDS];
    double first_time[RB_FAULT_N_KINDS];
} entry;

typedef struct monitor {
    const rb_fault_run *in;
    entry *e;
    size_t n;
    size_t *of_binding;      /* per bound element (bindings in order, their elements in order): its entry */
    size_t part;             /* a log read in windows: samples read at a time */
    double *time, *data;     /* one part of a channel's timestamps or samples */
    rb_fault_stream *stream; /* per entry */
} monitor;

static size_t find_entry(const monitor *m, const rb_channel *ch, size_t sig, size_t index)
{
    for (size_t k = 0; k < m->n; k++)
        if (m->e[k].index == index && (ch ? m->e[k].ch == ch : !m->e[k].ch && m->e[k].sig == sig))
            return k;
    return SIZE_MAX;
}

static size_t add_entry(monitor *m, const char *signal, const rb_channel *ch, size_t sig, size_t index,
                        const char *element)
{
    size_t k = find_entry(m, ch, sig, index);
    if (k != SIZE_MAX)
        return k;
    entry *e = &m->e[m->n];
    *e = (entry){signal, element, ch, index, sig, {{0}}, {0}};
    rb_fault_tally_init(e->tally, RB_FAULT_N_KINDS);
    return m->n++;
}

/* Every element of every binding, each channel element once (the first binding that reads it names it). */
static void add_bindings(monitor *m)
{
    const rb_fault_run *in = m->in;
    const rb_pipeline *p = in->p;
    for (size_t i = 0, at = 0; i < p->n_signals; i++) {
        const rb_config_signal *s = &p->signals[i];
        size_t width = in->eng->sig[i].width;
        for (size_t e = 0; e < width; e++) {
            const rb_channel *ch = in->bound[in->bound_off[i]];
            size_t idx = in->select[i] ? in->select[i][e] : e;
            for (size_t c = 0, base = 0; s->n_channels > 1 && c < s->n_channels; c++) {
                const rb_channel *part = in->bound[in->bound_off[i] + c];
                if (e < base + part->n_elements) {
                    ch = part, idx = e - base;
                    break;
                }
                base += part->n_elements;
            }
            m->of_binding[at++] = add_entry(m, s->name, ch, i, idx, ch->element_names[idx]);
        }
    }
}

/* The samples of ch inside [t0, t1]: [*k0, *k1). */
static void span_of(const rb_channel *ch, double t0, double t1, size_t *k0, size_t *k1)
{
    size_t a = 0, b = ch->n_samples;
    while (a < b && ch->time[a] < t0)
        a++;
    while (b > a && ch->time[b - 1] > t1)
        b--;
    *k0 = a, *k1 = b;
}

static int scan_whole(monitor *m)
{
    const rb_clock *clk = m->in->clock;
    double t0 = clk->n ? clk->t[0] : 0, t1 = clk->n ? clk->t[clk->n - 1] : -1;
    for (size_t k = 0; k < m->n; k++) {
        entry *e = &m->e[k];
        if (!e->ch)
            continue;
        const rb_channel *ch = e->ch;
        size_t k0, k1, w = ch->n_elements;
        span_of(ch, t0, t1, &k0, &k1);
        rb_fault_scan(ch->data + k0 * w + e->index, k1 - k0, w, &m->in->p->faults, &e->tally[RB_FAULT_STUCK],
                      &e->tally[RB_FAULT_SATURATED]);
        for (int j = RB_FAULT_STUCK; j <= RB_FAULT_SATURATED; j++)
            if (e->tally[j].count) {
                e->tally[j].first += k0;
                e->first_time[j] = ch->time[e->tally[j].first];
            }
    }
    return RB_OK;
}

/* ---- a log read in windows: each channel read in parts of m->part samples, three times (its span inside the
 * clock's, its elements' extremes, their runs), so that nothing grows with the log (rb_fault_stream) ---------- */
static size_t channel_of(const monitor *m, const rb_channel *ch)
{
    return (size_t)(ch - rb_log_source_log(m->in->src)->channels);
}

/* span_of from the timestamps read in parts: the first sample not before t0, one past the last not after t1. */
static int span_parts(monitor *m, const rb_channel *ch, double t0, double t1, size_t *k0, size_t *k1, rb_err *err)
{
    size_t a = SIZE_MAX, last = SIZE_MAX, T = ch->n_samples;
    for (size_t at = 0; at < T; at += m->part) {
        size_t n = T - at < m->part ? T - at : m->part;
        int rc = rb_log_source_read(m->in->src, channel_of(m, ch), at, n, m->time, NULL, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < n; i++) {
            if (a == SIZE_MAX && !(m->time[i] < t0))
                a = at + i;
            if (!(m->time[i] > t1))
                last = at + i;
        }
    }
    *k0 = a == SIZE_MAX ? T : a;
    *k1 = last == SIZE_MAX || last + 1 < *k0 ? *k0 : last + 1;
    return RB_OK;
}

/* Samples [k0, k1) of the channel in parts, each part given to every entry of the channel (pass 0: extremes, 1:
 * runs). */
static int pass_parts(monitor *m, const rb_channel *ch, size_t k0, size_t k1, int pass, rb_err *err)
{
    const rb_fault_opts *o = &m->in->p->faults;
    size_t w = ch->n_elements;
    for (size_t at = k0; at < k1; at += m->part) {
        size_t n = k1 - at < m->part ? k1 - at : m->part;
        int rc = rb_log_source_read(m->in->src, channel_of(m, ch), at, n, NULL, m->data, err);
        if (rc)
            return rc;
        for (size_t k = 0; k < m->n; k++) {
            entry *e = &m->e[k];
            if (e->ch != ch)
                continue;
            if (pass == 0)
                rb_fault_range(m->data + e->index, n, w, &m->stream[k].lo, &m->stream[k].hi);
            else
                rb_fault_stream_push(&m->stream[k], m->data + e->index, n, w, o, &e->tally[RB_FAULT_STUCK],
                                     &e->tally[RB_FAULT_SATURATED]);
        }
    }
    return RB_OK;
}

static int scan_channel(monitor *m, const rb_channel *ch, rb_err *err)
{
    const rb_clock *clk = m->in->clock;
    const rb_fault_opts *o = &m->in->p->faults;
    size_t k0 = 0, k1 = 0;
    int rc = span_parts(m, ch, clk->n ? clk->t[0] : 0, clk->n ? clk->t[clk->n - 1] : -1, &k0, &k1, err);
    for (size_t k = 0; k < m->n; k++)
        m->stream[k].lo = INFINITY, m->stream[k].hi = -INFINITY;
    if (!rc)
        rc = pass_parts(m, ch, k0, k1, 0, err);
    for (size_t k = 0; !rc && k < m->n; k++)
        if (m->e[k].ch == ch)
            rb_fault_stream_init(&m->stream[k], m->stream[k].lo, m->stream[k].hi);
    if (!rc)
        rc = pass_parts(m, ch, k0, k1, 1, err);
    for (size_t k = 0; !rc && k < m->n; k++) {
        entry *e = &m->e[k];
        if (e->ch != ch)
            continue;
        rb_fault_stream_end(&m->stream[k], o, &e->tally[RB_FAULT_STUCK], &e->tally[RB_FAULT_SATURATED]);
        for (int j = RB_FAULT_STUCK; !rc && j <= RB_FAULT_SATURATED; j++)
            if (e->tally[j].count) {
                e->tally[j].first += k0;
                rc = rb_log_source_read(m->in->src, channel_of(m, ch), e->tally[j].first, 1, &e->first_time[j], NULL,
                                        err);
            }
    }
    return rc;
}

static int scan_channels(monitor *m, rb_err *err)
{
    if (!m->in->src)
        return scan_whole(m);
    int rc = RB_OK;
    for (size_t k = 0; !rc && k < m->n; k++) {
        bool seen = !m->e[k].ch;
        for (size_t j = 0; j < k && !seen; j++)
            seen = m->e[j].ch == m->e[k].ch;
        if (!seen)
            rc = scan_channel(m, m->e[k].ch, err);
    }
    return rc;
}

/* The channel's last sample at or before t (its first when none is); a log read in windows: the same search over
 * timestamps read one at a time. */
static int sample_at(const monitor *m, const rb_channel *ch, double t, size_t *out, rb_err *err)
{
    size_t lo = 0, hi = ch->n_samples;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        double tm;
        int rc = m->in->src ? rb_log_source_read(m->in->src, channel_of(m, ch), mid, 1, &tm, NULL, err) : RB_OK;
        if (rc)
            return rc;
        if ((m->in->src ? tm : ch->time[mid]) <= t)
            lo = mid;
        else
            hi = mid;
    }
    *out = lo;
    return RB_OK;
}

/* Innovation outliers onto the element each measurement reads: a binding's channel element, or a stage's signal. */
static int add_outliers(monitor *m, rb_err *err)
{
    const rb_fault_run *in = m->in;
    const rb_pipeline *p = in->p;
    const rb_engine *eng = in->eng;
    size_t *first_bind = m->of_binding; /* offsets of each binding's elements in of_binding */
    for (size_t s = 0; eng->inno && s < p->n_stages; s++) {
        const rb_stage_innovations *iv = eng->inno[s];
        for (size_t j = 0; iv && j < iv->m; j++) {
            size_t sig = p->stages[s].in_signal[iv->port[j]], k;
            if (sig == SIZE_MAX)
                continue;
            if (sig < p->n_signals) {
                size_t off = 0;
                for (size_t i = 0; i < sig; i++)
                    off += eng->sig[i].width;
                k = first_bind[off + iv->element[j]];
            } else {
                k = add_entry(m, p->signal_table[sig].name, NULL, sig, iv->element[j],
                              eng->sig[sig].names[iv->element[j]]);
            }
            const rb_fault_tally *t = &eng->inno_tally[s][j];
            rb_fault_tally *to = &m->e[k].tally[RB_FAULT_OUTLIER];
            if (t->count && (to->count == 0 || t->first < to->first))
                to->first = t->first; /* a clock index until the end */
            to->count += t->count;
        }
    }
    int rc = RB_OK;
    for (size_t k = 0; !rc && k < m->n; k++) {
        entry *e = &m->e[k];
        rb_fault_tally *t = &e->tally[RB_FAULT_OUTLIER];
        if (!t->count)
            continue;
        e->first_time[RB_FAULT_OUTLIER] = in->clock->t[t->first];
        if (e->ch)
            rc = sample_at(m, e->ch, in->clock->t[t->first], &t->first, err);
    }
    return rc;
}

static int export(const monitor *m, const char *run, rb_run_result *res, rb_err *err)
{
    res->faults = rb_calloc(m->n ? m->n : 1, sizeof *res->faults);
    if (!res->faults)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t k = 0; k < m->n; k++) {
        const entry *e = &m->e[k];
        rb_report_fault *f = &res->faults[res->n_faults++];
        f->run = rb_strdup(run), f->signal = rb_strdup(e->signal);
        f->channel = rb_strdup(e->ch ? e->ch->name : ""), f->element = rb_strdup(e->element);
        memcpy(f->tally, e->tally, sizeof f->tally);
        memcpy(f->first_time, e->first_time, sizeof f->first_time);
        if (!f->run || !f->signal || !f->channel || !f->element)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    return RB_OK;
}

int rb_pipeline_gather_faults(const rb_fault_run *in, const char *run, rb_run_result *res, rb_err *err)
{
    const rb_pipeline *p = in->p;
    size_t n_bound = 0, n_inno = 0;
    for (size_t i = 0; i < p->n_signals; i++)
        n_bound += in->eng->sig[i].width;
    for (size_t s = 0; in->eng->inno && s < p->n_stages; s++)
        n_inno += in->eng->inno[s] ? in->eng->inno[s]->m : 0;
    monitor m = {
        in,  rb_calloc(n_bound + n_inno + 1, sizeof *m.e), 0, rb_calloc(n_bound + 1, sizeof(size_t)), 0, NULL, NULL,
        NULL};
    size_t widest = 1;
    for (size_t i = 0; i < in->bound_off[p->n_signals]; i++)
        widest = in->bound[i] && in->bound[i]->n_elements > widest ? in->bound[i]->n_elements : widest;
    m.part = in->part ? in->part : 4096;
    if (in->src) { /* bounded: one part of the widest channel */
        m.time = rb_malloc(m.part * sizeof *m.time);
        m.data = rb_malloc(m.part * widest * sizeof *m.data);
        m.stream = rb_calloc(n_bound + n_inno + 1, sizeof *m.stream);
    }
    int rc = m.e && m.of_binding && (!in->src || (m.time && m.data && m.stream))
                 ? RB_OK
                 : rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc) {
        add_bindings(&m);
        if (!(rc = scan_channels(&m, err)) && !(rc = add_outliers(&m, err)))
            rc = export(&m, run, res, err);
    }
    rb_free(m.e);
    rb_free(m.of_binding);
    rb_free(m.time);
    rb_free(m.data);
    rb_free(m.stream);
    return rc;
}

int rb_pipeline_report_faults(const rb_fault_run *in, rb_run_result *res, rb_err *err)
{
    int rc = rb_pipeline_gather_faults(in, res->run_name, res, err);
    if (!rc && res->report)
        rc = rb_report_set_fault_settings(res->report, &in->p->faults, err);
    for (size_t k = 0; !rc && res->report && k < res->n_faults; k++)
        rc = rb_report_add_fault(res->report, &res->faults[k], err);
    return rc;
}

void rb_run_faults_free(rb_run_result *res)
{
    for (size_t k = 0; res->faults && k < res->n_faults; k++) {
        rb_report_fault *f = &res->faults[k];
        rb_free(f->run);
        rb_free(f->signal);
        rb_free(f->channel);
        rb_free(f->element);
    }
    rb_free(res->faults);
    res->faults = NULL;
    res->n_faults = 0;
}
