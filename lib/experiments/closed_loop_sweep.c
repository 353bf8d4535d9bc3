/* The closed loop over mismatch levels and disturbance strengths (roboest/experiments.h, rb_closed_loop_sweep): the
 * same experiment at every point, its torque RMSE and divergences per configuration; the stability and sensitivity
 * tables, their JSON for roboest check, the figure of Table II's ratios against the level. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

typedef struct progress_shift {
    const rb_closed_loop_opts *opts;
    size_t offset, total;
} progress_shift;

static int shifted(void *user, size_t done, size_t total)
{
    (void)total;
    progress_shift *p = user;
    return p->opts->progress(p->opts->user, p->offset + done, p->total);
}

/* The scenario's own level (1 without a level) and scale 1, or the nearest listed. */
static size_t nearest(const double *v, size_t n, double x)
{
    size_t best = n - 1;
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i] - x) < fabs(v[best] - x))
            best = i;
    return best;
}

/* One point: the scenario with its level and scaled disturbances. */
static int run_point(const rb_closed_loop *cl, const rb_closed_loop_opts *opts, double level, double scale,
                     rb_closed_loop_result **out, rb_err *err)
{
    rb_scenario scn = *cl->scenario; /* shallow: only sim's level and the pushes change */
    rb_sim_scenario *sc = &scn.sim;
    rb_sim_push *pushes = rb_calloc(sc->n_pushes ? sc->n_pushes : 1, sizeof *pushes);
    if (!pushes)
        return nomem(err);
    for (size_t i = 0; i < sc->n_pushes; i++) {
        pushes[i] = sc->pushes[i];
        for (int k = 0; k < 6; k++)
            pushes[i].peak[k] *= scale;
    }
    sc->pushes = pushes;
    sc->random_pushes.force_min *= scale, sc->random_pushes.force_max *= scale;
    sc->random_contacts.force_min *= scale, sc->random_contacts.force_max *= scale;
    if (cl->n_levels)
        sc->mismatch.level = level;
    rb_closed_loop c2 = *cl;
    c2.scenario = &scn;
    int rc = rb_closed_loop_run(&c2, opts, out, err);
    rb_free(pushes);
    return rc;
}

int rb_closed_loop_sweep(const rb_closed_loop *cl, const rb_closed_loop_opts *opts, rb_closed_loop_result **out,
                         rb_err *err)
{
    *out = NULL;
    if (!cl->n_levels && !cl->n_scales)
        return rb_closed_loop_run(cl, opts, out, err);
    const rb_sim_mismatch *mm = &cl->scenario->sim.mismatch;
    double own_level = mm->enabled ? mm->level : 0.0, one = 1.0;
    size_t nl = cl->n_levels ? cl->n_levels : 1, ns = cl->n_scales ? cl->n_scales : 1, nc = cl->n_configs;
    const double *levels = cl->n_levels ? cl->levels : &own_level, *scales = cl->n_scales ? cl->scales : &one;
    struct rb_closed_loop_sweep *sw = rb_calloc(1, sizeof *sw);
    if (!sw)
        return nomem(err);
    sw->n_levels = nl, sw->n_scales = ns, sw->n_configs = nc, sw->n_seeds = cl->n_seeds;
    sw->levels = rb_calloc(nl, sizeof *sw->levels);
    sw->scales = rb_calloc(ns, sizeof *sw->scales);
    sw->rmse = rb_calloc(nl * ns * nc, sizeof *sw->rmse);
    sw->rmse_loop = rb_calloc(nl * ns * nc, sizeof *sw->rmse_loop);
    sw->diverged = rb_calloc(nl * ns * nc, sizeof *sw->diverged);
    sw->first_divergence = rb_calloc(nl * ns * nc, sizeof *sw->first_divergence);
    sw->cause = rb_calloc(nl * ns * nc * cl->n_seeds, sizeof *sw->cause);
    sw->t_end = rb_calloc(nl * ns * nc * cl->n_seeds, sizeof *sw->t_end);
    rb_closed_loop_result *main_r = NULL;
    int rc = sw->levels && sw->scales && sw->rmse && sw->rmse_loop && sw->diverged && sw->first_divergence &&
                     sw->cause && sw->t_end
                 ? RB_OK
                 : nomem(err);
    if (!rc) {
        memcpy(sw->levels, levels, nl * sizeof *levels);
        memcpy(sw->scales, scales, ns * sizeof *scales);
        sw->main = nearest(levels, nl, own_level) * ns + nearest(scales, ns, 1.0);
    }
    size_t per = nc * cl->n_seeds;
    progress_shift ps = {opts, 0, nl * ns * per};
    rb_closed_loop_opts o2 = opts ? *opts : (rb_closed_loop_opts){0};
    if (opts && opts->progress)
        o2.progress = shifted, o2.user = &ps;
    for (size_t p = 0; !rc && p < nl * ns; p++) {
        rb_closed_loop_result *r = NULL;
        ps.offset = p * per;
        double lv = levels[p / ns], sc = scales[p % ns];
        rc = run_point(cl, &o2, lv, sc, &r, err);
        if (rc) {
            rc = rb_err_prefix(err, rc, "mismatch level %g, disturbance scale %g: ", lv, sc);
            break;
        }
        for (size_t c = 0, row = 0; c < nc; c++) {
            size_t k = p * nc + c, nd = 0;
            double first = NAN, sum = 0.0, sum_loop = 0.0;
            bool fb = rb_cl_with_feedback(&cl->configs[c]);
            for (size_t s = 0; s < cl->n_seeds; s++) {
                const rb_closed_loop_status *st = &r->status[c * cl->n_seeds + s];
                sw->cause[k * cl->n_seeds + s] = (unsigned char)(st->diverged ? st->cause : RB_CL_STABLE);
                sw->t_end[k * cl->n_seeds + s] = st->t_end;
                if (st->diverged) {
                    nd++;
                    first = isnan(first) ? st->t_end : fmin(first, st->t_end);
                }
                sum += rb_comparison_at(r->torque, c, cl->n_joints, s)->rmse;
                if (fb)
                    sum_loop += rb_comparison_at(r->torque_loop, row, cl->n_joints, s)->rmse;
            }
            sw->rmse[k] = sum / (double)cl->n_seeds;
            sw->rmse_loop[k] = fb ? sum_loop / (double)cl->n_seeds : NAN;
            row += fb;
            sw->diverged[k] = nd;
            sw->first_divergence[k] = first;
        }
        if (p == sw->main)
            main_r = r;
        else
            rb_closed_loop_result_free(r);
    }
    if (rc) {
        rb_closed_loop_result_free(main_r);
        rb_free(sw->levels);
        rb_free(sw->scales);
        rb_free(sw->rmse);
        rb_free(sw->rmse_loop);
        rb_free(sw->diverged);
        rb_free(sw->first_divergence);
        rb_free(sw->cause);
        rb_free(sw->t_end);
        rb_free(sw);
        return rc;
    }
    main_r->sweep = sw;
    *out = main_r;
    return RB_OK;
}

/* ---- rendering ------------------------------------------------------------------------------------------------ */
static long config_index(const rb_closed_loop *cl, const char *name)
{
    for (size_t c = 0; c < cl->n_configs; c++)
        if (strcmp(cl->configs[c].name, name) == 0)
            return (long)c;
    return -1;
}

/* Table II's ratios: numerator / denominator configuration names. */
static const char *const RATIO_NAME[] = {"ratio_rnea_ukf_pinn", "ratio_ukf_ukf_pinn", "ratio_rnea_pinn_rnea"};
static const char *const RATIO_LABEL[] = {"RNEA / UKF-PINN", "UKF / UKF-PINN", "RNEA-PINN / RNEA"};
static const char *const RATIO_NUM[] = {"rnea", "ukf", "rnea_pinn"};
static const char *const RATIO_DEN[] = {"ukf_pinn", "ukf_pinn", "rnea"};
static const double RATIO_PAPER[] = {4.37 / 1.08, 2.03 / 1.08, 7.03 / 4.37};
enum { N_RATIOS = 3 };

/* Ratio q at point p; q >= N_RATIOS: ratio q - N_RATIOS of the loop's own reading (rmse_loop). */
static double ratio_at(const rb_closed_loop *cl, const struct rb_closed_loop_sweep *sw, size_t p, int q)
{
    const double *v = q < N_RATIOS ? sw->rmse : sw->rmse_loop;
    q %= N_RATIOS;
    long a = config_index(cl, RATIO_NUM[q]), b = config_index(cl, RATIO_DEN[q]);
    if (a < 0 || b < 0)
        return NAN;
    return v[p * sw->n_configs + (size_t)a] / v[p * sw->n_configs + (size_t)b];
}

static const char *ratio_label(int q, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s", RATIO_LABEL[q % N_RATIOS], q < N_RATIOS ? " (truth)" : " (own estimate)");
    return buf;
}

static char *point_name(const struct rb_closed_loop_sweep *sw, size_t p)
{
    return rb_asprintf("level_%g_scale_%g", sw->levels[p / sw->n_scales], sw->scales[p % sw->n_scales]);
}

/* The sensitivity table of one reading: against the truth (tau_j vs tau_ref) or the loop's own (tau_hat vs tau_ref). */
static void sensitivity_md(const rb_closed_loop *cl, const struct rb_closed_loop_sweep *sw, int loop, FILE *b)
{
    size_t s0 = sw->main % sw->n_scales, nc = sw->n_configs;
    const double *v = loop ? sw->rmse_loop : sw->rmse;
    fprintf(b,
            "\n## Sensitivity: torque tracking RMSE, %s (N m, mean over the seeds) against the mismatch level, "
            "disturbance x%g\n\n| Level |",
            loop ? "the loop's own estimate tau_hat against tau_ref (the paper's reading)" : "tau_j against tau_ref",
            sw->scales[s0]);
    for (size_t c = 0; c < nc; c++)
        fprintf(b, " %s |", cl->configs[c].label);
    bool has[N_RATIOS];
    size_t nr = 0;
    for (int q = 0; q < N_RATIOS; q++)
        if ((has[q] = !isnan(ratio_at(cl, sw, sw->main, q + loop * N_RATIOS))))
            fprintf(b, " %s |", RATIO_LABEL[q]), nr++;
    fputs(" diverged |\n|---|", b);
    for (size_t i = 0; i < nc + nr + 1; i++)
        fputs("---|", b);
    fputs("\n", b);
    for (size_t l = 0; l < sw->n_levels; l++) {
        size_t p = l * sw->n_scales + s0, nd = 0;
        fprintf(b, "| %g |", sw->levels[l]);
        for (size_t c = 0; c < nc; c++) {
            if (isnan(v[p * nc + c]))
                fputs(" - |", b);
            else
                fprintf(b, " %.4g |", v[p * nc + c]);
            nd += sw->diverged[p * nc + c];
        }
        for (int q = 0; q < N_RATIOS; q++)
            if (has[q])
                fprintf(b, " %.3g |", ratio_at(cl, sw, p, q + loop * N_RATIOS));
        fprintf(b, " %zu |\n", nd);
    }
    fputs("| paper |", b);
    for (size_t c = 0; c < nc; c++)
        fputs(" |", b);
    for (int q = 0; q < N_RATIOS; q++)
        if (has[q])
            fprintf(b, " %.3g |", RATIO_PAPER[q]);
    fputs(" RNEA-PINN unstable in prolonged runs |\n", b);
}

static void render_md(const rb_closed_loop *cl, const struct rb_closed_loop_sweep *sw, FILE *b)
{
    size_t np = sw->n_levels * sw->n_scales, nc = sw->n_configs;
    fprintf(b, "## Stability: diverged runs of %zu seeds (earliest divergence, s)\n\n| Configuration |", sw->n_seeds);
    for (size_t p = 0; p < np; p++)
        fprintf(b, " level %g, disturbance x%g |", sw->levels[p / sw->n_scales], sw->scales[p % sw->n_scales]);
    fputs("\n|---|", b);
    for (size_t p = 0; p < np; p++)
        fputs("---|", b);
    fputs("\n", b);
    for (size_t c = 0; c < nc; c++) {
        fprintf(b, "| %s |", cl->configs[c].label);
        for (size_t p = 0; p < np; p++) {
            size_t k = p * nc + c;
            fprintf(b, " %zu/%zu", sw->diverged[k], sw->n_seeds);
            if (sw->diverged[k])
                fprintf(b, " (%.3g s)", sw->first_divergence[k]);
            fputs(" |", b);
        }
        fputs("\n", b);
    }
    size_t nd = 0;
    for (size_t k = 0; k < np * nc * sw->n_seeds; k++)
        nd += sw->cause[k] != RB_CL_STABLE;
    fprintf(b, "\n## Diverged runs: why and when (%zu of %zu)\n\n", nd, np * nc * sw->n_seeds);
    if (nd) {
        fputs("| Point | Configuration | seed | reason | t (s) |\n|---|---|---|---|---|\n", b);
        for (size_t p = 0; p < np; p++)
            for (size_t c = 0; c < nc; c++)
                for (size_t s = 0; s < sw->n_seeds; s++) {
                    size_t k = (p * nc + c) * sw->n_seeds + s;
                    if (sw->cause[k] != RB_CL_STABLE)
                        fprintf(b, "| level %g, disturbance x%g | %s | %llu | %s | %.4g |\n",
                                sw->levels[p / sw->n_scales], sw->scales[p % sw->n_scales], cl->configs[c].label,
                                (unsigned long long)cl->seeds[s], rb_cl_divergence_name(sw->cause[k]), sw->t_end[k]);
                }
    } else {
        fputs("None: every run completed.\n", b);
    }
    for (int loop = 0; loop < 2; loop++)
        sensitivity_md(cl, sw, loop, b);
}

static cJSON *stat_obj(double v)
{
    cJSON *o = cJSON_CreateObject(), *pl = cJSON_CreateArray();
    const char *const f[] = {"mean", "sd", "lo", "hi", "min", "max"};
    for (int i = 0; o && i < 6; i++)
        cJSON_AddNumberToObject(o, f[i], i == 1 ? 0.0 : v);
    if (o && pl) {
        cJSON_AddItemToArray(pl, cJSON_CreateNumber(v));
        cJSON_AddItemToObject(o, "per_log", pl);
    } else {
        cJSON_Delete(pl);
    }
    return o;
}

/* A variant {name, all: {stat: v(total)}, joints: {point: {stat: v(point)}}}; values NAN become null by cJSON. */
static cJSON *variant(const char *name, const char *const *stats, size_t n_stats, const struct rb_closed_loop_sweep *sw,
                      double (*value)(const void *, size_t, size_t, bool), const void *ctx)
{
    cJSON *v = cJSON_CreateObject(), *all = cJSON_CreateObject(), *joints = cJSON_CreateObject();
    if (!v || !all || !joints) {
        cJSON_Delete(v), cJSON_Delete(all), cJSON_Delete(joints);
        return NULL;
    }
    cJSON_AddStringToObject(v, "name", name);
    for (size_t k = 0; k < n_stats; k++)
        cJSON_AddItemToObject(all, stats[k], stat_obj(value(ctx, SIZE_MAX, k, true)));
    size_t np = sw->n_levels * sw->n_scales;
    for (size_t p = 0; p < np; p++) {
        char *pn = point_name(sw, p);
        cJSON *j = cJSON_CreateObject();
        for (size_t k = 0; j && k < n_stats; k++)
            cJSON_AddItemToObject(j, stats[k], stat_obj(value(ctx, p, k, false)));
        if (pn && j)
            cJSON_AddItemToObject(joints, pn, j);
        else
            cJSON_Delete(j);
        rb_free(pn);
    }
    cJSON_AddItemToObject(v, "all", all);
    cJSON_AddItemToObject(v, "joints", joints);
    return v;
}

typedef struct vctx {
    const rb_closed_loop *cl;
    const struct rb_closed_loop_sweep *sw;
    size_t c;
    int q;
} vctx;

/* Configuration c: diverged, diverged_fraction, rmse, rmse_loop, diverged_com, diverged_saturation at point p; over
 * every point (p SIZE_MAX): the sums / worst. */
static double config_value(const void *ctx, size_t p, size_t k, bool total)
{
    const vctx *x = ctx;
    const struct rb_closed_loop_sweep *sw = x->sw;
    size_t np = sw->n_levels * sw->n_scales, from = total ? 0 : p, to = total ? np : p + 1, nd = 0, ncause = 0;
    double worst = 0.0, worst_loop = 0.0;
    for (size_t i = from; i < to; i++) {
        nd += sw->diverged[i * sw->n_configs + x->c];
        for (size_t s = 0; k >= 4 && s < sw->n_seeds; s++)
            ncause += sw->cause[(i * sw->n_configs + x->c) * sw->n_seeds + s] ==
                      (k == 4 ? RB_CL_DIV_COM : RB_CL_DIV_SATURATION);
        worst = fmax(worst, sw->rmse[i * sw->n_configs + x->c]);
        worst_loop = fmax(worst_loop, sw->rmse_loop[i * sw->n_configs + x->c]);
    }
    double runs = (double)((to - from) * sw->n_seeds);
    if (k >= 4) /* diverged_com, diverged_saturation */
        return (double)ncause;
    if (k == 3) /* no feedback: no estimate to read */
        return isnan(sw->rmse_loop[from * sw->n_configs + x->c]) ? NAN : worst_loop;
    return k == 0 ? (double)nd : k == 1 ? (double)nd / runs : worst;
}

static double ratio_value(const void *ctx, size_t p, size_t k, bool total)
{
    (void)k;
    const vctx *x = ctx;
    return ratio_at(x->cl, x->sw, total ? x->sw->main : p, x->q);
}

/* Every run's status: [{point, configuration, seed, status: "completed" | "diverged", reason, t_end}]. */
static cJSON *runs_json(const rb_closed_loop *cl, const struct rb_closed_loop_sweep *sw)
{
    cJSON *runs = cJSON_CreateArray();
    size_t np = sw->n_levels * sw->n_scales, nc = sw->n_configs;
    for (size_t p = 0; runs && p < np; p++) {
        char *pn = point_name(sw, p);
        for (size_t c = 0; pn && c < nc; c++)
            for (size_t s = 0; s < sw->n_seeds; s++) {
                size_t k = (p * nc + c) * sw->n_seeds + s;
                cJSON *o = cJSON_CreateObject();
                if (!o) {
                    rb_free(pn);
                    cJSON_Delete(runs);
                    return NULL;
                }
                cJSON_AddStringToObject(o, "point", pn);
                cJSON_AddStringToObject(o, "configuration", cl->configs[c].name);
                cJSON_AddNumberToObject(o, "seed", (double)cl->seeds[s]);
                cJSON_AddStringToObject(o, "status", sw->cause[k] == RB_CL_STABLE ? "completed" : "diverged");
                if (sw->cause[k] != RB_CL_STABLE)
                    cJSON_AddStringToObject(o, "reason", rb_cl_divergence_name(sw->cause[k]));
                cJSON_AddNumberToObject(o, "t_end", sw->t_end[k]);
                cJSON_AddItemToArray(runs, o);
            }
        if (!pn) {
            cJSON_Delete(runs);
            return NULL;
        }
        rb_free(pn);
    }
    return runs;
}

static int render_json(const rb_closed_loop *cl, const struct rb_closed_loop_sweep *sw, char **json, rb_err *err)
{
    static const char *const STATS[] = {"diverged",     "diverged_fraction",   "rmse", "rmse_loop",
                                        "diverged_com", "diverged_saturation", "ratio"};
    enum { N_STATS = sizeof STATS / sizeof STATS[0] };
    cJSON *root = cJSON_CreateObject(), *vars = cJSON_CreateArray(), *joints = cJSON_CreateArray(),
          *logs = cJSON_CreateArray(), *stats = cJSON_CreateArray();
    bool ok = root && vars && joints && logs && stats;
    for (int k = 0; ok && k < N_STATS; k++)
        cJSON_AddItemToArray(stats, cJSON_CreateString(STATS[k]));
    cJSON_AddItemToArray(logs, cJSON_CreateString("sweep"));
    for (size_t p = 0; ok && p < sw->n_levels * sw->n_scales; p++) {
        char *pn = point_name(sw, p);
        ok = pn != NULL;
        if (ok)
            cJSON_AddItemToArray(joints, cJSON_CreateString(pn));
        rb_free(pn);
    }
    for (size_t c = 0; ok && c < cl->n_configs; c++) {
        vctx x = {cl, sw, c, 0};
        cJSON *v = variant(cl->configs[c].name, STATS, N_STATS - 1, sw, config_value, &x);
        ok = v != NULL;
        cJSON_AddItemToArray(vars, v);
    }
    for (int q = 0; ok && q < 2 * N_RATIOS; q++) {
        vctx x = {cl, sw, 0, q};
        char name[64];
        snprintf(name, sizeof name, "%s%s", RATIO_NAME[q % N_RATIOS], q < N_RATIOS ? "" : "_loop");
        cJSON *v =
            isnan(ratio_at(cl, sw, sw->main, q)) ? NULL : variant(name, STATS + N_STATS - 1, 1, sw, ratio_value, &x);
        if (v)
            cJSON_AddItemToArray(vars, v);
    }
    if (ok) {
        cJSON_AddStringToObject(root, "title",
                                "closed-loop stability and sensitivity over the mismatch levels and "
                                "disturbance scales (all: every point; ratios: the main point)");
        cJSON_AddStringToObject(root, "closed_loop_sha256", cl->sha256);
        cJSON_AddItemToObject(root, "statistics", stats);
        cJSON_AddItemToObject(root, "logs", logs);
        cJSON_AddItemToObject(root, "joints", joints);
        cJSON_AddItemToObject(root, "variants", vars);
        cJSON *runs = runs_json(cl, sw);
        ok = runs != NULL;
        if (ok)
            cJSON_AddItemToObject(root, "runs", runs);
        *json = ok ? cJSON_Print(root) : NULL;
        ok = *json != NULL;
    } else {
        cJSON_Delete(vars), cJSON_Delete(joints), cJSON_Delete(logs), cJSON_Delete(stats);
    }
    cJSON_Delete(root);
    if (ok) { /* cJSON allocates with malloc: hand the caller an rb_ string */
        char *copy = rb_asprintf("%s\n", *json);
        cJSON_free(*json);
        *json = copy;
        ok = copy != NULL;
    }
    return ok ? RB_OK : nomem(err);
}

static int render_svg(const rb_closed_loop *cl, const struct rb_closed_loop_sweep *sw, char **svg, rb_err *err)
{
    *svg = NULL;
    if (sw->n_levels < 2)
        return RB_OK;
    size_t nl = sw->n_levels, s0 = sw->main % sw->n_scales;
    double *y = rb_calloc((2 * N_RATIOS + 1) * nl, sizeof *y);
    if (!y)
        return nomem(err);
    rb_trace_line lines[2 * N_RATIOS + 1];
    char labels[2 * N_RATIOS][64];
    size_t n = 1;
    for (size_t l = 0; l < nl; l++)
        y[l] = 1.0;
    lines[0] = (rb_trace_line){"ratio 1 (no spread)", sw->levels, y, nl};
    for (int q = 0; q < 2 * N_RATIOS; q++) {
        double *yq = y + (size_t)(q + 1) * nl;
        for (size_t l = 0; l < nl; l++)
            yq[l] = ratio_at(cl, sw, l * sw->n_scales + s0, q);
        if (!isnan(yq[0]))
            lines[n++] = (rb_trace_line){ratio_label(q, labels[q], sizeof labels[q]), sw->levels, yq, nl};
    }
    int rc = rb_svg_xy("Table II's RMSE ratios against the plant-model mismatch", "mismatch level (1: realistic)",
                       "RMSE ratio", lines, n, svg, err);
    rb_free(y);
    return rc;
}

int rb_closed_loop_sweep_render(const rb_closed_loop *cl, const rb_closed_loop_result *r, char **md, char **json,
                                char **svg, rb_err *err)
{
    *md = *json = *svg = NULL;
    if (!r->sweep)
        return RB_OK;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return nomem(err);
    render_md(cl, r->sweep, f);
    bool ok = fclose(f) == 0;
    *md = ok && buf ? rb_strndup(buf, len) : NULL;
    free(buf); /* open_memstream's buffer comes from malloc */
    int rc = *md ? RB_OK : nomem(err);
    if (!rc)
        rc = render_json(cl, r->sweep, json, err);
    if (!rc)
        rc = render_svg(cl, r->sweep, svg, err);
    if (rc) {
        rb_free(*md), rb_free(*json), rb_free(*svg);
        *md = *json = *svg = NULL;
    }
    return rc;
}
