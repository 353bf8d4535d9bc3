/* legged_odometry: ports, parameters and documentation over the observers module's legged odometry
 * (roboest/observers.h, rb_lodo_*; seed 004's floating base). configs/stages.md is generated from the doc below. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/observers.h"
#include "torque_common.h"

enum { LO_Q, LO_DQ, LO_CONTACTS, LO_WRENCHES, LO_N_IN };
enum { LO_POS, LO_QUAT, LO_TWIST, LO_STANCE, LO_SLIP, LO_FLIGHT, LO_N_OUT };

typedef struct lo_stage {
    rb_lodo *est;
    size_t nf;
    bool wrenches;
    const char **foot_names;
    tq_strings slip_units;
    char *note;
} lo_stage;

static void lo_destroy(void *state)
{
    lo_stage *s = state;
    if (!s)
        return;
    rb_lodo_free(s->est);
    rb_free((void *)s->foot_names);
    tq_strings_free(&s->slip_units);
    rb_free(s->note);
    rb_free(s);
}

static int check_ports(const rb_stage_setup *st, bool wrenches, size_t nf, rb_err *err)
{
    int rc;
    if ((rc = tq_check_port(st, LO_Q, st->model->n_dofs, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, LO_DQ, st->model->n_dofs, "one per model joint", true, err)))
        return rc;
    bool c = st->in[LO_CONTACTS].width > 0, w = st->in[LO_WRENCHES].width > 0;
    if (c && w)
        return rb_err_set(err, RB_ECONFIG, "both contacts and wrenches are wired: wire the one contact_source names");
    if (!c && !w)
        return rb_err_set(err, RB_ECONFIG,
                          "no contact input: wire contacts (flags, contact_source \"flags\") or "
                          "wrenches (contact_source \"wrenches\")");
    if (wrenches != w)
        return rb_err_set(err, RB_ECONFIG, "contact_source is \"%s\" but input %s is wired",
                          wrenches ? "wrenches" : "flags", w ? "wrenches" : "contacts");
    if (wrenches)
        return tq_check_port(st, LO_WRENCHES, 6 * nf, "6 per foot of feet: [f; tau]", false, err);
    return tq_check_port(st, LO_CONTACTS, nf, "one flag per foot of feet", false, err);
}

static const char *const pos_names[3] = {"x", "y", "z"}, *const pos_units[3] = {"m", "m", "m"};
static const char *const quat_names[4] = {"w", "x", "y", "z"}, *const quat_units[4] = {"", "", "", ""};
static const char *const tw_names[6] = {"vx", "vy", "vz", "wx", "wy", "wz"};
static const char *const tw_units[6] = {"m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s"};
static const char *const flight_name[1] = {"flight"};

static int lo_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = tq_need_floating_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    const rb_params *p = st->params;
    const rb_param_value *fv = rb_params_get(p, "feet"), *bp = rb_params_get(p, "base_pose0");
    bool wrenches = strcmp(rb_params_string(p, "contact_source"), "wrenches") == 0;
    size_t nf = fv->count;
    if ((rc = tq_check_names(st, "feet", false, err)) || (rc = check_ports(st, wrenches, nf, err)))
        return rc;
    double on = rb_params_number(p, "force_on"), off = rb_params_number(p, "force_off");
    if (off > on)
        return rb_err_set(err, RB_ECONFIG, "force_off (%g N) is above force_on (%g N)", off, on);
    lo_stage *s = rb_calloc(1, sizeof *s);
    int *feet = rb_calloc(nf, sizeof *feet);
    if (!s || !feet) {
        rb_free(feet);
        rb_free(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->nf = nf, s->wrenches = wrenches;
    for (size_t i = 0; i < nf; i++)
        feet[i] = (int)rb_model_frame_index(m, fv->strings[i]);
    rb_lodo_config c;
    rb_lodo_config_init(&c);
    c.feet = feet, c.n_feet = nf, c.source = wrenches ? RB_LODO_WRENCHES : RB_LODO_FLAGS;
    c.force_on = on, c.force_off = off;
    rb_v3_set(c.base0.p, bp->numbers[0], bp->numbers[1], bp->numbers[2]);
    rb_m3_from_rpy(bp->numbers[3], bp->numbers[4], bp->numbers[5], c.base0.R);
    rc = rb_lodo_alloc(m, &c, &s->est, err);
    rb_free(feet);
    if (!rc && !(s->foot_names = rb_calloc(nf, sizeof *s->foot_names)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc)
        rc = tq_strings_alloc(&s->slip_units, nf, err);
    for (size_t i = 0; !rc && i < nf; i++) {
        s->foot_names[i] = fv->strings[i];
        rc = tq_strings_set(&s->slip_units, i, err, "m/s");
    }
    if (rc) {
        lo_destroy(s);
        return rc;
    }
    rb_port *o = st->out;
    o[LO_POS] = (rb_port){3, pos_names, pos_units};
    o[LO_QUAT] = (rb_port){4, quat_names, quat_units};
    o[LO_TWIST] = (rb_port){6, tw_names, tw_units};
    o[LO_STANCE] = (rb_port){nf, s->foot_names, NULL};
    o[LO_SLIP] = (rb_port){nf, s->foot_names, (const char *const *)s->slip_units.s};
    o[LO_FLIGHT] = (rb_port){1, flight_name, NULL};
    *state = s;
    return RB_OK;
}

static int lo_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    lo_stage *s = state;
    int rc = rb_lodo_step(s->est, k, t, in[LO_Q], in[LO_DQ], in[s->wrenches ? LO_WRENCHES : LO_CONTACTS], err);
    if (rc)
        return tq_unname_sample(rc, k, err);
    rb_lodo_out o;
    rb_lodo_get_out(s->est, &o);
    memcpy(out[LO_POS], o.position, 3 * sizeof(double));
    memcpy(out[LO_QUAT], o.orientation, 4 * sizeof(double));
    memcpy(out[LO_TWIST], o.twist, 6 * sizeof(double));
    for (size_t i = 0; i < s->nf; i++) {
        out[LO_STANCE][i] = o.stance[i];
        out[LO_SLIP][i] = o.slip[i];
    }
    out[LO_FLIGHT][0] = o.flight;
    return RB_OK;
}

static int lo_finish(void *state, rb_err *err)
{
    lo_stage *s = state;
    rb_lodo_diag d;
    rb_lodo_get_diag(s->est, &d);
    rb_free(s->note);
    s->note = NULL;
    if (d.flight == 0 && d.predict_only == 0)
        return RB_OK;
    char buf[256];
    snprintf(buf, sizeof buf,
             "%ld of %ld samples with no foot in stance (flight: the base integrates the last twist, not observed "
             "from the legs), %ld with a non-finite joint reading (predicted)",
             d.flight, d.steps, d.predict_only);
    if (!(s->note = rb_strdup(buf)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

static size_t lo_notes(void *state, const char *const **lines)
{
    lo_stage *s = state;
    *lines = (const char *const *)&s->note;
    return s->note ? 1 : 0;
}

static const char *const lo_in[] = {"q", "dq", "contacts", "wrenches"};
static const char *const lo_out[] = {"base_position", "base_orientation", "base_twist", "stance", "slip", "flight"};

/* a long string constant on purpose: the reference's text */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char lo_doc[] =
    "Legged odometry: the floating base's world pose and body-fixed twist from the joint positions and\n"
    "velocities, given which feet are in stance (seed 004's floating base, \"legged odometry (feet\n"
    "fixed)\", PAPERS.md 4.2; `roboest/observers.h`, `rb_lodo_*`, is the reference). A stance foot does\n"
    "not move, so the legs carry the base.\n"
    "\n"
    "Stance: from `contacts` (one flag per foot, > 0.5 in stance) or from `wrenches` (6 per foot, ON the\n"
    "robot; the normal force is `fz`, the world vertical of the simulator's `truth/contacts/<frame>`, the\n"
    "sole normal in a foot's own axes) with hysteresis: a foot enters stance when `fz > force_on` and\n"
    "leaves it when `fz < force_off`. A NaN keeps the foot's previous state. Wire exactly one of the two,\n"
    "the one `contact_source` names.\n"
    "\n"
    "Pose: when a foot enters stance its world pose is recorded; at the first sample the base is at\n"
    "`base_pose0` and the feet in stance are where the kinematics put them (they anchor the world). While\n"
    "feet stay in stance, the base pose is the one that puts them at their recorded poses,\n"
    "\n"
    "    W_X_B(i) = W_X_F(i) B_X_F(i)^-1\n"
    "\n"
    "one foot exactly; several: the positions averaged, the orientations averaged as quaternions (for two\n"
    "feet the geodesic midpoint).\n"
    "\n"
    "Twist: the least-squares solution over the stance feet of\n"
    "\n"
    "    J_F,base nu_B = -J_F,joints dq          (6 BODY rows per foot)\n"
    "\n"
    "(a Cholesky solve of the 6 x 6 normal matrix; one foot: exact). `slip` is the speed of each stance\n"
    "foot's origin the solution implies: 0 with one foot; with two, how far the joint readings are from\n"
    "keeping both feet still (a slipping or rolling foot, kinematic errors); NaN out of stance.\n"
    "\n"
    "Flight (no foot in stance) is not observable from the legs: the pose integrates the last twist, held\n"
    "(`flight` 1); a sample with a non-finite `q` or `dq` is predicted the same way. Either adds a line to\n"
    "the run's warnings with the counts.\n"
    "\n"
    "Errors: configuration (RB_ECONFIG; `roboest run` exits 3): a fixed-base model, an unknown foot frame\n"
    "(with a suggestion) or one listed twice, no feet, both contact inputs wired or none, the wired one\n"
    "not the `contact_source`'s, an input of the wrong width, `force_off` above `force_on`. Input (exit 3):\n"
    "a clock that does not advance.\n";
#pragma GCC diagnostic pop

static const char *const lo_in_docs[] = {
    "n values, rad (m): the joint positions",
    "n values, rad/s: the joint velocities",
    "one per foot of `feet`: 1 in stance, 0 not (e.g. `truth/contacts_active`); optional (or `wrenches`)",
    "6 per foot of `feet` ([f; tau], N and N m, ON the robot; e.g. `truth/contacts/<frame>`); optional (or "
    "`contacts`)",
};
static const char *const lo_out_docs[] = {
    "3 values, m: the base position in the world",
    "4 values: the base orientation, unit quaternion w x y z (w >= 0)",
    "6 values, m/s and rad/s: the body-fixed base twist [v; w] (base axes, as `truth/base/twist`)",
    "one per foot (named by the frame): 1 in stance",
    "one per foot, m/s: the speed of a stance foot's origin the twist implies (NaN out of stance)",
    "1 value: 1 when no foot is in stance (pose and twist predicted)",
};

static const char *const source_choices[] = {"flags", "wrenches", NULL};
static const double pose0_default[] = {0, 0, 0, 0, 0, 0};

static const rb_param_spec lo_params[] = {
    {.name = "feet",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "the model frames of the feet (e.g. [\"l_sole\", \"r_sole\"]): the order of contacts, wrenches, stance "
            "and slip"},
    {.name = "contact_source",
     .kind = RB_PARAM_STRING,
     .def_string = "flags",
     .choices = source_choices,
     .doc = "\"flags\" (input contacts) or \"wrenches\" (input wrenches, normal force thresholds)"},
    {.name = "force_on",
     .kind = RB_PARAM_NUMBER,
     .def_number = 50,
     .has_min = true,
     .min = 0,
     .doc = "N: with wrenches, a foot enters stance when its fz exceeds this",
     .details = "default ours (about a fifth of the humanoid's weight on one foot)"},
    {.name = "force_off",
     .kind = RB_PARAM_NUMBER,
     .def_number = 25,
     .has_min = true,
     .min = 0,
     .doc = "N: with wrenches, a foot leaves stance when its fz drops below this (<= force_on: the hysteresis)",
     .details = "default ours"},
    {.name = "base_pose0",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = pose0_default,
     .def_count = 6,
     .min_count = 6,
     .max_count = 6,
     .doc = "[x, y, z, roll, pitch, yaw] (m, rad; R = Rz Ry Rx): the base pose at the first sample, which anchors "
            "the world",
     .details = "e.g. a scenario's `base_pose` to compare with `truth/base/*`"},
};

const rb_stage_type rb_stage_legged_odometry = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "legged_odometry",
    .summary = "floating-base pose and twist from the joints and the stance feet held in place (legged odometry, "
               "seed 004)",
    .doc = lo_doc,
    .inputs = lo_in,
    .input_docs = lo_in_docs,
    .n_inputs = LO_N_IN,
    .optional_inputs = (1u << LO_CONTACTS) | (1u << LO_WRENCHES),
    .outputs = lo_out,
    .output_docs = lo_out_docs,
    .n_outputs = LO_N_OUT,
    .params = lo_params,
    .n_params = sizeof lo_params / sizeof lo_params[0],
    .create = lo_create,
    .step = lo_step,
    .finish = lo_finish,
    .destroy = lo_destroy,
    .notes = lo_notes,
};
