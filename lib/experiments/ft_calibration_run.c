/* In-situ FT calibration run: the data sets' logs -> static poses -> rows -> the two least squares (ft_calibration.c)
 * -> the held-out check and, with a simulated sensor, the errors against the truth. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

typedef struct rowbuf {
    size_t n, cap;
    double *r, *g;
    size_t *set, *samples;
} rowbuf;

static void rows_free(rowbuf *b)
{
    rb_free(b->r);
    rb_free(b->g);
    rb_free(b->set);
    rb_free(b->samples);
}

static int rows_push(rowbuf *b, const double r[6], const double g[3], size_t set, size_t samples, rb_err *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        double *nr = rb_realloc(b->r, 6 * cap * sizeof *nr);
        if (nr)
            b->r = nr;
        double *ng = nr ? rb_realloc(b->g, 3 * cap * sizeof *ng) : NULL;
        if (ng)
            b->g = ng;
        size_t *ns = ng ? rb_realloc(b->set, cap * sizeof *ns) : NULL;
        if (ns)
            b->set = ns;
        size_t *nn = ns ? rb_realloc(b->samples, cap * sizeof *nn) : NULL;
        if (!nn)
            return nomem(err);
        b->samples = nn;
        b->cap = cap;
    }
    memcpy(b->r + 6 * b->n, r, 6 * sizeof *r);
    memcpy(b->g + 3 * b->n, g, 3 * sizeof *g);
    b->set[b->n] = set;
    b->samples[b->n] = samples;
    b->n++;
    return RB_OK;
}

/* A channel of the data set's log with `width` elements. */
static int want_channel(const rb_ftcal_config *cfg, size_t j, const rb_log *log, const char *name, size_t width,
                        const rb_channel **out, rb_err *err)
{
    const char *set = cfg->sets[j].name, *file = cfg->sets[j].log.n_paths ? cfg->sets[j].log.paths[0] : "memory";
    *out = rb_log_find(log, name);
    if (!*out)
        return rb_err_set(err, RB_ENOTFOUND, "data set '%s': %s: no channel '%s'", set, file, name);
    if ((*out)->n_elements != width)
        return rb_err_set(err, RB_EINPUT, "data set '%s': %s: channel '%s' has %zu elements, expected %zu", set, file,
                          name, (*out)->n_elements, width);
    if ((*out)->n_samples == 0)
        return rb_err_set(err, RB_EINPUT, "data set '%s': %s: channel '%s' has no samples", set, file, name);
    return RB_OK;
}

/* First sample at or after t. */
static size_t lower(const double *t, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One data set: its static poses, their rows (training or held out), the raw samples' covariance. */
static int set_rows(const rb_ftcal_config *cfg, size_t j, const rb_log *log, rowbuf *train, rowbuf *held,
                    rb_ftcal_set_result *sr, rb_err *err)
{
    const rb_channel *raw, *acc, *gyr;
    int rc = want_channel(cfg, j, log, cfg->raw, 6, &raw, err);
    if (!rc)
        rc = want_channel(cfg, j, log, cfg->acc, 3, &acc, err);
    if (!rc)
        rc = want_channel(cfg, j, log, cfg->gyro, 3, &gyr, err);
    double *iv = NULL;
    size_t n_iv = 0;
    if (!rc) {
        rc = rb_ftcal_static_intervals(gyr->time, gyr->data, gyr->n_samples, acc->time, acc->data, acc->n_samples,
                                       &cfg->stat, &iv, &n_iv, err);
        if (rc)
            rc = rb_err_prefix(err, rc, "data set '%s': ", cfg->sets[j].name);
    }
    if (rc)
        return rc;
    double s1[6] = {0}, s2[36] = {0}, ref[6];
    memcpy(ref, raw->data, sizeof ref);
    size_t cov_n = 0;
    for (size_t p = 0; p < n_iv; p++) {
        double a = iv[2 * p] + cfg->trim, b = iv[2 * p + 1] - cfg->trim;
        if (!(b > a))
            continue;
        size_t a0 = lower(acc->time, acc->n_samples, a), a1 = lower(acc->time, acc->n_samples, b + 1e-12);
        size_t r0 = lower(raw->time, raw->n_samples, a), r1 = lower(raw->time, raw->n_samples, b + 1e-12);
        if (a1 <= a0 || r1 <= r0)
            continue;
        double am[3] = {0}, rm[6] = {0}, g[3];
        bool finite = true;
        for (size_t k = a0; k < a1; k++)
            for (size_t c = 0; c < 3; c++)
                am[c] += acc->data[3 * k + c] / (double)(a1 - a0);
        for (size_t k = r0; k < r1; k++)
            for (size_t c = 0; c < 6; c++)
                rm[c] += raw->data[6 * k + c] / (double)(r1 - r0);
        for (size_t c = 0; c < 6; c++)
            finite &= isfinite(rm[c]) && (c >= 3 || isfinite(am[c]));
        if (!finite)
            continue; /* a pose with a missing sample: dropped, not guessed */
        for (size_t c = 0; c < 3; c++)
            g[c] = -cfg->body_sign *
                   (cfg->R_sa[3 * c] * am[0] + cfg->R_sa[3 * c + 1] * am[1] + cfg->R_sa[3 * c + 2] * am[2]);
        bool is_held = cfg->holdout && sr->poses % cfg->holdout == cfg->holdout - 1;
        sr->poses++;
        if (is_held) {
            sr->held_poses++;
            if ((rc = rows_push(held, rm, g, j, r1 - r0, err)) != RB_OK)
                break;
            continue;
        }
        sr->train_poses++;
        sr->samples += r1 - r0;
        for (size_t k = r0; k < r1; k++) {
            const double *rk = raw->data + 6 * k;
            for (size_t c = 0; c < 6; c++) {
                s1[c] += rk[c] - ref[c];
                for (size_t d = 0; d < 6; d++)
                    s2[c + 6 * d] += (rk[c] - ref[c]) * (rk[d] - ref[d]);
            }
            cov_n++;
            if (cfg->per_sample && !rc)
                rc = rows_push(train, rk, g, j, 1, err);
        }
        if (!cfg->per_sample && !rc)
            rc = rows_push(train, rm, g, j, r1 - r0, err);
        if (rc)
            break;
    }
    rb_free(iv);
    if (!rc && sr->train_poses == 0)
        rc = rb_err_set(
            err, RB_EINPUT,
            "data set '%s': no static pose found (%zu intervals with |gyro| <= %g rad/s and an accelerometer "
            "spread <= %g m/s^2 over %g s): check the channels and the 'static' thresholds",
            cfg->sets[j].name, n_iv, cfg->stat.gyro_max, cfg->stat.acc_std_max, cfg->stat.window);
    if (!rc) {
        double C[36], w[6];
        for (size_t c = 0; c < 6; c++)
            for (size_t d = 0; d < 6; d++)
                C[c + 6 * d] = s2[c + 6 * d] / (double)cov_n - s1[c] * s1[d] / ((double)cov_n * (double)cov_n);
        if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', 6, C, 6, w) != 0)
            return rb_err_set(err, RB_ENUMERIC, "data set '%s': the covariance's eigenvalues", cfg->sets[j].name);
        for (size_t c = 0; c < 6; c++)
            sr->eig[c] = w[5 - c];
    }
    return rc;
}

static double frob(const double *A, const double *B, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double d = A[i] - (B ? B[i] : 0.0);
        s += d * d;
    }
    return sqrt(s);
}

/* After the fit: each set's ellipsoid over its training rows, the held-out check, the truth. */
static int check_fit(const rb_ftcal_config *cfg, const rowbuf *train, const rowbuf *held, rb_ftcal_result *r,
                     rb_err *err)
{
    const rb_ftcal_fit *f = &r->fit;
    for (size_t l = 0; l < 6; l++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < train->n; i++)
            lo = fmin(lo, train->r[6 * i + l]), hi = fmax(hi, train->r[6 * i + l]);
        r->raw_span[l] = hi - lo;
    }
    double *rows = rb_malloc((train->n ? train->n : 1) * 6 * sizeof *rows);
    if (!rows)
        return nomem(err);
    for (size_t j = 0; j < cfg->n_sets; j++) {
        rb_ftcal_set_result *sr = &r->sets[j];
        size_t n = 0;
        for (size_t i = 0; i < train->n; i++)
            if (train->set[i] == j)
                memcpy(rows + 6 * n++, train->r + 6 * i, 6 * sizeof *rows);
        rb_err e;
        if (rb_ftcal_ellipsoid_fit(rows, n, &sr->ell, &e) != RB_OK)
            sr->ell.residual = NAN; /* too few rows or a degenerate set: reported as n/a */
        double m_add = cfg->sets[j].added_mass, gsum = 0;
        size_t nh = 0;
        sr->held_norm_min = INFINITY, sr->held_norm_max = -INFINITY, sr->held_norm_mean = 0;
        for (size_t i = 0; i < held->n; i++) {
            if (held->set[i] != j)
                continue;
            double w[6];
            rb_ftcal_apply(f, held->r + 6 * i, w);
            double fn = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
            const double *g = held->g + 3 * i;
            gsum += sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
            sr->held_norm_min = fmin(sr->held_norm_min, fn);
            sr->held_norm_max = fmax(sr->held_norm_max, fn);
            sr->held_norm_mean += fn;
            nh++;
        }
        double gm = nh ? gsum / (double)nh : r->g_norm;
        sr->held_norm_mean = nh ? sr->held_norm_mean / (double)nh : NAN;
        if (!nh)
            sr->held_norm_min = sr->held_norm_max = NAN;
        sr->mg = (f->mass + m_add) * gm;
        sr->mg_true = cfg->truth_body_known ? (cfg->truth_phi[0] + m_add) * gm : NAN;
    }
    rb_free(rows);
    r->has_truth = cfg->has_truth_sensor;
    if (cfg->has_truth_sensor) {
        r->err_C_rel = frob(f->C, cfg->truth_C, 36) / frob(cfg->truth_C, NULL, 36);
        r->err_o_max = 0;
        for (size_t l = 0; l < 6; l++)
            r->err_o_max = fmax(r->err_o_max, fabs(f->o[l] - cfg->truth_o[l]));
        r->err_o_rel_range = cfg->raw_range > 0 ? r->err_o_max / cfg->raw_range : NAN;
        r->err_o_rel_span = 0;
        for (size_t l = 0; l < 6; l++)
            r->err_o_rel_span = fmax(r->err_o_rel_span, fabs(f->o[l] - cfg->truth_o[l]) / r->raw_span[l]);
    }
    if (cfg->truth_body_known) {
        double m = cfg->truth_phi[0], c[3] = {cfg->truth_phi[1] / m, cfg->truth_phi[2] / m, cfg->truth_phi[3] / m};
        r->err_mass_rel = fabs(f->mass - m) / m;
        r->err_com = frob(f->com, c, 3);
    } else {
        r->err_mass_rel = r->err_com = NAN;
    }
    return RB_OK;
}

static int provenance(const rb_ftcal_config *cfg, rb_session_id *ids, rb_ftcal_result *r, rb_err *err)
{
    rb_provenance *pv = &r->pv;
    int rc = rb_provenance_init(pv, err);
    if (!rc)
        rc = rb_provenance_add(pv, "config", cfg->path, err);
    if (!rc)
        rc = rb_provenance_add(pv, "config_sha256", cfg->sha256, err);
    if (!rc)
        rc = rb_provenance_add(pv, "model", cfg->urdf, err);
    for (size_t j = 0; !rc && j < cfg->n_sets; j++) {
        rc = rb_provenance_addf(pv, ids ? ids[j].names : "memory", err, "dataset %s: input", cfg->sets[j].name);
        if (!rc && ids)
            rc = rb_provenance_addf(pv, ids[j].sha256, err, "dataset %s: input_sha256", cfg->sets[j].name);
    }
    if (!rc && cfg->truth_scenario)
        rc = rb_provenance_add(pv, "truth_scenario", cfg->truth_scenario, err);
    return rc;
}

int rb_ftcal_run(const rb_ftcal_config *cfg, const rb_log *const *logs, rb_ftcal_result **out, rb_err *err)
{
    *out = NULL;
    size_t J = cfg->n_sets;
    rb_ftcal_result *r = rb_calloc(1, sizeof *r);
    rb_log **owned = rb_calloc(J, sizeof *owned);
    rb_session_id *ids = logs ? NULL : rb_calloc(J, sizeof *ids);
    rowbuf train = {0}, held = {0};
    int rc = r && owned && (logs || ids) ? RB_OK : nomem(err);
    for (size_t j = 0; !rc && !logs && j < J; j++) {
        const rb_cfg_session *s = &cfg->sets[j].log;
        rc = rb_log_read_session((const char *const *)s->paths, s->n_paths, &owned[j], &ids[j], err);
        if (rc)
            rc = rb_err_prefix(err, rc, "data set '%s': ", cfg->sets[j].name);
    }
    if (!rc)
        rc = provenance(cfg, ids, r, err);
    double t0 = rb_monotonic_seconds();
    for (size_t j = 0; !rc && j < J; j++)
        rc = set_rows(cfg, j, logs ? logs[j] : owned[j], &train, &held, &r->sets[j], err);
    double added[4 * RB_FTCAL_MAX_SETS];
    const char *names[RB_FTCAL_MAX_SETS];
    for (size_t j = 0; j < J; j++) {
        added[4 * j] = cfg->sets[j].added_mass;
        for (size_t c = 0; c < 3; c++)
            added[4 * j + 1 + c] = cfg->sets[j].added_mass * cfg->sets[j].added_com[c];
        names[j] = cfg->sets[j].name;
    }
    rb_ftcal_data d = {train.n, train.r, train.g, train.set, J, added};
    if (!rc)
        rc = rb_ftcal_check_rank(&d, names, err);
    if (!rc)
        rc = rb_ftcal_solve(&d, cfg->convention, cfg->offset, &r->fit, err);
    if (!rc) {
        r->rows = train.n;
        double gs = 0;
        for (size_t i = 0; i < train.n; i++) {
            const double *g = train.g + 3 * i;
            gs += sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        }
        r->g_norm = gs / (double)train.n;
        for (size_t j = 0; j < J; j++)
            r->samples += r->sets[j].samples;
        rc = check_fit(cfg, &train, &held, r, err);
    }
    if (r)
        r->seconds = rb_monotonic_seconds() - t0;
    for (size_t j = 0; j < J; j++) {
        if (owned)
            rb_log_free(owned[j]);
        if (ids)
            rb_session_id_free(&ids[j]);
    }
    rb_free(owned);
    rb_free(ids);
    rows_free(&train);
    rows_free(&held);
    if (rc) {
        rb_ftcal_result_free(r);
        return rc;
    }
    *out = r;
    return RB_OK;
}

void rb_ftcal_result_free(rb_ftcal_result *r)
{
    if (!r)
        return;
    rb_provenance_free(&r->pv);
    rb_free(r);
}
