/* roboest train-friction: fit the friction network (and analytic friction models) on logs (the library does
 * the work; see roboest/training.h, "friction training"). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "roboest/training.h"

static const char *const TRAIN_FRICTION_HELP =
    "Usage: roboest train-friction SPEC.json [LOG...] [-o NET.json] [--fit-analytic MODEL[,MODEL...]]\n"
    "                              [--fit-offset] [--force] [-q]\n"
    "\n"
    "Trains the physics-informed friction network of the joint-torque paper (eq. 4) per joint on the logs the\n"
    "spec names, in C, and writes the networks to NET.json for the friction_pinn stage. Per joint:\n"
    "  - friction target tau_F = k_t R I_m - tau_j on the training clock (tau_j from a torque channel: the\n"
    "    truth of a simulated log, or an estimate such as rnea_torque's written by 'roboest run'), or the\n"
    "    measured friction itself when the spec names a \"friction\" channel;\n"
    "  - inputs: the last H motor velocities and H joint velocities (oldest first), from channels or from\n"
    "    positions through the kf_derivative stage's filter, as the spec says;\n"
    "  - the Stribeck-Coulomb-viscous model fitted first (non-negative parameters): the physics term;\n"
    "  - network Linear-ReLU-Dropout-Linear-ReLU-Dropout-Linear(1), inputs normalized by mean and\n"
    "    inter-quartile range, loss (1 - lambda) MSE(data) + lambda MSE(SCV), Adam, mini-batches,\n"
    "    validation on every fifth block of samples (20 %), early stopping on the validation loss, the best\n"
    "    epoch's weights kept (printed: which epoch of how many; a warning when it is the first); seeded and\n"
    "    deterministic.\n"
    "The network's rows are the samples with a full history of H samples (the first H - 1 of each log have\n"
    "none). It prints per joint the RMSE of zero friction, of the SCV model, and of the network on the\n"
    "training and validation rows (N m). NET.json appears only when every joint trained.\n"
    "\n"
    "  SPEC.json                 logs, joints, channels, k_t, R, torque source, network options (keys in\n"
    "                            configs/README.md, \"Friction training specs\")\n"
    "  LOG...                    logs to train on instead of the spec's \"logs\" (one session each, paths\n"
    "                            relative to the working folder; the torque channel must be in each log)\n"
    "  -o, --output NET.json     the network file to write (needed to train the networks)\n"
    "  --fit-analytic MODELS     also fit coulomb_viscous, scv and/or tanh6 by least squares on every sample\n"
    "                            of every log (no history needed: none dropped) and print friction_model\n"
    "                            stage parameters (without -o: only these fits, and the motor velocity\n"
    "                            channel is not needed); tanh6 is started from the coulomb_viscous fit it\n"
    "                            contains, so its RMSE is never above that fit's. A log's start-up\n"
    "                            transient is in the fit: the spec's \"window\" leaves it out\n"
    "  --fit-offset              the analytic fits get a constant term (stage parameter \"offset\"; spec key\n"
    "                            analytic_offset)\n"
    "  --force                   overwrite NET.json\n"
    "  -q, --quiet               no progress bar (it is shown only when stderr is a terminal)\n"
    "  -h, --help                this help\n"
    "\n" CLI_EXIT_CODES_HELP;

/* ---- progress ------------------------------------------------------------------------------------- */
typedef struct bar {
    bool enabled;
    const rb_friction_spec *spec;
} bar;

static int draw(void *user, size_t joint, size_t epoch, size_t epochs, double train, double val)
{
    const bar *b = user;
    if (!b->enabled)
        return 0;
    enum { WIDTH = 24 };
    char cells[WIDTH + 1];
    int filled = (int)((double)epoch / (double)epochs * WIDTH);
    for (int i = 0; i < WIDTH; i++)
        cells[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
    cells[WIDTH] = '\0';
    fprintf(stderr, "\r\033[Ktrain-friction %s (%zu/%zu) [%s] epoch %zu/%zu, loss %.4g, validation %.4g N m",
            b->spec->joints[joint], joint + 1, b->spec->n_joints, cells, epoch, epochs, train, val);
    fflush(stderr);
    return 0;
}

/* ---- report ---------------------------------------------------------------------------------------- */
static void print_table(const rb_friction_spec *spec, const rb_friction_train_result *r)
{
    printf("friction training: %zu joint(s), %zu log(s), sample period %.6g s, H %zu\n", spec->n_joints, spec->n_logs,
           r->sample_period, spec->H);
    if (spec->friction.channel)
        printf("RMSE in N m against the measured friction tau_F (%s)\n\n", spec->friction.channel);
    else
        printf("RMSE in N m against tau_F = k_t R I_m - tau_j (%s)\n\n", spec->torque.channel);
    printf("%-20s %9s %11s %11s", "joint", "samples", "zero", "SCV");
    if (r->file)
        printf(" %11s %11s %13s %s", "train", "validation", "SCV (valid.)", "epochs (best)");
    putchar('\n');
    for (size_t j = 0; j < spec->n_joints; j++) {
        printf("%-20s %9zu %11.4g %11.4g", spec->joints[j], r->n_rows[j], r->rms_target[j], r->scv_rmse[j]);
        if (r->file) {
            const rb_friction_net_train_result *t = &r->file->joints[j].result;
            printf(" %11.4g %11.4g %13.4g %zu (%zu)", t->rmse_train, t->rmse_val, t->rmse_physics_val, t->epochs_run,
                   t->best_epoch);
        }
        putchar('\n');
    }
    for (size_t j = 0; r->file && j < spec->n_joints; j++) {
        char note[256];
        bool first = rb_friction_net_early_stopping(&r->file->joints[j].result, note, sizeof note);
        printf("%s%-20s early stopping %s\n", j ? "" : "\n", spec->joints[j], note);
        if (first)
            fprintf(stderr, "roboest: warning: train-friction: joint %s: early stopping %s\n", spec->joints[j], note);
    }
}

/* The parameters of a fitted model in their config array order. */
static void model_params(const rb_friction_model *m, double p[RB_FRICTION_MAX_PARAMS])
{
    if (m->kind == RB_FRICTION_CV) {
        const double q[] = {m->cv.F_c, m->cv.F_v, m->cv.v_eps};
        memcpy(p, q, sizeof q);
    } else if (m->kind == RB_FRICTION_SCV) {
        const double q[] = {m->scv.F_c, m->scv.F_s, m->scv.F_v, m->scv.v_s, m->scv.v_eps};
        memcpy(p, q, sizeof q);
    } else {
        const rb_friction_tanh6 *g = &m->tanh6;
        const double q[] = {g->g1, g->g2, g->g3, g->g4, g->g5, g->g6};
        memcpy(p, q, sizeof q);
    }
}

/* One friction_model "params" object for model a over every joint. */
static void print_snippet(const rb_friction_spec *spec, const rb_friction_train_result *r, size_t a)
{
    rb_friction_kind kind = r->analytic_kind[a];
    size_t np = rb_friction_param_count(kind, NULL);
    printf("\n%s: RMSE", rb_friction_kind_name(kind));
    for (size_t j = 0; j < spec->n_joints; j++)
        printf("%s %s %.4g", j ? "," : "", spec->joints[j], r->analytic_rmse[a * spec->n_joints + j]);
    printf(" N m\n  \"params\": {\"model\": \"%s\"", rb_friction_kind_name(kind));
    for (size_t i = 0; i < np; i++) {
        printf(", \"%s\": [", rb_friction_param_name(kind, i));
        for (size_t j = 0; j < spec->n_joints; j++) {
            const rb_friction_model *m = &r->analytic[a * spec->n_joints + j];
            double p[RB_FRICTION_MAX_PARAMS];
            model_params(m, p);
            char buf[32];
            printf("%s%s", j ? ", " : "", rb_format_double(p[i], buf));
        }
        putchar(']');
    }
    for (size_t j = 0; spec->analytic_offset && j < spec->n_joints; j++) {
        char buf[32];
        printf("%s%s", j ? ", " : ", \"offset\": [", rb_format_double(r->analytic_offset[a * spec->n_joints + j], buf));
    }
    printf("%s}\n", spec->analytic_offset ? "]" : "");
}

static void print_scv(const rb_friction_spec *spec, const rb_friction_train_result *r)
{
    printf("\nphysics model (scv, fitted on the training samples):\n");
    for (size_t j = 0; j < spec->n_joints; j++) {
        const rb_friction_scv *s = &r->scv[j].scv;
        printf("  %-20s F_c %.4g, F_s %.4g, F_v %.4g, v_s %.4g, v_eps %.4g\n", spec->joints[j], s->F_c, s->F_s, s->F_v,
               s->v_s, s->v_eps);
    }
}

/* ---- options ---------------------------------------------------------------------------------------- */
static int add_models(const char *list, rb_friction_spec *spec)
{
    static const char *const names[] = {"coulomb_viscous", "scv", "tanh6"};
    static const rb_friction_kind kinds[] = {RB_FRICTION_CV, RB_FRICTION_SCV, RB_FRICTION_TANH6};
    char copy[256];
    if (strlen(list) >= sizeof copy)
        return cli_usage_error("train-friction", "--fit-analytic: list too long");
    strcpy(copy, list);
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < 3 && strcmp(tok, names[k]) != 0)
            k++;
        if (k == 3)
            return cli_usage_error("train-friction",
                                   "--fit-analytic: unknown model '%s' (coulomb_viscous, scv or tanh6)", tok);
        bool listed = false;
        for (size_t a = 0; a < spec->n_analytic; a++)
            listed = listed || spec->analytic[a] == kinds[k];
        if (!listed)
            spec->analytic[spec->n_analytic++] = kinds[k];
    }
    return CLI_EXIT_OK;
}

/* Fail before the (long) training when the output cannot be written. */
static int check_output(const char *path, bool force, rb_err *err)
{
    struct stat st;
    if (!force && stat(path, &st) == 0)
        return rb_err_set(err, RB_EEXISTS, "%s: exists (use --force to overwrite)", path);
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return rb_err_set(err, RB_EIO, "%s: folder %s does not exist", path, dir);
    }
    return RB_OK;
}

int cmd_train_friction(int argc, char **argv)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"fit-analytic", required_argument, NULL, 'a'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"fit-offset", no_argument, NULL, 'c'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *cmd = "train-friction", *out = NULL, *models = NULL;
    bool force = false, quiet = false, offset = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case 'a': models = optarg; break;
        case 'F': force = true; break;
        case 'c': offset = true; break;
        case 'q': quiet = true; break;
        case 'h': fputs(TRAIN_FRICTION_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "missing SPEC.json");
    rb_err err;
    rb_friction_spec *spec = NULL;
    rb_friction_train_result *res = NULL;
    int rc = rb_friction_spec_load(argv[optind], &spec, &err);
    if (rc == RB_OK && optind + 1 < argc)
        rc = rb_friction_spec_set_logs(spec, (const char *const *)argv + optind + 1, (size_t)(argc - optind - 1), &err);
    if (rc) {
        rb_friction_spec_free(spec);
        return cli_fail(&err);
    }
    int status = models ? add_models(models, spec) : CLI_EXIT_OK;
    spec->analytic_offset = spec->analytic_offset || offset;
    if (status == CLI_EXIT_OK && !out && spec->n_analytic == 0)
        status = cli_usage_error(cmd, "nothing to do: give -o NET.json to train the networks, or --fit-analytic");
    if (status != CLI_EXIT_OK) {
        rb_friction_spec_free(spec);
        return status;
    }
    if (out)
        rc = check_output(out, force, &err);
    bar b = {!quiet && isatty(STDERR_FILENO), spec};
    rb_friction_train_opts o = {.network = out != NULL, .progress = draw, .user = &b};
    if (rc == RB_OK)
        rc = rb_friction_train(spec, &o, &res, &err);
    if (b.enabled) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    if (rc == RB_OK && out)
        rc = rb_friction_net_file_write(res->file, out, force, &err);
    if (rc == RB_OK) {
        print_table(spec, res);
        print_scv(spec, res);
        if (res->n_analytic)
            printf("\nfriction_model stage parameters (least squares on all %zu samples; paste into the stage):\n",
                   res->n_samples);
        for (size_t a = 0; a < res->n_analytic; a++)
            print_snippet(spec, res, a);
        if (out)
            printf("\nwrote %s (load it with a friction_pinn stage: \"network\" is relative to the pipeline "
                   "file's folder)\n",
                   out);
    }
    rb_friction_train_result_free(res);
    rb_friction_spec_free(spec);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
