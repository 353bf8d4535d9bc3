/* friction_pinn: the trained friction network per joint on velocity histories (see pinn_doc below
 * and roboest/friction.h for the network and its file). */
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/friction.h"

typedef enum fill_mode { FILL_ZERO, FILL_MODEL, FILL_NAN } fill_mode;

/* One joint: its physics model and the two velocity histories (oldest first). */
typedef struct pinn_joint {
    rb_friction_model scv;
    size_t H, filled; /* filled: finite samples in a row, saturating at H */
    double *x;        /* 2 H: motor velocities, then joint velocities (the network's input layout) */
} pinn_joint;

/* Samples the block step evaluates at once (rb_friction_net_infer_forward_many reads the weights once per call):
 * the runner's whole block. */
enum { CHUNK = RB_STAGE_BLOCK };

typedef struct pinn {
    size_t n;
    fill_mode fill;
    pinn_joint *j;
    rb_friction_net_infer net; /* all joints' networks, evaluated in one pass */
    const double **x;          /* n: each joint's history, the networks' inputs */
    double *y;                 /* n: the networks' outputs */
    double **xb;               /* n: joint i's inputs for CHUNK samples (CHUNK x 2 H, sample-major) */
    double *yb;                /* CHUNK x n: the networks' outputs for them */
    bool *full;                /* CHUNK x n: joint i's history was full at that sample */
    double *seq;               /* 2 (H_max - 1 + CHUNK): a joint's motor, then joint velocities over a chunk */
    const char **units;        /* n, each the static "N m" */
} pinn;

static void pinn_destroy(void *state)
{
    pinn *s = state;
    if (!s)
        return;
    for (size_t i = 0; s->j && i < s->n; i++)
        rb_free(s->j[i].x);
    for (size_t i = 0; s->xb && i < s->n; i++)
        rb_free(s->xb[i]);
    rb_free(s->xb);
    rb_free(s->yb);
    rb_free(s->full);
    rb_free(s->seq);
    rb_free(s->j);
    rb_friction_net_infer_free(&s->net);
    rb_free(s->x);
    rb_free(s->y);
    rb_free(s->units);
    rb_free(s);
}

static char *network_path(const rb_stage_setup *setup)
{
    return rb_stage_file_path(setup->config_dir, rb_params_string(setup->params, "network"));
}

/* Element i's joint name: the `joints` parameter, else the joint_velocity element name. */
static const char *joint_name(const rb_stage_setup *setup, size_t i)
{
    const rb_param_value *joints = rb_params_get(setup->params, "joints");
    if (joints->count > 0) /* an empty array (--print-config's rendering of the default) is the default */
        return joints->strings[i];
    return setup->in[1].names ? setup->in[1].names[i] : NULL;
}

static int check_ports(const rb_stage_setup *setup, const char *path, const rb_friction_net_file *f, rb_err *err)
{
    size_t n = setup->in[1].width;
    const rb_param_value *joints = rb_params_get(setup->params, "joints");
    if (setup->in[0].width != n)
        return rb_err_set(err, RB_ECONFIG,
                          "stage %s: motor_velocity has %zu elements and joint_velocity %zu (one per "
                          "joint each)",
                          setup->id, setup->in[0].width, n);
    if (joints->count > 0 && joints->count != n)
        return rb_err_set(err, RB_ECONFIG, "stage %s: joints names %zu joints for %zu elements", setup->id,
                          joints->count, n);
    double dt = setup->dt, T = f->sample_period;
    if (!(fabs(dt - T) <= 0.02 * T))
        return rb_err_set(err, RB_ECONFIG,
                          "stage %s: %s was trained at a sample period of %g s, the pipeline's clock has %g s (the "
                          "histories would span another time: use a clock at %g Hz)",
                          setup->id, path, T, dt, 1 / T);
    return RB_OK;
}

/* Joint i from the file entry `e` (its network goes into the batch). */
static int make_joint(const rb_stage_setup *setup, const char *path, const rb_friction_net_joint *e, pinn_joint *j,
                      double **xb, rb_err *err)
{
    long long H = rb_params_integer(setup->params, "H");
    if (H > 0 && (size_t)H != e->H)
        return rb_err_set(err, RB_ECONFIG, "stage %s: %s: joint %s has H = %zu, the stage asks for H = %lld", setup->id,
                          path, e->joint, e->H, H);
    j->H = e->H;
    j->scv = e->scv;
    if (!(j->x = rb_calloc(2 * e->H, sizeof *j->x)) || !(*xb = rb_calloc(CHUNK * 2 * e->H, sizeof **xb)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

static int make_joints(const rb_stage_setup *setup, const char *path, const rb_friction_net_file *f, pinn *s,
                       rb_err *err)
{
    const rb_fnet **nets = rb_calloc(s->n ? s->n : 1, sizeof *nets);
    s->x = rb_calloc(s->n ? s->n : 1, sizeof *s->x);
    s->y = rb_calloc(s->n ? s->n : 1, sizeof *s->y);
    s->xb = rb_calloc(s->n ? s->n : 1, sizeof *s->xb);
    s->yb = rb_calloc(CHUNK * (s->n ? s->n : 1), sizeof *s->yb);
    s->full = rb_calloc(CHUNK * (s->n ? s->n : 1), sizeof *s->full);
    if (!nets || !s->x || !s->y || !s->xb || !s->yb || !s->full) {
        rb_free(nets);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    int rc = RB_OK;
    for (size_t i = 0; i < s->n && !rc; i++) {
        const char *name = joint_name(setup, i);
        const rb_friction_net_joint *e = rb_friction_net_file_find(f, name);
        if (!e) {
            char have[256] = "";
            for (size_t k = 0; k < f->n_joints && strlen(have) + strlen(f->joints[k].joint) + 3 < sizeof have; k++) {
                strcat(have, k ? ", " : "");
                strcat(have, f->joints[k].joint);
            }
            rc = rb_err_set(err, RB_ECONFIG, "stage %s: %s has no network for joint '%s' (it has: %s)%s", setup->id,
                            path, name ? name : "(unnamed element)", have,
                            rb_params_get(setup->params, "joints")->count ? "" : "; name them with \"joints\"");
            break;
        }
        nets[i] = &e->net;
        if (!(rc = make_joint(setup, path, e, &s->j[i], &s->xb[i], err)))
            s->x[i] = s->j[i].x;
    }
    size_t H = 0;
    for (size_t i = 0; !rc && i < s->n; i++)
        H = s->j[i].H > H ? s->j[i].H : H;
    if (!rc && !(s->seq = rb_calloc(2 * (H + CHUNK), sizeof *s->seq)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc && s->n)
        rc = rb_friction_net_infer_init(&s->net, nets, s->n, err);
    rb_free(nets);
    return rc;
}

static int pinn_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    char *path = network_path(setup);
    if (!path)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_friction_net_file *f = NULL;
    pinn *s = NULL;
    size_t n = setup->in[1].width;
    int rc = rb_friction_net_file_read(path, &f, err);
    if (rc) {
        rb_err_prefix(err, rc, "stage %s: ", setup->id);
        goto done;
    }
    if ((rc = check_ports(setup, path, f, err)))
        goto done;
    s = rb_calloc(1, sizeof *s);
    if (!s || !(s->j = rb_calloc(n ? n : 1, sizeof *s->j)) || !(s->units = rb_calloc(n ? n : 1, sizeof *s->units))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    s->n = n;
    const char *fill = rb_params_string(setup->params, "history_fill");
    s->fill = strcmp(fill, "model") == 0 ? FILL_MODEL : strcmp(fill, "nan") == 0 ? FILL_NAN : FILL_ZERO;
    if ((rc = make_joints(setup, path, f, s, err)))
        goto done;
    for (size_t i = 0; i < n; i++)
        s->units[i] = "N m";
    setup->out[0] = (rb_port){n, setup->in[1].names, s->units};
    *state = s;
    s = NULL;
done:
    pinn_destroy(s);
    rb_friction_net_file_free(f);
    rb_free(path);
    return rc;
}

/* Count the newest pair into the fill: a non-finite one restarts it. Returns whether the history is full. */
static bool count_fill(pinn_joint *j, double w, double v)
{
    if (!isfinite(w) || !isfinite(v))
        j->filled = 0;
    else if (j->filled < j->H)
        j->filled++;
    return j->filled == j->H;
}

/* Push the newest pair into the histories (oldest first). */
static void push(pinn_joint *j, double w, double v)
{
    size_t H = j->H;
    memmove(j->x, j->x + 1, (H - 1) * sizeof *j->x);
    memmove(j->x + H, j->x + H + 1, (H - 1) * sizeof *j->x);
    j->x[H - 1] = w;
    j->x[2 * H - 1] = v;
    count_fill(j, w, v);
}

/* Joint i's output: the network's y while its history is full, else the fill at joint velocity v. */
static double output(const pinn *s, size_t i, bool full, double y, double v)
{
    if (full)
        return y;
    if (s->fill == FILL_MODEL)
        return rb_friction_eval(&s->j[i].scv, v);
    return s->fill == FILL_NAN ? NAN : 0.0;
}

static int pinn_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k, (void)t, (void)err;
    pinn *s = state;
    bool any = false;
    for (size_t i = 0; i < s->n; i++) {
        push(&s->j[i], in[0][i], in[1][i]);
        any |= s->j[i].filled == s->j[i].H;
    }
    if (any) /* all joints in one pass (a filling joint's output is replaced below) */
        rb_friction_net_infer_forward(&s->net, s->x, s->y);
    for (size_t i = 0; i < s->n; i++)
        out[0][i] = output(s, i, s->j[i].filled == s->j[i].H, s->y[i], in[1][i]);
    return RB_OK;
}

/* count samples: CHUNK at a time, each joint's inputs appended to the last H - 1 of its history and every
 * sample's window (the history step() would hold) copied out, then the networks on them all in one call. */
static int pinn_step_block(void *state, size_t k0, size_t count, const double *t, const double *const *in,
                           const size_t *in_stride, double *const *out, const size_t *out_stride, size_t *failed,
                           rb_err *err)
{
    (void)k0, (void)t, (void)failed, (void)err;
    pinn *s = state;
    size_t n = s->n;
    for (size_t b0 = 0; b0 < count; b0 += CHUNK) {
        size_t cnt = count - b0 < CHUNK ? count - b0 : CHUNK;
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            pinn_joint *j = &s->j[i];
            size_t H = j->H;
            double *sw = s->seq, *sv = s->seq + H - 1 + CHUNK, *x = s->xb[i];
            memcpy(sw, j->x + 1, (H - 1) * sizeof *sw);
            memcpy(sv, j->x + H + 1, (H - 1) * sizeof *sv);
            for (size_t b = 0; b < cnt; b++, x += 2 * H) {
                double w = in[0][(b0 + b) * in_stride[0] + i], v = in[1][(b0 + b) * in_stride[1] + i];
                sw[H - 1 + b] = w, sv[H - 1 + b] = v;
                any |= s->full[b * n + i] = count_fill(j, w, v);
                memcpy(x, sw + b, H * sizeof *x);
                memcpy(x + H, sv + b, H * sizeof *x);
            }
            memcpy(j->x, sw + cnt - 1, H * sizeof *sw); /* the last window: what step() continues from */
            memcpy(j->x + H, sv + cnt - 1, H * sizeof *sv);
        }
        if (any)
            rb_friction_net_infer_forward_many(&s->net, (const double *const *)s->xb, cnt, s->yb);
        for (size_t b = 0; b < cnt; b++) {
            const double *v = in[1] + (b0 + b) * in_stride[1];
            double *o = out[0] + (b0 + b) * out_stride[0];
            for (size_t i = 0; i < n; i++)
                o[i] = output(s, i, s->full[b * n + i], s->yb[b * n + i], v[i]);
        }
    }
    return RB_OK;
}

static const char *const pinn_in[] = {"motor_velocity", "joint_velocity"};
static const char *const pinn_out[] = {"tau_F"};
static const char pinn_doc[] =
    "The physics-informed friction network of the joint-torque paper (eq. 4; `roboest/friction.h`, \"the\n"
    "friction network\") per joint, loaded from the file `roboest train-friction` writes\n"
    "([the friction network file](README.md#the-friction-network-file)). The stage keeps each joint's\n"
    "last H samples of both inputs and evaluates that joint's network on\n"
    "\n"
    "    [w_{k-H+1}, ..., w_k, v_{k-H+1}, ..., v_k]      (oldest first; w: motor, v: joint velocity)\n"
    "\n"
    "(`rb_friction_net_infer_forward`, all joints in one pass: the second layer in single precision). The runner\n"
    "steps it in blocks of 64 samples (`rb_friction_net_infer_forward_many`: each network over the block, its\n"
    "weights read once per 16 samples; the same bits as sample by sample): about 1.3 us per joint and sample\n"
    "at 40 inputs and 233/229 hidden units, against about 3 us one sample at a time. Element i uses the file's\n"
    "network for `joints[i]`, by default the `joint_velocity` element name.\n"
    "\n"
    "Feed it what training used: the motor velocity as logged (`motors_state/velocities` is rotor side,\n"
    "about R times the joint's), the joint velocity from the same source (typically a `kf_derivative`\n"
    "stage with the q and r of the training spec), on a clock of the training's sample period (checked:\n"
    "within 2 %, else RB_ECONFIG).\n"
    "\n"
    "While a joint's history fills (its first H - 1 samples, and again after a NaN in either input, which\n"
    "restarts the count) the output follows `history_fill`: `\"zero\"` (0, the paper's start-up value: its\n"
    "UKF starts at `tau_F = 0`), `\"model\"` (the file's SCV model at the current joint velocity; NaN if\n"
    "that is NaN) or `\"nan\"`.\n"
    "\n"
    "A bad network file stops the run at set-up with one line naming the file and the item (missing,\n"
    "malformed, wrong input size), e.g.\n"
    "`stage pinn: net.json: joints[0] (r_knee): layers[0].weights row 0 has 39 values, expected 2 H = 40`;\n"
    "so do a joint the file has no network for, `motor_velocity` and `joint_velocity` of different\n"
    "widths, and an H or sample-period mismatch. For example:\n"
    "\n"
    "    {\"id\": \"pinn\", \"type\": \"friction_pinn\",\n"
    "     \"in\": {\"motor_velocity\": \"w\", \"joint_velocity\": \"qd\"},\n"
    "     \"out\": {\"tau_F\": \"tau_F\"},\n"
    "     \"params\": {\"network\": \"friction.json\", \"history_fill\": \"model\"}}\n";
static const char *const pinn_in_docs[] = {
    "n values, rad/s, as logged (rotor side): the motor velocities `w`", /* motor_velocity */
    "n values, rad/s, from the source training used: the joint velocities `v`; by default their "
    "element names pick each element's network", /* joint_velocity */
};
static const char *const pinn_out_docs[] = {
    "n values, N m, the `joint_velocity` element names: the friction torque per joint", /* tau_F */
};
static const char *const pinn_fill[] = {"zero", "model", "nan", NULL};
static const rb_param_spec pinn_params[] = {
    {.name = "network",
     .kind = RB_PARAM_STRING,
     .required = true,
     .file = true,
     .doc = "network file written by roboest train-friction, relative to the pipeline file's folder"},
    {.name = "joints",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "the file's joint for each element, in element order (default: the joint_velocity element names)",
     .details = "n values"},
    {.name = "history_fill",
     .kind = RB_PARAM_STRING,
     .def_string = "zero",
     .choices = pinn_fill,
     .doc = "output until H finite samples are in the history: 0, the file's SCV model at the joint velocity, or "
            "NaN"},
    {.name = "H",
     .kind = RB_PARAM_INTEGER,
     .has_min = true,
     .min = 0,
     .doc = "expected history length (a check against the file); 0: the file's",
     .details = "in samples"},
};

const rb_stage_type rb_stage_friction_pinn = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "friction_pinn",
    .summary = "friction torque per joint from the physics-informed network on the last H motor and joint "
               "velocities (joint-torque paper eq. 4)",
    .doc = pinn_doc,
    .inputs = pinn_in,
    .input_docs = pinn_in_docs,
    .n_inputs = 2,
    .outputs = pinn_out,
    .output_docs = pinn_out_docs,
    .n_outputs = 1,
    .params = pinn_params,
    .n_params = sizeof pinn_params / sizeof pinn_params[0],
    .create = pinn_create,
    .step = pinn_step,
    .finish = NULL,
    .destroy = pinn_destroy,
    .step_block = pinn_step_block,
};
