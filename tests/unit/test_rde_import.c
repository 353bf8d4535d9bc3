/* roboest import-rde (rb_rde_import_dir): the shipped configurations become pipelines that load (model,
 * sensors, frames) and bind robot-logger channels in joint-list order; every mapping variant and every error
 * on small configurations written here, checked against the four-joint URDF of ../shared/models. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/rde.h"
#include "support.h"

#define RDE_CONFIGS RB_SHARED "/models/rde_configs"
#define ERGOCUB RDE_CONFIGS "/ergoCubSN000_r_leg"
#define FOUR_JOINTS RDE_CONFIGS "/four_joints_two_sensors"
#define FOUR_URDF RB_SHARED "/models/four_joints_two_sensors.urdf"
#define ERGOCUB_URDF RB_SHARED "/models/ergoCubSN000.urdf"

/* ---- a stand-in for the ukf_torque stage -----------------------------------------------------------------
 * Until the ukf_torque stage is in the registry (another branch), the generated pipelines are loaded with this
 * stub of the same name, ports and parameter schema (../UKF-STAGE-SPEC.md). Where the real stage is
 * registered, load_pipeline() uses it instead. The stub checks the input widths against its parameters and
 * copies q to tau_j and ft to ft, so a run shows which log elements reached the stage, in which order. */
typedef struct stub {
    size_t n, n_ft;
} stub;

static int stub_create(const rb_stage_setup *s, void **state, rb_err *err)
{
    const rb_param_value *ft = rb_params_get(s->params, "ft_sensors"), *c = rb_params_get(s->params, "contacts"),
                         *acc = rb_params_get(s->params, "accelerometers"),
                         *gyro = rb_params_get(s->params, "gyroscopes");
    size_t n = s->in[0].width;
    if (s->in[1].width != n || s->in[2].width != n || s->in[3].width != 6 * ft->count ||
        s->in[4].width != 3 * acc->count || s->in[5].width != 3 * gyro->count || !s->model || s->model->n_dofs != n)
        return rb_err_set(err, RB_ECONFIG, "stub ukf_torque: input widths do not fit the parameters");
    size_t widths[] = {n, n, n, n, 6 * ft->count, 6 * c->count, 1, 1, 1};
    for (size_t j = 0; j < 9; j++)
        s->out[j].width = widths[j];
    stub *st = malloc(sizeof *st);
    st->n = n, st->n_ft = ft->count;
    *state = st;
    return RB_OK;
}

static int stub_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k, (void)t, (void)err;
    const stub *st = state;
    memcpy(out[0], in[0], st->n * sizeof(double));
    memcpy(out[4], in[3], 6 * st->n_ft * sizeof(double));
    return RB_OK;
}

static void stub_destroy(void *state) { free(state); }

static const char *const stub_in[] = {"q", "dq", "current", "ft", "acc", "gyro", "friction"};
static const char *const stub_out[] = {"tau_j", "tau_m", "tau_f", "dq", "ft", "contacts", "var", "innovation", "nis"};
static const char *const friction_choices[] = {"random_walk", "rate_model", NULL};
static const char *const offset_choices[] = {"first_sample", "none", NULL};
#define ARRAY(n)                                                                                                       \
    {                                                                                                                  \
        .name = n, .kind = RB_PARAM_NUMBER_ARRAY, .has_min = true, .min = 0                                            \
    }
static const rb_param_spec stub_params[] = {
    {.name = "ft_sensors", .kind = RB_PARAM_STRING_ARRAY},
    {.name = "contacts", .kind = RB_PARAM_STRING_ARRAY},
    {.name = "accelerometers", .kind = RB_PARAM_STRING_ARRAY},
    {.name = "gyroscopes", .kind = RB_PARAM_STRING_ARRAY},
    {.name = "base_imu", .kind = RB_PARAM_STRING},
    {.name = "k_t", .kind = RB_PARAM_NUMBER_ARRAY, .required = true},
    {.name = "gear_ratio", .kind = RB_PARAM_NUMBER_ARRAY, .required = true},
    {.name = "alpha", .kind = RB_PARAM_NUMBER, .def_number = 1},
    {.name = "beta", .kind = RB_PARAM_NUMBER, .def_number = 2},
    {.name = "kappa", .kind = RB_PARAM_NUMBER},
    {.name = "dt", .kind = RB_PARAM_NUMBER, .has_min = true, .min = 0},
    ARRAY("q_dq"),
    ARRAY("q_tau_m"),
    ARRAY("q_tau_f"),
    ARRAY("q_ft"),
    ARRAY("q_contact"),
    ARRAY("q_base_imu"),
    ARRAY("q_ft_bias"),
    ARRAY("q_acc_bias"),
    ARRAY("q_gyro_bias"),
    ARRAY("p0_dq"),
    ARRAY("p0_tau_m"),
    ARRAY("p0_tau_f"),
    ARRAY("p0_ft"),
    ARRAY("p0_contact"),
    ARRAY("p0_base_imu"),
    ARRAY("p0_bias"),
    ARRAY("r_dq"),
    ARRAY("r_current"),
    ARRAY("r_friction"),
    ARRAY("r_ft"),
    ARRAY("r_acc"),
    ARRAY("r_gyro"),
    {.name = "friction_dynamics", .kind = RB_PARAM_STRING, .def_string = "random_walk", .choices = friction_choices},
    {.name = "friction_k0", .kind = RB_PARAM_NUMBER_ARRAY},
    {.name = "friction_k1", .kind = RB_PARAM_NUMBER_ARRAY},
    {.name = "friction_k2", .kind = RB_PARAM_NUMBER_ARRAY},
    {.name = "contact_decay", .kind = RB_PARAM_NUMBER, .has_min = true, .min = 0},
    {.name = "ft_bias", .kind = RB_PARAM_BOOLEAN},
    {.name = "acc_bias", .kind = RB_PARAM_BOOLEAN},
    {.name = "gyro_bias", .kind = RB_PARAM_BOOLEAN},
    {.name = "ft_offset", .kind = RB_PARAM_STRING, .def_string = "first_sample", .choices = offset_choices},
};
static const rb_stage_type stub_type = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "ukf_torque",
    .summary = "test stand-in for the ukf_torque stage",
    .inputs = stub_in,
    .n_inputs = 7,
    .optional_inputs = 0x78, /* ft, acc, gyro, friction */
    .outputs = stub_out,
    .n_outputs = 9,
    .params = stub_params,
    .n_params = sizeof stub_params / sizeof stub_params[0],
    .create = stub_create,
    .step = stub_step,
    .destroy = stub_destroy,
};

/* The built-in registry, plus the stub when it lacks ukf_torque (or the stub alone). */
static rb_registry *registry(bool stub_only)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    if (!stub_only)
        cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    if (!rb_registry_find(reg, "ukf_torque"))
        cr_assert_eq(rb_registry_add(reg, &stub_type, &err), RB_OK, "%s", err.msg);
    return reg;
}

/* ---- helpers ------------------------------------------------------------------------------------------------ */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* Import `dir` writing the pipeline into out_dir/pipeline.json; returns its path (free()). */
static char *import_to(const char *dir, const char *urdf, const char *out_dir, rb_rde_import *imp)
{
    char *out = join(out_dir, "pipeline.json");
    rb_rde_import_opts o = {.urdf = urdf, .out_path = out};
    rb_err err;
    cr_assert_eq(rb_rde_import_dir(dir, &o, imp, &err), RB_OK, "%s", err.msg);
    write_file(out, imp->json);
    return out;
}

static bool has_note(const rb_rde_import *imp, const char *part)
{
    for (size_t i = 0; i < imp->n_notes; i++)
        if (strstr(imp->notes[i], part))
            return true;
    return false;
}

static const rb_config_stage *the_stage(const rb_pipeline *p)
{
    cr_assert_eq(p->n_stages, 1);
    cr_assert_str_eq(p->stages[0].type->name, "ukf_torque");
    return &p->stages[0];
}

static const rb_param_value *param(const rb_config_stage *st, const char *name)
{
    for (size_t i = 0; i < st->type->n_params; i++)
        if (strcmp(st->type->params[i].name, name) == 0)
            return &st->params[i];
    cr_assert_fail("no parameter %s", name);
    return NULL;
}

/* ---- the shipped configurations -------------------------------------------------------------------------- */
Test(rde_import, ergocub_pipeline_loads_with_its_model)
{
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg");
    test_need_shared("models/ergoCubSN000.urdf");
    char *tmp = test_temp_dir();
    rb_rde_import imp;
    char *path = import_to(ERGOCUB, NULL, tmp, &imp);
    /* found by the default search (DIR/../../<file name>) and written relative to the pipeline's folder */
    char *found = realpath(imp.urdf, NULL), *shared = realpath(ERGOCUB_URDF, NULL);
    cr_assert_str_eq(found, shared);
    rb_registry *reg = registry(false);
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load(path, reg, &p, &err), RB_OK, "%s", err.msg);
    char *loaded = realpath(p->model_urdf, NULL);
    cr_assert_str_eq(loaded, shared, "the relative URDF path resolves to the model");
    const rb_model *m = p->model;
    const char *joints[] = {"r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"};
    cr_assert_eq(m->n_dofs, 6);
    for (size_t j = 0; j < 6; j++)
        cr_assert_str_eq(m->dof_names[j], joints[j]);
    cr_assert_str_eq(m->bodies[0].name, "root_link");
    cr_assert(!m->floating);
    cr_assert_eq(p->clock_rate, 100.0);
    const rb_config_stage *st = the_stage(p);
    const rb_param_value *ft = param(st, "ft_sensors"), *c = param(st, "contacts"), *acc = param(st, "accelerometers");
    cr_assert_eq(ft->count, 2);
    for (size_t i = 0; i < ft->count; i++)
        cr_assert_geq(rb_model_ft_index(m, ft->strings[i]), 0, "%s", ft->strings[i]);
    cr_assert_eq(c->count, 2);
    for (size_t i = 0; i < c->count; i++)
        cr_assert_geq(rb_model_frame_index(m, c->strings[i]), 0, "%s", c->strings[i]);
    cr_assert_eq(acc->count, 3);
    for (size_t i = 0; i < acc->count; i++)
        cr_assert_geq(rb_model_frame_index(m, acc->strings[i]), 0, "%s", acc->strings[i]);
    cr_assert_str_eq(param(st, "friction_dynamics")->string, "rate_model");
    cr_assert_eq(param(st, "gear_ratio")->numbers[1], -160.0, "the signed gear ratio");
    cr_assert_eq(param(st, "dt")->number, 0.01);
    cr_assert_eq(imp.n_acc, 3);
    cr_assert_eq(imp.n_gyro, 3);
    /* what the public files say that roboest reports */
    cr_assert(has_note(&imp, "[FT] frames: 'r_foot_front_ft' is not a frame of"));
    cr_assert(
        has_note(&imp, "contact 'r_foot_front' is on the base body (r_foot_front) of its sub-model, which has no"));
    cr_assert(has_note(&imp, "dataset 'dataset/ergoCub/logged_from_robot/spline_trajectory.mat' is not mapped"));
    rb_pipeline_free(p);
    rb_registry_free(reg);
    rb_rde_import_free(&imp);
    free(found), free(shared), free(loaded), free(path);
    test_remove_tree(tmp);
}

Test(rde_import, four_joints_pipeline_and_its_quirks)
{
    test_need_shared("models/rde_configs/four_joints_two_sensors");
    test_need_shared("models/four_joints_two_sensors.urdf");
    char *tmp = test_temp_dir();
    rb_rde_import imp;
    char *path = import_to(FOUR_JOINTS, NULL, tmp, &imp);
    rb_registry *reg = registry(false);
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load(path, reg, &p, &err), RB_OK, "%s", err.msg);
    const rb_config_stage *st = the_stage(p);
    cr_assert_eq(param(st, "contacts")->count, 3);
    cr_assert_eq(param(st, "accelerometers")->count, 0);
    cr_assert_null(st->in[4], "no accelerometer: the acc port is unwired");
    cr_assert_null(st->in[5]);
    cr_assert_str_eq(st->in[3], "ft");
    /* the three contacts exist, but two sit on a sub-model's base body: unobserved by the joint dynamics */
    cr_assert(has_note(&imp, "contact 'base_link' is on the base body (base_link) of its sub-model: no joint"));
    cr_assert(has_note(&imp, "contact 'link_6' is on the base body (link_6) of its sub-model, which has no joint"));
    cr_assert(!has_note(&imp, "contact 'link_5'"));
    const char *ignored[] = {
        "FRICTION_TORQUE_CONSTANT", "FT_1_BIAS", "FT_2_BIAS", "FT_1_ACC_BIAS", "FT_2_ACC_BIAS", "FT_1_GYRO_BIAS",
        "FT_2_GYRO_BIAS",           "FT_1_ACC",  "FT_2_ACC",  "FT_1_GYRO",     "FT_2_GYRO"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "[%s] is not in dynamics_list", ignored[i]);
        cr_assert(has_note(&imp, what), "%s", what);
    }
    rb_pipeline_free(p);
    rb_registry_free(reg);
    rb_rde_import_free(&imp);
    free(path);
    test_remove_tree(tmp);
}

Test(rde_import, deterministic_and_relative_to_the_output)
{
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg");
    test_need_shared("models/ergoCubSN000.urdf");
    char *tmp = test_temp_dir(), *sub = join(tmp, "a/b");
    char *a = join(tmp, "a");
    cr_assert_eq(mkdir(a, 0755), 0);
    cr_assert_eq(mkdir(sub, 0755), 0);
    rb_rde_import i1, i2, i3;
    free(import_to(ERGOCUB, NULL, tmp, &i1));
    free(import_to(ERGOCUB, NULL, tmp, &i2));
    free(import_to(ERGOCUB, NULL, sub, &i3));
    cr_assert_str_eq(i1.json, i2.json);
    cJSON *d1 = cJSON_Parse(i1.json), *d3 = cJSON_Parse(i3.json);
    const char *u1 = cJSON_GetObjectItem(cJSON_GetObjectItem(d1, "model"), "urdf")->valuestring;
    const char *u3 = cJSON_GetObjectItem(cJSON_GetObjectItem(d3, "model"), "urdf")->valuestring;
    cr_assert_eq(strncmp(u3, "../../", 6), 0, "%s", u3);
    cr_assert_str_eq(u3 + 6, u1, "two folders deeper, two more '..'");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(d1, "model"), "urdf");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(d3, "model"), "urdf");
    cr_assert(cJSON_Compare(d1, d3, true), "only the URDF path depends on where the pipeline goes");
    /* no output path: an absolute URDF path */
    rb_rde_import i4;
    rb_err err;
    cr_assert_eq(rb_rde_import_dir(ERGOCUB, NULL, &i4, &err), RB_OK, "%s", err.msg);
    cJSON *d4 = cJSON_Parse(i4.json);
    char *shared = realpath(ERGOCUB_URDF, NULL);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(d4, "model"), "urdf")->valuestring, shared);
    free(shared);
    cJSON_Delete(d1), cJSON_Delete(d3), cJSON_Delete(d4);
    rb_rde_import_free(&i1), rb_rde_import_free(&i2), rb_rde_import_free(&i3), rb_rde_import_free(&i4);
    free(a), free(sub);
    test_remove_tree(tmp);
}

/* A robot-logger log in memory: the logger's joint order differs from joint_list and holds more joints. */
static rb_log *logger_log(void)
{
    static const char *const logger_joints[] = {"neck",        "r_knee",        "r_hip_roll", "r_ankle_roll",
                                                "r_hip_pitch", "r_ankle_pitch", "r_hip_yaw"};
    static const char *const wrench[] = {"fx", "fy", "fz", "mx", "my", "mz"};
    static const char *const xyz[] = {"x", "y", "z"};
    const char *channels[] = {"joints_state/positions",
                              "joints_state/velocities",
                              "motors_state/currents",
                              "FTs/r_foot_front_ft_sensor",
                              "FTs/r_foot_rear_ft_sensor",
                              "accelerometers/r_leg_ft_acc",
                              "accelerometers/r_foot_front_ft_acc",
                              "accelerometers/r_foot_rear_ft_acc",
                              "gyros/r_leg_ft_gyro",
                              "gyros/r_foot_front_ft_gyro",
                              "gyros/r_foot_rear_ft_gyro"};
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const size_t T = 21;
    for (size_t c = 0; c < 11; c++) {
        size_t n = c < 3 ? 7 : c < 5 ? 6 : 3;
        const char *const *names = c < 3 ? logger_joints : c < 5 ? wrench : xyz;
        rb_channel *ch = NULL;
        cr_assert_eq(rb_log_add_channel(log, channels[c], T, n, &ch, &err), RB_OK, "%s", err.msg);
        for (size_t e = 0; e < n; e++)
            cr_assert_eq(rb_channel_set_name(ch, e, names[e], &err), RB_OK);
        for (size_t t = 0; t < T; t++) {
            ch->time[t] = 10.0 + 0.01 * (double)t;
            for (size_t e = 0; e < n; e++) /* element e of channel c: 1000 c + 10 e, plus the time */
                ch->data[t * n + e] = 1000.0 * (double)c + 10.0 * (double)e + (double)t;
        }
    }
    return log;
}

Test(rde_import, binds_the_logger_channels_in_joint_list_order)
{
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg");
    test_need_shared("models/ergoCubSN000.urdf");
    char *tmp = test_temp_dir();
    rb_rde_import imp;
    char *path = import_to(ERGOCUB, NULL, tmp, &imp);
    rb_registry *reg = registry(true);
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load(path, reg, &p, &err), RB_OK, "%s", err.msg);
    rb_log *log = logger_log();
    rb_run_result *res = NULL;
    rb_run_opts opts = {0};
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, &opts, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *tau = rb_run_result_signal(res, "ukf/tau_j"), *ft = rb_run_result_signal(res, "ukf/ft");
    cr_assert_not_null(tau);
    cr_assert_eq(tau->width, 6);
    cr_assert_eq(res->clock.n, 21, "100 Hz over the 0.2 s the log spans");
    /* joint_list order, looked up by name in the logger's order: r_hip_pitch is the logger's element 4 ... */
    const size_t logger_index[] = {4, 2, 6, 1, 5, 3};
    for (size_t t = 0; t < res->clock.n; t++) {
        for (size_t j = 0; j < 6; j++)
            cr_assert_float_eq(tau->data[t * 6 + j], 10.0 * (double)logger_index[j] + (double)t, 1e-9, "t %zu j %zu", t,
                               j);
        for (size_t e = 0; e < 12; e++) /* front FT (channel 3) then rear (channel 4) */
            cr_assert_float_eq(ft->data[t * 12 + e], 1000.0 * (double)(3 + e / 6) + 10.0 * (double)(e % 6) + (double)t,
                               1e-9);
    }
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
    rb_registry_free(reg);
    rb_rde_import_free(&imp);
    free(path);
    test_remove_tree(tmp);
}

/* ---- small configurations: variants and errors ------------------------------------------------------------ */
static const char *const BASE_FILES[5][2] = {
    {"config.ini", "[GENERAL]\n"
                   "robot_name \"synthetic\"\n"
                   "urdf_path \"urdf/four_joints_two_sensors.urdf\"\n"
                   "sampling_time 0.002\n"
                   "\n"
                   "[include MODEL \"model.ini\"]\n"
                   "\n"
                   "[include UKF \"ukf.ini\"]\n"},
    {"model.ini", "joint_list (\"joint_1\", \"joint_2\", \"joint_3\", \"joint_4\")\n"
                  "base_link \"base_link\"\n"
                  "[EXTERNAL_CONTACT]\n"
                  "frames (\"link_5\")\n"
                  "[FT]\n"
                  "names (\"ft_1\", \"ft_2\")\n"
                  "frames (\"ft_1\", \"ft_2\")\n"
                  "associated_joints (\"ft_1\", \"ft_2\")\n"
                  "[ACCELEROMETER]\n"
                  "names (\"ft_1_acc\", \"ft_2_acc\")\n"
                  "frames (\"ft_1\", \"ft_2\")\n"
                  "[GYROSCOPE]\n"
                  "names (\"ft_2_gyro\")\n"
                  "frames (\"ft_2\")\n"},
    {"ukf.ini", "alpha 0.5\nbeta 2.0\nkappa 0.0\n"
                "[include UKF_STATE \"ukf/ukf_state.ini\"]\n"
                "[include UKF_MEASUREMENT \"ukf/ukf_measurement.ini\"]\n"},
    {"ukf/ukf_state.ini",
     "dynamics_list (\"JOINT_VELOCITY\", \"MOTOR_TORQUE\", \"FRICTION_TORQUE\", \"FT_1\", \"FT_2\", \"CONTACT\")\n"
     "[JOINT_VELOCITY]\n" /* line 2 */
     "name \"ds\"\n"
     "elements (\"joint_1\", \"joint_2\", \"joint_3\", \"joint_4\")\n"
     "covariance (1e-4, 2e-4, 3e-4, 4e-4)\n"
     "initial_covariance (1, 2, 3, 4)\n"
     "dynamic_model \"JointVelocityStateDynamics\"\n"
     "[MOTOR_TORQUE]\n" /* line 8 */
     "name \"tau_m\"\n"
     "covariance (1e-3, 1e-3, 1e-3, 1e-3)\n"
     "initial_covariance (5, 5, 5, 5)\n"
     "dynamic_model \"ZeroVelocityStateDynamics\"\n"
     "[FRICTION_TORQUE]\n" /* line 13 */
     "name \"tau_F\"\n"
     "covariance (1e-2, 1e-2, 1e-2, 1e-2)\n"
     "initial_covariance (1e-2, 1e-2, 1e-2, 1e-2)\n"
     "dynamic_model \"FrictionTorqueStateDynamics\"\n"
     "friction_k0 (1, 2, 3, 4)\n"
     "friction_k1 (5, 6, 7, 8)\n"
     "friction_k2 (0.1, 0.2, 0.3, 0.4)\n"
     "[FT_1]\n" /* line 21 */
     "name \"ft_1\"\n"
     "covariance (1, 1, 1, 0.1, 0.1, 0.1)\n"
     "initial_covariance (2, 2, 2, 0.2, 0.2, 0.2)\n"
     "dynamic_model \"ZeroVelocityStateDynamics\"\n"
     "[FT_2]\n"
     "name \"ft_2\"\n"
     "covariance (3, 3, 3, 0.3, 0.3, 0.3)\n"
     "initial_covariance (4, 4, 4, 0.4, 0.4, 0.4)\n"
     "dynamic_model \"ZeroVelocityStateDynamics\"\n"
     "[CONTACT]\n" /* line 31 */
     "name \"link_5\"\n"
     "covariance (7, 7, 7, 7, 7, 7)\n"
     "initial_covariance (8, 8, 8, 8, 8, 8)\n"
     "dynamic_model \"ZeroVelocityStateDynamics\"\n"
     "[FT_1_BIAS]\n"
     "name \"ft_1_bias\"\n"
     "covariance (1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8)\n"
     "initial_covariance (0.01, 0.01, 0.01, 0.01, 0.01, 0.01)\n"
     "dynamic_model \"ZeroVelocityStateDynamics\"\n"
     "[FT_2_BIAS]\n"
     "name \"ft_2_bias\"\n"
     "covariance (2e-8, 2e-8, 2e-8, 2e-8, 2e-8, 2e-8)\n"
     "initial_covariance (0.01, 0.01, 0.01, 0.01, 0.01, 0.01)\n"
     "dynamic_model \"ZeroVelocityStateDynamics\"\n"},
    {"ukf/ukf_measurement.ini", "dynamics_list (\"JOINT_VELOCITY\", \"MOTOR_CURRENT\", \"FT_1\", \"FT_2\", \"ACC_1\")\n"
                                "[JOINT_VELOCITY]\n"
                                "name \"ds\"\n"
                                "covariance (1e-6, 1e-6, 1e-6, 1e-6)\n"
                                "dynamic_model \"ConstantMeasurementModel\"\n"
                                "[MOTOR_CURRENT]\n" /* line 6 */
                                "name \"i_m\"\n"
                                "covariance (0.1, 0.2, 0.3, 0.4)\n"
                                "gear_ratio (100.0, -160.0, 100.0, 50.0)\n"
                                "torque_constant (0.1, 0.2, 0.3, 0.4)\n"
                                "dynamic_model \"MotorCurrentMeasurementDynamics\"\n"
                                "[FT_1]\n" /* line 12 */
                                "name \"ft_1\"\n"
                                "covariance (9, 9, 9, 0.9, 0.9, 0.9)\n"
                                "use_bias 0\n"
                                "dynamic_model \"ConstantMeasurementModel\"\n"
                                "[FT_2]\n" /* line 17 */
                                "name \"ft_2\"\n"
                                "covariance (8, 8, 8, 0.8, 0.8, 0.8)\n"
                                "use_bias 0\n"
                                "dynamic_model \"ConstantMeasurementModel\"\n"
                                "[ACC_1]\n" /* line 22 */
                                "name \"ft_1_acc\"\n"
                                "covariance (1, 2, 3)\n"
                                "use_bias 0\n"
                                "dynamic_model \"AccelerometerMeasurementDynamics\"\n"},
};

typedef struct edit {
    const char *file, *old, *new_text;
} edit;

/* The base configuration with the edits applied (each `old` must occur), in a new folder (test_remove_tree). */
static char *config_with(const edit *edits, size_t n_edits)
{
    char *dir = test_temp_dir(), *ukf = join(dir, "ukf");
    cr_assert_eq(mkdir(ukf, 0755), 0);
    free(ukf);
    for (size_t f = 0; f < 5; f++) {
        char *text = strdup(BASE_FILES[f][1]);
        for (size_t e = 0; e < n_edits; e++) {
            if (strcmp(edits[e].file, BASE_FILES[f][0]) != 0)
                continue;
            char *at = strstr(text, edits[e].old);
            cr_assert_not_null(at, "%s lacks %s", edits[e].file, edits[e].old);
            size_t head = (size_t)(at - text), len = strlen(text) - strlen(edits[e].old) + strlen(edits[e].new_text);
            char *next = malloc(len + 1);
            memcpy(next, text, head);
            strcpy(next + head, edits[e].new_text);
            strcat(next, at + strlen(edits[e].old));
            free(text);
            text = next;
        }
        char *path = join(dir, BASE_FILES[f][0]);
        write_file(path, text);
        free(path);
        free(text);
    }
    return dir;
}

/* Import with the four-joint URDF; the pipeline's JSON (cJSON_Delete). */
static cJSON *import_json(const edit *edits, size_t n, rb_rde_import *imp)
{
    char *dir = config_with(edits, n);
    rb_rde_import_opts o = {.urdf = FOUR_URDF};
    rb_err err;
    cr_assert_eq(rb_rde_import_dir(dir, &o, imp, &err), RB_OK, "%s", err.msg);
    test_remove_tree(dir);
    cJSON *doc = cJSON_Parse(imp->json);
    cr_assert_not_null(doc);
    return doc;
}

static const cJSON *params_of(const cJSON *doc)
{
    return cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "stages"), 0), "params");
}

static void expect_numbers(const cJSON *params, const char *key, const double *want, size_t n)
{
    const cJSON *a = cJSON_GetObjectItem(params, key);
    cr_assert(cJSON_IsArray(a), "%s is no array", key);
    cr_assert_eq((size_t)cJSON_GetArraySize(a), n, "%s: %d values", key, cJSON_GetArraySize(a));
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(cJSON_GetArrayItem(a, (int)i)->valuedouble, want[i], "%s[%zu]", key, i);
}

Test(rde_import, base_mapping)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    rb_rde_import imp;
    cJSON *doc = import_json(NULL, 0, &imp);
    const cJSON *p = params_of(doc);
    expect_numbers(p, "q_dq", (const double[]){1e-4, 2e-4, 3e-4, 4e-4}, 4);
    expect_numbers(p, "p0_dq", (const double[]){1, 2, 3, 4}, 4);
    expect_numbers(p, "p0_tau_m", (const double[]){5, 5, 5, 5}, 4);
    expect_numbers(p, "friction_k1", (const double[]){5, 6, 7, 8}, 4);
    expect_numbers(p, "q_ft", (const double[]){1, 1, 1, 0.1, 0.1, 0.1, 3, 3, 3, 0.3, 0.3, 0.3}, 12);
    expect_numbers(p, "p0_contact", (const double[]){8, 8, 8, 8, 8, 8}, 6);
    expect_numbers(p, "r_current", (const double[]){0.1, 0.2, 0.3, 0.4}, 4);
    expect_numbers(p, "gear_ratio", (const double[]){100, -160, 100, 50}, 4);
    expect_numbers(p, "k_t", (const double[]){0.1, 0.2, 0.3, 0.4}, 4);
    expect_numbers(p, "r_ft", (const double[]){9, 9, 9, 0.9, 0.9, 0.9, 8, 8, 8, 0.8, 0.8, 0.8}, 12);
    expect_numbers(p, "r_acc", (const double[]){1, 2, 3}, 3);
    cr_assert_eq(cJSON_GetObjectItem(p, "alpha")->valuedouble, 0.5);
    cr_assert_eq(cJSON_GetObjectItem(p, "dt")->valuedouble, 0.002);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "clock"), "rate")->valuedouble, 500.0);
    cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "accelerometers"), 0)->valuestring, "ft_1");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p, "accelerometers")), 1, "only the measured IMU");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p, "gyroscopes")), 0);
    cr_assert_null(cJSON_GetObjectItem(p, "r_gyro"));
    cr_assert_null(cJSON_GetObjectItem(p, "q_ft_bias"));
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(p, "ft_bias")));
    const cJSON *signals = cJSON_GetObjectItem(doc, "signals");
    cr_assert_null(cJSON_GetObjectItem(signals, "gyro"));
    cr_assert_str_eq(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(signals, "acc"), "channel"), 0)->valuestring,
        "accelerometers/ft_1_acc");
    cr_assert(has_note(&imp, "model.ini:10: [ACCELEROMETER] 'ft_2_acc' is not in the measurement dynamics_list"));
    cr_assert(has_note(&imp, "model.ini:13: [GYROSCOPE] 'ft_2_gyro' is not in the measurement dynamics_list"));
    cr_assert(has_note(&imp, "[FT_1_BIAS] is not in dynamics_list: ignored"));
    cr_assert_eq(imp.n_ft, 2);
    cr_assert_eq(imp.n_acc, 1);
    cr_assert_eq(imp.n_gyro, 0);
    cJSON_Delete(doc);
    rb_rde_import_free(&imp);
}

Test(rde_import, biases_decay_and_random_walk_friction)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    const edit edits[] = {
        {"ukf/ukf_state.ini", "\"CONTACT\")", "\"CONTACT\", \"FT_1_BIAS\", \"FT_2_BIAS\", \"ACC_BIAS\")"},
        {"ukf/ukf_state.ini", "[FT_1_BIAS]",
         "[ACC_BIAS]\nname \"ft_1_acc_bias\"\ncovariance (1e-6, 2e-6, 3e-6)\ninitial_covariance (0.01, 0.01, 0.01)\n"
         "dynamic_model \"ZeroVelocityStateDynamics\"\n[FT_1_BIAS]"},
        {"ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]",
         "use_bias 1\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]"},
        {"ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"ConstantMeasurementModel\"\n[ACC_1]",
         "use_bias true\ndynamic_model \"ConstantMeasurementModel\"\n[ACC_1]"},
        {"ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"AccelerometerMeasurementDynamics\"",
         "use_bias 1\ndynamic_model \"AccelerometerMeasurementDynamics\""},
        {"ukf/ukf_state.ini", "initial_covariance (8, 8, 8, 8, 8, 8)\ndynamic_model \"ZeroVelocityStateDynamics\"",
         "initial_covariance (8, 8, 8, 8, 8, 8)\ndynamic_model \"ExternalContactStateDynamics\"\nk 2.5"},
        {"ukf/ukf_state.ini",
         "dynamic_model \"FrictionTorqueStateDynamics\"\nfriction_k0 (1, 2, 3, 4)\nfriction_k1 (5, 6, 7, 8)\n"
         "friction_k2 (0.1, 0.2, 0.3, 0.4)\n",
         "dynamic_model \"ZeroVelocityDynamics\"\n"},
    };
    rb_rde_import imp;
    cJSON *doc = import_json(edits, sizeof edits / sizeof edits[0], &imp);
    const cJSON *p = params_of(doc);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(p, "ft_bias")));
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(p, "acc_bias")));
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(p, "gyro_bias")));
    expect_numbers(p, "q_acc_bias", (const double[]){1e-6, 2e-6, 3e-6}, 3);
    expect_numbers(p, "q_ft_bias",
                   (const double[]){1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 2e-8, 2e-8, 2e-8, 2e-8, 2e-8, 2e-8}, 12);
    expect_numbers(p, "p0_bias", (const double[]){0.01}, 1);
    cr_assert_eq(cJSON_GetObjectItem(p, "contact_decay")->valuedouble, 2.5);
    cr_assert_str_eq(cJSON_GetObjectItem(p, "friction_dynamics")->valuestring, "random_walk");
    cr_assert_null(cJSON_GetObjectItem(p, "friction_k0"));
    cJSON_Delete(doc);
    rb_rde_import_free(&imp);
}

/* Expected text with every '@' replaced by dir (free()). */
static char *expand(const char *pattern, const char *dir)
{
    size_t n = 1;
    for (const char *c = pattern; *c; c++)
        n += *c == '@' ? strlen(dir) : 1;
    char *out = malloc(n), *o = out;
    for (const char *c = pattern; *c; c++)
        o = *c == '@' ? stpcpy(o, dir) : (*o = *c, o + 1);
    *o = '\0';
    return out;
}

/* The import of the base configuration with edits fails with `code` and the message "<dir>/" + suffix, where
 * every '@' in suffix stands for the configuration's folder. Nothing is returned but the error. */
static void expect_import_error(const edit *edits, size_t n, const char *urdf, int code, const char *suffix)
{
    char *dir = config_with(edits, n);
    rb_rde_import_opts o = {.urdf = urdf};
    rb_rde_import imp;
    rb_err err;
    int rc = rb_rde_import_dir(dir, &o, &imp, &err);
    cr_assert_eq(rc, code, "rc %d: %s", rc, err.msg);
    cr_assert_null(imp.json);
    cr_assert_eq(imp.n_notes, 0);
    char *pattern = malloc(strlen(suffix) + 3);
    sprintf(pattern, "@/%s", suffix);
    char *want = expand(pattern, dir);
    cr_assert_str_eq(err.msg, want);
    free(want);
    free(pattern);
    test_remove_tree(dir);
}

#define ONE_EDIT(file, old, new_text) (const edit[]){{file, old, new_text}}, 1
#define ONE(file, old, new_text) ONE_EDIT(file, old, new_text), FOUR_URDF

Test(rde_import, errors_in_the_blocks)
{
    expect_import_error(ONE("ukf/ukf_state.ini", "dynamic_model \"ZeroVelocityStateDynamics\"\n[FRICTION",
                            "dynamic_model \"ZeroVelocityStateDynamic\"\n[FRICTION"),
                        RB_ECONFIG,
                        "ukf/ukf_state.ini:12: [MOTOR_TORQUE]: unknown dynamic_model 'ZeroVelocityStateDynamic' (state "
                        "models: JointVelocityStateDynamics, ZeroVelocityStateDynamics, FrictionTorqueStateDynamics, "
                        "ExternalContactStateDynamics)");
    expect_import_error(ONE("ukf/ukf_measurement.ini", "dynamic_model \"AccelerometerMeasurementDynamics\"",
                            "dynamic_model \"MagnetometerMeasurementDynamics\""),
                        RB_ECONFIG,
                        "ukf/ukf_measurement.ini:26: [ACC_1]: unknown dynamic_model 'MagnetometerMeasurementDynamics' "
                        "(measurement models: ConstantMeasurementModel, MotorCurrentMeasurementDynamics, "
                        "AccelerometerMeasurementDynamics, GyroscopeMeasurementDynamics)");
    expect_import_error(ONE("ukf/ukf_state.ini", "name \"ft_2\"", "name \"ft_3\""), RB_ECONFIG,
                        "ukf/ukf_state.ini:27: [FT_2]: name 'ft_3' is not a state of the public estimator: not ds, "
                        "tau_m, tau_F, an FT sensor of model.ini [FT] names, a frame of [EXTERNAL_CONTACT] frames, nor "
                        "<sensor>_bias of one of them");
    expect_import_error(
        ONE("ukf/ukf_measurement.ini", "name \"ft_2\"", "name \"r_ft\""), RB_ECONFIG,
        "ukf/ukf_measurement.ini:18: [FT_2]: name 'r_ft' is not a measurement of the public estimator: "
        "not ds, i_m, an FT sensor of model.ini [FT] names, nor a name of [ACCELEROMETER] / [GYROSCOPE] "
        "names");
    expect_import_error(ONE("ukf/ukf_state.ini", "\"CONTACT\")", "\"CONTACT\", \"NOPE\")"), RB_ECONFIG,
                        "ukf/ukf_state.ini:1: dynamics_list names 'NOPE' but there is no [NOPE] group");
    expect_import_error(ONE("ukf/ukf_state.ini", "covariance (3, 3, 3, 0.3, 0.3, 0.3)\n", ""), RB_ECONFIG,
                        "ukf/ukf_state.ini:26: [FT_2]: missing key 'covariance'");
    expect_import_error(
        ONE("ukf/ukf_state.ini", "covariance (1e-4, 2e-4, 3e-4, 4e-4)", "covariance (1e-4, 2e-4, 3e-4)"), RB_ECONFIG,
        "ukf/ukf_state.ini:5: key 'covariance': expected a list of 4 numbers, got a list of 3");
    expect_import_error(ONE("ukf/ukf_state.ini", "covariance (7, 7, 7, 7, 7, 7)", "covariance (7, 7, 7, -7, 7, 7)"),
                        RB_ECONFIG,
                        "ukf/ukf_state.ini:33: [CONTACT]: key 'covariance': element 4 is a negative variance");
    expect_import_error(
        ONE("ukf/ukf_state.ini", "elements (\"joint_1\", \"joint_2\"", "elements (\"joint_1\", \"joint_3\""),
        RB_ECONFIG,
        "ukf/ukf_state.ini:4: [JOINT_VELOCITY]: element 2 is 'joint_3' where MODEL joint_list has "
        "'joint_2'");
    expect_import_error(ONE("ukf/ukf_state.ini", "covariance (7, 7", "covarience (7, 7"), RB_ECONFIG,
                        "ukf/ukf_state.ini:33: [CONTACT]: unknown key 'covarience' for dynamic_model "
                        "ZeroVelocityStateDynamics (did you mean 'covariance'?)");
    expect_import_error(ONE("ukf/ukf_state.ini", "name \"ds\"", "variable_name \"ds\""), RB_ECONFIG,
                        "ukf/ukf_state.ini:3: [JOINT_VELOCITY]: 'variable_name' is the newer "
                        "bipedal-locomotion-framework format, which is not imported (blocks with 'name', as in "
                        "paper_sorrentino_2024_icra, are)");
    expect_import_error(ONE("ukf/ukf_state.ini", "dynamic_model \"JointVelocityStateDynamics\"",
                            "dynamic_model \"ZeroVelocityStateDynamics\""),
                        RB_ECONFIG,
                        "ukf/ukf_state.ini:7: [JOINT_VELOCITY]: the state 'ds' needs dynamic_model "
                        "JointVelocityStateDynamics, not 'ZeroVelocityStateDynamics'");
    expect_import_error(ONE("ukf/ukf_state.ini", "name \"tau_m\"", "name \"ds\""), RB_ECONFIG,
                        "ukf/ukf_state.ini:9: [MOTOR_TORQUE]: state 'ds' is given twice (also by [JOINT_VELOCITY])");
    expect_import_error(ONE("ukf/ukf_measurement.ini", "name \"i_m\"", "name \"tau_F\""), RB_ECONFIG,
                        "ukf/ukf_measurement.ini:7: [MOTOR_CURRENT]: a friction torque measurement reads a friction "
                        "network: give it with --friction-network FILE (a network of 'roboest train-friction')");
    expect_import_error(
        ONE("ukf/ukf_measurement.ini", "torque_constant (0.1, 0.2, 0.3, 0.4)", "torque_constant (0.1, -0.2, 0.3, 0.4)"),
        RB_ECONFIG,
        "ukf/ukf_measurement.ini:10: [MOTOR_CURRENT]: torque_constant of joint_2 must be > 0 (N m/A; "
        "the sign is the gear ratio's)");
    expect_import_error(ONE("ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]",
                            "use_bias 1\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]"),
                        RB_ECONFIG,
                        "ukf/ukf_measurement.ini:18: [FT_2]: use_bias 0 differs from [FT_1]'s 1: the ukf_torque stage "
                        "estimates the biases of every sensor of a kind or of none");
}

Test(rde_import, unused_bias_states_are_notes)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    rb_rde_import imp;
    cJSON *doc = import_json(ONE_EDIT("ukf/ukf_state.ini", "\"CONTACT\")", "\"CONTACT\", \"FT_1_BIAS\")"), &imp);
    cr_assert(has_note(&imp, "state ft_1_bias is not used: its measurements have use_bias 0"));
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(params_of(doc), "ft_bias")));
    cr_assert_null(cJSON_GetObjectItem(params_of(doc), "p0_bias"));
    cJSON_Delete(doc);
    rb_rde_import_free(&imp);
}

Test(rde_import, errors_in_completeness_and_files)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    const edit p0[] = {
        {"ukf/ukf_state.ini", "\"CONTACT\")", "\"CONTACT\", \"FT_1_BIAS\", \"FT_2_BIAS\")"},
        {"ukf/ukf_state.ini",
         "initial_covariance (0.01, 0.01, 0.01, 0.01, 0.01, 0.01)\ndynamic_model \"ZeroVelocityStateDynamics\"\n",
         "initial_covariance (0.01, 0.01, 0.01, 0.01, 0.01, 0.02)\ndynamic_model \"ZeroVelocityStateDynamics\"\n"},
        {"ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]",
         "use_bias 1\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]"},
        {"ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"ConstantMeasurementModel\"\n[ACC_1]",
         "use_bias 1\ndynamic_model \"ConstantMeasurementModel\"\n[ACC_1]"},
    };
    expect_import_error(p0, 4, FOUR_URDF, RB_ECONFIG,
                        "ukf/ukf_state.ini:1: the bias states have different initial_covariance values: the ukf_torque "
                        "stage takes one p0_bias");
    expect_import_error(ONE("ukf/ukf_measurement.ini", "\"FT_2\", ", ""), RB_ECONFIG,
                        "ukf/ukf_measurement.ini:1: dynamics_list has no block for the FT sensor 'ft_2' of model.ini "
                        "[FT] names");
    expect_import_error(ONE("ukf/ukf_state.ini", "\"MOTOR_TORQUE\", ", ""), RB_ECONFIG,
                        "ukf/ukf_state.ini:1: dynamics_list has no block for the motor torque state (name \"tau_m\")");
    expect_import_error(ONE("ukf/ukf_state.ini", ", \"CONTACT\")", ")"), RB_ECONFIG,
                        "ukf/ukf_state.ini:1: dynamics_list has no block for the contact 'link_5' of model.ini "
                        "[EXTERNAL_CONTACT] frames");
    const edit biased[] = {
        {"ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]",
         "use_bias 1\ndynamic_model \"ConstantMeasurementModel\"\n[FT_2]"},
        {"ukf/ukf_measurement.ini", "use_bias 0\ndynamic_model \"ConstantMeasurementModel\"\n[ACC_1]",
         "use_bias 1\ndynamic_model \"ConstantMeasurementModel\"\n[ACC_1]"},
    };
    expect_import_error(biased, 2, FOUR_URDF, RB_ECONFIG,
                        "ukf/ukf_state.ini:1: dynamics_list has no block for 'ft_1_bias' (the FT measurements use a "
                        "bias: use_bias 1 in [FT_2])");
    expect_import_error(ONE("ukf/ukf_state.ini", "\"JOINT_VELOCITY\", \"MOTOR_TORQUE\"",
                            "\"JOINT_VELOCITY\", \"MOTOR_TORQUE\",\n\"FOO\""),
                        RB_ECONFIG, "ukf/ukf_state.ini:1: dynamics_list names 'FOO' but there is no [FOO] group");
    expect_import_error(ONE("config.ini", "sampling_time 0.002", "sampling_time 0"), RB_ECONFIG,
                        "config.ini:4: sampling_time must be > 0 s");
    expect_import_error(
        ONE("ukf/ukf_state.ini", "covariance (1, 1, 1, 0.1, 0.1, 0.1)", "covariance (1, 1, 1, 0.1, 0.1, 0.1"),
        RB_ECONFIG, "ukf/ukf_state.ini:23: unterminated list for key 'covariance' (found '(' on line 24)");
    expect_import_error(ONE("ukf.ini", "ukf/ukf_state.ini", "ukf/state.ini"), RB_ECONFIG,
                        "ukf.ini:4: include file 'ukf/state.ini' not found (@/ukf/state.ini)");
}

Test(rde_import, errors_against_the_urdf)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    const edit joint[] = {{"model.ini", "\"joint_4\")", "\"joint_9\")"},
                          {"ukf/ukf_state.ini", "\"joint_4\")", "\"joint_9\")"}};
    expect_import_error(joint, 2, FOUR_URDF, RB_ENOTFOUND,
                        "model.ini:1: joint_list: 'joint_9' is not a movable joint of " FOUR_URDF);
    expect_import_error(ONE("model.ini", "\"joint_4\")", "\"joint_9\")"), RB_ECONFIG,
                        "ukf/ukf_state.ini:4: [JOINT_VELOCITY]: element 4 is 'joint_4' where MODEL joint_list has "
                        "'joint_9'");
    expect_import_error(ONE("model.ini", "base_link \"base_link\"", "base_link \"base\""), RB_ENOTFOUND,
                        "model.ini:2: base_link: 'base' is not a link of " FOUR_URDF);
    expect_import_error(ONE("model.ini", "frames (\"link_5\")", "frames (\"link_7\")"), RB_ECONFIG,
                        "ukf/ukf_state.ini:32: [CONTACT]: name 'link_5' is not a state of the public estimator: not "
                        "ds, tau_m, tau_F, an FT sensor of model.ini [FT] names, a frame of [EXTERNAL_CONTACT] frames, "
                        "nor <sensor>_bias of one of them");
    const edit contact[] = {{"model.ini", "frames (\"link_5\")", "frames (\"link_7\")"},
                            {"ukf/ukf_state.ini", "name \"link_5\"", "name \"link_7\""}};
    expect_import_error(contact, 2, FOUR_URDF, RB_ENOTFOUND,
                        "model.ini:4: [EXTERNAL_CONTACT] frames: 'link_7' is not a frame of " FOUR_URDF);
    expect_import_error(
        ONE("model.ini", "associated_joints (\"ft_1\", \"ft_2\")", "associated_joints (\"ft_2\", \"ft_1\")"),
        RB_ECONFIG, "model.ini:8: [FT] associated_joints: 'ft_2' is not the joint of sensor 'ft_1' ('ft_1' is)");
    expect_import_error(ONE("model.ini", "frames (\"ft_1\", \"ft_2\")\n[GYRO", "frames (\"ft_9\", \"ft_2\")\n[GYRO"),
                        RB_ENOTFOUND, "model.ini:11: [ACCELEROMETER] frames: 'ft_9' is not a frame of " FOUR_URDF);
    /* no --urdf: every place tried is named */
    expect_import_error(NULL, 0, NULL, RB_ENOTFOUND,
                        "config.ini:3: urdf_path 'urdf/four_joints_two_sensors.urdf': no such file (tried "
                        "@/urdf/four_joints_two_sensors.urdf, @/four_joints_two_sensors.urdf, "
                        "@/../urdf/four_joints_two_sensors.urdf, @/../four_joints_two_sensors.urdf, "
                        "@/../../urdf/four_joints_two_sensors.urdf, @/../../four_joints_two_sensors.urdf); give the "
                        "URDF's path (roboest import-rde --urdf PATH)");
}

Test(rde_import, out_of_memory_at_every_allocation)
{
    test_need_shared("models/rde_configs/four_joints_two_sensors");
    test_need_shared("models/four_joints_two_sensors.urdf");
    char *tmp = test_temp_dir(), *out = join(tmp, "p.json");
    rb_rde_import_opts o = {.out_path = out};
    long fail = 0;
    for (;; fail++) {
        rb_rde_import imp;
        rb_err err;
        rb_alloc_fail_after(fail);
        int rc = rb_rde_import_dir(FOUR_JOINTS, &o, &imp, &err);
        long made = rb_alloc_fail_after(-1);
        if (rc == RB_OK) {
            cr_assert_leq(made, fail, "allocation %ld failed without an error", fail);
            cr_assert_not_null(imp.json);
            rb_rde_import_free(&imp);
            break;
        }
        cr_assert_eq(rc, RB_ENOMEM, "allocation %ld: %s", fail, err.msg);
        cr_assert_null(imp.json);
        cr_assert_eq(imp.n_notes, 0);
    }
    cr_assert_gt(fail, 100, "the import allocates (%ld)", fail);
    free(out);
    test_remove_tree(tmp);
}
