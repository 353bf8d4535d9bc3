/* The signal graph of a parsed pipeline: every signal produced exactly once, every stage input, wired
 * stage output and metric operand wired to one, stages in dependency order (ties in file order, cycles
 * reported), and no two files written to the same path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_internal.h"

typedef struct graph {
    rb_name_ref *by_name; /* every signal-table entry, sorted by name */
    size_t *order;        /* execution order: file indices of stages */
} graph;

static long lookup(const rb_pipeline *p, const graph *g, const char *name)
{
    size_t lo = 0, hi = p->n_signal_table;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->by_name[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_signal_table && strcmp(g->by_name[lo].name, name) == 0 ? (long)g->by_name[lo].index : -1;
}

/* Where a signal comes from, as a key path, for messages. */
static void producer_text(const rb_pipeline *p, size_t t, char *buf, size_t size)
{
    const rb_signal_info *s = &p->signal_table[t];
    if (!s->from_stage) {
        rb_json_step path[2] = {{"signals", 0}, {s->name, 0}};
        rb_json_path_format(path, 2, buf, size);
        return;
    }
    const rb_config_stage *st = &p->stages[s->index];
    snprintf(buf, size, "stages[%zu].out.%s", st->file_index, st->type->outputs[s->port]);
}

/* Point messages at a path from the root: these checks span sections. */
static void at_path(pload *x, const rb_json_step *steps, size_t n)
{
    x->c.depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (steps[i].key)
            rb_cfg_push_key(&x->c, steps[i].key, steps[i].index);
        else
            rb_cfg_push_index(&x->c, steps[i].index);
    }
}

/* stages[stage].<dir>.<port>, stage being a file index. */
static void at_stage_port(pload *x, size_t stage, const char *dir, const char *port)
{
    at_path(x, (const rb_json_step[]){{"stages", 0}, {NULL, stage}, {dir, 0}, {port, 0}}, 4);
}

/* Bindings first, then the wired stage outputs in file order (stages are still in file order here); an
 * unwired output port has no signal (out_signal SIZE_MAX). */
static int build_table(pload *x, graph *g)
{
    rb_pipeline *p = x->p;
    size_t n = p->n_signals;
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0; j < p->stages[s].type->n_outputs; j++)
            n += p->stages[s].out[j] != NULL;
    p->signal_table = rb_calloc(n ? n : 1, sizeof *p->signal_table);
    g->by_name = rb_malloc((n ? n : 1) * sizeof *g->by_name);
    if (!p->signal_table || !g->by_name)
        return rb_cfg_nomem(&x->c);
    p->n_signal_table = n;
    size_t t = 0;
    for (size_t i = 0; i < p->n_signals; i++, t++)
        p->signal_table[t] = (rb_signal_info){p->signals[i].name, false, i, 0, false};
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0; j < p->stages[s].type->n_outputs; j++) {
            p->stages[s].out_signal[j] = p->stages[s].out[j] ? t : SIZE_MAX;
            if (p->stages[s].out[j])
                p->signal_table[t++] = (rb_signal_info){p->stages[s].out[j], true, s, j, false};
        }
    for (size_t i = 0; i < n; i++)
        g->by_name[i] = (rb_name_ref){p->signal_table[i].name, i};
    qsort(g->by_name, n, sizeof *g->by_name, rb_name_ref_cmp);
    return RB_OK;
}

/* A signal produced twice: report the later producer in table order, the earliest such. */
static int check_produced_once(pload *x, graph *g)
{
    const rb_pipeline *p = x->p;
    size_t dup, first;
    rb_name_refs_first_repeat(g->by_name, p->n_signal_table, &dup, &first);
    if (dup == SIZE_MAX)
        return RB_OK;
    /* Bindings are unique object keys and come first, so the later producer is normally a stage output. */
    const rb_signal_info *s = &p->signal_table[dup];
    char other[256];
    producer_text(p, first, other, sizeof other);
    if (s->from_stage)
        at_stage_port(x, s->index, "out", p->stages[s->index].type->outputs[s->port]);
    else
        at_path(x, (const rb_json_step[]){{"signals", 0}, {s->name, 1}}, 2);
    return rb_cfg_error(&x->c, "signal '%s' is already produced by %s", s->name, other);
}

static int unknown_signal(pload *x, const char *name)
{
    rb_suggest s;
    rb_suggest_init(&s, name);
    for (size_t t = 0; t < x->p->n_signal_table; t++)
        rb_suggest_consider(&s, x->p->signal_table[t].name);
    const char *best = rb_suggest_best(&s);
    if (best)
        return rb_cfg_error(&x->c, "signal '%s' is not produced by any signal binding or stage (did you mean '%s'?)",
                            name, best);
    return rb_cfg_error(&x->c, "signal '%s' is not produced by any signal binding or stage", name);
}

static int wire_inputs(pload *x, graph *g)
{
    for (size_t s = 0; s < x->p->n_stages; s++) {
        rb_config_stage *st = &x->p->stages[s];
        for (size_t j = 0; j < st->type->n_inputs; j++) {
            if (!st->in[j]) { /* an optional port left unwired */
                st->in_signal[j] = SIZE_MAX;
                continue;
            }
            long t = lookup(x->p, g, st->in[j]);
            if (t < 0) {
                at_stage_port(x, s, "in", st->type->inputs[j]);
                return unknown_signal(x, st->in[j]);
            }
            st->in_signal[j] = (size_t)t;
        }
    }
    return RB_OK;
}

/* Min-heap of stage file indices, so ready stages run in file order. */
static void heap_push(size_t *h, size_t *n, size_t v)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n)
{
    size_t top = h[0], v = h[--*n], i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < *n && h[l] < v)
            m = l;
        if (l + 1 < *n && h[l + 1] < (m == i ? v : h[m]))
            m = l + 1;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    if (*n)
        h[i] = v;
    return top;
}

/* Producer stage (file index) of input j of stage s, SIZE_MAX for a binding. */
static size_t producer(const rb_pipeline *p, size_t s, size_t j)
{
    if (p->stages[s].in_signal[j] == SIZE_MAX)
        return SIZE_MAX;
    const rb_signal_info *si = &p->signal_table[p->stages[s].in_signal[j]];
    return si->from_stage ? si->index : SIZE_MAX;
}

/* Walk back from an unfinished stage through unfinished producers until a stage repeats: a cycle. */
static int report_cycle(pload *x, const size_t *indeg, size_t start)
{
    rb_pipeline *p = x->p;
    size_t n = p->n_stages, len = 0, cur = start;
    size_t *seen_at = rb_malloc(n * sizeof *seen_at), *walk = rb_malloc(n * sizeof *walk),
           *via = rb_malloc(n * sizeof *via);
    int rc;
    if (!seen_at || !walk || !via) {
        rc = rb_cfg_nomem(&x->c);
        goto done;
    }
    for (size_t s = 0; s < n; s++)
        seen_at[s] = SIZE_MAX;
    while (seen_at[cur] == SIZE_MAX) {
        seen_at[cur] = len;
        walk[len] = cur;
        size_t j = 0, from = SIZE_MAX;
        for (; j < p->stages[cur].type->n_inputs; j++) {
            from = producer(p, cur, j);
            if (from != SIZE_MAX && indeg[from] > 0)
                break;
        }
        via[len++] = j;
        cur = from;
    }
    char flow[512];
    size_t used = (size_t)snprintf(flow, sizeof flow, "%s", p->stages[cur].id);
    for (size_t k = len; k-- > seen_at[cur] && used < sizeof flow;)
        used += (size_t)snprintf(flow + used, sizeof flow - used, " -> %s",
                                 p->stages[k == seen_at[cur] ? cur : walk[k]].id);
    at_stage_port(x, cur, "in", p->stages[cur].type->inputs[via[seen_at[cur]]]);
    rc = rb_cfg_error(&x->c, "dependency cycle: %s", flow);
done:
    rb_free(seen_at);
    rb_free(walk);
    rb_free(via);
    return rc;
}

/* Consumers of each stage as adjacency lists: consumers of s are edges[first[s] .. first[s+1]). */
static int build_edges(pload *x, size_t **first_out, size_t **edges_out, size_t *indeg)
{
    const rb_pipeline *p = x->p;
    size_t n = p->n_stages;
    size_t *first = rb_calloc(n + 1, sizeof *first), *cursor = rb_malloc((n + 1) * sizeof *cursor), *edges = NULL;
    if (!first || !cursor)
        goto fail;
    for (size_t s = 0; s < n; s++)
        for (size_t j = 0; j < p->stages[s].type->n_inputs; j++) {
            size_t from = producer(p, s, j);
            if (from != SIZE_MAX) {
                indeg[s]++;
                first[from + 1]++;
            }
        }
    for (size_t s = 0; s < n; s++)
        first[s + 1] += first[s];
    memcpy(cursor, first, (n + 1) * sizeof *cursor);
    edges = rb_malloc((first[n] ? first[n] : 1) * sizeof *edges);
    if (!edges)
        goto fail;
    for (size_t s = 0; s < n; s++)
        for (size_t j = 0; j < p->stages[s].type->n_inputs; j++) {
            size_t from = producer(p, s, j);
            if (from != SIZE_MAX)
                edges[cursor[from]++] = s;
        }
    rb_free(cursor);
    *first_out = first;
    *edges_out = edges;
    return RB_OK;
fail:
    rb_free(first);
    rb_free(cursor);
    rb_free(edges);
    return rb_cfg_nomem(&x->c);
}

/* Kahn's algorithm over stages, ready stages taken in file order; indeg counts unfinished producer
 * edges (with multiplicity). */
static int order_stages(pload *x, graph *g)
{
    size_t n = x->p->n_stages, n_heap = 0, n_done = 0;
    size_t *indeg = rb_calloc(n ? n : 1, sizeof *indeg), *heap = rb_malloc((n ? n : 1) * sizeof *heap);
    size_t *first = NULL, *edges = NULL;
    g->order = rb_malloc((n ? n : 1) * sizeof *g->order);
    int rc = !indeg || !heap || !g->order ? rb_cfg_nomem(&x->c) : build_edges(x, &first, &edges, indeg);
    if (rc)
        goto done;
    for (size_t s = 0; s < n; s++)
        if (indeg[s] == 0)
            heap_push(heap, &n_heap, s);
    while (n_heap) {
        size_t s = heap_pop(heap, &n_heap);
        g->order[n_done++] = s;
        for (size_t e = first[s]; e < first[s + 1]; e++)
            if (--indeg[edges[e]] == 0)
                heap_push(heap, &n_heap, edges[e]);
    }
    if (n_done < n) {
        size_t start = 0;
        while (indeg[start] == 0)
            start++;
        rc = report_cycle(x, indeg, start);
    }
done:
    rb_free(indeg);
    rb_free(heap);
    rb_free(first);
    rb_free(edges);
    return rc;
}

/* Put the stages in execution order and point the signal table at the new positions. */
static int apply_order(pload *x, graph *g)
{
    rb_pipeline *p = x->p;
    size_t n = p->n_stages;
    rb_config_stage *sorted = rb_malloc((n ? n : 1) * sizeof *sorted);
    size_t *pos = rb_malloc((n ? n : 1) * sizeof *pos);
    if (!sorted || !pos) {
        rb_free(sorted);
        rb_free(pos);
        return rb_cfg_nomem(&x->c);
    }
    for (size_t k = 0; k < n; k++) {
        sorted[k] = p->stages[g->order[k]];
        pos[g->order[k]] = k;
    }
    for (size_t t = 0; t < p->n_signal_table; t++)
        if (p->signal_table[t].from_stage)
            p->signal_table[t].index = pos[p->signal_table[t].index];
    rb_free(p->stages);
    p->stages = sorted;
    rb_free(pos);
    return RB_OK;
}

/* An output signal or metric operand: wired to its producer and kept for every sample. */
static int resolve_ref(pload *x, const graph *g, const char *name, size_t *index)
{
    long t = lookup(x->p, g, name);
    if (t < 0)
        return unknown_signal(x, name);
    *index = (size_t)t;
    x->p->signal_table[t].recorded = true;
    return RB_OK;
}

static int wire_outputs(pload *x, graph *g)
{
    for (size_t o = 0; o < x->p->n_outputs; o++) {
        rb_config_output *out = &x->p->outputs[o];
        for (size_t i = 0; i < out->n_signals; i++) {
            at_path(x, (const rb_json_step[]){{"outputs", 0}, {NULL, o}, {"signals", 0}, {NULL, i}}, 4);
            int rc = resolve_ref(x, g, out->signals[i], &out->signal_index[i]);
            for (size_t k = 0; !rc && k < i; k++)
                if (out->signal_index[k] == out->signal_index[i])
                    rc = rb_cfg_error(&x->c, "signal '%s' is listed twice", out->signals[i]);
            if (rc)
                return rc;
        }
    }
    return RB_OK;
}

static int wire_metrics(pload *x, graph *g)
{
    for (size_t m = 0; m < x->p->n_metrics; m++) {
        rb_config_metric *mt = &x->p->metrics[m];
        at_path(x, (const rb_json_step[]){{"metrics", 0}, {NULL, m}, {"estimate", 0}}, 3);
        int rc = resolve_ref(x, g, mt->estimate, &mt->estimate_index);
        if (!rc && !mt->reference_log.path) { /* with reference_log: a channel of that file */
            at_path(x, (const rb_json_step[]){{"metrics", 0}, {NULL, m}, {"reference", 0}}, 3);
            rc = resolve_ref(x, g, mt->reference, &mt->reference_index);
        }
        if (!rc && mt->where) {
            at_path(x, (const rb_json_step[]){{"metrics", 0}, {NULL, m}, {"where", 0}}, 3);
            rc = resolve_ref(x, g, mt->where, &mt->where_index);
        }
        if (rc)
            return rc;
    }
    return RB_OK;
}

/* Output and report files share the output folder: no two may have the same path. */
static int check_files(pload *x)
{
    rb_pipeline *p = x->p;
    size_t n = p->n_outputs + p->n_reports, dup, first;
    const char **paths = rb_malloc((n ? n : 1) * sizeof *paths);
    if (!paths)
        return rb_cfg_nomem(&x->c);
    for (size_t i = 0; i < p->n_outputs; i++)
        paths[i] = p->outputs[i].path;
    for (size_t i = 0; i < p->n_reports; i++)
        paths[p->n_outputs + i] = p->reports[i].path;
    int rc = rb_cfg_find_duplicate(&x->c, paths, n, &dup, &first);
    const char *path = dup != SIZE_MAX ? paths[dup] : NULL;
    rb_free(paths);
    if (rc || !path)
        return rc;
    char other[64];
    if (first < p->n_outputs)
        snprintf(other, sizeof other, "outputs[%zu].path", first);
    else
        snprintf(other, sizeof other, "reports[%zu]", first - p->n_outputs);
    if (dup < p->n_outputs)
        at_path(x, (const rb_json_step[]){{"outputs", 0}, {NULL, dup}, {"path", 0}}, 3);
    else
        at_path(x, (const rb_json_step[]){{"reports", 0}, {NULL, dup - p->n_outputs}}, 2);
    return rb_cfg_error(&x->c, "'%s' is also written by %s", path, other);
}

int rb_cfg_check_graph(pload *x)
{
    /* In order: each pass relies on the ones before it (inputs are wired before ordering, the table
     * points at execution positions before outputs and metrics use it). */
    static int (*const passes[])(pload *, graph *) = {
        build_table, check_produced_once, wire_inputs, order_stages, apply_order, wire_outputs, wire_metrics,
    };
    graph g = {NULL, NULL};
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < sizeof passes / sizeof passes[0]; i++)
        rc = passes[i](x, &g);
    rb_free(g.by_name);
    rb_free(g.order);
    if (!rc)
        rc = check_files(x);
    if (!rc && x->p->n_reports && !x->p->n_metrics) {
        at_path(x, (const rb_json_step[]){{"reports", 0}}, 1);
        rc = rb_cfg_error(&x->c, "there is nothing to report: add a \"metrics\" entry");
    }
    return rc;
}
