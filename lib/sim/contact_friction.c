/* lib/sim: frictional contacts that stick or slip (roboest/sim_contact.h has the model). sim.c calls in: the
 * decision around its final solve, the rows a slipping contact releases, the friction-coupled force rows and their
 * non-symmetric solve. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

struct sim_fric {
    rb_sim_friction_coef floor;
    double v_stick;
    rb_sim_floor_patch *patches;
    size_t np;
    rb_sim_friction_coef *own;  /* nc: the contacts' own (mu_s NaN: none) */
    rb_sim_friction_coef *coef; /* nc: in effect at the sample */
    unsigned char *slip;        /* nc: SLIP (held over the step) */
    unsigned char *lift;        /* nc: slipping with f_n < 0: no friction this step */
    double *d;                  /* 2 nc: slip direction (unit, world x-y) */
    double *mu;                 /* nc: kinetic coefficient held over the step */
    double *vel;                /* 2 nc: the frame origin's world x-y velocity at the last evaluation */
    double *pos;                /* 3 nc: the frame origin at the last evaluation */
    double *off;                /* 3 nc: x, y, yaw the Baumgarte reference moved by since the contact's activation */
    rb_xform *bref;             /* nc: the Baumgarte reference, s->cref moved by off */
    double *yf;                 /* nc x nv: force rows (tree order) */
    double *jf;                 /* nv: scratch */
    const double **F;           /* max_rows: per solve row, its force row or NULL */
    size_t *piv;                /* max_rows */
    /* truth */
    double *slip_vel, *ratio, *mu_s, *mu_d;
    unsigned char *slipping, *pulling;
    size_t *pull_n;
    rb_sim_contact_truth truth;
};

double rb_sim_friction_mu(const rb_sim_friction_coef *c, double v)
{
    if (!(c->v_s > 0) || !isfinite(c->mu_s))
        return c->mu_d;
    double x = v / c->v_s;
    return c->mu_d + (c->mu_s - c->mu_d) * exp(-x * x);
}

const rb_sim_contact_truth *rb_sim_contact_truth_get(const rb_sim *sim)
{
    return sim && sim->fr ? &sim->fr->truth : NULL;
}

/* ---- set-up ----------------------------------------------------------------------------------------------- */

/* name: what the message calls the coefficients' owner */
static int check_coef(const rb_sim_friction_coef *c, const char *name, rb_err *err)
{
    if (!(c->mu_s >= 0) || !(c->mu_d >= 0))
        return rb_err_set(err, RB_ECONFIG, "sim: %s: mu_s and mu_d must be >= 0", name);
    if (!(c->mu_s >= c->mu_d))
        return rb_err_set(err, RB_ECONFIG, "sim: %s: mu_s (%g) must be >= mu_d (%g)", name, c->mu_s, c->mu_d);
    if (!(c->v_s >= 0) || !isfinite(c->v_s))
        return rb_err_set(err, RB_ECONFIG, "sim: %s: v_s must be finite and >= 0", name);
    return RB_OK;
}

int sim_fric_validate(const rb_sim_scenario *sc, rb_err *err)
{
    const rb_sim_floor *f = &sc->floor;
    if (!f->enabled)
        return RB_OK;
    char name[64];
    int rc = check_coef(&f->coef, "floor", err);
    if (rc < 0)
        return rc;
    if (!(f->v_stick >= 0) || !isfinite(f->v_stick))
        return rb_err_set(err, RB_ECONFIG, "sim: floor: v_stick must be finite and >= 0");
    if (f->n_patches && !f->patches)
        return rb_err_set(err, RB_ECONFIG, "sim: floor: NULL patches");
    for (size_t i = 0; i < f->n_patches; i++) {
        const rb_sim_floor_patch *p = &f->patches[i];
        for (int a = 0; a < 2; a++)
            if (!isfinite(p->min[a]) || !isfinite(p->max[a]) || !(p->min[a] < p->max[a]))
                return rb_err_set(err, RB_ECONFIG,
                                  "sim: floor patch %zu: min must be < max in x and y (inverted corners?)", i);
        snprintf(name, sizeof name, "floor patch %zu", i);
        if ((rc = check_coef(&p->coef, name, err)) < 0)
            return rc;
    }
    for (size_t k = 0; f->contact_coef && k < sc->n_contacts; k++) {
        snprintf(name, sizeof name, "floor: contact %zu", k);
        if (!isnan(f->contact_coef[k].mu_s) && (rc = check_coef(&f->contact_coef[k], name, err)) < 0)
            return rc;
    }
    return RB_OK;
}

#define FALLOC(ptr, count)                                                                                             \
    do {                                                                                                               \
        size_t cnt_ = (count);                                                                                         \
        if (!((ptr) = rb_calloc(cnt_ ? cnt_ : 1, sizeof *(ptr))))                                                      \
            goto nomem;                                                                                                \
    } while (0)

int sim_fric_init(rb_sim *s, const rb_sim_scenario *sc, rb_err *err)
{
    s->fr = NULL;
    if (!sc->floor.enabled)
        return RB_OK;
    struct sim_fric *fr = rb_calloc(1, sizeof *fr);
    if (!fr)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    s->fr = fr;
    size_t nc = s->nc, nv = s->nv;
    fr->floor = sc->floor.coef;
    fr->v_stick = sc->floor.v_stick > 0 ? sc->floor.v_stick : 1e-3;
    fr->np = sc->floor.n_patches;
    FALLOC(fr->patches, fr->np);
    FALLOC(fr->own, nc);
    FALLOC(fr->coef, nc);
    FALLOC(fr->slip, nc);
    FALLOC(fr->lift, nc);
    FALLOC(fr->d, 2 * nc);
    FALLOC(fr->mu, nc);
    FALLOC(fr->vel, 2 * nc);
    FALLOC(fr->pos, 3 * nc);
    FALLOC(fr->off, 3 * nc);
    FALLOC(fr->bref, nc);
    FALLOC(fr->yf, nc * nv);
    FALLOC(fr->jf, nv);
    FALLOC(fr->F, s->max_rows);
    FALLOC(fr->piv, s->max_rows);
    FALLOC(fr->slip_vel, 2 * nc);
    FALLOC(fr->ratio, nc);
    FALLOC(fr->mu_s, nc);
    FALLOC(fr->mu_d, nc);
    FALLOC(fr->slipping, nc);
    FALLOC(fr->pulling, nc);
    FALLOC(fr->pull_n, nc);
    if (fr->np)
        memcpy(fr->patches, sc->floor.patches, fr->np * sizeof *fr->patches);
    for (size_t k = 0; k < nc; k++) {
        fr->own[k] = sc->floor.contact_coef ? sc->floor.contact_coef[k] : (rb_sim_friction_coef){NAN, NAN, 0};
        fr->mu_s[k] = fr->mu_d[k] = NAN;
    }
    s->sc.floor.patches = NULL, s->sc.floor.contact_coef = NULL;
    fr->truth =
        (rb_sim_contact_truth){nc, fr->slip_vel, fr->slipping, fr->ratio, fr->pulling, fr->pull_n, fr->mu_s, fr->mu_d};
    return RB_OK;
nomem:
    return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
}

void sim_fric_free(rb_sim *s)
{
    struct sim_fric *fr = s->fr;
    if (!fr)
        return;
    void *arrays[] = {fr->patches, fr->own,  fr->coef, fr->slip,     fr->lift,    fr->d,         fr->mu,  fr->vel,
                      fr->pos,     fr->off,  fr->bref, fr->yf,       fr->jf,      (void *)fr->F, fr->piv, fr->slip_vel,
                      fr->ratio,   fr->mu_s, fr->mu_d, fr->slipping, fr->pulling, fr->pull_n};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        rb_free(arrays[i]);
    rb_free(fr);
    s->fr = NULL;
}

/* ---- per evaluation ----------------------------------------------------------------------------------------- */

/* bref = s->cref[k] moved by off: p + [dx, dy, 0], Rz(dyaw) R. */
static void moved_ref(const rb_sim *s, size_t k)
{
    const struct sim_fric *fr = s->fr;
    const rb_xform *ref = &s->cref[k];
    const double *o = fr->off + 3 * k;
    rb_xform *b = &fr->bref[k];
    double c = cos(o[2]), sn = sin(o[2]);
    *b = *ref;
    b->p[0] += o[0], b->p[1] += o[1];
    for (int j = 0; j < 3; j++) {
        b->R[j] = c * ref->R[j] - sn * ref->R[3 + j];
        b->R[3 + j] = sn * ref->R[j] + c * ref->R[3 + j];
    }
}

const rb_xform *sim_fric_follow(rb_sim *s, size_t k, const rb_xform *X, const double v[6])
{
    struct sim_fric *fr = s->fr;
    memcpy(fr->pos + 3 * k, X->p, 3 * sizeof *fr->pos);
    fr->vel[2 * k] = v[0], fr->vel[2 * k + 1] = v[1];
    double *o = fr->off + 3 * k;
    if (fr->slip[k]) {
        o[0] = X->p[0] - s->cref[k].p[0], o[1] = X->p[1] - s->cref[k].p[1];
        if (s->contacts[k].dim == 6) {
            /* yaw of R R_b^T (exact for a rotation about z; the small tilt the roll and pitch rows allow barely
             * moves it) */
            const double *R = X->R, *B = fr->bref[k].R;
            double r10 = R[3] * B[0] + R[4] * B[1] + R[5] * B[2], r01 = R[0] * B[3] + R[1] * B[4] + R[2] * B[5];
            double r00 = R[0] * B[0] + R[1] * B[1] + R[2] * B[2], r11 = R[3] * B[3] + R[4] * B[4] + R[5] * B[5];
            o[2] += atan2(r10 - r01, r00 + r11);
        }
    }
    moved_ref(s, k);
    return &fr->bref[k];
}

bool sim_fric_released(const struct sim_fric *fr, size_t k, int r) { return fr->slip[k] && (r < 2 || r == 5); }

/* Whether contact k pushes along a friction-coupled normal row (slipping, friction not dropped). */
static bool coupled(const struct sim_fric *fr, size_t k) { return fr->slip[k] && !fr->lift[k] && fr->mu[k] != 0.0; }

const double *const *sim_fric_force_rows(rb_sim *s, size_t crows)
{
    struct sim_fric *fr = s->fr;
    size_t nv = s->nv, row = 0, jr = 0;
    bool any = false;
    for (size_t r = 0; r < s->max_rows; r++)
        fr->F[r] = NULL;
    for (size_t k = 0; k < s->nc && row < crows; k++) {
        if (!s->active[k])
            continue;
        int dim = s->contacts[k].dim;
        if (coupled(fr, k)) {
            /* J_f = J_n - mu d^T J_t (velocity order), then as constraint_row: tree order, L^-T on its chain */
            const double *Jx = s->Jc + jr * nv, *Jy = Jx + nv, *Jn = Jy + nv;
            double m = fr->mu[k], dx = fr->d[2 * k], dy = fr->d[2 * k + 1];
            for (size_t i = 0; i < nv; i++)
                fr->jf[i] = Jn[i] - m * (dx * Jx[i] + dy * Jy[i]);
            double *y = fr->yf + k * nv;
            int leaf = s->cleaf[k];
            memset(y, 0, nv * sizeof *y);
            if (leaf >= 0) {
                for (int i = leaf; i >= 0; i = s->vpar[i])
                    y[i] = fr->jf[s->vperm[i]];
                tree_solve_lt_chain(s->L, s->vpar, nv, leaf, y);
            } else {
                for (size_t i = 0; i < nv; i++)
                    y[i] = fr->jf[s->vperm[i]];
                tree_solve_lt(s->L, s->vpar, nv, y);
            }
            fr->F[row] = y; /* the normal row is the block's first kept row (x and y are released) */
            any = true;
        }
        row += (size_t)dim - (fr->slip[k] ? (dim == 6 ? 3u : 2u) : 0u);
        jr += (size_t)dim;
    }
    return any ? fr->F : NULL;
}

bool sim_fric_lu_solve(rb_sim *s, size_t n)
{
    double *A = s->S, *x = s->lam;
    size_t *piv = s->fr->piv;
    /* Doolittle with partial pivoting: P A = L U in place (unit L below the diagonal) */
    for (size_t j = 0; j < n; j++) {
        size_t p = j;
        for (size_t i = j + 1; i < n; i++)
            if (fabs(A[i * n + j]) > fabs(A[p * n + j]))
                p = i;
        piv[j] = p;
        if (!(fabs(A[p * n + j]) > 0.0) || !isfinite(A[p * n + j]))
            return false;
        if (p != j)
            for (size_t c = 0; c < n; c++) {
                double t = A[j * n + c];
                A[j * n + c] = A[p * n + c], A[p * n + c] = t;
            }
        for (size_t i = j + 1; i < n; i++) {
            double f = A[i * n + j] / A[j * n + j];
            A[i * n + j] = f;
            for (size_t c = j + 1; c < n; c++)
                A[i * n + c] -= f * A[j * n + c];
        }
    }
    for (size_t j = 0; j < n; j++) {
        double t = x[j];
        x[j] = x[piv[j]], x[piv[j]] = t;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < i; c++)
            x[i] -= A[i * n + c] * x[c];
    for (size_t i = n; i-- > 0;) {
        for (size_t c = i + 1; c < n; c++)
            x[i] -= A[i * n + c] * x[c];
        x[i] /= A[i * n + i];
    }
    return true;
}

void sim_fric_wrenches(const rb_sim *s, double *cw)
{
    const struct sim_fric *fr = s->fr;
    for (size_t k = 0; k < s->nc; k++) {
        if (!s->active[k] || !fr->slip[k])
            continue;
        double f = coupled(fr, k) ? -fr->mu[k] * cw[6 * k + 2] : 0.0;
        cw[6 * k] = f * fr->d[2 * k], cw[6 * k + 1] = f * fr->d[2 * k + 1];
    }
}

/* ---- the decision at a sample --------------------------------------------------------------------------------- */

/* The first patch holding the point, else the contact's own, else the floor's. */
static rb_sim_friction_coef coef_at(const struct sim_fric *fr, size_t k)
{
    const double *p = fr->pos + 3 * k;
    for (size_t i = 0; i < fr->np; i++) {
        const rb_sim_floor_patch *pa = &fr->patches[i];
        if (p[0] >= pa->min[0] && p[0] <= pa->max[0] && p[1] >= pa->min[1] && p[1] <= pa->max[1])
            return pa->coef;
    }
    return isnan(fr->own[k].mu_s) ? fr->floor : fr->own[k];
}

void sim_fric_begin(rb_sim *s)
{
    struct sim_fric *fr = s->fr;
    for (size_t k = 0; k < s->nc; k++) {
        fr->lift[k] = 0;
        if (!s->active[k]) {
            fr->slip[k] = 0;
            fr->off[3 * k] = fr->off[3 * k + 1] = fr->off[3 * k + 2] = 0.0; /* (re)activation: held where it is */
            fr->mu_s[k] = fr->mu_d[k] = NAN;
            continue;
        }
        rb_sim_friction_coef c = fr->coef[k] = coef_at(fr, k);
        fr->mu_s[k] = c.mu_s, fr->mu_d[k] = c.mu_d;
        if (!fr->slip[k])
            continue;
        double vx = fr->vel[2 * k], vy = fr->vel[2 * k + 1], speed = hypot(vx, vy);
        if (!isfinite(c.mu_s) || speed < fr->v_stick || vx * fr->d[2 * k] + vy * fr->d[2 * k + 1] <= 0.0) {
            fr->slip[k] = 0; /* tried in STICK; its reference already follows the frame */
            continue;
        }
        fr->d[2 * k] = vx / speed, fr->d[2 * k + 1] = vy / speed;
        fr->mu[k] = rb_sim_friction_mu(&c, speed);
    }
}

bool sim_fric_update(rb_sim *s)
{
    struct sim_fric *fr = s->fr;
    const double *cw = s->cw;
    bool changed = false;
    for (size_t k = 0; k < s->nc; k++) {
        if (!s->active[k])
            continue;
        double fx = cw[6 * k], fy = cw[6 * k + 1], fn = cw[6 * k + 2], ft = hypot(fx, fy);
        if (fr->slip[k]) {
            if (fn < 0.0 && !fr->lift[k])
                fr->lift[k] = 1, changed = true;
            continue;
        }
        const rb_sim_friction_coef *c = &fr->coef[k];
        if (!isfinite(c->mu_s) || !(fn > 0.0) || !(ft > c->mu_s * fn))
            continue;
        double vx = fr->vel[2 * k], vy = fr->vel[2 * k + 1], speed = hypot(vx, vy);
        if (speed >= fr->v_stick)
            fr->d[2 * k] = vx / speed, fr->d[2 * k + 1] = vy / speed;
        else
            fr->d[2 * k] = -fx / ft, fr->d[2 * k + 1] = -fy / ft;
        fr->mu[k] = rb_sim_friction_mu(c, speed);
        fr->slip[k] = 1;
        changed = true;
    }
    return changed;
}

void sim_fric_end(rb_sim *s)
{
    struct sim_fric *fr = s->fr;
    const double *cw = s->cw;
    for (size_t k = 0; k < s->nc; k++) {
        bool on = s->active[k], sl = on && fr->slip[k];
        double fn = cw[6 * k + 2];
        fr->slipping[k] = sl;
        fr->slip_vel[2 * k] = sl ? fr->vel[2 * k] : 0.0;
        fr->slip_vel[2 * k + 1] = sl ? fr->vel[2 * k + 1] : 0.0;
        fr->ratio[k] = on && fn > 0.0 ? hypot(cw[6 * k], cw[6 * k + 1]) / fn : 0.0;
        fr->pulling[k] = on && fn < 0.0;
        fr->pull_n[k] += fr->pulling[k];
    }
}
