/* Scenario section "gait" (see scenario.c): a walk on the thesis's schedule (roboest/sim_gait.h). The values are
 * checked by the engine's own rules (sim_gait_check), reported at the key they name. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/sim.h"

#include "scenario_internal.h"
#include "sim_internal.h"

/* The engine's message "gait.<key>[<i>] ...: what" (or "gait: what") at that key's path (and index) when the file
 * has it. */
static int relay_check(rb_cfg *c, const cJSON *v, const rb_err *e)
{
    const char *msg = e->msg, *what = msg;
    char key[64] = "";
    long index = -1;
    if (strncmp(msg, "gait.", 5) == 0) {
        size_t len = strcspn(msg + 5, " :[");
        if (len < sizeof key) {
            memcpy(key, msg + 5, len);
            key[len] = '\0';
            what = msg + 5 + len;
            if (*what == '[') {
                char *end;
                index = strtol(what + 1, &end, 10);
                what = *end == ']' ? end + 1 : what;
            }
            what += strspn(what, " :");
        }
    } else if (strncmp(msg, "gait: ", 6) == 0) {
        what = msg + 6;
    }
    const cJSON *member = key[0] ? rb_cfg_member(v, key) : NULL;
    bool at_index = member && index >= 0 && cJSON_IsArray(member) && index < cJSON_GetArraySize(member);
    if (member)
        rb_cfg_push_key(c, key, 0);
    if (at_index)
        rb_cfg_push_index(c, (size_t)index);
    /* a key the file leaves to its default: named in the message, at the section */
    int rc = key[0] && !member ? rb_cfg_error(c, "%s", msg + 5) : rb_cfg_error(c, "%s", what);
    if (at_index)
        rb_cfg_pop(c);
    if (member)
        rb_cfg_pop(c);
    return rc;
}

/* gait.feet: [left, right] model frames. */
static int parse_feet(scn *x, const cJSON *v, rb_sim_gait *g)
{
    rb_cfg *c = &x->c;
    const cJSON *feet = rb_cfg_member(v, "feet");
    if (!feet)
        return RB_OK;
    rb_cfg_push_key(c, "feet", 0);
    int rc = cJSON_IsArray(feet) && cJSON_GetArraySize(feet) == 2
                 ? RB_OK
                 : rb_cfg_error(c, "expected [left foot frame, right foot frame]");
    size_t i = 0;
    for (const cJSON *e = feet->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = sim_scn_want_frame(x, e, &g->feet[i]);
        rb_cfg_pop(c);
    }
    rb_cfg_pop(c);
    return rc;
}

int sim_scn_parse_gait(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"ds",    "ss",          "start",      "stand",        "stop",
                                       "first", "step_length", "step_width", "swing_height", "com_height",
                                       "feet",  "preview",     "ik_T",       "feedforward"};
    static const char *const sides[] = {"left", "right", NULL};
    static const struct {
        const char *key;
        rb_cfg_rule rule;
        size_t offset;
    } numbers[] = {
        {"ds", RB_CFG_POSITIVE, offsetof(rb_sim_gait, ds)},
        {"ss", RB_CFG_POSITIVE, offsetof(rb_sim_gait, ss)},
        {"start", RB_CFG_NON_NEGATIVE, offsetof(rb_sim_gait, start)},
        {"stand", RB_CFG_NON_NEGATIVE, offsetof(rb_sim_gait, stand)},
        {"stop", RB_CFG_NON_NEGATIVE, offsetof(rb_sim_gait, stop)},
        {"step_length", RB_CFG_ANY, offsetof(rb_sim_gait, step_length)},
        {"step_width", RB_CFG_POSITIVE, offsetof(rb_sim_gait, step_width)},
        {"swing_height", RB_CFG_POSITIVE, offsetof(rb_sim_gait, swing_height)},
        {"com_height", RB_CFG_ANY, offsetof(rb_sim_gait, com_height)},
        {"preview", RB_CFG_POSITIVE, offsetof(rb_sim_gait, preview)},
        {"ik_T", RB_CFG_POSITIVE, offsetof(rb_sim_gait, ik_T)},
    };
    rb_scenario *s = x->s;
    const rb_model *m = s->model;
    rb_sim_gait g = rb_sim_gait_defaults();
    int rc = rb_cfg_check_object(c, v, keys, sizeof keys / sizeof keys[0]);
    for (size_t i = 0; !rc && i < sizeof numbers / sizeof numbers[0]; i++)
        rc = rb_cfg_member_number(c, v, numbers[i].key, numbers[i].rule, (double *)((char *)&g + numbers[i].offset));
    size_t first = 0;
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "first", sides, &first);
    g.first = first == 0 ? RB_GAIT_LEFT : RB_GAIT_RIGHT;
    static const char *const ffs[] = {"dynamics", "gravity", NULL};
    size_t ff = 0;
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "feedforward", ffs, &ff);
    g.feedforward = ff == 0 ? RB_GAIT_FF_DYNAMICS : RB_GAIT_FF_GRAVITY;
    static const char *const soles[2] = {"l_sole", "r_sole"};
    for (int f = 0; f < 2; f++) /* the defaults, when the model has them */
        g.feet[f] = (int)rb_model_frame_index(m, soles[f]);
    if (!rc)
        rc = parse_feet(x, v, &g);
    for (int f = 0; !rc && f < 2; f++)
        if (g.feet[f] < 0)
            rc = rb_cfg_error(c, "the model has no frame '%s': name the feet ('feet': [left, right])", soles[f]);
    if (!rc && !m->floating)
        rc = rb_cfg_error(c, "needs a floating base (model.floating: true)");
    if (!rc && s->sim.balance.enabled)
        rc = rb_cfg_error(c, "not with 'balance' (both drive the centre of mass: keep one)");
    if (!rc && s->sim.ctrl == RB_CTRL_NONE)
        rc = rb_cfg_error(c, "needs a controller (controller.kind \"pd\" or \"torque\")");
    if (!rc) {
        rb_sim_scenario sc = s->sim;
        g.enabled = true;
        sc.gait = g;
        rb_err e;
        if (sim_gait_check(&sc, &e) < 0)
            rc = relay_check(c, v, &e);
    }
    if (!rc)
        s->sim.gait = g;
    return rc;
}
