/* The stage engine: a pipeline's stages created on a clock and stepped, for the log runner (run.c) and the
 * stream (stream.c) alike. Everything that can allocate happens at set-up; the loop only moves pointers
 * along precomputed tables and calls step().
 *
 * Samples run in blocks of up to RB_STAGE_BLOCK, stage by stage: every stage steps the whole block before
 * the next stage starts. The stages form a DAG of causal steps (graph.c refuses cycles) and each reads only
 * its inputs at sample k and its own state, so this computes exactly what sample by sample does; it lets a
 * stage with a block step (rb_stage_type.step_block) reuse what it reads per sample (a network's weights)
 * across the block. A stage output nobody keeps holds one block of rows, rewritten every block. */
#include <string.h>

#include "pipeline_internal.h"

static int nomem(rb_engine *e) { return rb_err_set(e->err, RB_ENOMEM, "%s: out of memory", e->label); }

char **rb_pipeline_copy_strings(const char *const *src, const size_t *sel, size_t n, bool numbered)
{
    char **out = rb_calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++) {
        const char *s = src ? src[sel ? sel[i] : i] : NULL;
        out[i] = s ? rb_strdup(s) : numbered ? rb_asprintf("%zu", i) : rb_strdup("");
        if (!out[i]) {
            for (size_t k = 0; k < i; k++)
                rb_free(out[k]);
            rb_free(out);
            return NULL;
        }
    }
    return out;
}

int rb_engine_init(rb_engine *e, const rb_pipeline *p, const char *label, rb_err *err)
{
    *e = (rb_engine){.p = p, .label = label, .err = err};
    e->sig = rb_calloc(p->n_signal_table ? p->n_signal_table : 1, sizeof *e->sig);
    e->state = rb_calloc(p->n_stages ? p->n_stages : 1, sizeof *e->state);
    e->blocked = rb_calloc(p->n_signal_table ? p->n_signal_table : 1, sizeof *e->blocked);
    return e->sig && e->state && e->blocked ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
}

/* The loop's tables, sized from the pipeline before the stages are created. */
static int alloc_tables(rb_engine *e)
{
    const rb_pipeline *p = e->p;
    size_t n = p->n_stages, ni = 0, no = 0;
    e->in_off = rb_calloc(n + 1, sizeof *e->in_off);
    e->out_off = rb_calloc(n + 1, sizeof *e->out_off);
    e->steps = rb_calloc(n + 1, sizeof *e->steps);
    e->block_steps = rb_calloc(n + 1, sizeof *e->block_steps);
    if (!e->in_off || !e->out_off || !e->steps || !e->block_steps)
        return nomem(e);
    for (size_t s = 0; s < n; s++) {
        e->in_off[s] = ni;
        e->out_off[s] = no;
        e->steps[s] = p->stages[s].type->step;
        e->block_steps[s] = p->stages[s].type->step_block;
        ni += p->stages[s].type->n_inputs;
        no += p->stages[s].type->n_outputs;
    }
    e->in_off[n] = e->n_in_ptr = ni;
    e->out_off[n] = e->n_out_ptr = no;
    e->in_ptr = rb_calloc(ni + 1, sizeof *e->in_ptr);
    e->in_base = rb_calloc(ni + 1, sizeof *e->in_base);
    e->in_stride = rb_calloc(ni + 1, sizeof *e->in_stride);
    e->in_row0 = rb_calloc(ni + 1, sizeof *e->in_row0);
    e->out_row0 = rb_calloc(no + 1, sizeof *e->out_row0);
    e->out_ptr = rb_calloc(no + 1, sizeof *e->out_ptr);
    e->out_base = rb_calloc(no + 1, sizeof *e->out_base);
    e->out_stride = rb_calloc(no + 1, sizeof *e->out_stride);
    e->out_width = rb_calloc(no + 1, sizeof *e->out_width);
    e->block_in = rb_calloc(ni + 1, sizeof *e->block_in);
    e->block_out = rb_calloc(no + 1, sizeof *e->block_out);
    if (!e->in_ptr || !e->in_base || !e->in_stride || !e->in_row0 || !e->out_row0 || !e->out_ptr || !e->out_base ||
        !e->out_stride || !e->out_width || !e->block_in || !e->block_out)
        return nomem(e);
    return RB_OK;
}

/* The wired outputs become signals; every port's width is kept for the scratch of the unwired ones. */
static int adopt_outputs(rb_engine *e, size_t s, const rb_port *out, size_t recorded_rows)
{
    const rb_config_stage *st = &e->p->stages[s];
    for (size_t j = 0; j < st->type->n_outputs; j++) {
        e->out_width[e->out_off[s] + j] = out[j].width;
        if (st->out_signal[j] == SIZE_MAX)
            continue;
        size_t t = st->out_signal[j], rows = e->p->signal_table[t].recorded ? recorded_rows : 1, count, bytes;
        bool windowed = e->windowed_out && e->windowed_out[t]; /* a window's rows (rb_engine_set_window) */
        rows = windowed && e->window_rows < rows ? e->window_rows : rows;
        e->blocked[t] = rows == 1 && !windowed; /* one block's rows, from the block's first sample on */
        rows = e->blocked[t] ? RB_STAGE_BLOCK : rows;
        rb_live_signal *ls = &e->sig[t];
        ls->width = out[j].width;
        ls->stride = ls->width;
        if (!rb_size_mul(rows, ls->width, &count) || !rb_size_mul(count, sizeof(double), &bytes))
            return rb_err_set(e->err, RB_ENOMEM, "%s: stage %s: output %s is too large", e->label, st->id,
                              st->type->outputs[j]);
        ls->data = rb_calloc(bytes ? bytes : 1, 1);
        ls->names = rb_pipeline_copy_strings(out[j].names, NULL, ls->width, true);
        ls->units = rb_pipeline_copy_strings(out[j].units, NULL, ls->width, false);
        if (!ls->data || !ls->names || !ls->units)
            return nomem(e);
    }
    return RB_OK;
}

static int create_stage(rb_engine *e, size_t s, const rb_stage_setup *clock, size_t recorded_rows, bool *failed)
{
    const rb_config_stage *st = &e->p->stages[s];
    const rb_stage_type *type = st->type;
    size_t n_ports = type->n_inputs + type->n_outputs;
    rb_port *ports = rb_calloc(n_ports ? n_ports : 1, sizeof *ports);
    if (!ports)
        return nomem(e);
    for (size_t j = 0; j < type->n_inputs; j++) {
        if (st->in_signal[j] == SIZE_MAX) /* an optional port left unwired */
            continue;
        const rb_live_signal *in = &e->sig[st->in_signal[j]];
        ports[j] = (rb_port){in->width, (const char *const *)in->names, (const char *const *)in->units};
    }
    rb_params params = {type, st->params};
    rb_stage_setup setup = {st->id,           &params,     ports,       ports + type->n_inputs, clock->dt,
                            clock->n_samples, clock->time, e->p->model, e->p->config_dir};
    int rc = type->create(&setup, &e->state[s], e->err);
    if (rc) {
        e->state[s] = NULL;
        *failed = true;
    } else {
        rc = adopt_outputs(e, s, setup.out, recorded_rows);
    }
    rb_free(ports);
    return rc;
}

/* Pointer tables for the loop: for port j, the row of sample k is base[j] + k * stride[j]. An unwired
 * output port's base is its own row of the scratch with stride 0, so the loop treats every port alike. */
static int build_tables(rb_engine *e)
{
    const rb_pipeline *p = e->p;
    size_t n_scratch = 0, used = 0;
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0; j < p->stages[s].type->n_outputs; j++) {
            size_t w = e->out_width[e->out_off[s] + j];
            if (p->stages[s].out_signal[j] != SIZE_MAX)
                continue;
            if (w > SIZE_MAX / sizeof(double) - n_scratch)
                return rb_err_set(e->err, RB_ENOMEM, "%s: stage %s: output %s is too large", e->label, p->stages[s].id,
                                  p->stages[s].type->outputs[j]);
            n_scratch += w;
        }
    if (!(e->scratch = rb_calloc(n_scratch ? n_scratch : 1, sizeof *e->scratch))) /* never NULL + offset */
        return nomem(e);
    for (size_t s = 0; s < p->n_stages; s++) {
        const rb_config_stage *st = &p->stages[s];
        for (size_t j = 0, i = e->in_off[s]; j < st->type->n_inputs; j++, i++) {
            if (st->in_signal[j] == SIZE_MAX) { /* unwired optional port: width 0, any valid pointer */
                e->in_base[i] = e->scratch;
                e->in_stride[i] = 0;
                continue;
            }
            e->in_base[i] = e->sig[st->in_signal[j]].data;
            e->in_stride[i] = e->sig[st->in_signal[j]].stride;
            if (e->blocked[st->in_signal[j]])
                e->block_in[e->n_block_in++] = i;
        }
        for (size_t j = 0, o = e->out_off[s]; j < st->type->n_outputs; j++, o++) {
            if (st->out_signal[j] == SIZE_MAX) {
                e->out_base[o] = e->scratch + used;
                e->out_stride[o] = 0;
                used += e->out_width[o];
            } else {
                e->out_base[o] = e->sig[st->out_signal[j]].data;
                e->out_stride[o] = e->sig[st->out_signal[j]].stride;
                if (e->blocked[st->out_signal[j]])
                    e->block_out[e->n_block_out++] = o;
            }
        }
    }
    return RB_OK;
}

int rb_engine_create(rb_engine *e, double dt, size_t n_samples, const double *time, size_t recorded_rows,
                     size_t *failed_stage)
{
    *failed_stage = SIZE_MAX;
    rb_stage_setup clock = {.dt = dt, .n_samples = n_samples, .time = time};
    int rc = alloc_tables(e);
    for (size_t s = 0; !rc && s < e->p->n_stages; s++) {
        bool failed = false;
        rc = create_stage(e, s, &clock, recorded_rows, &failed);
        if (failed)
            *failed_stage = s;
    }
    return rc ? rc : build_tables(e);
}

void rb_engine_set_window(rb_engine *e, const bool *whole, size_t k0)
{
    const rb_pipeline *p = e->p;
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0, i = e->in_off[s]; j < p->stages[s].type->n_inputs; j++, i++) {
            size_t t = p->stages[s].in_signal[j];
            e->in_row0[i] = t != SIZE_MAX && !whole[t] ? k0 : 0;
        }
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0, o = e->out_off[s]; j < p->stages[s].type->n_outputs; j++, o++) {
            size_t t = p->stages[s].out_signal[j];
            e->out_row0[o] = t != SIZE_MAX && !whole[t] ? k0 : 0;
        }
}

int rb_engine_watch_innovations(rb_engine *e, double k_sigma, double t_from)
{
    const rb_pipeline *p = e->p;
    size_t n = p->n_stages ? p->n_stages : 1;
    e->k_sigma = k_sigma;
    e->inno_from = t_from;
    e->inno = rb_calloc(n, sizeof *e->inno);
    e->inno_tally = rb_calloc(n, sizeof *e->inno_tally);
    if (!e->inno || !e->inno_tally)
        return nomem(e);
    for (size_t s = 0; s < p->n_stages; s++) {
        const rb_stage_type *type = p->stages[s].type;
        const rb_stage_innovations *in = type->innovations && e->state[s] ? type->innovations(e->state[s]) : NULL;
        if (!in || !in->m)
            continue;
        if (!(e->inno_tally[s] = rb_calloc(in->m, sizeof *e->inno_tally[s])))
            return nomem(e);
        rb_fault_tally_init(e->inno_tally[s], in->m);
        e->inno[s] = in;
    }
    return RB_OK;
}

/* Stage s's port pointers at the rows of sample k. */
static void point_at(rb_engine *e, size_t s, size_t k)
{
    for (size_t j = e->in_off[s]; j < e->in_off[s + 1]; j++)
        e->in_ptr[j] = e->in_base[j] + (k - e->in_row0[j]) * e->in_stride[j];
    for (size_t j = e->out_off[s]; j < e->out_off[s + 1]; j++)
        e->out_ptr[j] = e->out_base[j] + (k - e->out_row0[j]) * e->out_stride[j];
}

/* Stage s over samples [kb, ke): its block step, else step() sample by sample. On a failure, *failed_k is the
 * sample. */
static int stage_steps(rb_engine *e, size_t s, size_t kb, size_t ke, const double *time, size_t *failed_k)
{
    const double **in = e->in_ptr + e->in_off[s];
    double **out = e->out_ptr + e->out_off[s];
    void *state = e->state[s];
    const rb_stage_innovations *inno = e->inno ? e->inno[s] : NULL;
    if (e->block_steps[s] && !inno && ke - kb > 1) { /* a lone sample, as a stream steps: step() below */
        point_at(e, s, kb);
        size_t done = 0;
        int rc = e->block_steps[s](state, kb, ke - kb, time + kb, in, e->in_stride + e->in_off[s], out,
                                   e->out_stride + e->out_off[s], &done, e->err);
        if (rc != RB_OK)
            *failed_k = kb + done;
        return rc;
    }
    const rb_stage_step_fn step = e->steps[s];
    for (size_t k = kb; k < ke; k++) {
        point_at(e, s, k);
        const double t = time[k];
        int rc = step(state, k, t, in, out, e->err);
        if (rc != RB_OK) {
            *failed_k = k;
            return rc;
        }
        if (inno && t >= e->inno_from)
            rb_fault_outliers(inno->z, inno->m, e->k_sigma, k, e->inno_tally[s]);
    }
    return RB_OK;
}

int rb_engine_steps(rb_engine *e, size_t k0, size_t k1, const double *time, size_t *failed_k, size_t *failed_stage)
{
    for (size_t kb = k0, ke; kb < k1; kb = ke) {
        ke = k1 - kb < RB_STAGE_BLOCK ? k1 : kb + RB_STAGE_BLOCK;
        for (size_t j = 0; j < e->n_block_in; j++)
            e->in_row0[e->block_in[j]] = kb;
        for (size_t j = 0; j < e->n_block_out; j++)
            e->out_row0[e->block_out[j]] = kb;
        /* What sample by sample reports: the earliest failing sample, and at it the first stage. A stage failing
         * at k leaves the later stages [kb, k) to run: one of them may fail earlier. */
        int first = RB_OK;
        size_t end = ke;
        for (size_t s = 0; s < e->p->n_stages && kb < end; s++) {
            size_t k;
            int rc = stage_steps(e, s, kb, end, time, &k);
            if (rc != RB_OK) {
                first = rc, end = k;
                *failed_k = k, *failed_stage = s;
            }
        }
        if (first != RB_OK)
            return first;
    }
    return RB_OK;
}

int rb_engine_finish(rb_engine *e, size_t *failed_stage)
{
    for (size_t s = 0; s < e->p->n_stages; s++) {
        const rb_stage_type *type = e->p->stages[s].type;
        int rc = type->finish ? type->finish(e->state[s], e->err) : RB_OK;
        if (rc != RB_OK) {
            *failed_stage = s;
            return rc;
        }
    }
    return RB_OK;
}

void rb_engine_free(rb_engine *e)
{
    const rb_pipeline *p = e->p;
    if (!p)
        return;
    for (size_t s = 0; e->state && s < p->n_stages; s++)
        if (e->state[s] && p->stages[s].type->destroy)
            p->stages[s].type->destroy(e->state[s]);
    for (size_t t = 0; e->sig && t < p->n_signal_table; t++) {
        rb_strings_free(e->sig[t].names, e->sig[t].width);
        rb_strings_free(e->sig[t].units, e->sig[t].width);
        rb_free(e->sig[t].data);
    }
    for (size_t s = 0; e->inno_tally && s < p->n_stages; s++)
        rb_free(e->inno_tally[s]);
    rb_free(e->inno_tally);
    rb_free(e->inno);
    rb_free(e->sig);
    rb_free(e->state);
    rb_free(e->in_ptr);
    rb_free(e->in_base);
    rb_free(e->in_stride);
    rb_free(e->in_row0);
    rb_free(e->out_row0);
    rb_free(e->out_ptr);
    rb_free(e->out_base);
    rb_free(e->out_stride);
    rb_free(e->out_width);
    rb_free(e->scratch);
    rb_free(e->in_off);
    rb_free(e->out_off);
    rb_free(e->steps);
    rb_free(e->block_steps);
    rb_free(e->block_in);
    rb_free(e->block_out);
    rb_free(e->blocked);
    *e = (rb_engine){0};
}
