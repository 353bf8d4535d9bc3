/* In-situ FT calibration: calibration.json (the result with its residuals, condition numbers, samples and
 * provenance) and report.md (the ellipsoid, the covariance eigenvalues, the held-out check, the truth), written all
 * or nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

static void jnum(FILE *f, double x)
{
    char buf[32];
    fputs(isfinite(x) ? rb_format_double(x, buf) : "null", f);
}

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void jvec(FILE *f, const double *v, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        jnum(f, v[i]);
    }
    fputc(']', f);
}

static const char *conv_text(rb_ftcal_convention c) { return c == RB_FTCAL_PLUS ? "w = C (r + o)" : "w = C (r - o)"; }

/* Held-out spread: (max - min) |f| over the held-out poses, % of m g. */
static double spread_pct(const rb_ftcal_set_result *s) { return 100.0 * (s->held_norm_max - s->held_norm_min) / s->mg; }

static void write_json(FILE *f, const rb_ftcal_config *cfg, const rb_ftcal_result *r)
{
    const rb_ftcal_fit *fit = &r->fit;
    const rb_model *m = cfg->model;
    fputs("{\n  \"ft_sensor\": ", f);
    jstr(f, cfg->ft);
    fputs(",\n  \"frame\": ", f);
    jstr(f, m->frames[m->ft[rb_model_ft_index(m, cfg->ft)].frame].name);
    fputs(",\n  \"raw_channel\": ", f);
    jstr(f, cfg->raw);
    fprintf(f, ",\n  \"convention\": \"%s\",\n  \"model\": ", cfg->convention == RB_FTCAL_PLUS ? "plus" : "minus");
    jstr(f, conv_text(cfg->convention));
    fputs(",\n  \"units\": {\"r\": \"raw (the channel's unit)\", \"w\": \"N, N m (about the frame's origin)\"},\n"
          "  \"C\": [",
          f);
    for (size_t k = 0; k < 6; k++) {
        fputs(k ? ",\n        " : "", f);
        jvec(f, fit->C + 6 * k, 6);
    }
    fputs("],\n  \"o\": ", f);
    jvec(f, fit->o, 6);
    fputs(",\n  \"raw_span\": ", f);
    jvec(f, r->raw_span, 6);
    fputs(",\n  \"offset_method\": ", f);
    jstr(f, cfg->offset == RB_FTCAL_OFFSET_LS ? "least_squares" : "ellipsoid");
    fputs(",\n  \"mass\": ", f);
    jnum(f, fit->mass);
    fputs(",\n  \"com\": ", f);
    jvec(f, fit->com, 3);
    fputs(",\n  \"residuals\": {\"step1_rms_raw\": ", f);
    jvec(f, fit->rms_raw, 6);
    fputs(", \"step2_rms_force_N\": ", f);
    jnum(f, fit->rms_force);
    fputs(", \"step2_rms_moment_Nm\": ", f);
    jnum(f, fit->rms_moment);
    fputs("},\n  \"condition_numbers\": {\"step1\": ", f);
    jnum(f, fit->cond_offset);
    fputs(", \"step2_force\": ", f);
    jnum(f, fit->cond_force);
    fputs(", \"step2_moment\": ", f);
    jnum(f, fit->cond_moment);
    fprintf(f, "},\n  \"samples_used\": {\"rows\": %zu, \"rows_kind\": \"%s\", \"raw_samples\": %zu},\n", r->rows,
            cfg->per_sample ? "samples" : "windows", r->samples);
    fputs("  \"datasets\": [", f);
    for (size_t j = 0; j < cfg->n_sets; j++) {
        const rb_ftcal_set_result *s = &r->sets[j];
        fputs(j ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        jstr(f, cfg->sets[j].name);
        fputs(", \"added_mass\": ", f);
        jnum(f, cfg->sets[j].added_mass);
        fputs(", \"added_com\": ", f);
        jvec(f, cfg->sets[j].added_com, 3);
        fprintf(f, ", \"poses\": %zu, \"train_poses\": %zu, \"held_out_poses\": %zu, \"raw_samples\": %zu", s->poses,
                s->train_poses, s->held_poses, s->samples);
        fputs(",\n     \"ellipsoid_residual\": ", f);
        jnum(f, s->ell.residual);
        fputs(", \"ellipsoid_centre\": ", f);
        jvec(f, s->ell.centre, 6);
        fputs(", \"covariance_eigenvalues\": ", f);
        jvec(f, s->eig, 6);
        fputs(",\n     \"held_out\": {\"m_g\": ", f);
        jnum(f, s->mg);
        fputs(", \"m_g_true\": ", f);
        jnum(f, s->mg_true);
        fputs(", \"force_norm_mean\": ", f);
        jnum(f, s->held_norm_mean);
        fputs(", \"force_norm_min\": ", f);
        jnum(f, s->held_norm_min);
        fputs(", \"force_norm_max\": ", f);
        jnum(f, s->held_norm_max);
        fputs(", \"spread_percent\": ", f);
        jnum(f, spread_pct(s));
        fputs("}}", f);
    }
    fputs("\n  ]", f);
    if (r->has_truth || cfg->truth_body_known) {
        fputs(",\n  \"truth\": {", f);
        const char *sep = "";
        if (r->has_truth) {
            fputs("\"C\": [", f);
            for (size_t k = 0; k < 6; k++) {
                fputs(k ? ", " : "", f);
                jvec(f, cfg->truth_C + 6 * k, 6);
            }
            fputs("], \"o\": ", f);
            jvec(f, cfg->truth_o, 6);
            fputs(", \"C_rel_frobenius_error\": ", f);
            jnum(f, r->err_C_rel);
            fputs(", \"o_max_error\": ", f);
            jnum(f, r->err_o_max);
            fputs(", \"o_error_of_raw_range\": ", f);
            jnum(f, r->err_o_rel_range);
            fputs(", \"o_error_of_data_span\": ", f);
            jnum(f, r->err_o_rel_span);
            sep = ", ";
        }
        if (cfg->truth_body_known) {
            fputs(sep, f);
            fputs("\"mass\": ", f);
            jnum(f, cfg->truth_phi[0]);
            double c[3] = {cfg->truth_phi[1] / cfg->truth_phi[0], cfg->truth_phi[2] / cfg->truth_phi[0],
                           cfg->truth_phi[3] / cfg->truth_phi[0]};
            fputs(", \"com\": ", f);
            jvec(f, c, 3);
            fputs(", \"mass_rel_error\": ", f);
            jnum(f, r->err_mass_rel);
            fputs(", \"com_error_m\": ", f);
            jnum(f, r->err_com);
        }
        fputc('}', f);
    }
    fputs(",\n  \"calibration_seconds\": ", f);
    jnum(f, r->seconds);
    fputs(",\n  \"provenance\": {", f);
    for (size_t i = 0; i < r->pv.n; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        jstr(f, r->pv.keys[i]);
        fputs(": ", f);
        jstr(f, r->pv.values[i]);
    }
    fputs("\n  }\n}\n", f);
}

static void write_md(FILE *f, const rb_ftcal_config *cfg, const rb_ftcal_result *r)
{
    const rb_ftcal_fit *fit = &r->fit;
    fprintf(f, "# FT calibration: %s\n\n", cfg->name);
    fprintf(f,
            "FT sensor %s, raw channel %s; %s (convention \"%s\"; the slides' is \"plus\"); offset by %s; rows: %s. "
            "%zu rows from %zu raw samples in the training poses; mean |g| %.5g m/s^2.\n\n",
            cfg->ft, cfg->raw, conv_text(cfg->convention), cfg->convention == RB_FTCAL_PLUS ? "plus" : "minus",
            cfg->offset == RB_FTCAL_OFFSET_LS ? "least squares (step 1)" : "the ellipsoids' centres",
            cfg->per_sample ? "every raw sample" : "one per static pose (its means)", r->rows, r->samples, r->g_norm);
    fputs("## Calibration\n\n| row | C (6 columns) | o |\n|---|---|---|\n", f);
    static const char *const ROW[] = {"fx", "fy", "fz", "mx", "my", "mz"};
    for (size_t k = 0; k < 6; k++) {
        fprintf(f, "| %s |", ROW[k]);
        for (size_t l = 0; l < 6; l++)
            fprintf(f, " %.6g", fit->C[6 * k + l]);
        fprintf(f, " | %.6g |\n", fit->o[k]);
    }
    fprintf(f,
            "\nBody (the load beyond the sensor without the added masses): m = %.5g kg, c = (%.5g, %.5g, %.5g) m.\n\n",
            fit->mass, fit->com[0], fit->com[1], fit->com[2]);
    fputs("| least squares | residual RMS | condition number (columns scaled) |\n|---|---|---|\n", f);
    fprintf(f, "| step 1: offset and K_j | %.4g %.4g %.4g %.4g %.4g %.4g (raw) | %.4g |\n", fit->rms_raw[0],
            fit->rms_raw[1], fit->rms_raw[2], fit->rms_raw[3], fit->rms_raw[4], fit->rms_raw[5], fit->cond_offset);
    fprintf(f, "| step 2: force rows and m | %.4g N | %.4g |\n", fit->rms_force, fit->cond_force);
    fprintf(f, "| step 2: moment rows and m c | %.4g N m | %.4g |\n\n", fit->rms_moment, fit->cond_moment);
    fputs("## Data sets\n\nThe ellipsoid residual is the RMS of sqrt((y - y0)' Q (y - y0)) - 1 over the training rows "
          "projected on their 3-D principal subspace (0 on the ellipsoid); the eigenvalues are those of the raw "
          "samples' covariance in the training poses: three large (the load turning with gravity), three at the noise "
          "level.\n\n| data set | added mass (kg) | poses (train / held out) | raw samples | ellipsoid residual | "
          "covariance eigenvalues | 3rd / 4th |\n|---|---|---|---|---|---|---|\n",
          f);
    for (size_t j = 0; j < cfg->n_sets; j++) {
        const rb_ftcal_set_result *s = &r->sets[j];
        fprintf(f, "| %s | %.4g | %zu / %zu | %zu | %.3g | %.3g %.3g %.3g %.3g %.3g %.3g | %.3g |\n", cfg->sets[j].name,
                cfg->sets[j].added_mass, s->train_poses, s->held_poses, s->samples, s->ell.residual, s->eig[0],
                s->eig[1], s->eig[2], s->eig[3], s->eig[4], s->eig[5], s->eig[2] / s->eig[3]);
    }
    fputs(
        "\n## Held-out check\n\nThe calibrated force of each held-out pose against m g, m the estimated body plus "
        "the added mass (Result 3: the forces lie on a sphere); spread = (max - min) of the force norm over the "
        "held-out poses.\n\n"
        "| data set | held-out poses | m g (N) | true m g (N) | mean norm of f (N) | min | max | spread (% of m g) |\n"
        "|---|---|---|---|---|---|---|---|\n",
        f);
    for (size_t j = 0; j < cfg->n_sets; j++) {
        const rb_ftcal_set_result *s = &r->sets[j];
        fprintf(f, "| %s | %zu | %.5g | %.5g | %.5g | %.5g | %.5g | %.3g |\n", cfg->sets[j].name, s->held_poses, s->mg,
                s->mg_true, s->held_norm_mean, s->held_norm_min, s->held_norm_max, spread_pct(s));
    }
    if (r->has_truth || cfg->truth_body_known) {
        fputs("\n## Against the truth\n\n| quantity | error |\n|---|---|\n", f);
        if (r->has_truth) {
            fprintf(f, "| C, relative Frobenius | %.3g %% |\n", 100 * r->err_C_rel);
            fprintf(f, "| o, max abs | %.4g raw = %.3g %% of the sensor's raw range, %.3g %% of the data's span |\n",
                    r->err_o_max, 100 * r->err_o_rel_range, 100 * r->err_o_rel_span);
        }
        if (cfg->truth_body_known) {
            fprintf(f, "| m (true %.5g kg) | %.3g %% |\n", cfg->truth_phi[0], 100 * r->err_mass_rel);
            fprintf(f, "| c | %.3g mm |\n", 1000 * r->err_com);
        }
    }
    fprintf(f, "\nCalibration time after reading: %.3g s.\n", r->seconds);
}

static int to_text(void (*fn)(FILE *, const rb_ftcal_config *, const rb_ftcal_result *), const rb_ftcal_config *cfg,
                   const rb_ftcal_result *r, char **text, rb_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return nomem(err);
    fn(f, cfg, r);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return nomem(err);
    }
    *text = rb_strdup(buf);
    free(buf);
    return *text ? RB_OK : nomem(err);
}

int rb_ftcal_json(const rb_ftcal_config *cfg, const rb_ftcal_result *r, char **text, rb_err *err)
{
    return to_text(write_json, cfg, r, text, err);
}

int rb_ftcal_markdown(const rb_ftcal_config *cfg, const rb_ftcal_result *r, char **text, rb_err *err)
{
    return to_text(write_md, cfg, r, text, err);
}

int rb_ftcal_write(const rb_ftcal_config *cfg, const rb_ftcal_result *r, const char *dir, bool overwrite, rb_err *err)
{
    char *json = NULL, *md = NULL;
    int rc = rb_ftcal_json(cfg, r, &json, err);
    if (!rc)
        rc = rb_ftcal_markdown(cfg, r, &md, err);
    if (!rc) {
        const char *names[] = {"calibration.json", "report.md"};
        const char *texts[] = {json, md};
        rc = rb_texts_write(dir, names, texts, 2, overwrite, err);
    }
    rb_free(json);
    rb_free(md);
    return rc;
}
