/* fbse_friction: the legs' joint friction of a walking biped from its IMU, foot wrenches and joint states (seed 003
 * ch. 4), over the observers module's rb_fbse_* (roboest/observers.h); plus, when the true friction is wired, the
 * evaluation outputs (the batch least-squares fit of the truth over the samples the RLS used, and the swinging legs'
 * RMSE). The parameter schema and the documentation are in fbse_friction_type.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fbse_friction.h"
#include "roboest/observers.h"
#include "torque_common.h"

typedef struct fb_stage {
    const rb_model *m;
    rb_fbse *est;
    size_t n;
    size_t orient_w;
    bool phase_given, truth_given;
    tq_strings names, fc_names, fv_names;
    const char **units_nm, **units_nms, **units_acc, **units_1;
    /* evaluation: per leg joint, the normal equations of [sgn v, v] and the truth over the updated samples, and the
     * squared error over the samples its leg swings */
    double (*ne)[5];
    double *sse, *sse_ref;
    long *nsw;
    char *note;
} fb_stage;

void fb_destroy(void *state)
{
    fb_stage *s = state;
    if (!s)
        return;
    rb_fbse_free(s->est);
    tq_strings_free(&s->names), tq_strings_free(&s->fc_names), tq_strings_free(&s->fv_names);
    rb_free(s->units_nm), rb_free(s->units_nms), rb_free(s->units_acc), rb_free(s->units_1);
    rb_free(s->ne), rb_free(s->sse), rb_free(s->sse_ref), rb_free(s->nsw);
    rb_free(s->note);
    rb_free(s);
}

static const char *const lr_names[2] = {"left", "right"};

static int check_ports(const rb_stage_setup *st, rb_err *err)
{
    size_t n = st->model->n_dofs;
    int rc;
    if ((rc = tq_check_port(st, FB_Q, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, FB_DQ, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, FB_TAU, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, FB_WRENCHES, 12, "6 per foot, left then right: [f; tau]", false, err)) ||
        (rc = tq_check_port(st, FB_ACC, 3, "the IMU's proper acceleration", false, err)) ||
        (rc = tq_check_port(st, FB_GYRO, 3, "the IMU's angular velocity", false, err)))
        return rc;
    size_t wo = st->in[FB_ORIENT].width;
    if (wo && wo != 3 && wo != 4)
        return rb_err_set(err, RB_ECONFIG,
                          "input orientation has %zu elements: give roll pitch yaw (3) or a "
                          "quaternion w x y z (4)",
                          wo);
    if (st->in[FB_PHASE].width && (rc = tq_check_port(st, FB_PHASE, 1, "0, 1 or 2", false, err)))
        return rc;
    if (st->in[FB_TRUTH].width && (rc = tq_check_port(st, FB_TRUTH, n, "one per model joint", true, err)))
        return rc;
    return RB_OK;
}

static int read_params(const rb_stage_setup *st, rb_fbse_config *c, double *K, double *sg, double *arm, size_t n,
                       rb_err *err)
{
    const rb_params *p = st->params;
    const rb_param_value *feet = rb_params_get(p, "feet"), *ft = rb_params_get(p, "ft_sensors"),
                         *kv = rb_params_get(p, "K"), *sv = rb_params_get(p, "sigma"),
                         *av = rb_params_get(p, "armature");
    int rc;
    rb_fbse_config_init(c);
    c->method = strcmp(rb_params_string(p, "method"), "filtered") == 0 ? RB_FBSE_FILTERED : RB_FBSE_NONSLIP;
    c->alpha = strcmp(rb_params_string(p, "base_angular_acc"), "gyro_diff") == 0 ? RB_FBSE_ALPHA_GYRO_DIFF
                                                                                 : RB_FBSE_ALPHA_MIN_NORM;
    c->regressors =
        strcmp(rb_params_string(p, "regressors"), "literal") == 0 ? RB_FBSE_REG_LITERAL : RB_FBSE_REG_FILTERED;
    const char *ws = rb_params_string(p, "wrench_source");
    c->wrench = strcmp(ws, "ft") == 0          ? RB_FBSE_FT
                : strcmp(ws, "feet_body") == 0 ? RB_FBSE_FEET_BODY
                                               : RB_FBSE_FEET_MIXED;
    for (int l = 0; l < 2; l++) {
        int idx;
        if ((rc = tq_find_frame(st, "feet", (size_t)l, feet->strings[l], &idx, err)))
            return rc;
        c->feet[l] = feet->strings[l];
    }
    if (strcmp(feet->strings[0], feet->strings[1]) == 0)
        return rb_err_set(err, RB_ECONFIG, "feet: '%s' given twice", feet->strings[0]);
    int idx;
    if ((rc = tq_find_frame(st, "imu_frame", SIZE_MAX, rb_params_string(p, "imu_frame"), &idx, err)))
        return rc;
    c->imu_frame = rb_params_string(p, "imu_frame");
    if (c->wrench == RB_FBSE_FT) {
        if (ft->count != 2)
            return rb_err_set(err, RB_ECONFIG, "ft_sensors: wrench_source \"ft\" needs the left and right FT sensors");
        for (int l = 0; l < 2; l++) {
            if ((rc = tq_find_ft(st, "ft_sensors", (size_t)l, ft->strings[l], &idx, err)))
                return rc;
            c->ft[l] = ft->strings[l];
        }
    }
    /* K, sigma: 6 values (one per position in a 6-joint leg, both legs) or one per leg joint */
    const rb_param_value *ks[2] = {kv, sv};
    double *dst[2] = {K, sg};
    const char *kn[2] = {"K", "sigma"};
    for (int a = 0; a < 2; a++) {
        const rb_param_value *v = ks[a];
        if (v->count == n)
            memcpy(dst[a], v->numbers, n * sizeof *K);
        else if (v->count == 6 && n == 12)
            for (size_t i = 0; i < n; i++)
                dst[a][i] = v->numbers[i % 6];
        else
            return rb_err_set(err, RB_ECONFIG, "%s has %zu values: give one per leg joint (%zu)%s", kn[a], v->count, n,
                              n == 12 ? " or 6 (per position in a leg, both legs)" : "");
    }
    if (av->count == n)
        memcpy(arm, av->numbers, n * sizeof *arm);
    else if (av->count == 6 && n == 12)
        for (size_t i = 0; i < n; i++)
            arm[i] = av->numbers[i % 6];
    else if (av->count != 0)
        return rb_err_set(err, RB_ECONFIG, "armature has %zu values: give one per leg joint (%zu) or none", av->count,
                          n);
    c->p0 = rb_params_number(p, "p0");
    c->lambda = rb_params_number(p, "forgetting_factor");
    c->gyro_diff_cutoff = rb_params_number(p, "gyro_diff_cutoff");
    c->singular_threshold = rb_params_number(p, "singular_threshold");
    c->contact_on = rb_params_number(p, "contact_on"), c->contact_off = rb_params_number(p, "contact_off");
    if (!(c->contact_on > c->contact_off))
        return rb_err_set(err, RB_ECONFIG, "contact_on (%g N) must be above contact_off (%g N)", c->contact_on,
                          c->contact_off);
    if (c->method == RB_FBSE_NONSLIP && !st->in[FB_ORIENT].width)
        return rb_err_set(err, RB_ECONFIG, "method \"nonslip\" needs the orientation input (the gravity direction)");
    if (c->wrench == RB_FBSE_FEET_MIXED && !st->in[FB_ORIENT].width)
        return rb_err_set(err, RB_ECONFIG, "wrench_source \"feet_mixed\" needs the orientation input");
    return RB_OK;
}

static const char **unit_table(size_t n, const char *u)
{
    const char **t = rb_calloc(n ? n : 1, sizeof *t);
    for (size_t i = 0; t && i < n; i++)
        t[i] = u;
    return t;
}

int fb_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = tq_need_floating_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    if ((rc = check_ports(st, err)))
        return rc;
    fb_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    s->m = m;
    s->orient_w = st->in[FB_ORIENT].width, s->phase_given = st->in[FB_PHASE].width > 0;
    s->truth_given = st->in[FB_TRUTH].width > 0;
    /* the legs first (their length fixes the arrays), then the estimator with the parameters */
    rb_fbse_config c;
    rb_fbse_config_init(&c);
    const rb_param_value *feet = rb_params_get(st->params, "feet");
    c.feet[0] = feet->strings[0], c.feet[1] = feet->strings[1];
    c.imu_frame = rb_params_string(st->params, "imu_frame");
    c.wrench = RB_FBSE_FEET_BODY; /* a probe for the leg sizes: no FT checks yet, unit filter constants */
    size_t n = 0;
    {
        rb_fbse *probe = NULL;
        double ones[64];
        for (int i = 0; i < 64; i++)
            ones[i] = 1;
        c.K = c.sigma = ones;
        int idx;
        if ((rc = tq_find_frame(st, "feet", 0, feet->strings[0], &idx, err)) ||
            (rc = tq_find_frame(st, "feet", 1, feet->strings[1], &idx, err)) ||
            (rc = tq_find_frame(st, "imu_frame", SIZE_MAX, c.imu_frame, &idx, err)) ||
            (rc = rb_fbse_alloc(m, &c, &probe, err))) {
            fb_destroy(s);
            return rc;
        }
        n = rb_fbse_n_joints(probe);
        rb_fbse_free(probe);
    }
    s->n = n;
    double *K = rb_calloc(3 * n, sizeof *K);
    if (!K) {
        fb_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    if ((rc = read_params(st, &c, K, K + n, K + 2 * n, n, err))) {
        rb_free(K);
        fb_destroy(s);
        return rc;
    }
    c.K = K, c.sigma = K + n, c.armature = K + 2 * n;
    rc = rb_fbse_alloc(m, &c, &s->est, err);
    rb_free(K);
    if (rc) {
        fb_destroy(s);
        return rc;
    }
    if ((rc = tq_strings_alloc(&s->names, n, err)) || (rc = tq_strings_alloc(&s->fc_names, n, err)) ||
        (rc = tq_strings_alloc(&s->fv_names, n, err))) {
        fb_destroy(s);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        const char *jn = m->dof_names[rb_fbse_joint_dof(s->est, i)];
        if ((rc = tq_strings_set(&s->names, i, err, "%s", jn))) {
            fb_destroy(s);
            return rc;
        }
    }
    s->units_nm = unit_table(n, "N m"), s->units_nms = unit_table(n, "N m s/rad");
    s->units_acc = unit_table(n, "rad/s^2"), s->units_1 = unit_table(n, "");
    s->ne = rb_calloc(n, sizeof *s->ne), s->sse = rb_calloc(n, sizeof *s->sse),
    s->sse_ref = rb_calloc(n, sizeof *s->sse_ref), s->nsw = rb_calloc(n, sizeof *s->nsw);
    if (!s->units_nm || !s->units_nms || !s->units_acc || !s->units_1 || !s->ne || !s->sse || !s->sse_ref || !s->nsw) {
        fb_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    const char *const *nm = (const char *const *)s->names.s;
    rb_port *o = st->out;
    for (int j = FB_FRICTION; j <= FB_MODEL; j++)
        o[j] = (rb_port){n, nm, s->units_nm};
    o[FB_COULOMB] = (rb_port){n, nm, s->units_nm};
    o[FB_VISCOUS] = (rb_port){n, nm, s->units_nms};
    o[FB_LINK] = (rb_port){n, nm, s->units_nm};
    o[FB_CONTACT] = (rb_port){2, lr_names, NULL};
    o[FB_SINGULAR] = (rb_port){2, lr_names, NULL};
    o[FB_TDD] = (rb_port){n, nm, s->units_acc};
    o[FB_REF_COULOMB] = (rb_port){n, nm, s->units_nm};
    o[FB_REF_VISCOUS] = (rb_port){n, nm, s->units_nms};
    o[FB_COULOMB_ERR] = (rb_port){n, nm, s->units_1};
    o[FB_VISCOUS_ERR] = (rb_port){n, nm, s->units_1};
    o[FB_SWING_RMSE] = (rb_port){n, nm, s->units_nm};
    o[FB_REF_SWING_RMSE] = (rb_port){n, nm, s->units_nm};
    *state = s;
    return RB_OK;
}

/* The phase input: -1 none (unwired or NaN), else 0, 1, 2; RB_EINPUT for anything else. */
static int read_phase(const fb_stage *s, const double *in, int *phase, rb_err *err)
{
    *phase = -1;
    if (!s->phase_given || isnan(in[0]))
        return RB_OK;
    double v = in[0];
    if (v != 0 && v != 1 && v != 2)
        return rb_err_set(err, RB_EINPUT, "phase %g is not 0 (double support), 1 (left) or 2 (right)", v);
    *phase = (int)v;
    return RB_OK;
}

/* the batch least-squares fit of y = F_c s + F_v v from its normal equations (NaN while singular) */
static void ls2(const double ne[5], double *fc, double *fv)
{
    double det = ne[0] * ne[2] - ne[1] * ne[1];
    if (!(fabs(det) > 1e-12 * (ne[0] * ne[2] + 1e-300))) {
        *fc = *fv = NAN;
        return;
    }
    *fc = (ne[2] * ne[3] - ne[1] * ne[4]) / det;
    *fv = (ne[0] * ne[4] - ne[1] * ne[3]) / det;
}

int fb_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    fb_stage *s = state;
    int phase, rc = read_phase(s, in[FB_PHASE], &phase, err);
    if (rc)
        return rc;
    double R[9], *Rp = NULL;
    const double *o = in[FB_ORIENT];
    if (s->orient_w == 4) {
        double qn = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2] + o[3] * o[3]);
        if (isfinite(qn) && !(qn > 1e-9))
            return rb_err_set(err, RB_EINPUT, "input orientation: the quaternion has zero norm (not an attitude)");
        rb_m3_from_quat(o, R), Rp = R;
    } else if (s->orient_w == 3) { /* roll pitch yaw: the robot logger's orientations channels */
        rb_m3_from_rpy(o[0], o[1], o[2], R), Rp = R;
    }
    rb_fbse_sample smp = {.q = in[FB_Q],
                          .dq = in[FB_DQ],
                          .tau = in[FB_TAU],
                          .wrenches = in[FB_WRENCHES],
                          .acc = in[FB_ACC],
                          .gyro = in[FB_GYRO],
                          .R_WI = Rp,
                          .phase = phase};
    if ((rc = rb_fbse_step(s->est, k, t, &smp, err)))
        return tq_unname_sample(rc, k, err);
    rb_fbse_out r;
    rb_fbse_get_out(s->est, &r);
    size_t n = s->n;
    for (size_t i = 0; i < n; i++) {
        out[FB_FRICTION][i] = r.friction[i], out[FB_MEASURED][i] = r.measured[i], out[FB_MODEL][i] = r.model[i];
        out[FB_COULOMB][i] = r.coulomb[i], out[FB_VISCOUS][i] = r.viscous[i], out[FB_LINK][i] = r.link_torque[i];
        out[FB_TDD][i] = r.theta_ddot[i];
    }
    for (int l = 0; l < 2; l++)
        out[FB_CONTACT][l] = r.contact[l], out[FB_SINGULAR][l] = r.singular[l];
    for (size_t i = 0; i < n; i++) {
        size_t dof = rb_fbse_joint_dof(s->est, i);
        int l = rb_fbse_joint_leg(s->est, i);
        double y = s->truth_given ? in[FB_TRUTH][dof] : NAN, v = in[FB_DQ][dof];
        if (isfinite(y) && isfinite(v)) {
            if (r.contact[l] && isfinite(r.measured[i])) { /* a sample the RLS used */
                double sg = v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0, *ne = s->ne[i];
                ne[0] += sg * sg, ne[1] += sg * v, ne[2] += v * v, ne[3] += sg * y, ne[4] += v * y;
            }
        }
        double fc, fv;
        ls2(s->ne[i], &fc, &fv);
        if (isfinite(y) && isfinite(v) && !r.contact[l]) { /* swinging: the estimate and the truth's fit so far */
            double e = r.friction[i] - y, er = fc * (v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0) + fv * v - y;
            s->sse[i] += e * e, s->nsw[i]++;
            s->sse_ref[i] += isfinite(er) ? er * er : 0;
        }
        out[FB_REF_COULOMB][i] = fc, out[FB_REF_VISCOUS][i] = fv;
        out[FB_COULOMB_ERR][i] = (r.coulomb[i] - fc) / fabs(fc);
        out[FB_VISCOUS_ERR][i] = (r.viscous[i] - fv) / fabs(fv);
        out[FB_SWING_RMSE][i] = s->nsw[i] ? sqrt(s->sse[i] / (double)s->nsw[i]) : NAN;
        out[FB_REF_SWING_RMSE][i] = s->nsw[i] ? sqrt(s->sse_ref[i] / (double)s->nsw[i]) : NAN;
    }
    return RB_OK;
}

int fb_finish(void *state, rb_err *err)
{
    fb_stage *s = state;
    rb_fbse_diag d;
    rb_fbse_get_diag(s->est, &d);
    rb_free(s->note);
    s->note = NULL;
    char buf[400];
    snprintf(buf, sizeof buf,
             "RLS updates %ld (left) and %ld (right) of %ld samples; singular constraint (no update) %ld (left) and "
             "%ld (right); %ld samples with a non-finite input (model only)",
             d.updates[0], d.updates[1], d.steps, d.singular[0], d.singular[1], d.nonfinite);
    if (!(s->note = rb_strdup(buf)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

size_t fb_notes(void *state, const char *const **lines)
{
    fb_stage *s = state;
    *lines = (const char *const *)&s->note;
    return s->note ? 1 : 0;
}
