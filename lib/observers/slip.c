/* Foot slip detection and prediction (seed 003 ch. 5; roboest/observers.h, rb_slip_*). */
#include <math.h>
#include <string.h>

#include "roboest/observers.h"
#include "roboest/spatial.h"

void rb_slip_config_init(rb_slip_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->foot_mass = 1.0;
    cfg->tr = 0.09 * 9.80665;
    cfg->margin = 5.0;
    cfg->learn = true;
    cfg->bias_samples = 200;
    cfg->contact_on = 30.0;
    cfg->contact_off = 15.0;
    rb_m3_identity(cfg->R_ft);
    rb_m3_identity(cfg->R_acc);
    cfg->n_axes = 1;
    cfg->axes[0] = RB_SLIP_X;
}

static bool orthonormal(const double R[9])
{
    for (int i = 0; i < 9; i++)
        if (!isfinite(R[i]))
            return false;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = R[3 * i] * R[3 * j] + R[3 * i + 1] * R[3 * j + 1] + R[3 * i + 2] * R[3 * j + 2];
            if (fabs(d - (i == j)) > 1e-6)
                return false;
        }
    return true;
}

static int check_nonneg(const char *key, double v, rb_err *err)
{
    if (!(v >= 0) || !isfinite(v))
        return rb_err_set(err, RB_ECONFIG, "%s = %g must be >= 0 and finite", key, v);
    return RB_OK;
}

int rb_slip_init(rb_slip *s, const rb_slip_config *c, rb_err *err)
{
    if (!s || !c)
        return rb_err_set(err, RB_EINVAL, "rb_slip_init: NULL argument");
    int rc;
    if (!(c->foot_mass > 0) || !isfinite(c->foot_mass))
        return rb_err_set(err, RB_ECONFIG, "foot_mass = %g must be > 0 and finite", c->foot_mass);
    if ((rc = check_nonneg("slip_threshold", c->tr, err)) || (rc = check_nonneg("safety_margin", c->margin, err)) ||
        (rc = check_nonneg("contact_force", c->contact_on, err)))
        return rc;
    if (!(c->contact_off >= 0) || !(c->contact_off <= c->contact_on))
        return rb_err_set(err, RB_ECONFIG, "contact_off = %g must be in [0, contact_on = %g]", c->contact_off,
                          c->contact_on);
    if (c->n_axes < 1 || c->n_axes > RB_SLIP_MAX_AXES)
        return rb_err_set(err, RB_ECONFIG, "%zu axes: give 1 to %d", c->n_axes, RB_SLIP_MAX_AXES);
    for (size_t a = 0; a < c->n_axes; a++) {
        if (c->axes[a] != RB_SLIP_X && c->axes[a] != RB_SLIP_Y && c->axes[a] != RB_SLIP_T)
            return rb_err_set(err, RB_ECONFIG, "axis %zu: unknown axis code %d", a, (int)c->axes[a]);
        if ((rc = check_nonneg("static_friction", c->fs0[a], err)) ||
            (rc = check_nonneg("stribeck_friction", c->fst0[a], err)) ||
            (rc = check_nonneg("coulomb_friction", c->fc0[a], err)))
            return rc;
    }
    if (!orthonormal(c->R_ft) || !orthonormal(c->R_acc))
        return rb_err_set(err, RB_ECONFIG, "a sensor rotation is not orthonormal");
    memset(s, 0, sizeof *s);
    s->cfg = *c;
    for (size_t a = 0; a < c->n_axes; a++) {
        s->fs[a] = c->fs0[a];
        s->fst[a] = c->fst0[a];
        s->fc[a] = c->fc0[a];
    }
    return RB_OK;
}

rb_slip_class rb_slip_classify(double ft, double fsuf, double fc)
{
    double f = fabs(ft);
    if (f >= fc)
        return RB_SLIP_SLIPPING;
    return f > fsuf ? RB_SLIP_TENDS : RB_SLIP_NO;
}

/* The value of an axis from foot-frame x, y. */
static double axis_of(rb_slip_axis a, const double v[3])
{
    return a == RB_SLIP_X ? v[0] : a == RB_SLIP_Y ? v[1] : hypot(v[0], v[1]);
}

static void nan_out(const rb_slip *s, rb_slip_out *o)
{
    for (size_t a = 0; a < s->cfg.n_axes; a++) {
        o->ft[a] = o->ff[a] = o->acc[a] = NAN;
        o->fs[a] = s->fs[a], o->fst[a] = s->fst[a], o->fc[a] = s->fc[a];
        o->fsuf[a] = fmax(s->fc[a] - s->cfg.margin, 0);
        o->detected[a] = 0;
        o->prediction[a] = RB_SLIP_NO;
    }
    o->worst = RB_SLIP_NO;
    o->normal = NAN;
    o->contact = s->contact;
}

/* Steps 4 and 5 of one axis: f the force (ratio) |F_f| of step 4 (= |F_t|), ff the friction of step 5. */
static void learn_axis(rb_slip *s, size_t a, bool slipping, double ft, double ff)
{
    if (!slipping) {
        double f = fabs(ft);
        s->fs[a] = fmax(f, s->fs[a]);
        s->fc[a] = fmin(s->fs[a], s->fc[a]);
        if (f > s->fc[a] + s->fst[a])
            s->fc[a] = fabs(f - s->fst[a]);
    } else {
        double fs_prev = s->fs[a];
        s->fc[a] = fmin(fabs(ff), s->fc[a]);
        s->fst[a] = fmax(fs_prev - s->fc[a], 0);
    }
}

void rb_slip_step(rb_slip *s, const double force[3], const double acc[3], int contact, rb_slip_out *o)
{
    const rb_slip_config *c = &s->cfg;
    s->n_steps++;
    double F[3], A[3];
    rb_m3_mul_v(c->R_ft, force, F);
    rb_m3_mul_v(c->R_acc, acc, A);
    bool finite = true;
    for (int i = 0; i < 3; i++)
        finite = finite && isfinite(F[i]) && isfinite(A[i]);
    if (!finite) {
        s->n_nonfinite++;
        nan_out(s, o);
        return;
    }
    /* the bias: the running mean over the first bias_samples readings, then frozen */
    bool warming = s->n_bias < c->bias_samples;
    if (warming) {
        s->n_bias++;
        for (int i = 0; i < 3; i++) {
            s->bias_sum[i] += A[i];
            s->bias[i] = s->bias_sum[i] / (double)s->n_bias;
        }
    }
    double p[3] = {A[0] - s->bias[0], A[1] - s->bias[1], A[2] - s->bias[2]};
    double fn = F[2];
    bool was = s->contact;
    if (contact >= 0)
        s->contact = contact > 0;
    else
        s->contact = s->contact ? fn >= c->contact_off : fn > c->contact_on;
    if (s->contact && !was)
        s->since_contact = 0;
    else if (s->contact)
        s->since_contact++;
    s->n_contact += s->contact;
    bool settled = s->since_contact >= c->hold_samples && !warming;
    double fr[3] = {F[0] + c->foot_mass * p[0], F[1] + c->foot_mass * p[1], 0};
    o->worst = RB_SLIP_NO;
    o->normal = fn;
    o->contact = s->contact;
    bool any = false;
    for (size_t a = 0; a < c->n_axes; a++) {
        double ft = axis_of(c->axes[a], F), ff = axis_of(c->axes[a], fr), pa = axis_of(c->axes[a], p);
        bool usable = true;
        if (c->ratio) {
            usable = fn > 0;
            ft = usable ? ft / fn : (ft == 0 ? 0 : copysign(INFINITY, ft));
            ff = usable ? ff / fn : (ff == 0 ? 0 : copysign(INFINITY, ff));
        }
        bool det = s->contact && settled && fabs(pa) >= c->tr;
        any = any || det;
        if (s->contact && settled && usable && c->learn)
            learn_axis(s, a, det, ft, ff);
        double fsuf = fmax(s->fc[a] - c->margin, 0);
        o->ft[a] = ft;
        o->ff[a] = ff;
        o->acc[a] = pa;
        o->fs[a] = s->fs[a];
        o->fst[a] = s->fst[a];
        o->fc[a] = s->fc[a];
        o->fsuf[a] = fsuf;
        o->detected[a] = det;
        o->prediction[a] = s->contact ? rb_slip_classify(ft, fsuf, s->fc[a]) : RB_SLIP_NO;
        if (o->prediction[a] > o->worst)
            o->worst = o->prediction[a];
    }
    s->n_detected += any;
}

/* Body b's pose in the base frame at q = 0. */
static void body_pose0(const rb_model *m, int b, rb_xform *out)
{
    rb_xform_identity(out);
    while (b > 0) {
        rb_xform tmp;
        rb_xform_compose(&m->bodies[b].X_parent, out, &tmp);
        *out = tmp;
        b = m->bodies[b].parent;
    }
}

int rb_slip_mount(const rb_model *m, size_t foot, size_t sensor, double R[9], bool *rigid, rb_err *err)
{
    if (!m || foot >= m->n_frames || sensor >= m->n_frames)
        return rb_err_set(err, RB_EINVAL, "rb_slip_mount: frame index out of range");
    const rb_frame *f = &m->frames[foot], *g = &m->frames[sensor];
    rb_xform bf, bg, wf, wg;
    body_pose0(m, f->body, &bf);
    body_pose0(m, g->body, &bg);
    rb_xform_compose(&bf, &f->X_body, &wf);
    rb_xform_compose(&bg, &g->X_body, &wg);
    /* R = wf.R^T wg.R */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = wf.R[i] * wg.R[j] + wf.R[3 + i] * wg.R[3 + j] + wf.R[6 + i] * wg.R[6 + j];
    /* rigid: only fixed joints on the path between the two bodies (up to their common ancestor) */
    int a = f->body, b = g->body;
    bool ok = true;
    while (a != b) {
        int *deeper = a > b ? &a : &b; /* bodies are in topological order: a parent's index is smaller */
        ok = ok && m->bodies[*deeper].type == RB_JOINT_FIXED;
        *deeper = m->bodies[*deeper].parent;
    }
    *rigid = ok;
    return RB_OK;
}
