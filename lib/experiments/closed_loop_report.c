/* The closed loop's report: the joint-torque paper's layout as Markdown (Tables I and II), and the files of
 * rb_closed_loop_write. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

/* Mean over the seeds of statistic k, "± sd" added with several seeds. */
static void cell(FILE *f, const rb_closed_loop *cl, const rb_comparison *c, size_t v, size_t j, size_t k, double scale)
{
    const rb_summary *su = rb_comparison_summary(c, v, j, k);
    /* equal values across the seeds (a loop that reads no noisy sensor) leave rounding in the sd: show 0 */
    double sd = su->sd <= 1e-12 * fabs(su->mean) ? 0.0 : su->sd;
    if (cl->n_seeds > 1)
        fprintf(f, "%.3g ± %.2g", su->mean * scale, sd * scale);
    else
        fprintf(f, "%.3g", su->mean * scale);
}

static void axes_cell(FILE *f, const rb_closed_loop *cl, const rb_comparison *c, size_t v, size_t k)
{
    fputs("[", f);
    for (size_t a = 0; a < 3; a++) {
        if (a)
            fputs(", ", f);
        cell(f, cl, c, v, a, k, 1000.0);
    }
    fputs("]", f);
}

static void com_table(FILE *f, const rb_closed_loop *cl, const rb_comparison *c)
{
    fputs("| Configuration | Mean error [x, y, z] (mm) | Max error [x, y, z] (mm) |\n|---|---|---|\n", f);
    for (size_t v = 0; v < cl->n_configs; v++) {
        fprintf(f, "| %s | ", cl->configs[v].label);
        axes_cell(f, cl, c, v, ST_MAE);
        fputs(" | ", f);
        axes_cell(f, cl, c, v, ST_MAX_ABS);
        fputs(" |\n", f);
    }
}

/* RMSE, MAE, max abs pooled over the `width` elements of c, for the configurations `takes` keeps (the rows of c, in
 * order; NULL: all). */
static void estimate_table(FILE *f, const rb_closed_loop *cl, const rb_comparison *c, size_t width,
                           bool (*takes)(const rb_closed_loop_config *))
{
    static const size_t ks[] = {ST_RMSE, ST_MAE, ST_MAX_ABS};
    fputs("| Configuration | RMSE | MAE | max abs |\n|---|---|---|---|\n", f);
    for (size_t v = 0, row = 0; v < cl->n_configs; v++) {
        if (takes && !takes(&cl->configs[v]))
            continue;
        fprintf(f, "| %s |", cl->configs[v].label);
        for (size_t i = 0; i < 3; i++) {
            fputc(' ', f);
            cell(f, cl, c, row, width, ks[i], 1.0);
            fputs(" |", f);
        }
        fputc('\n', f);
        row++;
    }
}

/* The paper's Table II (seed 000, ergoCub, N m): MSE, RMSE, MAE per configuration name. */
static const struct {
    const char *name;
    double v[3];
} PAPER_II[] = {{"rnea", {19.2, 4.37, 2.82}},
                {"ukf", {4.13, 2.03, 1.45}},
                {"rnea_pinn", {49.43, 7.03, 4.12}},
                {"ukf_pinn", {1.18, 1.08, 0.70}}};

static const double *paper_ii(const char *name)
{
    for (size_t i = 0; i < sizeof PAPER_II / sizeof PAPER_II[0]; i++)
        if (strcmp(PAPER_II[i].name, name) == 0)
            return PAPER_II[i].v;
    return NULL;
}

/* Row of configuration v in a table of the configurations with feedback. */
static size_t feedback_row(const rb_closed_loop *cl, size_t v)
{
    size_t row = 0;
    for (size_t i = 0; i < v; i++)
        row += rb_cl_with_feedback(&cl->configs[i]);
    return row;
}

/* Table II both ways: the loop's own estimate against tau_ref (what a robot without joint torque sensors measures,
 * the paper's), the truth against tau_ref, the estimate's own error, the paper's numbers. */
static void loop_table(FILE *f, const rb_closed_loop *cl, const rb_closed_loop_result *r)
{
    size_t J = cl->n_joints;
    fprintf(f,
            "\n## Table II as the paper measures it: tau_hat (the loop's own estimate) against tau_ref (N m), t in "
            "[%g s, end]\n\nThe paper's robot has no joint torque sensor: its torque tracking can only compare the "
            "desired torque with the estimate its torque loop feeds back ([choice], configs/closed_loop/README.md). "
            "Beside it: the tracking against the true joint torque and the estimate's own error.\n\n",
            cl->settle);
    fputs("| Configuration | MSE | RMSE | MAE | RMSE tau_j vs tau_ref | RMSE tau_hat vs tau_j | paper MSE | paper RMSE "
          "| paper MAE |\n|---|---|---|---|---|---|---|---|---|\n",
          f);
    static const size_t ks[] = {ST_MSE, ST_RMSE, ST_MAE};
    for (size_t v = 0; v < cl->n_configs; v++) {
        if (!rb_cl_with_feedback(&cl->configs[v]))
            continue;
        size_t row = feedback_row(cl, v);
        fprintf(f, "| %s |", cl->configs[v].label);
        for (size_t i = 0; i < 3; i++) {
            fputc(' ', f);
            cell(f, cl, r->torque_loop, row, J, ks[i], 1.0);
            fputs(" |", f);
        }
        fputc(' ', f);
        cell(f, cl, r->torque, v, J, ST_RMSE, 1.0);
        fputs(" | ", f);
        cell(f, cl, r->estimation, row, J, ST_RMSE, 1.0);
        fputs(" |", f);
        const double *p = paper_ii(cl->configs[v].name);
        for (size_t i = 0; i < 3; i++)
            if (p)
                fprintf(f, " %.3g |", p[i]);
            else
                fputs(" |", f);
        fputc('\n', f);
    }
}

static void runs_table(FILE *f, const rb_closed_loop *cl, const rb_closed_loop_result *r)
{
    fputs("| Configuration | seed | status |\n|---|---|---|\n", f);
    for (size_t v = 0; v < cl->n_configs; v++)
        for (size_t s = 0; s < cl->n_seeds; s++) {
            const rb_closed_loop_status *st = &r->status[v * cl->n_seeds + s];
            fprintf(f, "| %s | %llu | ", cl->configs[v].label, (unsigned long long)cl->seeds[s]);
            if (st->diverged)
                fprintf(f, "diverged (%s, t = %.4g s): %s |\n", rb_cl_divergence_name(st->cause), st->t_end, st->why);
            else
                fprintf(f, "completed (%.4g s) |\n", st->t_end);
        }
}

static void markdown(FILE *f, const rb_closed_loop *cl, const rb_closed_loop_result *r)
{
    size_t J = cl->n_joints;
    fprintf(f, "# %s\n\n", cl->name);
    fprintf(f, "- closed loop: %s (sha256 %s)\n- scenario: %s (sha256 %s)\n", rb_path_basename(cl->path), cl->sha256,
            rb_path_basename(cl->scenario->path), cl->scenario->sha256);
    fprintf(f, "- seeds: %zu; %s\n- scored joints: %zu\n\n", cl->n_seeds,
            cl->n_seeds > 1 ? "cells are mean ± sd over the seeds" : "one run per configuration", J);
    fprintf(f, "## Table I: CoM error before the disturbances, t in [%g s, %g s)\n\n", cl->settle,
            cl->disturbances_from);
    com_table(f, cl, r->com_before);
    fprintf(f, "\n## Table II: torque tracking, tau_j against tau_ref (N m), t in [%g s, end]\n\n", cl->settle);
    fputs("| Configuration | MSE | RMSE | MAE | max abs | mean abs tau_j |\n|---|---|---|---|---|---|\n", f);
    for (size_t v = 0; v < cl->n_configs; v++) {
        static const size_t ks[] = {ST_MSE, ST_RMSE, ST_MAE, ST_MAX_ABS, ST_MEAN_ABS_EST};
        fprintf(f, "| %s |", cl->configs[v].label);
        for (size_t i = 0; i < 5; i++) {
            fputc(' ', f);
            cell(f, cl, r->torque, v, J, ks[i], 1.0);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    if (r->torque_loop)
        loop_table(f, cl, r);
    if (r->estimation) {
        fprintf(f, "\n## Torque estimation inside the loop, tau_hat against tau_j (N m), t in [%g s, end]\n\n",
                cl->settle);
        estimate_table(f, cl, r->estimation, cl->n_joints, rb_cl_with_feedback);
    }
    if (r->friction) {
        fprintf(f, "\n## Friction estimation inside the loop, tau_F_hat against tau_F (N m), t in [%g s, end]\n\n",
                cl->settle);
        estimate_table(f, cl, r->friction, cl->n_joints, rb_cl_with_compensation);
    }
    if (r->task) {
        fprintf(f, "\n## Task tracking: %s, %s against %s, t in [%g s, end]\n\n", cl->task.name,
                cl->task.actual_channel, cl->task.reference_channel, cl->settle);
        estimate_table(f, cl, r->task, 1, NULL);
    }
    fprintf(f, "\n## CoM error over the whole run, t in [%g s, end]\n\n", cl->settle);
    com_table(f, cl, r->com_all);
    fputs("\n## Runs\n\n", f);
    runs_table(f, cl, r);
    fprintf(f,
            "\nPer-joint tables: torque.md, torque_loop.md, com_before.md, com_all.md, estimation.md, friction.md%s "
            "(JSON and CSV "
            "beside them, for `roboest check`).\n",
            r->task ? ", task.md" : "");
}

int rb_closed_loop_markdown(const rb_closed_loop *cl, const rb_closed_loop_result *r, char **text, rb_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    *text = NULL;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return nomem(err);
    markdown(f, cl, r);
    bool ok = !ferror(f);
    if (fclose(f) == 0 && ok)
        *text = rb_strndup(buf, len);
    free(buf); /* open_memstream's buffer comes from malloc */
    if (!*text)
        return nomem(err);
    if (!r->sweep)
        return RB_OK;
    char *md = NULL, *json = NULL, *svg = NULL;
    int rc = rb_closed_loop_sweep_render(cl, r, &md, &json, &svg, err);
    char *joined = rc ? NULL : rb_asprintf("%s\n%s", *text, md);
    rb_free(md), rb_free(json), rb_free(svg);
    rb_free(*text);
    *text = joined;
    return rc ? rc : joined ? RB_OK : nomem(err);
}

int rb_closed_loop_write(const rb_closed_loop *cl, const rb_closed_loop_result *r, const char *dir, bool overwrite,
                         rb_err *err)
{
    static const char *const ext[] = {"md", "json", "csv"};
    static const rb_report_format formats[] = {RB_REPORT_MARKDOWN, RB_REPORT_JSON, RB_REPORT_CSV};
    const rb_comparison *tables[] = {r->torque,     r->torque_loop, r->com_before, r->com_all,
                                     r->estimation, r->friction,    r->task};
    static const char *const stems[] = {"torque",     "torque_loop", "com_before", "com_all",
                                        "estimation", "friction",    "task"};
    enum { N_TABLES = sizeof stems / sizeof stems[0] };
    size_t cap = 1 + N_TABLES * 3 + r->n_figures + 3, n = 0;
    char **names = rb_calloc(cap, sizeof *names), **texts = rb_calloc(cap, sizeof *texts);
    int rc = names && texts ? RB_OK : nomem(err);
    char *md = NULL;
    if (!rc && !(rc = rb_closed_loop_markdown(cl, r, &md, err))) {
        names[n] = rb_strdup("report.md");
        texts[n++] = md;
        rc = names[0] ? RB_OK : nomem(err);
    }
    for (size_t t = 0; !rc && t < N_TABLES; t++)
        for (size_t i = 0; !rc && tables[t] && i < 3; i++) {
            names[n] = rb_asprintf("%s.%s", stems[t], ext[i]);
            rc = rb_comparison_render(tables[t], formats[i], &texts[n], err);
            if (!rc && !names[n])
                rc = nomem(err);
            n++;
        }
    for (size_t i = 0; !rc && i < r->n_figures; i++) {
        names[n] = rb_strdup(r->figures[i].name);
        texts[n] = rb_strdup(r->figures[i].svg);
        rc = names[n] && texts[n] ? RB_OK : nomem(err);
        n++;
    }
    if (!rc && r->sweep) { /* stability.md, stability.json, sensitivity.svg */
        char *sw[3] = {NULL, NULL, NULL};
        static const char *const sw_names[] = {"stability.md", "stability.json", "sensitivity.svg"};
        rc = rb_closed_loop_sweep_render(cl, r, &sw[0], &sw[1], &sw[2], err);
        for (int i = 0; i < 3; i++) {
            if (!rc && sw[i]) {
                names[n] = rb_strdup(sw_names[i]);
                texts[n] = sw[i];
                sw[i] = NULL;
                rc = names[n++] ? RB_OK : nomem(err);
            }
            rb_free(sw[i]);
        }
    }
    if (!rc)
        rc = rb_texts_write(dir, (const char *const *)names, (const char *const *)texts, n, overwrite, err);
    for (size_t i = 0; i < n; i++) {
        rb_free(names[i]);
        rb_free(texts[i]);
    }
    rb_free(names);
    rb_free(texts);
    return rc;
}
