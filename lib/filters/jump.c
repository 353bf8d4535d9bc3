/* Jump adaptation: an NIS gate over a subset of the measurements, prior-variance inflation by one-sample
 * covariance matching and a repeated update (see roboest/filters.h). Built on the filter's public interface. */
#include <math.h>
#include <string.h>

#include "roboest/filters.h"

struct rb_jump {
    size_t n, m, n_gate, n_targets;
    double scale;
    size_t *gate, *idx;      /* n_gate: the gated measurements; the positions in gate of those used */
    double *gate_factor;     /* n_gate */
    rb_jump_target *targets; /* n_targets */
    double *limit;           /* n_gate + 1: the gate by degrees of freedom */
    double *x, *P, *S;       /* the prior x (n) and P (n x n); the last update's S (m x m) */
    double *L, *nu;          /* n_gate x n_gate, n_gate: the used gated elements' S factor and innovation */
    void *mem;
};

void rb_jump_free(rb_jump *j)
{
    if (!j)
        return;
    rb_free(j->mem);
    rb_free(j->idx);
    rb_free(j->targets);
    rb_free(j);
}

int rb_jump_create(const rb_filter *f, const rb_jump_opts *o, rb_jump **out, rb_err *err)
{
    if (!f || !o || !out || (o->n_gate && !o->gate) || (o->n_targets && !o->targets))
        return rb_err_set(err, RB_EINVAL, "jump adaptation: NULL argument");
    *out = NULL;
    size_t n, m, ng = o->n_gate;
    rb_filter_dims(f, &n, &m, NULL);
    for (size_t g = 0; g < ng; g++)
        if (o->gate[g] >= m)
            return rb_err_set(err, RB_EINVAL, "jump adaptation: gate[%zu] = %zu is not a measurement (m = %zu)", g,
                              o->gate[g], m);
    for (size_t t = 0; t < o->n_targets; t++)
        if (o->targets[t].meas >= m || o->targets[t].state >= n)
            return rb_err_set(err, RB_EINVAL, "jump adaptation: targets[%zu] out of range (n = %zu, m = %zu)", t, n, m);
    if (!(o->scale > 0))
        return rb_err_set(err, RB_EINVAL, "jump adaptation: scale must be positive");
    rb_jump *j = rb_calloc(1, sizeof *j);
    if (!j)
        return rb_err_set(err, RB_ENOMEM, "out of memory (jump adaptation)");
    j->n = n, j->m = m, j->n_gate = ng, j->n_targets = o->n_targets, j->scale = o->scale;
    j->mem = rb_calloc(ng + (ng + 1) + n + n * n + m * m + ng * ng + ng, sizeof(double));
    j->idx = rb_calloc(2 * ng + 1, sizeof(size_t));
    j->targets = rb_calloc(o->n_targets + 1, sizeof *j->targets);
    if (!j->mem || !j->idx || !j->targets) {
        rb_jump_free(j);
        return rb_err_set(err, RB_ENOMEM, "out of memory (jump adaptation)");
    }
    j->gate = j->idx + ng + 1;
    j->gate_factor = j->mem, j->limit = j->gate_factor + ng, j->x = j->limit + ng + 1, j->P = j->x + n;
    j->S = j->P + n * n, j->L = j->S + m * m, j->nu = j->L + ng * ng;
    for (size_t g = 0; g < ng; g++)
        j->gate[g] = o->gate[g], j->gate_factor[g] = o->gate_factor ? o->gate_factor[g] : 1.0;
    for (size_t t = 0; t < o->n_targets; t++)
        j->targets[t] = o->targets[t];
    for (size_t k = 1; k <= ng; k++) {
        int rc = rb_chi2_quantile(o->probability, (double)k, &j->limit[k], err);
        if (rc) {
            rb_jump_free(j);
            return rc;
        }
    }
    *out = j;
    return RB_OK;
}

void rb_jump_keep_prior(rb_jump *j, const rb_filter *f)
{
    memcpy(j->x, rb_filter_x(f), j->n * sizeof *j->x);
    /* rb_filter_opts.hold: a held update leaves P as it is: rb_jump_update copies it then, if it needs it */
    if (!rb_filter_mean_step(f))
        memcpy(j->P, rb_filter_P(f), j->n * j->n * sizeof *j->P);
}

/* NIS of the gated measurements used in the last update (their positions into idx, innovations into nu; *k of
 * them): nu_G^T S_GG^-1 nu_G by a Cholesky factor of S_GG. NaN when S_GG is not positive definite (cannot happen
 * after an update that succeeded; no adaptation then). */
static double gate_nis(rb_jump *j, const rb_filter_diag *d, size_t *k)
{
    size_t m = j->m, c = 0;
    for (size_t g = 0; g < j->n_gate; g++) {
        size_t e = j->gate[g];
        if (d->status[e] == RB_MEAS_USED)
            j->idx[c] = g, j->nu[c++] = d->innovation[e];
    }
    *k = c;
    double *L = j->L, nis = 0.0;
    for (size_t a = 0; a < c; a++) {
        for (size_t b = 0; b <= a; b++) {
            double v = j->S[j->gate[j->idx[a]] * m + j->gate[j->idx[b]]];
            for (size_t e = 0; e < b; e++)
                v -= L[a * c + e] * L[b * c + e];
            if (a == b) {
                if (!(v > 0))
                    return NAN;
                L[a * c + a] = sqrt(v);
            } else {
                L[a * c + b] = v / L[b * c + b];
            }
        }
        double y = j->nu[a]; /* forward substitution: y = L^-1 nu */
        for (size_t e = 0; e < a; e++)
            y -= L[a * c + e] * j->nu[e];
        j->nu[a] = y / L[a * c + a];
        nis += j->nu[a] * j->nu[a];
    }
    return nis;
}

int rb_jump_update(rb_jump *j, rb_filter *f, const double *z, double *nis, double *inflation, rb_err *err)
{
    rb_filter_diag d;
    rb_filter_get_diag(f, &d);
    int rc = rb_filter_innovation_cov(f, j->S, err);
    if (rc)
        return rc;
    size_t k, n = j->n, m = j->m;
    double q = gate_nis(j, &d, &k);
    if (nis)
        *nis = q;
    if (k == 0 || !(q > j->limit[k]))
        return RB_OK;
    double *P = j->P, added = 0.0;
    if (rb_filter_held(f)) /* the held update did not change P: the prior's */
        memcpy(P, rb_filter_P(f), n * n * sizeof *P);
    for (size_t a = 0; a < k; a++) {
        size_t e = j->gate[j->idx[a]];
        double nu = d.innovation[e], c = j->gate_factor[j->idx[a]];
        added += j->scale * c * c * fmax(0.0, nu * nu - j->S[e * m + e]);
    }
    for (size_t t = 0; t < j->n_targets; t++) {
        const rb_jump_target *tg = &j->targets[t];
        size_t e = tg->meas, s = tg->state;
        if (d.status[e] != RB_MEAS_USED)
            continue;
        double nu = d.innovation[e], c = tg->factor;
        P[s * n + s] += j->scale * c * c * fmax(0.0, nu * nu - j->S[e * m + e]);
    }
    if (inflation)
        *inflation = added;
    if ((rc = rb_filter_set_state(f, j->x, P, err)))
        return rc;
    return rb_filter_update(f, z, err);
}
