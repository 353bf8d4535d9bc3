/* Helpers for the joint-torque stage tests (no tests here): see torque_support.h. */
#include "torque_support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- logs from the simulation engine -------------------------------------------------------------------------- */

static double *col_alloc(size_t T, size_t w) { return calloc(T * w + 1, sizeof(double)); }

static void add_channel(rb_log *log, const char *name, size_t T, size_t w, const double *time, const double *data,
                        const char *const *names)
{
    rb_err err;
    cr_assert_eq(rb_log_add_channel_copy(log, name, T, w, time, data, names, NULL, &err), RB_OK, "%s", err.msg);
}

/* Run the scenario to the end, recording every sample; then the log channels (noise from ns added):
 *   q, dq, ddq, current, tau_j, tau_m, tau_f (n, joint names), friction (tau_f + noise), ft/<sensor> (6, every
 *   model FT sensor, its convention; the first with ft_offset), acc/<frame>, gyro/<frame> (3, the scenario's
 *   frames), push (6 per push, MIXED) when there are pushes. */
void sim_record(const rb_sim_scenario *sc, const noise_spec *ns, sim_rec *r)
{
    rb_err err;
    rb_sim *s = NULL;
    cr_assert_eq(rb_sim_init(sc, &s, &err), RB_OK, "%s", err.msg);
    const rb_model *m = sc->model;
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    size_t T = rb_sim_n_steps(s) + 1, n = m->n_dofs;
    r->T = T, r->n = n, r->nq = m->nq, r->nv = m->nv, r->n_ft = m->n_ft, r->n_frames = tr->n_frames;
    r->n_push = tr->n_pushes, r->n_contacts = tr->n_contacts, r->dt = sc->dt;
    r->frames = calloc(tr->n_frames + 1, sizeof(int));
    memcpy(r->frames, tr->frames, tr->n_frames * sizeof(int));
    r->q = col_alloc(T, m->nq), r->nu = col_alloc(T, m->nv), r->nud = col_alloc(T, m->nv);
    r->tau_j = col_alloc(T, n), r->tau_m = col_alloc(T, n), r->tau_f = col_alloc(T, n), r->cur = col_alloc(T, n);
    r->ft = col_alloc(T, 6 * m->n_ft), r->facc = col_alloc(T, 6 * tr->n_frames),
    r->fvel = col_alloc(T, 6 * tr->n_frames);
    r->push = col_alloc(T, 6 * tr->n_pushes), r->cw = col_alloc(T, 6 * tr->n_contacts);
    r->base_pose = calloc(T, sizeof *r->base_pose);
    double *time = col_alloc(T, 1);
    for (size_t k = 0; k < T; k++) {
        if (k > 0)
            cr_assert_eq(rb_sim_step(s, &err), 1, "%s", err.msg);
        time[k] = tr->t;
        memcpy(r->q + k * m->nq, tr->q, m->nq * sizeof(double));
        memcpy(r->nu + k * m->nv, tr->nu, m->nv * sizeof(double));
        memcpy(r->nud + k * m->nv, tr->nu_dot, m->nv * sizeof(double));
        memcpy(r->tau_j + k * n, tr->tau_j, n * sizeof(double));
        memcpy(r->tau_m + k * n, tr->tau_m, n * sizeof(double));
        memcpy(r->tau_f + k * n, tr->tau_f, n * sizeof(double));
        memcpy(r->cur + k * n, tr->current, n * sizeof(double));
        memcpy(r->ft + k * 6 * m->n_ft, tr->ft, 6 * m->n_ft * sizeof(double));
        memcpy(r->facc + k * 6 * tr->n_frames, tr->frame_acc, 6 * tr->n_frames * sizeof(double));
        memcpy(r->fvel + k * 6 * tr->n_frames, tr->frame_vel, 6 * tr->n_frames * sizeof(double));
        memcpy(r->push + k * 6 * tr->n_pushes, tr->push_wrench, 6 * tr->n_pushes * sizeof(double));
        memcpy(r->cw + k * 6 * tr->n_contacts, tr->contact_wrench, 6 * tr->n_contacts * sizeof(double));
        r->base_pose[k] = tr->base_pose;
    }
    rb_sim_finish(s);

    rb_rng rng;
    rb_rng_seed(&rng, ns ? ns->seed : 1);
    noise_spec zero = {0};
    if (!ns)
        ns = &zero;
    cr_assert_eq(rb_log_new(&r->log, &err), RB_OK);
    const char *const *J = (const char *const *)m->dof_names;
    double *buf = col_alloc(T, 6 * (n + m->n_ft + 1));
    size_t vo = m->floating ? 6 : 0, qo = m->floating ? 7 : 0;
    struct {
        const char *name;
        const double *src;
        size_t stride, off;
        double sd;
    } jc[] = {{"q", r->q, m->nq, qo, ns->q}, {"dq", r->nu, m->nv, vo, ns->dq},
              {"ddq", r->nud, m->nv, vo, 0}, {"current", r->cur, n, 0, ns->current},
              {"tau_j", r->tau_j, n, 0, 0},  {"tau_m", r->tau_m, n, 0, 0},
              {"tau_f", r->tau_f, n, 0, 0},  {"friction", r->tau_f, n, 0, ns->friction}};
    for (size_t c = 0; c < sizeof jc / sizeof jc[0]; c++) {
        for (size_t k = 0; k < T; k++)
            for (size_t i = 0; i < n; i++)
                buf[k * n + i] = jc[c].src[k * jc[c].stride + jc[c].off + i] + jc[c].sd * rb_rng_normal(&rng);
        add_channel(r->log, jc[c].name, T, n, time, buf, J);
    }
    for (size_t f = 0; f < m->n_ft; f++) {
        char name[256];
        snprintf(name, sizeof name, "ft/%s", m->ft[f].name);
        for (size_t k = 0; k < T; k++)
            for (int i = 0; i < 6; i++)
                buf[k * 6 + (size_t)i] = r->ft[k * 6 * m->n_ft + 6 * f + (size_t)i] +
                                         (f == 0 ? ns->ft_offset[i] : 0.0) +
                                         (i < 3 ? ns->ft_force : ns->ft_moment) * rb_rng_normal(&rng);
        add_channel(r->log, name, T, 6, time, buf, NULL);
    }
    for (size_t f = 0; f < r->n_frames; f++) {
        char name[256];
        for (int kind = 0; kind < 2; kind++) {
            snprintf(name, sizeof name, "%s/%s", kind ? "gyro" : "acc", m->frames[r->frames[f]].name);
            const double *src = kind ? r->fvel : r->facc;
            for (size_t k = 0; k < T; k++)
                for (int i = 0; i < 3; i++)
                    buf[k * 3 + (size_t)i] = src[k * 6 * r->n_frames + 6 * f + (size_t)(kind ? 3 + i : i)] +
                                             (kind ? ns->gyro : ns->acc) * rb_rng_normal(&rng);
            add_channel(r->log, name, T, 3, time, buf, NULL);
        }
    }
    free(buf);
    free(time);
}

void rec_free(sim_rec *r)
{
    rb_log_free(r->log);
    free(r->frames), free(r->q), free(r->nu), free(r->nud), free(r->tau_j), free(r->tau_m), free(r->tau_f);
    free(r->cur), free(r->ft), free(r->facc), free(r->fvel), free(r->push), free(r->cw), free(r->base_pose);
    rb_model_free(r->model);
}

/* ---- the arm on a pole ---------------------------------------------------------------------------------------- */

/* PD + gravity compensation: the arm is at rest at t = 0 (q0 = the references' offsets), chirps from 0.3 s. */
static const char ARM_SCENARIO[] =
    "{\"name\": \"arm_rest\", \"model\": {\"urdf\": \"" ARM_URDF "\", \"base\": \"base_link\"},"
    " \"duration\": %g, \"dt\": 0.001, \"seed\": 7, \"q0\": {\"shoulder_pitch\": 0.2, \"elbow\": 0.4},"
    " \"references\": {"
    "  \"shoulder_yaw\": {\"kind\": \"chirp\", \"amplitude\": 0.3, \"freq\": 0.5, \"freq_end\": 0.5, \"t0\": 0.3, "
    "\"t1\": 100},"
    "  \"shoulder_pitch\": {\"kind\": \"chirp\", \"offset\": 0.2, \"amplitude\": 0.4, \"freq\": 0.3, \"freq_end\": "
    "0.3, "
    "\"t0\": 0.3, \"t1\": 100},"
    "  \"elbow\": {\"kind\": \"chirp\", \"offset\": 0.4, \"amplitude\": 0.5, \"freq\": 0.7, \"freq_end\": 0.7, "
    "\"t0\": 0.3, \"t1\": 100},"
    "  \"wrist_roll\": {\"kind\": \"chirp\", \"amplitude\": 0.8, \"freq\": 0.4, \"freq_end\": 0.4, \"t0\": 0.3, "
    "\"t1\": 100}},"
    " \"controller\": {\"kind\": \"pd\", \"gravity_comp\": true, \"gains\": {"
    "  \"shoulder_yaw\": {\"kp\": 100, \"kd\": 20}, \"shoulder_pitch\": {\"kp\": 100, \"kd\": 20},"
    "  \"elbow\": {\"kp\": 100, \"kd\": 20}, \"wrist_roll\": {\"kp\": 30, \"kd\": 5}}},"
    " \"actuators\": {\"shoulder_yaw\": {\"k_t\": 0.05, \"R\": -100, \"J_m\": 1e-5},"
    "  \"shoulder_pitch\": {\"k_t\": 0.05, \"R\": 160, \"J_m\": 1e-5},"
    "  \"elbow\": {\"k_t\": 0.05, \"R\": -100, \"J_m\": 8e-6}, \"wrist_roll\": {\"k_t\": 0.04, \"R\": 100, \"J_m\": "
    "5e-6}},"
    " \"friction\": {\"shoulder_yaw\": {\"model\": \"scv\", \"params\": [0.3, 0.6, 0.7, 0.01]},"
    "  \"shoulder_pitch\": {\"preset\": \"ergocub_r_knee\", \"drift\": {\"s0\": 1.0, \"s1\": 1.2, \"t0\": 0.0, \"t1\": "
    "3.0}},"
    "  \"elbow\": {\"model\": \"coulomb_viscous\", \"params\": [0.2, 0.5]},"
    "  \"wrist_roll\": {\"model\": \"coulomb_viscous\", \"params\": [0.05, 0.1]}},"
    " %s"
    " \"sensors\": [{\"kind\": \"accelerometer\", \"frame\": \"hand_acc\"}, {\"kind\": \"gyroscope\", \"frame\": "
    "\"hand_gyro\"}, {\"kind\": \"accelerometer\", \"frame\": \"forearm\"}]}";

/* A push at the wrist (the far end of the forearm, between the two FTs) from 1.0 s to 1.6 s (half sine, 15 N
 * sideways and 6 N up, MIXED). */
static const char FOREARM_PUSH[] = "\"pushes\": [{\"frame\": \"wrist\", \"shape\": \"half_sine\", \"start\": 1.0, "
                                   "\"duration\": 0.6, \"wrench\": [0, 15, 6, 0, 0, 0.3]}],";

/* The elbow's chirp, replaced by a step for the jump-adaptation tests. */
static const char ELBOW_CHIRP[] =
    "\"elbow\": {\"kind\": \"chirp\", \"offset\": 0.4, \"amplitude\": 0.5, \"freq\": 0.7, "
    "\"freq_end\": 0.7, \"t0\": 0.3, \"t1\": 100}";

/* The arm scenario; with elbow_step != 0 the elbow's reference is 0.4 rad + a step of elbow_step rad at
 * step_time instead of its chirp (the PD's torque jumps by kp elbow_step within one sample). */
void record_arm_step(double duration, bool push, double elbow_step, double step_time, const noise_spec *ns, sim_rec *r)
{
    static char text[8192], stepped[8192];
    snprintf(text, sizeof text, ARM_SCENARIO, duration, push ? FOREARM_PUSH : "");
    if (elbow_step != 0) {
        const char *at = strstr(text, ELBOW_CHIRP);
        cr_assert_not_null(at);
        snprintf(stepped, sizeof stepped,
                 "%.*s\"elbow\": {\"kind\": \"step\", \"offset\": 0.4, \"amplitude\": %.17g, \"t0\": %.17g}%s",
                 (int)(at - text), text, elbow_step, step_time, at + strlen(ELBOW_CHIRP));
        memcpy(text, stepped, sizeof text);
    }
    rb_scenario *s = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_load_text(text, strlen(text), "arm_rest.json", NULL, &s, &err), RB_OK, "%s", err.msg);
    memset(r, 0, sizeof *r);
    sim_record(&s->sim, ns, r);
    /* the model outlives the scenario in the recorder */
    r->model = s->model;
    s->model = NULL;
    rb_scenario_free(s);
}

void record_arm(double duration, bool push, const noise_spec *ns, sim_rec *r)
{
    record_arm_step(duration, push, 0.0, 0.0, ns, r);
}

/* ---- pipelines ------------------------------------------------------------------------------------------------ */

rb_registry *registry(void)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    return reg;
}

const char ARM_SIGNALS[] =
    "\"model\": {\"urdf\": \"" ARM_URDF "\", \"base\": \"base_link\"}, \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"q\"}, \"dq\": {\"channel\": \"dq\"}, \"ddq\": {\"channel\": \"ddq\"},"
    "  \"cur\": {\"channel\": \"current\"}, \"fric\": {\"channel\": \"friction\"},"
    "  \"ft\": {\"channel\": [\"ft/upper_arm_ft_sensor\", \"ft/wrist_ft_sensor\"]},"
    "  \"acc\": {\"channel\": [\"acc/hand_acc\", \"acc/forearm\"]}, \"gyro\": {\"channel\": \"gyro/hand_gyro\"}},";

/* Run a pipeline (text) on a log; the result for rb_run_result_signal. */
rb_run_result *run_text(const char *text, const rb_log *log)
{
    rb_registry *reg = registry();
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "t", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    rb_run_opts o = {0};
    rb_run_result *res = NULL;
    int rc = rb_pipeline_run_log(p, log, NULL, 0, &o, &res, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    rb_pipeline_free(p);
    rb_registry_free(reg);
    return res;
}

/* The run's error for a pipeline expected to fail at load or at run: returns the status, message in err. */
int run_error(const char *text, const rb_log *log, rb_err *err)
{
    rb_registry *reg = registry();
    rb_pipeline *p = NULL;
    int rc = rb_pipeline_load_text(text, strlen(text), "t", NULL, reg, &p, err);
    if (rc == RB_OK) {
        rb_run_opts o = {0};
        rb_run_result *res = NULL;
        rc = rb_pipeline_run_log(p, log, NULL, 0, &o, &res, err);
        rb_run_result_free(res);
    }
    rb_pipeline_free(p);
    rb_registry_free(reg);
    return rc;
}

const double *run_signal(const rb_run_result *res, const char *name, size_t width)
{
    const rb_run_signal *s = rb_run_result_signal(res, name);
    cr_assert_not_null(s, "signal %s", name);
    cr_assert_eq(s->width, width, "signal %s: width %zu, expected %zu", name, s->width, width);
    return s->data;
}

/* RMSE of element i (all: SIZE_MAX) of est against ref (both T x w) over samples [k0, k1). */
double rmse(const double *est, const double *ref, size_t w, size_t i, size_t k0, size_t k1)
{
    double s = 0;
    size_t c = 0;
    for (size_t k = k0; k < k1; k++)
        for (size_t j = 0; j < w; j++)
            if (i == SIZE_MAX || i == j) {
                double d = est[k * w + j] - ref[k * w + j];
                s += d * d, c++;
            }
    return sqrt(s / (double)c);
}

double max_err(const double *est, const double *ref, size_t w, size_t k0, size_t k1)
{
    double e = 0;
    for (size_t k = k0; k < k1; k++)
        for (size_t j = 0; j < w; j++)
            e = fmax(e, fabs(est[k * w + j] - ref[k * w + j]));
    return e;
}
