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
    "replaces the model's (0, 0, -9.81). base_pose, base_twist or base_acc without --floating is an\n"
    "input error (exit 3); a non-finite value in an array the op reads is a numeric failure (exit 4)\n"
    "naming the array, the state (row, from 0) and the element. Representations: body = the frame's\n"
    "axes about its origin, mixed = world axes about the frame origin (default), inertial = world axes\n"
    "about the world origin.\n"
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
        printf("  %3zu %-28s %-9s body %-24s limits [%g, %g]\n", i, m->dof_names[i], joint_type_name(b->type), b->name,
               m->dof_lower[i], m->dof_upper[i]);
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
        cJSON_AddItemToObject(b, "parent",
                              m->bodies[i].parent >= 0 ? cJSON_CreateString(m->bodies[m->bodies[i].parent].name)
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
    static const struct option options[] = {
        {"joints", required_argument, NULL, 'j'}, {"base", required_argument, NULL, 'b'},
        {"floating", no_argument, NULL, 'f'},     {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
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
        case 'h': fputs(MODEL_HELP, stdout); return CLI_EXIT_OK;
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
/* Read the states, evaluate (the library's batch engine) and write the results through a temporary file. */
static int run_eval(const rb_model *m, rb_dyn_eval_op op, rb_dyn_eval_opts *eopts, const char *states_path,
                    const char *out, const rb_write_opts *wopts, rb_err *err)
{
    rb_arrays *states = NULL, *res = NULL;
    char hex[65];
    int rc = rb_arrays_read(states_path, &states, err);
    if (!rc)
        rc = rb_sha256_file(states_path, hex, err);
    eopts->states_name = states_path;
    eopts->states_sha256 = hex;
    if (!rc)
        rc = rb_dyn_eval(m, op, states, eopts, &res, err);
    if (!rc)
        rc = rb_arrays_write(res, out, wopts, err);
    rb_arrays_free(states);
    rb_arrays_free(res);
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
        case 'h': fputs(MODEL_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error("model eval", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("model eval", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("model eval", "expected one URDF, got %d", argc - optind);
    if (!op_name || !states || !out)
        return cli_usage_error("model eval", "--op, --states and -o are required");
    int op = rb_dyn_eval_op_from_name(op_name);
    if (op < 0)
        return cli_usage_error("model eval", "unknown --op '%s'", op_name);
    unsigned needs = rb_dyn_eval_op_needs((rb_dyn_eval_op)op);
    if ((needs & RB_DYN_EVAL_NEEDS_FRAME) && !frame)
        return cli_usage_error("model eval", "--op %s needs --frame", op_name);
    if (frame && !(needs & RB_DYN_EVAL_TAKES_FRAME))
        return cli_usage_error("model eval", "--op %s takes no --frame", op_name);
    rb_dyn_eval_opts eopts = {-1, RB_DYN_MIXED, NULL, NULL};
    if (strcmp(rep, "body") == 0)
        eopts.rep = RB_DYN_BODY;
    else if (strcmp(rep, "mixed") == 0)
        eopts.rep = RB_DYN_MIXED;
    else if (strcmp(rep, "inertial") == 0)
        eopts.rep = RB_DYN_INERTIAL;
    else
        return cli_usage_error("model eval", "--rep is body, mixed or inertial, not '%s'", rep);
    rb_err err;
    rb_write_opts wopts = {RB_OUT_H5, force, NULL};
    if (rb_out_format_from_path(out, &wopts.format, &err) != RB_OK)
        return cli_usage_error("model eval", "%s", err.msg);

    rb_model *m = NULL;
    int rc = load_model(argv[optind], joints, &opts, &m, &err);
    if (!rc && frame && (eopts.frame = rb_model_frame_index(m, frame)) < 0)
        rc = rb_err_set(&err, RB_ENOTFOUND, "%s: no frame %s", argv[optind], frame);
    if (!rc)
        rc = run_eval(m, (rb_dyn_eval_op)op, &eopts, states, out, &wopts, &err);
    rb_model_free(m);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2)
            return cli_usage_error("model", "missing subcommand (info or eval)");
        fputs(MODEL_HELP, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "info") == 0)
        return model_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "eval") == 0)
        return model_eval(argc - 1, argv + 1);
    return cli_usage_error("model", "unknown subcommand '%s'", argv[1]);
}
