/* roboest model: whole-body model queries (info, eval). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "roboest/dynamics.h"
#include "roboest/io.h"
#include "roboest/model.h"

static const char *const MODEL_HELP =
    "Usage: roboest model info URDF [--joints LIST] [--base LINK] [--floating] [--json]\n"
    "       roboest model eval URDF --op OP --states FILE -o OUT [--joints LIST] [--base LINK]\n"
    "                         [--floating] [--frame NAME] [--rep body|mixed|inertial] [--force]\n"
    "\n"
    "model info loads a URDF as roboest computes on it and describes it: bodies (URDF links joined by\n"
    "fixed joints are merged, except across six-axis force/torque sensor joints), movable joints in\n"
    "the order of every per-joint vector, frames, sensors, total mass, and the sub-models the tree\n"
    "splits into at the force/torque sensors (with the sign each measured wrench acts on them with).\n"
    "\n"
    "model eval evaluates one quantity for every row (state) of a states file (.h5, .mat or .csv of\n"
    "named matrices, one row per state) and writes the results, one row per state, to OUT (.h5, .mat\n"
    "or .csv, named after the quantity):\n"
    "  OP                   needs               writes\n"
    "  forward-kinematics   q                   pose: N x 7 (x y z, quaternion w x y z) of --frame, or\n"
    "                                           N x F x 7 for every frame (attribute frames: the order)\n"
    "  jacobian             q, --frame          J: N x 6 x nv in --rep\n"
    "  djdq                 q dq, --frame       djdq: N x 6, J_dot nu in --rep\n"
    "  mass-matrix          q                   M: N x nv x nv\n"
    "  generalised-forces   q dq                h: N x nv, bias forces C(q, nu) nu + g(q)\n"
    "  gravity              q                   g: N x nv\n"
    "  rnea                 q dq ddq            tau: N x nv\n"
    "  forward-dynamics     q dq tau            ddq: N x nv (articulated-body algorithm)\n"
    "  com                  q                   com: N x 3, world coordinates\n"
    "  centroidal-momentum  q dq                centroidal_momentum: N x 6, linear then angular, world\n"
    "                                           axes about the CoM; com: N x 3\n"
    "  regressor            q dq ddq            Y: N x nv x 10 B, Y pi = rnea, pi = [m, h, I] per body\n"
    "States: q, dq, ddq are N x n (joints in --joints order); tau is N x nv. Floating base: also\n"
    "base_pose N x 7 (position, quaternion w x y z) and, where dq / ddq are needed, base_twist and\n"
    "base_acc N x 6. The base twist is body-fixed (base axes), linear part first; base_acc is its time\n"
    "derivative. Then nv = 6 + n and rnea returns the base wrench (force first, base frame, about the\n"
    "base origin) followed by the joint torques. An optional gravity (N x 3, the same in every row)\n"
    "replaces the model's (0, 0, -9.81). Representations: body = the frame's axes about its origin,\n"
    "mixed = world axes about the frame origin (default), inertial = world axes about the world origin.\n"
    "\n"
    "  --joints LIST   comma-separated joint list: the movable joints kept, in this order; every other\n"
    "                  movable joint is locked at zero and merged (default: all, URDF order)\n"
    "  --base LINK     base link (default: the URDF root)\n"
    "  --floating      floating base (6 more velocity coordinates: body-fixed twist, linear first)\n"
    "  --json          (info) one JSON object instead of text\n"
    "  --force         (eval) overwrite OUT\n"
    "  -h, --help      this help\n"
    "\n" CLI_EXIT_CODES_HELP;

/* Load a URDF with the comma-separated joint list `joints` (NULL: every movable joint). */
static int load_model(const char *urdf, const char *joints, rb_model_opts *opts, rb_model **out, rb_err *err)
{
    char *copy = joints ? rb_strdup(joints) : NULL;
    size_t count = 1;
    for (const char *p = joints ? joints : ""; *p; p++)
        count += *p == ',';
    const char **list = joints ? rb_calloc(count, sizeof *list) : NULL;
    if (joints && (!copy || !list)) {
        rb_free(copy);
        rb_free(list);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    if (joints) {
        char *save = NULL;
        opts->n_joints = 0;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            list[opts->n_joints++] = tok;
        opts->joints = list;
    }
    int rc = rb_model_load_urdf(urdf, opts, out, err);
    rb_free(list);
    rb_free(copy);
    return rc;
}

static const char *joint_type_name(rb_joint_type t)
{
    return t == RB_JOINT_REVOLUTE ? "revolute" : t == RB_JOINT_PRISMATIC ? "prismatic" : "fixed";
}

static void print_submodels(const rb_model *m, const rb_submodels *sm)
{
    printf("\nsub-models (the tree cut at the force/torque sensor joints):\n");
    for (size_t k = 0; k < sm->n_sub; k++) {
        const rb_submodel *sub = &sm->sub[k];
        printf("  %zu: base %s, %zu bodies, mass %.6g kg, joints", k, m->bodies[sub->base].name, sub->n_bodies,
               sub->mass);
        for (size_t i = 0; i < sub->n_dofs; i++)
            printf("%s %s", i ? "," : "", m->dof_names[sub->dofs[i]]);
        printf("%s\n     FT wrenches:", sub->n_dofs ? "" : " none");
        for (size_t i = 0; i < sub->n_ft; i++)
            printf("%s %c%s", i ? "," : "", sub->ft[i].sign > 0 ? '+' : '-', m->ft[sub->ft[i].ft].name);
        printf("%s\n", sub->n_ft ? "" : " none");
    }
}

static void print_text(const rb_model *m)
{
    printf("%s: robot %s, %s base, %zu bodies, %zu joints (nq %zu, nv %zu), %zu frames, total mass %.6g kg\n",
           m->source, m->name, m->floating ? "floating" : "fixed", m->n_bodies, m->n_dofs, m->nq, m->nv, m->n_frames,
           m->total_mass);
    printf("\njoints (the order of every per-joint vector):\n");
    for (size_t i = 0; i < m->n_dofs; i++) {
        const rb_body *b = &m->bodies[m->dof_body[i]];
        printf("  %3zu %-28s %-9s body %-24s limits [%g, %g]\n", i, m->dof_names[i], joint_type_name(b->type),
               b->name, m->dof_lower[i], m->dof_upper[i]);
    }
    printf("\nbodies:\n");
    for (size_t i = 0; i < m->n_bodies; i++) {
        const rb_body *b = &m->bodies[i];
        printf("  %3zu %-28s parent %-24s joint %-28s %s, mass %.6g kg\n", i, b->name,
               b->parent >= 0 ? m->bodies[b->parent].name : "-", b->joint_name ? b->joint_name : "-",
               joint_type_name(b->type), b->inertia[0]);
    }
    printf("\nforce/torque sensors:%s\n", m->n_ft ? "" : " none");
    for (size_t i = 0; i < m->n_ft; i++) {
        const rb_ft_sensor *s = &m->ft[i];
        printf("  %-28s joint %-28s between %s and %s, expressed in %s, %s\n", s->name, s->joint_name,
               m->bodies[s->parent_body].name, m->bodies[s->child_body].name, m->frames[s->frame].name,
               s->sign > 0 ? "parent_to_child" : "child_to_parent");
    }
    printf("\naccelerometers and gyroscopes:%s\n", m->n_imu ? "" : " none");
    for (size_t i = 0; i < m->n_imu; i++)
        printf("  %-28s %-13s frame %s on body %s\n", m->imu[i].name,
               m->imu[i].kind == RB_SENSOR_ACCELEROMETER ? "accelerometer" : "gyroscope",
               m->frames[m->imu[i].frame].name, m->bodies[m->frames[m->imu[i].frame].body].name);
}

static int print_json(const rb_model *m, const rb_submodels *sm)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "robot", m->name);
    cJSON_AddStringToObject(o, "source", m->source);
    cJSON_AddBoolToObject(o, "floating", m->floating);
    cJSON_AddNumberToObject(o, "nq", (double)m->nq);
    cJSON_AddNumberToObject(o, "nv", (double)m->nv);
    cJSON_AddNumberToObject(o, "total_mass", m->total_mass);
    cJSON *joints = cJSON_AddArrayToObject(o, "joints");
    for (size_t i = 0; i < m->n_dofs; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", m->dof_names[i]);
        cJSON_AddStringToObject(j, "type", joint_type_name(m->bodies[m->dof_body[i]].type));
        cJSON_AddStringToObject(j, "body", m->bodies[m->dof_body[i]].name);
        cJSON_AddItemToArray(joints, j);
    }
    cJSON *bodies = cJSON_AddArrayToObject(o, "bodies");
    for (size_t i = 0; i < m->n_bodies; i++) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "name", m->bodies[i].name);
        cJSON_AddItemToObject(b, "parent", m->bodies[i].parent >= 0
                                               ? cJSON_CreateString(m->bodies[m->bodies[i].parent].name)
                                               : cJSON_CreateNull());
        cJSON_AddNumberToObject(b, "mass", m->bodies[i].inertia[0]);
        cJSON_AddItemToArray(bodies, b);
    }
    cJSON *frames = cJSON_AddArrayToObject(o, "frames");
    for (size_t i = 0; i < m->n_frames; i++)
        cJSON_AddItemToArray(frames, cJSON_CreateString(m->frames[i].name));
    cJSON *ft = cJSON_AddArrayToObject(o, "ft_sensors");
    for (size_t i = 0; i < m->n_ft; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", m->ft[i].name);
        cJSON_AddStringToObject(s, "joint", m->ft[i].joint_name);
        cJSON_AddStringToObject(s, "frame", m->frames[m->ft[i].frame].name);
        cJSON_AddStringToObject(s, "direction", m->ft[i].sign > 0 ? "parent_to_child" : "child_to_parent");
        cJSON_AddItemToArray(ft, s);
    }
    cJSON *imu = cJSON_AddArrayToObject(o, "imu_sensors");
    for (size_t i = 0; i < m->n_imu; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", m->imu[i].name);
        cJSON_AddStringToObject(s, "type", m->imu[i].kind == RB_SENSOR_ACCELEROMETER ? "accelerometer" : "gyroscope");
        cJSON_AddStringToObject(s, "frame", m->frames[m->imu[i].frame].name);
        cJSON_AddItemToArray(imu, s);
    }
    cJSON *subs = cJSON_AddArrayToObject(o, "submodels");
    for (size_t k = 0; k < sm->n_sub; k++) {
        const rb_submodel *sub = &sm->sub[k];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "base", m->bodies[sub->base].name);
        cJSON_AddNumberToObject(j, "mass", sub->mass);
        cJSON *dofs = cJSON_AddArrayToObject(j, "joints");
        for (size_t i = 0; i < sub->n_dofs; i++)
            cJSON_AddItemToArray(dofs, cJSON_CreateString(m->dof_names[sub->dofs[i]]));
        cJSON *fts = cJSON_AddArrayToObject(j, "ft_sensors");
        for (size_t i = 0; i < sub->n_ft; i++) {
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "name", m->ft[sub->ft[i].ft].name);
            cJSON_AddNumberToObject(f, "sign", sub->ft[i].sign);
            cJSON_AddItemToArray(fts, f);
        }
        cJSON_AddItemToArray(subs, j);
    }
    return cli_print_json(o);
}

static int model_info(int argc, char **argv)
{
    static const struct option options[] = {{"joints", required_argument, NULL, 'j'},
                                            {"base", required_argument, NULL, 'b'},
                                            {"floating", no_argument, NULL, 'f'},
                                            {"json", no_argument, NULL, 'J'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *joints = NULL;
    bool json = false;
    rb_model_opts opts = {0};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (opt) {
        case 'j': joints = optarg; break;
        case 'b': opts.base = optarg; break;
        case 'f': opts.floating = true; break;
        case 'J': json = true; break;
        case 'h': fputs(MODEL_HELP, stdout); return EXIT_OK;
        case ':': return cli_usage_error("model info", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("model info", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("model info", "expected one URDF, got %d", argc - optind);
    rb_err err;
    rb_model *m = NULL;
    int rc = load_model(argv[optind], joints, &opts, &m, &err);
    rb_submodels *sm = NULL;
    if (rc == RB_OK)
        rc = rb_submodels_build(m, NULL, 0, &sm, &err);
    if (rc != RB_OK) {
        rb_model_free(m);
        return cli_fail(&err);
    }
    if (json) {
        rc = print_json(m, sm);
    } else {
        print_text(m);
        print_submodels(m, sm);
    }
    rb_submodels_free(sm);
    rb_model_free(m);
    return rc;
}

/* ---- model eval ----------------------------------------------------------------------------------- */
enum { NEED_DQ = 1, NEED_DDQ = 2, NEED_TAU = 4, NEED_FRAME = 8, ANY_FRAME = 16 };

typedef enum eval_op { OP_FK, OP_JAC, OP_DJDQ, OP_M, OP_H, OP_G, OP_RNEA, OP_FD, OP_COM, OP_CMM, OP_Y } eval_op;

static const struct {
    const char *name;
    eval_op op;
    unsigned needs;
} OPS[] = {{"forward-kinematics", OP_FK, ANY_FRAME},
           {"jacobian", OP_JAC, NEED_FRAME},
           {"djdq", OP_DJDQ, NEED_DQ | NEED_FRAME},
           {"mass-matrix", OP_M, 0},
           {"generalised-forces", OP_H, NEED_DQ},
           {"gravity", OP_G, 0},
           {"rnea", OP_RNEA, NEED_DQ | NEED_DDQ},
           {"forward-dynamics", OP_FD, NEED_DQ | NEED_TAU},
           {"com", OP_COM, 0},
           {"centroidal-momentum", OP_CMM, NEED_DQ},
           {"regressor", OP_Y, NEED_DQ | NEED_DDQ}};

typedef struct eval_ctx {
    const char *states_path;
    rb_model *model;
    rb_dyn *ws;
    eval_op op;
    rb_dyn_rep rep;
    long frame;     /* -1: every frame (forward-kinematics only) */
    size_t N;       /* states */
    const rb_array *q, *dq, *ddq, *tau, *base_pose, *base_twist, *base_acc;
    double *qv, *nu, *nu_dot, *tau_v; /* one state, nq / nv sized */
} eval_ctx;

/* The states array `name` as N x cols (N from q); NULL with an error if required and absent. */
static int state_array(eval_ctx *c, const rb_arrays *states, const char *name, size_t cols, bool required,
                       const rb_array **out, rb_err *err)
{
    const rb_array *a = rb_arrays_find(states, name);
    *out = a;
    if (!a)
        return required ? rb_err_set(err, RB_ENOTFOUND, "%s: no array %s (needed here)", c->states_path, name)
                        : RB_OK;
    /* A single state saved as a row vector reads back as a vector (io.h): take it as 1 x cols. */
    bool one_row = a->ndim == 1 && cols > 1 && a->dims[0] == cols && c->N <= 1;
    size_t rows = one_row ? 1 : c->N ? c->N : a->dims[0];
    if (one_row)
        ;
    else if (a->ndim > 2 || a->dims[0] != rows || a->dims[1] != cols)
        return rb_err_set(err, RB_EDIM, "%s: %s is %zu x %zu, expected %zu x %zu", c->states_path, name, a->dims[0],
                          a->dims[1], rows, cols);
    c->N = rows;
    return RB_OK;
}

static int load_states(eval_ctx *c, const rb_arrays *states, unsigned needs, rb_err *err)
{
    const rb_model *m = c->model;
    bool fl = m->floating;
    int rc = state_array(c, states, "q", m->n_dofs, true, &c->q, err);
    if (!rc && fl)
        rc = state_array(c, states, "base_pose", 7, true, &c->base_pose, err);
    if (!rc && (needs & NEED_DQ))
        rc = state_array(c, states, "dq", m->n_dofs, true, &c->dq, err);
    if (!rc && (needs & NEED_DQ) && fl)
        rc = state_array(c, states, "base_twist", 6, true, &c->base_twist, err);
    if (!rc && (needs & NEED_DDQ))
        rc = state_array(c, states, "ddq", m->n_dofs, true, &c->ddq, err);
    if (!rc && (needs & NEED_DDQ) && fl)
        rc = state_array(c, states, "base_acc", 6, true, &c->base_acc, err);
    if (!rc && (needs & NEED_TAU))
        rc = state_array(c, states, "tau", m->nv, true, &c->tau, err);
    const rb_array *g = NULL;
    if (!rc)
        rc = state_array(c, states, "gravity", 3, false, &g, err);
    for (size_t i = 1; !rc && g && i < g->dims[0]; i++)
        if (memcmp(g->data, g->data + 3 * i, 3 * sizeof(double)) != 0)
            rc = rb_err_set(err, RB_EINPUT, "%s: gravity: row %zu differs from row 0 (one gravity per file)",
                            c->states_path, i);
    if (!rc && g && g->dims[0])
        memcpy(c->model->gravity, g->data, sizeof c->model->gravity);
    return rc;
}

/* State i into qv, nu, nu_dot, tau_v. */
static void fill_state(eval_ctx *c, size_t i)
{
    const rb_model *m = c->model;
    size_t n = m->n_dofs, nb_q = m->floating ? 7 : 0, nb_v = m->floating ? 6 : 0;
    if (m->floating)
        memcpy(c->qv, c->base_pose->data + 7 * i, 7 * sizeof(double));
    memcpy(c->qv + nb_q, c->q->data + n * i, n * sizeof(double));
    if (c->dq) {
        if (m->floating)
            memcpy(c->nu, c->base_twist->data + 6 * i, 6 * sizeof(double));
        memcpy(c->nu + nb_v, c->dq->data + n * i, n * sizeof(double));
    }
    if (c->ddq) {
        if (m->floating)
            memcpy(c->nu_dot, c->base_acc->data + 6 * i, 6 * sizeof(double));
        memcpy(c->nu_dot + nb_v, c->ddq->data + n * i, n * sizeof(double));
    }
    if (c->tau)
        memcpy(c->tau_v, c->tau->data + m->nv * i, m->nv * sizeof(double));
}

static void pose7(const rb_xform *X, double *out)
{
    memcpy(out, X->p, 3 * sizeof(double));
    rb_quat_from_m3(X->R, out + 3);
}

/* Evaluate state i into `out` (the row of the result array; `extra` the second result, if any). */
static int eval_row(eval_ctx *c, double *out, double *extra, rb_err *err)
{
    const rb_model *m = c->model;
    rb_dyn *ws = c->ws;
    const double *nu = c->dq ? c->nu : NULL;
    rb_mat J;
    rb_xform X;
    int rc = RB_OK;
    switch (c->op) {
    case OP_FK:
        rc = rb_dyn_kinematics(m, ws, c->qv, NULL, NULL, err);
        if (c->frame >= 0) {
            if (!rc && !(rc = rb_dyn_frame_pose(m, ws, (size_t)c->frame, &X, err)))
                pose7(&X, out);
            break;
        }
        for (size_t f = 0; !rc && f < m->n_frames; f++)
            if (!(rc = rb_dyn_frame_pose(m, ws, f, &X, err)))
                pose7(&X, out + 7 * f);
        break;
    case OP_JAC:
        J = rb_mat_view(out, 6, m->nv, m->nv);
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, NULL, NULL, err)))
            rc = rb_dyn_frame_jacobian(m, ws, (size_t)c->frame, c->rep, &J, err);
        break;
    case OP_DJDQ:
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, nu, NULL, err)))
            rc = rb_dyn_frame_jdot_nu(m, ws, (size_t)c->frame, c->rep, out, err);
        break;
    case OP_M:
        J = rb_mat_view(out, m->nv, m->nv, m->nv);
        rc = rb_dyn_mass_matrix(m, ws, c->qv, &J, err);
        break;
    case OP_H: rc = rb_dyn_bias_forces(m, ws, c->qv, nu, out, err); break;
    case OP_G: rc = rb_dyn_gravity_forces(m, ws, c->qv, out, err); break;
    case OP_RNEA: rc = rb_dyn_rnea(m, ws, c->qv, nu, c->nu_dot, NULL, 0, out, err); break;
    case OP_FD: rc = rb_dyn_aba(m, ws, c->qv, nu, c->tau_v, NULL, 0, out, err); break;
    case OP_COM:
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, NULL, NULL, err)))
            rc = rb_dyn_com(m, ws, out, err);
        break;
    case OP_CMM:
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, nu, NULL, err)))
            rc = rb_dyn_centroidal_momentum(m, ws, out, extra, err);
        break;
    case OP_Y:
        J = rb_mat_view(out, m->nv, 10 * m->n_bodies, 10 * m->n_bodies);
        rc = rb_dyn_regressor(m, ws, c->qv, nu, c->nu_dot, &J, err);
        break;
    }
    return rc;
}

/* The result arrays of an op: name, dims (the first is N). */
static int add_results(eval_ctx *c, rb_arrays *res, rb_array **main, rb_array **extra, rb_err *err)
{
    const rb_model *m = c->model;
    size_t N = c->N, nv = m->nv;
    struct {
        const char *name;
        size_t ndim, d1, d2;
    } spec = {NULL, 2, 0, 1};
    switch (c->op) {
    case OP_FK:
        spec.name = "pose";
        if (c->frame >= 0)
            spec.d1 = 7;
        else
            spec.ndim = 3, spec.d1 = m->n_frames, spec.d2 = 7;
        break;
    case OP_JAC: spec.name = "J", spec.ndim = 3, spec.d1 = 6, spec.d2 = nv; break;
    case OP_DJDQ: spec.name = "djdq", spec.d1 = 6; break;
    case OP_M: spec.name = "M", spec.ndim = 3, spec.d1 = nv, spec.d2 = nv; break;
    case OP_H: spec.name = "h", spec.d1 = nv; break;
    case OP_G: spec.name = "g", spec.d1 = nv; break;
    case OP_RNEA: spec.name = "tau", spec.d1 = nv; break;
    case OP_FD: spec.name = "ddq", spec.d1 = nv; break;
    case OP_COM: spec.name = "com", spec.d1 = 3; break;
    case OP_CMM: spec.name = "centroidal_momentum", spec.d1 = 6; break;
    case OP_Y: spec.name = "Y", spec.ndim = 3, spec.d1 = nv, spec.d2 = 10 * m->n_bodies; break;
    }
    size_t dims[3] = {N, spec.d1, spec.d2};
    int rc = rb_arrays_add(res, spec.name, spec.ndim, dims, main, err);
    *extra = NULL;
    if (!rc && c->op == OP_CMM) {
        size_t cdims[3] = {N, 3, 1};
        rc = rb_arrays_add(res, "com", 2, cdims, extra, err);
        *main = (rb_array *)rb_arrays_find(res, "centroidal_momentum"); /* add may have moved it */
    }
    return rc;
}

static int set_provenance(const eval_ctx *c, rb_arrays *res, const char *op_name, rb_err *err)
{
    const rb_model *m = c->model;
    char hex[65];
    int rc = rb_sha256_file(c->states_path, hex, err);
    if (!rc)
        rc = rb_arrays_set_attr(res, "roboest_version", RB_VERSION, err);
    if (!rc)
        rc = rb_arrays_set_attr(res, "model", m->source, err);
    if (!rc)
        rc = rb_arrays_set_attr(res, "op", op_name, err);
    if (!rc)
        rc = rb_arrays_set_attr(res, "input", rb_path_basename(c->states_path), err);
    if (!rc)
        rc = rb_arrays_set_attr(res, "input_sha256", hex, err);
    /* the order of every joint-space axis, and of the frames in a whole-model pose */
    size_t len = 1;
    for (size_t i = 0; i < m->n_dofs; i++)
        len += strlen(m->dof_names[i]) + 1;
    for (size_t f = 0; f < m->n_frames; f++)
        len += strlen(m->frames[f].name) + 1;
    char *list = rb_malloc(len);
    if (!rc && !list)
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc) {
        list[0] = '\0';
        for (size_t i = 0; i < m->n_dofs; i++)
            strcat(strcat(list, i ? "," : ""), m->dof_names[i]);
        rc = rb_arrays_set_attr(res, "joints", list, err);
    }
    if (!rc && c->op == OP_FK && c->frame < 0) {
        list[0] = '\0';
        for (size_t f = 0; f < m->n_frames; f++)
            strcat(strcat(list, f ? "," : ""), m->frames[f].name);
        rc = rb_arrays_set_attr(res, "frames", list, err);
    }
    rb_free(list);
    return rc;
}

static int run_eval(eval_ctx *c, const char *op_name, unsigned needs, const char *states_path, const char *out,
                    const rb_write_opts *wopts, rb_err *err)
{
    rb_arrays *states = NULL, *res = NULL;
    rb_array *main = NULL, *extra = NULL;
    const rb_model *m = c->model;
    c->states_path = states_path;
    int rc = rb_arrays_read(states_path, &states, err);
    if (!rc)
        rc = load_states(c, states, needs, err);
    if (!rc)
        rc = rb_dyn_alloc(m, &c->ws, err);
    c->qv = rb_calloc(m->nq, sizeof(double));
    c->nu = rb_calloc(m->nv, sizeof(double));
    c->nu_dot = rb_calloc(m->nv, sizeof(double));
    c->tau_v = rb_calloc(m->nv, sizeof(double));
    if (!rc && (!c->qv || !c->nu || !c->nu_dot || !c->tau_v))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc)
        rc = rb_arrays_new(&res, err);
    if (!rc)
        rc = add_results(c, res, &main, &extra, err);
    size_t row = main ? main->dims[1] * main->dims[2] : 0;
    for (size_t i = 0; !rc && i < c->N; i++) {
        fill_state(c, i);
        rc = eval_row(c, main->data + row * i, extra ? extra->data + 3 * i : NULL, err);
        if (rc)
            rb_err_prefix(err, rc, "%s: state %zu: %s: ", states_path, i, op_name);
    }
    if (!rc)
        rc = set_provenance(c, res, op_name, err);
    if (!rc)
        rc = rb_arrays_write(res, out, wopts, err);
    rb_arrays_free(states);
    rb_arrays_free(res);
    rb_dyn_free(c->ws);
    rb_free(c->qv);
    rb_free(c->nu);
    rb_free(c->nu_dot);
    rb_free(c->tau_v);
    return rc;
}

static int model_eval(int argc, char **argv)
{
    static const struct option options[] = {{"joints", required_argument, NULL, 'j'},
                                            {"base", required_argument, NULL, 'b'},
                                            {"floating", no_argument, NULL, 'f'},
                                            {"op", required_argument, NULL, 'O'},
                                            {"states", required_argument, NULL, 's'},
                                            {"output", required_argument, NULL, 'o'},
                                            {"frame", required_argument, NULL, 'r'},
                                            {"rep", required_argument, NULL, 'R'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *joints = NULL, *op_name = NULL, *states = NULL, *out = NULL, *frame = NULL, *rep = "mixed";
    rb_model_opts opts = {0};
    bool force = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
        switch (opt) {
        case 'j': joints = optarg; break;
        case 'b': opts.base = optarg; break;
        case 'f': opts.floating = true; break;
        case 'O': op_name = optarg; break;
        case 's': states = optarg; break;
        case 'o': out = optarg; break;
        case 'r': frame = optarg; break;
        case 'R': rep = optarg; break;
        case 'F': force = true; break;
        case 'h': fputs(MODEL_HELP, stdout); return EXIT_OK;
        case ':': return cli_usage_error("model eval", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("model eval", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("model eval", "expected one URDF, got %d", argc - optind);
    if (!op_name || !states || !out)
        return cli_usage_error("model eval", "--op, --states and -o are required");
    eval_ctx c = {0};
    c.frame = -1;
    unsigned needs = 0;
    size_t k = 0;
    for (; k < sizeof OPS / sizeof OPS[0] && strcmp(OPS[k].name, op_name) != 0; k++)
        ;
    if (k == sizeof OPS / sizeof OPS[0])
        return cli_usage_error("model eval", "unknown --op '%s'", op_name);
    c.op = OPS[k].op;
    needs = OPS[k].needs;
    if ((needs & NEED_FRAME) && !frame)
        return cli_usage_error("model eval", "--op %s needs --frame", op_name);
    if (frame && !(needs & (NEED_FRAME | ANY_FRAME)))
        return cli_usage_error("model eval", "--op %s takes no --frame", op_name);
    if (strcmp(rep, "body") == 0)
        c.rep = RB_DYN_BODY;
    else if (strcmp(rep, "mixed") == 0)
        c.rep = RB_DYN_MIXED;
    else if (strcmp(rep, "inertial") == 0)
        c.rep = RB_DYN_INERTIAL;
    else
        return cli_usage_error("model eval", "--rep is body, mixed or inertial, not '%s'", rep);
    rb_err err;
    rb_write_opts wopts = {RB_OUT_H5, force, NULL};
    if (rb_out_format_from_path(out, &wopts.format, &err) != RB_OK)
        return cli_usage_error("model eval", "%s", err.msg);

    int rc = load_model(argv[optind], joints, &opts, &c.model, &err);
    if (!rc && frame && (c.frame = rb_model_frame_index(c.model, frame)) < 0)
        rc = rb_err_set(&err, RB_ENOTFOUND, "%s: no frame %s", argv[optind], frame);
    if (!rc)
        rc = run_eval(&c, op_name, needs, states, out, &wopts, &err);
    rb_model_free(c.model);
    return rc == RB_OK ? EXIT_OK : cli_fail(&err);
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2)
            return cli_usage_error("model", "missing subcommand (info or eval)");
        fputs(MODEL_HELP, stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "info") == 0)
        return model_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "eval") == 0)
        return model_eval(argc - 1, argv + 1);
    return cli_usage_error("model", "unknown subcommand '%s'", argv[1]);
}
