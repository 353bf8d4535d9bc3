/* What the inertial-parameter estimator says at the end of a run: identifiability of the estimated bodies from
 * the information matrix, and its warnings (roboest/observers.h). Allocates; never called per sample. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "observers_internal.h"

/* Relative eigenvalue tolerance of the rank (roboest/observers.h). */
#define RANK_TOL 1e-9

/* Rank of the symmetric n x n matrix A (row-major, stride lda), from its eigenvalues. */
static int sym_rank(const double *A, size_t n, size_t lda, double *work, double *w, size_t *rank, rb_err *err)
{
    for (size_t i = 0; i < n; i++)
        memcpy(work + i * n, A + i * lda, n * sizeof *A);
    lapack_int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (lapack_int)n, work, (lapack_int)n, w);
    if (info != 0)
        return rb_err_set(err, info < 0 ? RB_ENOMEM : RB_ENUMERIC, "information matrix: eigenvalues failed (%d)",
                          (int)info);
    double top = 0;
    for (size_t i = 0; i < n; i++)
        top = fabs(w[i]) > top ? fabs(w[i]) : top;
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += top > 0 && w[i] > RANK_TOL * top;
    *rank = r;
    return RB_OK;
}

int rb_iekf_identifiability(const rb_iekf *e, size_t *joint, size_t *per_body, bool *separable, rb_err *err)
{
    if (!e || !joint || !separable)
        return rb_err_set(err, RB_EINVAL, "rb_iekf_identifiability: NULL argument");
    size_t np = e->np;
    double *work = rb_malloc((np * np + np) * sizeof *work);
    if (!work)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = sym_rank(e->info, np, np, work, work + np * np, joint, err);
    size_t sum = 0;
    for (size_t b = 0; !rc && b < e->nb; b++) {
        size_t r;
        rc = sym_rank(e->info + 10 * b * np + 10 * b, 10, np, work, work + np * np, &r, err);
        sum += r;
        if (per_body)
            per_body[b] = r;
    }
    rb_free(work);
    *separable = rc || *joint >= sum;
    return rc;
}

static int add_line(char ***lines, size_t *n, char *line, rb_err *err)
{
    if (!line)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    char **grown = rb_realloc(*lines, (*n + 1) * sizeof *grown);
    if (!grown) {
        rb_free(line);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    *lines = grown;
    (*lines)[(*n)++] = line;
    return RB_OK;
}

static const char *const names_pi[10] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};
static const char *const names_theta[10] = {"alpha", "d1", "d2", "d3", "s12", "s13", "s23", "t1", "t2", "t3"};

/* "body a rank 4, body b rank 4" into buf. */
static void ranks_text(const rb_iekf *e, const size_t *r, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t b = 0; b < e->nb && used < size; b++)
        used +=
            (size_t)snprintf(buf + used, size - used, "%s%s %zu", b ? ", " : "", e->m->bodies[e->bodies[b]].name, r[b]);
}

int rb_iekf_warnings(const rb_iekf *e, char ***lines, size_t *n, rb_err *err)
{
    *lines = NULL, *n = 0;
    int rc = RB_OK;
    const char *const *names = e->cfg.filter == RB_IEKF_KF_LINEAR ? names_pi : names_theta;
    for (size_t i = 0; !rc && e->cfg.var_warn_factor > 0 && i < e->np; i++)
        if (e->max_var[i] > e->cfg.var_warn_factor * e->p0[i])
            rc = add_line(
                lines, n,
                rb_asprintf("body %s: the variance of %s grew to %g, past %g x its initial %g (var_warn_factor):"
                            " the motion does not excite it",
                            e->m->bodies[e->bodies[i / 10]].name, names[i % 10], e->max_var[i], e->cfg.var_warn_factor,
                            e->p0[i]),
                err);
    long tried = e->updates + e->n_gated;
    if (!rc && tried > 0 && 5 * e->n_gated > tried)
        rc = add_line(lines, n,
                      rb_asprintf("%ld of %ld updates gated (%.1f %%, more than 20 %%): the gate or the measurement "
                                  "variance is too tight, or the load changed beyond what the gate lets through",
                                  e->n_gated, tried, 100.0 * (double)e->n_gated / (double)tried),
                      err);
    if (!rc && e->nb > 1 && e->updates > 0) {
        size_t joint, *per = rb_calloc(e->nb, sizeof *per);
        bool sep;
        if (!per)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        rc = rb_iekf_identifiability(e, &joint, per, &sep, err);
        if (!rc && !sep) {
            size_t sum = 0;
            for (size_t b = 0; b < e->nb; b++)
                sum += per[b];
            char buf[512];
            ranks_text(e, per, buf, sizeof buf);
            rc = add_line(lines, n,
                          rb_asprintf("parameters not separately identifiable: the information matrix has rank %zu, "
                                      "below the sum %zu of the bodies' own ranks (%s): some combination of "
                                      "different bodies' parameters is seen only together (bodies locked rigidly?)",
                                      joint, sum, buf),
                          err);
        }
        rb_free(per);
    }
    if (rc) {
        rb_strings_free(*lines, *n);
        *lines = NULL, *n = 0;
    }
    return rc;
}

int rb_iekf_summary(const rb_iekf *e, char **line, rb_err *err)
{
    long tried = e->updates + e->n_gated;
    *line = rb_asprintf(
        "%ld updates, %ld gated (%.1f %%), %ld rows skipped (non-finite torque), %ld predict-only steps", e->updates,
        e->n_gated, tried ? 100.0 * (double)e->n_gated / (double)tried : 0.0, e->rows_skipped, e->predict_only);
    return *line ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
}
