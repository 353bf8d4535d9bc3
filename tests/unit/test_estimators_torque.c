/* The model-based joint-torque stages: rnea_torque (the RNEA baseline) and ukf_torque (the joint-torque paper's
 * UKF), on logs recorded from the simulation engine's truth (sim.h), with noise added here where a test says so.
 * The truth is the second computation: the simulator integrates the whole robot (its own forward dynamics with
 * rotor inertias, friction, contacts and pushes), and its joint torques satisfy the RNEA with the true contact
 * and push wrenches; the FT readings, frame accelerations and velocities come from its dynamics core calls.
 *
 * Scenarios: the arm_2ft model on a pole (two FT sensors, hand IMU), PD control with gravity compensation so the
 * arm starts at rest (the start-up FT offset calibration assumes it), chirp references from 0.3 s, rotor
 * inertias and friction as configs/scenarios/arm_pole.json; with a push on the forearm for the contact tests;
 * and the floating humanoid lower body standing on both soles for the floating-base models. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/dynamics.h"
#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/sim.h"

#include "estimators_torque_support.h"

#define HUMANOID_URDF RB_SOURCE "/datasets/humanoid_lower_body.urdf"

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
static void record(const rb_sim_scenario *sc, const noise_spec *ns, sim_rec *r)
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
    r->ft = col_alloc(T, 6 * m->n_ft), r->facc = col_alloc(T, 6 * tr->n_frames), r->fvel = col_alloc(T, 6 * tr->n_frames);
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
    } jc[] = {{"q", r->q, m->nq, qo, ns->q},          {"dq", r->nu, m->nv, vo, ns->dq},
              {"ddq", r->nud, m->nv, vo, 0},          {"current", r->cur, n, 0, ns->current},
              {"tau_j", r->tau_j, n, 0, 0},           {"tau_m", r->tau_m, n, 0, 0},
              {"tau_f", r->tau_f, n, 0, 0},           {"friction", r->tau_f, n, 0, ns->friction}};
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
                buf[k * 6 + (size_t)i] = r->ft[k * 6 * m->n_ft + 6 * f + (size_t)i] + (f == 0 ? ns->ft_offset[i] : 0.0)
                                         + (i < 3 ? ns->ft_force : ns->ft_moment) * rb_rng_normal(&rng);
        add_channel(r->log, name, T, 6, time, buf, NULL);
    }
    for (size_t f = 0; f < r->n_frames; f++) {
        char name[256];
        for (int kind = 0; kind < 2; kind++) {
            snprintf(name, sizeof name, "%s/%s", kind ? "gyro" : "acc", m->frames[r->frames[f]].name);
            const double *src = kind ? r->fvel : r->facc;
            for (size_t k = 0; k < T; k++)
                for (int i = 0; i < 3; i++)
                    buf[k * 3 + (size_t)i] = src[k * 6 * r->n_frames + 6 * f + (size_t)(kind ? 3 + i : i)]
                                             + (kind ? ns->gyro : ns->acc) * rb_rng_normal(&rng);
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
    "  \"shoulder_pitch\": {\"kind\": \"chirp\", \"offset\": 0.2, \"amplitude\": 0.4, \"freq\": 0.3, \"freq_end\": 0.3, "
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
    "  \"elbow\": {\"k_t\": 0.05, \"R\": -100, \"J_m\": 8e-6}, \"wrist_roll\": {\"k_t\": 0.04, \"R\": 100, \"J_m\": 5e-6}},"
    " \"friction\": {\"shoulder_yaw\": {\"model\": \"scv\", \"params\": [0.3, 0.6, 0.7, 0.01]},"
    "  \"shoulder_pitch\": {\"preset\": \"ergocub_r_knee\", \"drift\": {\"s0\": 1.0, \"s1\": 1.2, \"t0\": 0.0, \"t1\": 3.0}},"
    "  \"elbow\": {\"model\": \"coulomb_viscous\", \"params\": [0.2, 0.5]},"
    "  \"wrist_roll\": {\"model\": \"coulomb_viscous\", \"params\": [0.05, 0.1]}},"
    " %s"
    " \"sensors\": [{\"kind\": \"accelerometer\", \"frame\": \"hand_acc\"}, {\"kind\": \"gyroscope\", \"frame\": "
    "\"hand_gyro\"}, {\"kind\": \"accelerometer\", \"frame\": \"forearm\"}]}";

/* A push at the wrist (the far end of the forearm, between the two FTs) from 1.0 s to 1.6 s (half sine, 15 N
 * sideways and 6 N up, MIXED). */
static const char FOREARM_PUSH[] = "\"pushes\": [{\"frame\": \"wrist\", \"shape\": \"half_sine\", \"start\": 1.0, "
                                   "\"duration\": 0.6, \"wrench\": [0, 15, 6, 0, 0, 0.3]}],";

const char ARM_UKF_ACTUATORS[] =
    "\"k_t\": [0.05, 0.05, 0.05, 0.04], \"gear_ratio\": [-100, 160, -100, 100], "
    "\"motor_inertia\": [1e-5, 1e-5, 8e-6, 5e-6]";

/* The elbow's chirp, replaced by a step for the jump-adaptation tests. */
static const char ELBOW_CHIRP[] = "\"elbow\": {\"kind\": \"chirp\", \"offset\": 0.4, \"amplitude\": 0.5, \"freq\": 0.7, "
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
    record(&s->sim, ns, r);
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

/* ---- rnea_torque ------------------------------------------------------------------------------------------------ */

const char RNEA_PIPE[] = "{%s \"stages\": [{\"id\": \"rnea\", \"type\": \"rnea_torque\","
                         " \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"ddq\": \"ddq\", \"ft\": \"ft\"},"
                         " \"out\": {\"tau\": \"tau\", \"contacts\": \"w\", \"ft_offset\": \"off\"},"
                         " \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"]%s}}],"
                         " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\", \"w\", \"off\"]}]}";

/* Noise-free: the RNEA inside each sub-model with the measured FT wrenches reproduces the simulator's joint
 * torques (tau_m - tau_F - R^2 J_m ddq, the link side) and the offset calibration recovers the injected offset. */
Test(estimators_torque, rnea_reproduces_the_simulated_torques)
{
    noise_spec ns = {.ft_offset = {1.5, -0.8, 2.0, 0.05, -0.02, 0.01}};
    sim_rec r;
    record_arm(2.0, false, &ns, &r);
    static char text[8192];
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, "");
    rb_run_result *res = run_text(text, r.log);
    const double *tau = signal(res, "tau", 4), *off = signal(res, "off", 12), *w = signal(res, "w", 6);
    double scale = 0;
    for (size_t i = 0; i < r.T * 4; i++)
        scale = fmax(scale, fabs(r.tau_j[i]));
    double e = max_err(tau, r.tau_j, 4, 0, r.T) / scale;
    cr_log_info("rnea_torque, noise-free arm: max |tau error| / max |tau| = %.3g (max |tau| %.3g N m)", e, scale);
    cr_assert(e < 1e-9, "relative error %g", e);
    for (int i = 0; i < 6; i++) {
        cr_assert(fabs(off[(r.T - 1) * 12 + (size_t)i] - ns.ft_offset[i]) < 1e-9, "offset %d: %g", i, off[i]);
        cr_assert(fabs(off[6 + (size_t)i]) < 1e-9);
    }
    /* the default contact: the mounting wrench at the base link, in its frame: holds the arm's weight */
    double fz_mean = 0;
    for (size_t k = 0; k < r.T; k++)
        fz_mean += w[k * 6 + 2] / (double)r.T;
    cr_assert(fabs(fz_mean - r.model->total_mass * 9.81) < 0.5, "mount fz %g vs weight %g", fz_mean,
              r.model->total_mass * 9.81);
    rb_run_result_free(res);
    rec_free(&r);
}

/* A push at the wrist (between the two FTs): listed as a contact, it is recovered exactly (BODY at the frame) and
 * the torques stay exact; not listed, the elbow's torque is off by J^T f during the push. */
Test(estimators_torque, rnea_recovers_one_unknown_contact)
{
    sim_rec r;
    record_arm(2.0, true, NULL, &r);
    static char text[8192];
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, ", \"contacts\": [\"base_link\", \"wrist\"]");
    rb_run_result *res = run_text(text, r.log);
    const double *tau = signal(res, "tau", 4), *w = signal(res, "w", 12);
    cr_assert(max_err(tau, r.tau_j, 4, 0, r.T) < 1e-9, "torques %g", max_err(tau, r.tau_j, 4, 0, r.T));
    /* the push in the forearm's axes: R^T of its MIXED wrench */
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(r.model, &ws, &err), RB_OK);
    size_t f = (size_t)rb_model_frame_index(r.model, "wrist");
    double emax = 0, pmax = 0;
    for (size_t k = 0; k < r.T; k += 10) {
        rb_xform X;
        double pb[6];
        cr_assert_eq(rb_dyn_kinematics(r.model, ws, r.q + k * r.nq, NULL, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_frame_pose(r.model, ws, f, &X, &err), RB_OK);
        rb_m3t_mul_v(X.R, r.push + 6 * k, pb);
        rb_m3t_mul_v(X.R, r.push + 6 * k + 3, pb + 3);
        for (int i = 0; i < 6; i++)
            emax = fmax(emax, fabs(w[k * 12 + 6 + (size_t)i] - pb[i])), pmax = fmax(pmax, fabs(pb[i]));
    }
    cr_log_info("rnea_torque, push at the wrist listed: contact wrench max error %.3g (push up to %.3g)", emax, pmax);
    cr_assert(pmax > 10 && emax < 1e-8 * pmax, "contact %g of %g", emax, pmax);
    rb_run_result_free(res);
    /* not listed: the elbow torque misses the push */
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, "");
    res = run_text(text, r.log);
    tau = signal(res, "tau", 4);
    double e_elbow = max_err(tau + 2, r.tau_j + 2, 4, 1000, 1600);
    cr_log_info("rnea_torque, push not listed: elbow max error %.3g N m during the push", e_elbow);
    cr_assert(e_elbow > 0.5, "the unlisted push should show: %g", e_elbow);
    rb_run_result_free(res);
    rb_dyn_free(ws);
    rec_free(&r);
}

/* ---- ukf_torque: the models at the true state ------------------------------------------------------------------- */

/* Pipeline text that makes a ukf_torque stage on the arm (to reach its models through create()). */
const char UKF_PIPE[] =
    "{%s \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\","
    " \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"cur\", \"ft\": \"ft\", \"acc\": \"acc\", \"gyro\": \"gyro\"%s},"
    " \"out\": {\"tau_j\": \"tau\", \"tau_f\": \"tf\", \"tau_m\": \"tm\", \"nis\": \"nis\", \"var\": \"var\", "
    "\"ddq\": \"ddq_ukf\", \"contacts\": \"w\", \"innovation\": \"inno\"},"
    " \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], \"accelerometers\": [\"hand_acc\", "
    "\"forearm\"], \"gyroscopes\": [\"hand_gyro\"], %s%s}}],"
    " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\", \"tf\", \"tm\", \"nis\", \"var\", \"ddq_ukf\", \"w\", "
    "\"inno\"]}]}";

/* A ukf_torque stage made outside a run from a pipeline's stage 0 (ports of the given widths). */
typedef struct stage_h {
    rb_registry *reg;
    rb_pipeline *p;
    rb_params params;
    rb_port in[7], out[16];
    void *state;
    const rb_stage_type *ty;
} stage_h;

static int stage_make(stage_h *h, const char *text, const size_t widths[7], rb_err *err)
{
    memset(h, 0, sizeof *h);
    h->reg = registry();
    int rc = rb_pipeline_load_text(text, strlen(text), "t", NULL, h->reg, &h->p, err);
    if (rc)
        return rc;
    h->ty = h->p->stages[0].type;
    h->params = (rb_params){h->ty, h->p->stages[0].params};
    for (int i = 0; i < 7; i++)
        h->in[i] = (rb_port){widths[i], NULL, NULL};
    double t0 = 0;
    rb_stage_setup st = {"ukf", &h->params, h->in, h->out, 1e-3, 1, &t0, h->p->model, "."};
    return h->ty->create(&st, &h->state, err);
}

static void stage_free(stage_h *h)
{
    if (h->state)
        h->ty->destroy(h->state);
    rb_pipeline_free(h->p);
    rb_registry_free(h->reg);
}

/* The true state (published order) of sample k of the arm: dq, tau_m, tau_F, the FT readings, the contacts
 * (BODY), nothing else (fixed base, no biases). */
static void arm_true_state(const sim_rec *r, size_t k, size_t nc, const double *contacts_body, double *x)
{
    size_t n = r->n, o = 0;
    memcpy(x + o, r->nu + k * r->nv, n * sizeof(double)), o += n;
    memcpy(x + o, r->tau_m + k * n, n * sizeof(double)), o += n;
    memcpy(x + o, r->tau_f + k * n, n * sizeof(double)), o += n;
    memcpy(x + o, r->ft + k * 6 * r->n_ft, 6 * r->n_ft * sizeof(double)), o += 6 * r->n_ft;
    if (nc)
        memcpy(x + o, contacts_body, 6 * nc * sizeof(double));
}

/* Process model at the true state: the predicted dq is the simulator's next dq. The simulator steps by
 * semi-implicit Euler with the held torques, the process by explicit Euler from the same accelerations: with the
 * rotor inertias given (motor_inertia) they agree to rounding (well inside the O(dt^2) of one Euler step); the
 * paper's model (no rotor inertia) is off by dt times the acceleration the rotors' torque R^2 J_m ddq stands for. The accelerometer model at the true state is the simulator's proper acceleration
 * of the frame (gravity counted once: a still arm reads 9.81 m/s^2, not 0 or 19.62), the gyroscope its angular
 * velocity, the current tau_m / (k_t R) with the signed gear ratio the simulator's current. */
Test(estimators_torque, ukf_models_at_the_true_state)
{
    sim_rec r;
    record_arm(1.5, true, NULL, &r);
    static char text[8192];
    snprintf(text, sizeof text, UKF_PIPE, ARM_SIGNALS, "", ARM_UKF_ACTUATORS, ", \"contacts\": [\"wrist\"]");
    size_t widths[7] = {4, 4, 4, 12, 6, 3, 0};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_make(&h, text, widths, &err), RB_OK, "%s", err.msg);
    size_t M, N = rb_ukf_torque_dims(h.state, &M);
    cr_assert_eq(N, 4 * 3 + 12 + 6);
    cr_assert_eq(M, 4 + 4 + 12 + 6 + 3);
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(r.model, &ws, &err), RB_OK);
    size_t ff = (size_t)rb_model_frame_index(r.model, "wrist");
    double x[64], xo[64], z[64], e_dq = 0, e_acc = 0, e_gyro = 0, e_cur = 0, e_ft = 0, acc_scale = 0;
    for (size_t k = 0; k + 1 < r.T; k += 7) {
        /* the push as the contact state: BODY at the wrist frame */
        rb_xform X;
        double wb[6];
        cr_assert_eq(rb_dyn_kinematics(r.model, ws, r.q + k * r.nq, NULL, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_frame_pose(r.model, ws, ff, &X, &err), RB_OK);
        rb_m3t_mul_v(X.R, r.push + 6 * k, wb);
        rb_m3t_mul_v(X.R, r.push + 6 * k + 3, wb + 3);
        arm_true_state(&r, k, 1, wb, x);
        cr_assert_eq(rb_ukf_torque_process(h.state, r.q + k * r.nq, x, r.dt, xo, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 4; i++)
            e_dq = fmax(e_dq, fabs(xo[i] - r.nu[(k + 1) * r.nv + i]));
        for (size_t i = 4; i < N; i++)
            cr_assert_eq(xo[i], x[i], "random walk element %zu", i);
        cr_assert_eq(rb_ukf_torque_measure(h.state, r.q + k * r.nq, x, z, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 4; i++)
            e_cur = fmax(e_cur, fabs(z[4 + i] - r.cur[k * 4 + i]));
        for (size_t i = 0; i < 12; i++)
            e_ft = fmax(e_ft, fabs(z[8 + i] - x[12 + i]));
        for (size_t a = 0; a < 2; a++) /* frames: hand_acc, hand_gyro, forearm (the scenario's order) */
            for (int i = 0; i < 3; i++) {
                double ref = r.facc[k * 6 * r.n_frames + 6 * (a ? 2 : 0) + (size_t)i];
                e_acc = fmax(e_acc, fabs(z[20 + 3 * a + (size_t)i] - ref)), acc_scale = fmax(acc_scale, fabs(ref));
            }
        for (int i = 0; i < 3; i++)
            e_gyro = fmax(e_gyro, fabs(z[26 + (size_t)i] - r.fvel[k * 6 * r.n_frames + 6 + 3 + (size_t)i]));
    }
    cr_log_info("ukf_torque models at the true state: next dq %.3g rad/s, acc %.3g m/s^2 (of %.3g), gyro %.3g, "
                "current %.3g A, FT %.3g",
                e_dq, e_acc, acc_scale, e_gyro, e_cur, e_ft);
    cr_assert(e_dq < 1e-10, "next dq %g", e_dq);
    cr_assert(e_acc < 1e-9 * acc_scale, "accelerometers %g", e_acc);
    cr_assert(e_gyro < 1e-12 && e_cur < 1e-12 && e_ft == 0.0, "gyro %g current %g ft %g", e_gyro, e_cur, e_ft);
    /* at rest (first sample): the hand accelerometer reads gravity once */
    arm_true_state(&r, 0, 1, (double[6]){0}, x);
    cr_assert_eq(rb_ukf_torque_measure(h.state, r.q, x, z, &err), RB_OK);
    double g = sqrt(z[20] * z[20] + z[21] * z[21] + z[22] * z[22]);
    cr_assert(fabs(g - 9.81) < 1e-9, "|acc| at rest %g", g);
    stage_free(&h);

    /* without the rotor inertias (the paper's model): off by dt times the acceleration the rotors' torque
     * R^2 J_m ddq accounts for; on this light wrist (R^2 J_m = 0.05 kg m^2 against a link inertia of about 1e-4)
     * that is tens of rad/s in one step */
    snprintf(text, sizeof text, UKF_PIPE, ARM_SIGNALS, "",
             "\"k_t\": [0.05, 0.05, 0.05, 0.04], \"gear_ratio\": [-100, 160, -100, 100]", ", \"contacts\": [\"wrist\"]");
    cr_assert_eq(stage_make(&h, text, widths, &err), RB_OK, "%s", err.msg);
    double e_paper = 0;
    for (size_t k = 0; k + 1 < r.T; k += 7) {
        rb_xform X;
        double wb[6];
        cr_assert_eq(rb_dyn_kinematics(r.model, ws, r.q + k * r.nq, NULL, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_frame_pose(r.model, ws, ff, &X, &err), RB_OK);
        rb_m3t_mul_v(X.R, r.push + 6 * k, wb);
        rb_m3t_mul_v(X.R, r.push + 6 * k + 3, wb + 3);
        arm_true_state(&r, k, 1, wb, x);
        cr_assert_eq(rb_ukf_torque_process(h.state, r.q + k * r.nq, x, r.dt, xo, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 4; i++)
            e_paper = fmax(e_paper, fabs(xo[i] - r.nu[(k + 1) * r.nv + i]));
    }
    cr_log_info("without motor_inertia: next dq off by up to %.3g rad/s (dt^2 = %g)", e_paper, r.dt * r.dt);
    cr_assert(e_paper > 1e-3, "paper model %g", e_paper);
    stage_free(&h);
    rb_dyn_free(ws);
    rec_free(&r);
}

/* The leg on a pole (the shipped scenario configs/scenarios/datasets/leg_pole_free.json, recorded noise-free): the
 * right leg of the humanoid on its fixed root_link, cut at r_leg_ft_sensor (frame "sensor", child_to_parent) and the
 * two foot FTs. The hip joints sit in the piece above the leg FT with the fixed base, where the reading carries the
 * whole leg's weight (the hip pitch's gravity load, about 24 N m RMS): their accelerations come from that reading
 * alone. At the true state (dq, tau_m, tau_F, the FT readings in their conventions) the process model gives the
 * simulator's next dq on every joint, the current model the simulator's current; without the leg FT's wrench the
 * hip pitch's prediction is far off (the check sees the reading). Guards the conventions behind the paper's leg
 * configs (configs/paper/leg_ukf_*.json): the hip pitch's larger error there was the FT process noise, not the model. */
static const char LEG_PIPE[] =
    "{\"model\": {\"urdf\": \"" HUMANOID_URDF "\", \"base\": \"root_link\", \"joints\": [\"r_hip_pitch\", "
    "\"r_hip_roll\", \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", \"r_ankle_roll\"]}, \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"q\"}, \"dq\": {\"channel\": \"dq\"}, \"cur\": {\"channel\": \"current\"},"
    "  \"ft\": {\"channel\": [\"ft/r_leg_ft_sensor\", \"ft/r_foot_front_ft_sensor\", \"ft/r_foot_rear_ft_sensor\"]}},"
    " \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\","
    " \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"cur\", \"ft\": \"ft\"}, \"out\": {\"tau_j\": \"tau\"},"
    " \"params\": {\"ft_sensors\": [\"r_leg_ft_sensor\", \"r_foot_front_ft_sensor\", \"r_foot_rear_ft_sensor\"],"
    " \"k_t\": [0.111], \"gear_ratio\": [-100, 160, -100, 100, -100, 160],"
    " \"motor_inertia\": [8.3e-6, 5.6e-6, 8.3e-6, 8.3e-6, 8.3e-6, 5.6e-6]}}],"
    " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\"]}]}";

Test(estimators_torque, ukf_leg_process_at_the_true_state_every_joint)
{
    rb_scenario *s = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_load(RB_SOURCE "/configs/scenarios/datasets/leg_pole_free.json", &s, &err), RB_OK, "%s",
                 err.msg);
    s->sim.duration = 1.5;
    sim_rec r;
    memset(&r, 0, sizeof r);
    record(&s->sim, NULL, &r);
    const rb_model *m = s->model;
    const char *fts[3] = {"r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"};
    size_t fi[3];
    for (size_t f = 0; f < 3; f++) {
        fi[f] = m->n_ft;
        for (size_t i = 0; i < m->n_ft; i++)
            if (strcmp(m->ft[i].name, fts[f]) == 0)
                fi[f] = i;
        cr_assert(fi[f] < m->n_ft, "no FT sensor %s", fts[f]);
    }
    cr_assert_eq(r.n, 6);
    stage_h h;
    size_t widths[7] = {6, 6, 6, 18, 0, 0, 0};
    cr_assert_eq(stage_make(&h, LEG_PIPE, widths, &err), RB_OK, "%s", err.msg);
    size_t M, N = rb_ukf_torque_dims(h.state, &M);
    cr_assert_eq(N, 3 * 6 + 18);
    cr_assert_eq(M, 6 + 6 + 18);
    double x[64], xo[64], z[64], e_dq[6] = {0}, e_cur = 0, tau_hip = 0, e_noft = 0;
    for (size_t k = 100; k + 1 < r.T; k += 3) {
        memcpy(x, r.nu + k * 6, 6 * sizeof(double));
        memcpy(x + 6, r.tau_m + k * 6, 6 * sizeof(double));
        memcpy(x + 12, r.tau_f + k * 6, 6 * sizeof(double));
        for (size_t f = 0; f < 3; f++)
            memcpy(x + 18 + 6 * f, r.ft + k * 6 * r.n_ft + 6 * fi[f], 6 * sizeof(double));
        cr_assert_eq(rb_ukf_torque_process(h.state, r.q + k * 6, x, r.dt, xo, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 6; i++)
            e_dq[i] = fmax(e_dq[i], fabs(xo[i] - r.nu[(k + 1) * 6 + i]));
        cr_assert_eq(rb_ukf_torque_measure(h.state, r.q + k * 6, x, z, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 6; i++)
            e_cur = fmax(e_cur, fabs(z[6 + i] - r.cur[k * 6 + i]));
        tau_hip = fmax(tau_hip, fabs(r.tau_j[k * 6]));
        memset(x + 18, 0, 6 * sizeof(double)); /* without the leg FT's wrench */
        cr_assert_eq(rb_ukf_torque_process(h.state, r.q + k * 6, x, r.dt, xo, &err), RB_OK, "%s", err.msg);
        e_noft = fmax(e_noft, fabs(xo[0] - r.nu[(k + 1) * 6]));
    }
    cr_log_info("ukf_torque, leg on a pole at the true state: next dq max error per joint (rad/s) %.2g %.2g %.2g %.2g "
                "%.2g %.2g; current %.2g A; hip pitch |tau_j| up to %.3g N m; without the leg FT the hip pitch is off by "
                "%.3g rad/s",
                e_dq[0], e_dq[1], e_dq[2], e_dq[3], e_dq[4], e_dq[5], e_cur, tau_hip, e_noft);
    for (size_t i = 0; i < 6; i++)
        cr_assert(e_dq[i] < 1e-10, "joint %s: next dq off by %g rad/s", m->dof_names[i], e_dq[i]);
    cr_assert(e_cur < 1e-12, "current %g", e_cur);
    cr_assert(tau_hip > 10.0 && e_noft > 1e-2, "hip pitch load %g, without the leg FT %g", tau_hip, e_noft);
    stage_free(&h);
    rec_free(&r);
    rb_scenario_free(s);
}

/* ---- the floating base ------------------------------------------------------------------------------------------ */

/* The humanoid lower body as a floating-base model held at the pelvis (a 6D contact at root_link, the pelvis tilted
 * 0.3 rad about x so gravity is not along the base's z), legs and torso swinging in the air under PD control with
 * gravity compensation (rotor inertias 1e-5 kg m^2 behind 1:100 gears); the IMUs at the waist and both feet. The base does not move, so the paper's assumption of
 * a zero base angular acceleration holds exactly and the models can be checked against the truth to rounding. */
typedef struct hanging {
    rb_model *m;
    double q0[32];
    rb_sim_ref refs[16];
    rb_sim_joint_ctrl g[16];
    rb_sim_actuator act[16];
    rb_sim_contact c[1];
    int frames[3];
    rb_sim_scenario sc;
} hanging;

static void hanging_setup(hanging *h, double duration)
{
    memset(h, 0, sizeof *h);
    rb_model_opts o = {0};
    rb_err err;
    o.floating = true;
    cr_assert_eq(rb_model_load_urdf(HUMANOID_URDF, &o, &h->m, &err), RB_OK, "%s", err.msg);
    rb_dyn_neutral(h->m, h->q0);
    h->q0[2] = 1.0;
    h->q0[3] = cos(0.15), h->q0[4] = sin(0.15); /* 0.3 rad about x */
    size_t n = h->m->n_dofs;
    for (size_t j = 0; j < n; j++) {
        h->refs[j] = (rb_sim_ref){.kind = RB_REF_CHIRP, .amplitude = 0.2 + 0.03 * (double)j, .freq = 0.4 + 0.1 * (double)j,
                                  .t0 = 0.2, .t1 = 100};
        h->refs[j].freq_end = h->refs[j].freq;
        h->g[j].kp = 150, h->g[j].kd = 8;
        h->act[j] = (rb_sim_actuator){.k_t = 0.1, .R = j % 3 == 1 ? -100.0 : 100.0, .J_m = 1e-5};
    }
    h->c[0].frame = (int)rb_model_frame_index(h->m, "root_link");
    h->c[0].dim = 6, h->c[0].baumgarte_T = 0.02, h->c[0].initially_active = true;
    const char *fr[3] = {"waist_imu", "l_foot_imu", "r_foot_imu"};
    for (int i = 0; i < 3; i++)
        h->frames[i] = (int)rb_model_frame_index(h->m, fr[i]);
    rb_sim_scenario *sc = &h->sc;
    sc->model = h->m, sc->dt = 1e-3, sc->duration = duration, sc->seed = 5, sc->q0 = h->q0, sc->refs = h->refs;
    sc->ctrl = RB_CTRL_PD, sc->gains = h->g, sc->gravity_comp = true, sc->actuators = h->act;
    sc->contacts = h->c, sc->n_contacts = 1, sc->frames = h->frames, sc->n_frames = 3;
}

static const char HUMANOID_PIPE[] =
    "{\"model\": {\"urdf\": \"" HUMANOID_URDF "\", \"floating\": true}, \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"q\"}, \"dq\": {\"channel\": \"dq\"}, \"cur\": {\"channel\": \"current\"},"
    "  \"ft\": {\"channel\": [\"ft/l_leg_ft_sensor\", \"ft/l_foot_front_ft_sensor\", \"ft/l_foot_rear_ft_sensor\", "
    "\"ft/r_leg_ft_sensor\", \"ft/r_foot_front_ft_sensor\", \"ft/r_foot_rear_ft_sensor\"]},"
    "  \"acc\": {\"channel\": [\"acc/waist_imu\", \"acc/l_foot_imu\", \"acc/r_foot_imu\"]},"
    "  \"gyro\": {\"channel\": [\"gyro/waist_imu\", \"gyro/l_foot_imu\", \"gyro/r_foot_imu\"]}},"
    " \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": "
    "\"cur\", \"ft\": \"ft\", \"acc\": \"acc\", \"gyro\": \"gyro\"}, \"out\": {\"tau_j\": \"tau\", \"base\": \"base\", "
    "\"var\": \"var\"},"
    "  \"params\": {\"ft_sensors\": [\"l_leg_ft_sensor\", \"l_foot_front_ft_sensor\", \"l_foot_rear_ft_sensor\", "
    "\"r_leg_ft_sensor\", \"r_foot_front_ft_sensor\", \"r_foot_rear_ft_sensor\"], \"contacts\": [\"root_link\"], "
    "\"accelerometers\": [\"waist_imu\", \"l_foot_imu\", \"r_foot_imu\"], \"gyroscopes\": [\"waist_imu\", "
    "\"l_foot_imu\", \"r_foot_imu\"], \"base_imu\": \"waist_imu\", \"k_t\": [0.1], \"gear_ratio\": [100, -100, 100, "
    "100, -100, 100, 100, -100, 100, 100, -100, 100, 100, -100, 100], \"motor_inertia\": [1e-5]%s}}],"
    " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\", \"base\", \"var\"]}]}";

/* The true state (published order) of sample k of the hanging humanoid. */
static void hanging_true_state(const sim_rec *r, const rb_model *m, rb_dyn *ws, size_t k, double *x)
{
    size_t n = r->n, o = 0;
    memcpy(x + o, r->nu + k * r->nv + 6, n * sizeof(double)), o += n;
    memcpy(x + o, r->tau_m + k * n, n * sizeof(double)), o += n;
    memcpy(x + o, r->tau_f + k * n, n * sizeof(double)), o += n;
    memcpy(x + o, r->ft + k * 6 * r->n_ft, 6 * r->n_ft * sizeof(double)), o += 6 * r->n_ft;
    rb_xform X;
    rb_err err;
    cr_assert_eq(rb_dyn_kinematics(m, ws, r->q + k * r->nq, NULL, NULL, &err), RB_OK);
    cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)rb_model_frame_index(m, "root_link"), &X, &err), RB_OK);
    rb_m3t_mul_v(X.R, r->cw + 6 * k, x + o);
    rb_m3t_mul_v(X.R, r->cw + 6 * k + 3, x + o + 3);
    o += 6;
    /* base: proper acceleration of its origin (zero linear velocity convention) and angular velocity, base axes */
    const double *nu = r->nu + k * r->nv, *nud = r->nud + k * r->nv;
    double wv[3], g[3];
    rb_v3_cross(nu + 3, nu, wv);
    rb_m3t_mul_v(r->base_pose[k].R, m->gravity, g);
    for (int i = 0; i < 3; i++)
        x[o + (size_t)i] = nud[i] + wv[i] - g[i], x[o + 3 + (size_t)i] = nu[3 + i];
}

/* Floating base: the process at the true state gives the next joint velocities, the accelerometers (waist and
 * feet: proper accelerations, gravity once through the base block) and gyroscopes their readings; the whole run
 * converges, and the base block starts from the waist IMU by eq. 7 and stays at the truth. */
Test(estimators_torque, floating_base_models_and_run)
{
    hanging h;
    hanging_setup(&h, 1.2);
    sim_rec r;
    memset(&r, 0, sizeof r);
    record(&h.sc, NULL, &r);
    static char text[8192];
    snprintf(text, sizeof text, HUMANOID_PIPE,
             ", \"q_dq\": [1e-6], \"q_tau_m\": [1e-3], \"q_tau_f\": [1e-3], \"q_ft\": [1e-2], \"q_base_imu\": [1e-6], "
             "\"r_dq\": [1e-8], \"r_current\": [1e-6], \"r_ft\": [1e-4], \"r_acc\": [1e-4], \"r_gyro\": [1e-6]");
    size_t n = h.m->n_dofs, widths[7] = {n, n, n, 36, 9, 9, 0};
    stage_h sh;
    rb_err err;
    cr_assert_eq(stage_make(&sh, text, widths, &err), RB_OK, "%s", err.msg);
    size_t M, N = rb_ukf_torque_dims(sh.state, &M);
    cr_assert_eq(N, 3 * n + 36 + 6 + 6);
    cr_assert_eq(M, 2 * n + 36 + 9 + 9);
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(h.m, &ws, &err), RB_OK);
    double x[128], xo[128], z[128], e_dq = 0, e_acc = 0, e_gyro = 0, acc_scale = 0;
    for (size_t k = 0; k + 1 < r.T; k += 11) {
        hanging_true_state(&r, h.m, ws, k, x);
        const double *q = r.q + k * r.nq + 7;
        cr_assert_eq(rb_ukf_torque_process(sh.state, q, x, r.dt, xo, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < n; i++)
            e_dq = fmax(e_dq, fabs(xo[i] - r.nu[(k + 1) * r.nv + 6 + i]));
        cr_assert_eq(rb_ukf_torque_measure(sh.state, q, x, z, &err), RB_OK, "%s", err.msg);
        for (size_t f = 0; f < 3; f++)
            for (size_t i = 0; i < 3; i++) {
                double ra = r.facc[k * 18 + 6 * f + i], rg = r.fvel[k * 18 + 6 * f + 3 + i];
                e_acc = fmax(e_acc, fabs(z[2 * n + 36 + 3 * f + i] - ra)), acc_scale = fmax(acc_scale, fabs(ra));
                e_gyro = fmax(e_gyro, fabs(z[2 * n + 45 + 3 * f + i] - rg));
            }
    }
    cr_log_info("floating humanoid at the true state: next dq %.3g rad/s, acc %.3g m/s^2 (of %.3g), gyro %.3g rad/s",
                e_dq, e_acc, acc_scale, e_gyro);
    /* the held base moves by its Baumgarte correction only (accelerations ~1e-9 m/s^2) */
    cr_assert(e_dq < 1e-8, "next dq %g", e_dq);
    cr_assert(e_acc < 1e-7 * acc_scale && e_gyro < 1e-9, "acc %g gyro %g", e_acc, e_gyro);
    stage_free(&sh);

    rb_run_result *res = run_text(text, r.log);
    const double *tau = signal(res, "tau", n), *base = signal(res, "base", 6);
    double e = rmse(tau, r.tau_j, n, SIZE_MAX, 400, r.T), eb0 = 0, eb = 0;
    hanging_true_state(&r, h.m, ws, 0, x);
    for (int i = 0; i < 6; i++)
        eb0 = fmax(eb0, fabs(base[i] - x[3 * n + 42 + (size_t)i]));
    for (size_t k = 0; k < r.T; k += 50) {
        hanging_true_state(&r, h.m, ws, k, x);
        for (int i = 0; i < 6; i++)
            eb = fmax(eb, fabs(base[k * 6 + (size_t)i] - x[3 * n + 42 + (size_t)i]));
    }
    cr_log_info("floating humanoid run: tau_j RMSE after 0.4 s %.4g N m; base block at the start %.3g, over the run %.3g",
                e, eb0, eb);
    cr_assert(e < 0.05, "tau_j RMSE %g", e);
    cr_assert(eb0 < 1e-3 && eb < 0.05, "base block %g / %g", eb0, eb);
    rb_run_result_free(res);
    rb_dyn_free(ws);
    rec_free(&r);
    rb_model_free(h.m);
}

/* ---- allocations ------------------------------------------------------------------------------------------------ */

/* step() of both stages allocates nothing (rb_malloc and the C library, OpenBLAS included, single-threaded as the
 * CLI runs it); the UKF with every optional block (friction input, contacts, biases, rate model, decay) and the
 * jump adaptation on every block with a gate low enough to repeat many updates. */
Test(estimators_torque, steps_allocate_nothing)
{
    sim_rec r;
    record_arm(0.3, true, &ARM_NOISE, &r);
    static char text[8192];
    snprintf(text, sizeof text, UKF_PIPE, ARM_SIGNALS, ", \"friction\": \"fric\"", ARM_UKF_ACTUATORS,
             ", \"contacts\": [\"wrist\"], \"ft_bias\": true, \"acc_bias\": true, \"gyro_bias\": true, "
             "\"friction_dynamics\": \"rate_model\", \"friction_k0\": [0.3], \"friction_k1\": [10], \"friction_k2\": "
             "[0.5], \"contact_decay\": 2, \"adapt_probability\": 0.5, \"adapt_blocks\": [\"tau_m\", \"tau_f\", \"ft\"]");
    size_t widths[7] = {4, 4, 4, 12, 6, 3, 4};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_make(&h, text, widths, &err), RB_OK, "%s", err.msg);
    const char *ch[7] = {"q", "dq", "current", NULL, NULL, "gyro/hand_gyro", "friction"};
    double *in[7], *out[16];
    const double *cin[7];
    for (int i = 0; i < 7; i++)
        cin[i] = in[i] = calloc(widths[i] + 1, sizeof(double));
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        out[j] = calloc(h.out[j].width + 1, sizeof(double));
    size_t o_adapt = 0, triggers = 0;
    while (strcmp(h.ty->outputs[o_adapt], "adapt") != 0)
        o_adapt++;
    cr_assert_eq(h.out[o_adapt].width, 2);
    test_alloc_count_init();
    long counted = 0, rb_calls = 0;
    for (size_t k = 0; k < r.T; k++) {
        for (int i = 0; i < 7; i++)
            if (ch[i])
                memcpy(in[i], rb_log_find(r.log, ch[i])->data + k * widths[i], widths[i] * sizeof(double));
        memcpy(in[3], rb_log_find(r.log, "ft/upper_arm_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        memcpy(in[3] + 6, rb_log_find(r.log, "ft/wrist_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        memcpy(in[4], rb_log_find(r.log, "acc/hand_acc")->data + 3 * k, 3 * sizeof(double));
        memcpy(in[4] + 3, rb_log_find(r.log, "acc/forearm")->data + 3 * k, 3 * sizeof(double));
        rb_alloc_fail_after(-1);
        long before = test_alloc_count;
        test_alloc_counting = 1;
        int rc = h.ty->step(h.state, k, 1e-3 * (double)k, cin, out, &err);
        test_alloc_counting = 0;
        counted += test_alloc_count - before;
        rb_calls += rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "sample %zu: %s", k, err.msg);
        triggers += out[o_adapt][1] > 0;
    }
    cr_assert(triggers > 10, "the adaptation repeated %zu updates", triggers);
    if (test_alloc_count_works())
        cr_assert_eq(counted, 0, "C library allocations in step(): %ld", counted);
    cr_assert_eq(rb_calls, 0, "rb_malloc calls in step(): %ld", rb_calls);
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        free(out[j]);
    stage_free(&h);

    /* rnea_torque: in q, dq, ddq, ft; the offset calibrated at sample 0 */
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, ", \"contacts\": [\"base_link\", \"wrist\"]");
    size_t rw[7] = {4, 4, 4, 12, 0, 0, 0};
    cr_assert_eq(stage_make(&h, text, rw, &err), RB_OK, "%s", err.msg);
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        out[j] = calloc(h.out[j].width + 1, sizeof(double));
    counted = rb_calls = 0;
    for (size_t k = 0; k < r.T; k++) {
        memcpy(in[0], rb_log_find(r.log, "q")->data + 4 * k, 4 * sizeof(double));
        memcpy(in[1], rb_log_find(r.log, "dq")->data + 4 * k, 4 * sizeof(double));
        memcpy(in[2], rb_log_find(r.log, "ddq")->data + 4 * k, 4 * sizeof(double));
        memcpy(in[3], rb_log_find(r.log, "ft/upper_arm_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        memcpy(in[3] + 6, rb_log_find(r.log, "ft/wrist_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        rb_alloc_fail_after(-1);
        long before = test_alloc_count;
        test_alloc_counting = 1;
        int rc = h.ty->step(h.state, k, 1e-3 * (double)k, cin, out, &err);
        test_alloc_counting = 0;
        counted += test_alloc_count - before;
        rb_calls += rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "rnea sample %zu: %s", k, err.msg);
    }
    if (test_alloc_count_works())
        cr_assert_eq(counted, 0, "C library allocations in rnea step(): %ld", counted);
    cr_assert_eq(rb_calls, 0, "rb_malloc calls in rnea step(): %ld", rb_calls);
    for (int i = 0; i < 7; i++)
        free(in[i]);
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        free(out[j]);
    stage_free(&h);
    rec_free(&r);
}
