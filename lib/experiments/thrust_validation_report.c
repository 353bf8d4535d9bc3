/* The scale validation's report: report.md (the drift, the bound, a table per variant), report.json (the comparison
 * report `roboest check` reads, with a "validation" object added) and the figures, written all or nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

static const char *binds_text(const char *binds)
{
    return strcmp(binds, "N") == 0         ? "the N bound binds"
           : strcmp(binds, "percent") == 0 ? "the percent bound binds"
                                           : "both bounds are equal";
}

static void drift_section(FILE *f, const rb_thrust_validation *tv, const rb_thrust_drift *d)
{
    fputs("## Scale drift (temperature correction)\n\n", f);
    if (d->has_windows) {
        fputs("| Window | t (s) | mean scale sum (kg) | mean temperature |\n|---|---|---|---|\n", f);
        for (size_t i = 0; i < 2; i++)
            fprintf(f, "| jets off, %s | [%g, %g] | %.6g | %.6g |\n", i ? "end" : "start", d->windows[i].t0,
                    d->windows[i].t1, i ? d->w1 : d->w0, i ? d->temp1 : d->temp0);
        fputc('\n', f);
    }
    if (d->corrected)
        fprintf(f,
                "alpha = (W(t_f) - W(t_0)) / (T(t_f) - T(t_0)) = %.6g kg per unit of %s%s%s; the readings are "
                "corrected by - alpha (T(t) - %.6g).\n\n",
                d->alpha, tv->temperature, tv->temperature_element ? ", element " : " (mean of its elements)",
                tv->temperature_element ? tv->temperature_element : "", d->temp0);
    else
        fputs("Temperature correction off (\"temperature_correction\": false): the raw readings are used.\n\n", f);
}

static void variant_table(FILE *f, const rb_thrust_validation *tv, const rb_thrust_result *r, size_t v)
{
    const rb_thrust_variant_result *vr = &r->variants[v];
    double mg = tv->mass * tv->g;
    fprintf(f, "## %s\n\n- pipeline: %s, support signal %s\n- clock samples scored: %zu (t from %.6g to %.6g s)\n\n",
            tv->variants[v].name, rb_path_basename(tv->variants[v].pipeline_path), tv->variants[v].support, vr->n,
            vr->t[0], vr->t[vr->n - 1]);
    fputs("| E_T over | max abs (N) | max abs (% of m g) | RMS (N) | mean (N) | samples |\n|---|---|---|---|---|---|\n",
          f);
    const rb_stats *s = &vr->rows[RB_THRUST_E_T];
    fprintf(f, "| the whole run | %.4g | %.4g | %.4g | %.4g | %zu |\n", s->max_abs, 100 * s->max_abs / mg, s->rmse,
            s->mean_est, s->n);
    if (tv->has_ramp) {
        s = &vr->rows[RB_THRUST_E_T_RAMP];
        fprintf(f, "| the ramp [%g, %g] s | %.4g | %.4g | %.4g | %.4g | %zu |\n", r->ramp.t0, r->ramp.t1, s->max_abs,
                100 * s->max_abs / mg, s->rmse, s->mean_est, s->n);
    }
    fprintf(f, "\nSmoothness: RMS of d(support)/dt = %.4g N/s. Verdict: max |E_T| = %.4g N %s %.4g N: **%s**.\n\n",
            vr->rows[RB_THRUST_D_SUPPORT].rmse, vr->rows[RB_THRUST_E_T].max_abs, vr->passed ? "<" : ">=", r->bound,
            vr->passed ? "pass" : "FAIL");
}

static void markdown(FILE *f, const rb_thrust_validation *tv, const rb_thrust_result *r)
{
    double mg = tv->mass * tv->g;
    fprintf(f, "# %s\n\n", tv->name);
    fprintf(f, "- validation: %s (sha256 %s)\n- log: %s", rb_path_basename(tv->path), tv->sha256,
            rb_path_basename(tv->log.paths[0]));
    for (size_t i = 1; i < tv->log.n_paths; i++)
        fprintf(f, " + %s", rb_path_basename(tv->log.paths[i]));
    fputs("\n- scales (kg, summed): ", f);
    for (size_t i = 0; i < tv->n_scales; i++)
        fprintf(f, "%s%s", i ? ", " : "", tv->scales[i]);
    fprintf(
        f, "\n- E_T(t) = g (W_scales(t) - alpha (T(t) - T_0)) - support(t), g = %g m/s^2, m = %g kg (m g = %.6g N)\n\n",
        tv->g, tv->mass, mg);
    drift_section(f, tv, &r->drift);
    fprintf(f,
            "## Acceptance\n\nmax |E_T| < min(%g N, %g %% of m g = %.4g N) = %.4g N: %s.\n\n"
            "| Variant | max abs E_T (N) | %% of m g | RMS (N) |%s RMS d(support)/dt (N/s) | verdict |\n"
            "|---|---|---|---|%s---|---|\n",
            tv->bound_n, tv->bound_percent, tv->bound_percent / 100 * mg, r->bound, binds_text(r->binds),
            tv->has_ramp ? " max abs, ramp (N) |" : "", tv->has_ramp ? "---|" : "");
    for (size_t v = 0; v < tv->n_variants; v++) {
        const rb_thrust_variant_result *vr = &r->variants[v];
        fprintf(f, "| %s | %.4g | %.4g | %.4g |", tv->variants[v].name, vr->rows[RB_THRUST_E_T].max_abs,
                vr->rows[RB_THRUST_E_T_PERCENT].max_abs, vr->rows[RB_THRUST_E_T].rmse);
        if (tv->has_ramp)
            fprintf(f, " %.4g |", vr->rows[RB_THRUST_E_T_RAMP].max_abs);
        fprintf(f, " %.4g | %s |\n", vr->rows[RB_THRUST_D_SUPPORT].rmse, vr->passed ? "pass" : "FAIL");
    }
    fputc('\n', f);
    for (size_t v = 0; v < tv->n_variants; v++)
        variant_table(f, tv, r, v);
    fputs("Figures: E_T.svg (every variant), support.svg (the support against the corrected scales), "
          "E_T_<variant>.svg; report.json for `roboest check` (joints E_T, ",
          f);
    fputs(tv->has_ramp ? "E_T_ramp, " : "", f);
    fputs("E_T_percent, d_support).\n", f);
}

static int with_memstream(void (*fill)(FILE *, const rb_thrust_validation *, const rb_thrust_result *),
                          const rb_thrust_validation *tv, const rb_thrust_result *r, char **text, rb_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    *text = NULL;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return nomem(err);
    fill(f, tv, r);
    bool ok = !ferror(f);
    if (fclose(f) == 0 && ok)
        *text = rb_strndup(buf, len);
    free(buf); /* open_memstream's buffer comes from malloc */
    return *text ? RB_OK : nomem(err);
}

int rb_thrust_validation_markdown(const rb_thrust_validation *tv, const rb_thrust_result *r, char **text, rb_err *err)
{
    return with_memstream(markdown, tv, r, text, err);
}

/* ---- report.json: the comparison report and the "validation" object ------------------------------------------------ */
static void json_number(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
    else
        fputs("null", f);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void validation_json(FILE *f, const rb_thrust_validation *tv, const rb_thrust_result *r)
{
    const rb_thrust_drift *d = &r->drift;
    fputs("  \"validation\": {\n    \"temperature_correction\": ", f);
    fputs(d->corrected ? "true" : "false", f);
    fputs(",\n    \"alpha\": ", f);
    json_number(f, d->alpha);
    if (d->has_windows) {
        fputs(",\n    \"jets_off\": [", f);
        for (size_t i = 0; i < 2; i++) {
            fputs(i ? ", {\"t0\": " : "{\"t0\": ", f);
            json_number(f, d->windows[i].t0);
            fputs(", \"t1\": ", f);
            json_number(f, d->windows[i].t1);
            fputs(", \"scales_mean\": ", f);
            json_number(f, i ? d->w1 : d->w0);
            fputs(", \"temperature_mean\": ", f);
            json_number(f, i ? d->temp1 : d->temp0);
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputs(",\n    \"mass\": ", f);
    json_number(f, tv->mass);
    fputs(", \"g\": ", f);
    json_number(f, tv->g);
    fputs(",\n    \"bound\": {\"N\": ", f);
    json_number(f, tv->bound_n);
    fputs(", \"percent\": ", f);
    json_number(f, tv->bound_percent);
    fputs(", \"value\": ", f);
    json_number(f, r->bound);
    fputs(", \"binds\": ", f);
    json_string(f, r->binds);
    fputs("},\n    \"variants\": [", f);
    for (size_t v = 0; v < tv->n_variants; v++) {
        const rb_thrust_variant_result *vr = &r->variants[v];
        fputs(v ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
        json_string(f, tv->variants[v].name);
        fputs(", \"max_abs\": ", f);
        json_number(f, vr->rows[RB_THRUST_E_T].max_abs);
        fputs(", \"max_abs_percent\": ", f);
        json_number(f, vr->rows[RB_THRUST_E_T_PERCENT].max_abs);
        fputs(", \"rms_d_support\": ", f);
        json_number(f, vr->rows[RB_THRUST_D_SUPPORT].rmse);
        fprintf(f, ", \"passed\": %s}", vr->passed ? "true" : "false");
    }
    fputs("\n    ]\n  }\n}\n", f);
}

/* The comparison's JSON with the validation object added as its last member. */
static int report_json(const rb_thrust_validation *tv, const rb_thrust_result *r, char **text, rb_err *err)
{
    char *base = NULL, *extra = NULL;
    int rc = rb_comparison_render(r->table, RB_REPORT_JSON, &base, err);
    if (!rc)
        rc = with_memstream(validation_json, tv, r, &extra, err);
    char *end = rc ? NULL : strrchr(base, '}');
    if (!rc && !end)
        rc = rb_err_set(err, RB_EINVAL, "report.json: the comparison's JSON is not an object");
    if (!rc) {
        size_t keep = (size_t)(end - base);
        while (keep > 0 && (base[keep - 1] == '\n' || base[keep - 1] == ' '))
            keep--;
        *text = rb_asprintf("%.*s,\n%s", (int)keep, base, extra);
        if (!*text)
            rc = nomem(err);
    }
    rb_free(base);
    rb_free(extra);
    return rc;
}

int rb_thrust_validation_write(const rb_thrust_validation *tv, const rb_thrust_result *r, const char *dir,
                               bool overwrite, rb_err *err)
{
    size_t n = 2 + r->n_figures;
    const char **names = rb_calloc(n, sizeof *names);
    const char **texts = rb_calloc(n, sizeof *texts);
    char *md = NULL, *json = NULL;
    int rc = names && texts ? RB_OK : nomem(err);
    if (!rc)
        rc = rb_thrust_validation_markdown(tv, r, &md, err);
    if (!rc)
        rc = report_json(tv, r, &json, err);
    if (!rc) {
        names[0] = "report.md", texts[0] = md;
        names[1] = "report.json", texts[1] = json;
        for (size_t i = 0; i < r->n_figures; i++)
            names[2 + i] = r->figures[i].name, texts[2 + i] = r->figures[i].svg;
        rc = rb_texts_write(dir, names, texts, n, overwrite, err);
    }
    rb_free(md);
    rb_free(json);
    rb_free(names);
    rb_free(texts);
    return rc;
}
