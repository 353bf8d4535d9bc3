/* roboest model: whole-body model queries (info now; eval with the dynamics core). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "roboest/model.h"

static const char *const MODEL_HELP =
    "Usage: roboest model info URDF [--joints LIST] [--base LINK] [--floating] [--json]\n"
    "\n"
    "Loads a URDF model as roboest computes on it and describes it: bodies (URDF links joined by\n"
    "fixed joints are merged, except across six-axis force/torque sensor joints), movable joints in\n"
    "the order of every per-joint vector, frames, sensors and total mass.\n"
    "\n"
    "  --joints LIST   comma-separated joint list: the movable joints kept, in this order; every other\n"
    "                  movable joint is locked at zero and merged (default: all, URDF order)\n"
    "  --base LINK     base link (default: the URDF root)\n"
    "  --floating      floating base (6 more velocity coordinates: body-fixed twist, linear first)\n"
    "  --json          one JSON object instead of text\n"
    "  -h, --help      this help\n"
    "\n" CLI_EXIT_CODES_HELP;

/* Split "a,b,c" into a NULL-terminated array of pointers into a copy (both freed by the caller). */
static char **split_list(const char *text, char **copy, size_t *n)
{
    *copy = rb_strdup(text);
    size_t count = 1;
    for (const char *p = text; *p; p++)
        count += *p == ',';
    char **items = rb_calloc(count + 1, sizeof *items);
    if (!*copy || !items) {
        rb_free(items);
        return NULL;
    }
    *n = 0;
    for (char *tok = strtok(*copy, ","); tok; tok = strtok(NULL, ","))
        items[(*n)++] = tok;
    return items;
}

static const char *joint_type_name(rb_joint_type t)
{
    return t == RB_JOINT_REVOLUTE ? "revolute" : t == RB_JOINT_PRISMATIC ? "prismatic" : "fixed";
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

static int print_json(const rb_model *m)
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
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) {
        fputs("roboest: out of memory\n", stderr);
        return EXIT_INTERNAL;
    }
    puts(text);
    cJSON_free(text);
    return EXIT_OK;
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
    char *copy = NULL;
    char **list = NULL;
    if (joints) {
        list = split_list(joints, &copy, &opts.n_joints);
        if (!list) {
            rb_free(copy);
            fputs("roboest: out of memory\n", stderr);
            return EXIT_INTERNAL;
        }
        opts.joints = (const char *const *)list;
    }
    rb_err err;
    rb_model *m = NULL;
    int rc = rb_model_load_urdf(argv[optind], &opts, &m, &err);
    rb_free(list);
    rb_free(copy);
    if (rc != RB_OK)
        return cli_fail(&err);
    if (json)
        rc = print_json(m);
    else
        print_text(m);
    rb_model_free(m);
    return rc;
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2)
            return cli_usage_error("model", "missing subcommand (info)");
        fputs(MODEL_HELP, stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "info") == 0)
        return model_info(argc - 1, argv + 1);
    return cli_usage_error("model", "unknown subcommand '%s'", argv[1]);
}
