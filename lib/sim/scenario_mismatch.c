/* lib/sim: the scenario keys "mismatch" and "random_contacts" (roboest/sim_mismatch.h). */
#include <math.h>
#include <string.h>

#include "scenario_internal.h"

/* A sub-object's numbers: key i into out[i] with the rule. */
static int numbers(rb_cfg *c, const cJSON *obj, const char *key, const char *const *keys, size_t n,
                   const rb_cfg_rule *rules, double *const *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_check_object(c, v, keys, n);
    for (size_t i = 0; !rc && i < n; i++)
        rc = rb_cfg_member_number(c, v, keys[i], rules[i], out[i]);
    rb_cfg_pop(c);
    return rc;
}

int sim_scn_parse_mismatch(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    rb_sim_mismatch *mm = &x->s->sim.mismatch;
    static const char *const PRESETS[] = {"realistic", "none", NULL};
    size_t preset = 0;
    if (cJSON_IsString(v)) {
        int rc = rb_cfg_want_choice(c, v, PRESETS, &preset);
        if (!rc && preset == 0)
            rb_sim_mismatch_realistic(mm);
        return rc;
    }
    static const char *const keys[] = {"preset", "level", "inertia", "friction", "delay", "ft", "current", "elastic"};
    int rc = rb_cfg_check_object(c, v, keys, 8);
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "preset", PRESETS, &preset);
    if (rc)
        return rc;
    if (preset == 0)
        rb_sim_mismatch_realistic(mm);
    else
        memset(mm, 0, sizeof *mm), mm->level = 1.0;
    mm->enabled = true;
    const rb_cfg_rule NN = RB_CFG_NON_NEGATIVE, ANY = RB_CFG_ANY, POS = RB_CFG_POSITIVE;
    rc = rb_cfg_member_number(c, v, "level", NN, &mm->level);
    static const char *const ik[] = {"mass_sd", "com_sd", "inertia_sd"};
    const rb_cfg_rule ir[] = {NN, NN, NN};
    double *const io[] = {&mm->mass_sd, &mm->com_sd, &mm->inertia_sd};
    if (!rc)
        rc = numbers(c, v, "inertia", ik, 3, ir, io);
    static const char *const fk[] = {"scale_sd", "asymmetry", "load", "load_v", "temp_coeff", "temp_offset", "warmup"};
    const rb_cfg_rule fr[] = {NN, NN, NN, POS, ANY, ANY, NN};
    double *const fo[] = {&mm->friction_scale_sd, &mm->friction_asymmetry,  &mm->friction_load,
                          &mm->friction_load_v,   &mm->friction_temp_coeff, &mm->friction_temp_offset,
                          &mm->friction_warmup};
    if (!rc)
        rc = numbers(c, v, "friction", fk, 7, fr, fo);
    static const char *const dk[] = {"command", "measurement"};
    const rb_cfg_rule dr[] = {NN, NN};
    double *const dout[] = {&mm->command_delay, &mm->measurement_delay};
    if (!rc)
        rc = numbers(c, v, "delay", dk, 2, dr, dout);
    static const char *const tk[] = {"drift_force", "drift_torque"};
    const rb_cfg_rule tr[] = {NN, NN};
    double *const to[] = {&mm->ft_drift_force, &mm->ft_drift_torque};
    if (!rc)
        rc = numbers(c, v, "ft", tk, 2, tr, to);
    static const char *const ck[] = {"offset", "resolution", "noise"};
    const rb_cfg_rule cr[] = {NN, NN, NN};
    double *const co[] = {&mm->current_offset, &mm->current_resolution, &mm->current_noise};
    if (!rc)
        rc = numbers(c, v, "current", ck, 3, cr, co);
    static const char *const ek[] = {"stiffness", "damping"};
    const rb_cfg_rule er[] = {NN, NN};
    double *const eo[] = {&mm->elastic_stiffness, &mm->elastic_damping};
    if (!rc)
        rc = numbers(c, v, "elastic", ek, 2, er, eo);
    if (!rc && mm->friction_load > 0 && !(mm->friction_load_v > 0))
        rc = rb_cfg_error(c, "friction: load needs load_v > 0");
    return rc;
}

static int min_max(rb_cfg *c, const cJSON *obj, const char *key, bool positive, double *lo, double *hi)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    double p[2];
    int rc = sim_scn_want_numbers(c, v, 2, p);
    if (!rc && !(p[0] >= 0 && p[1] >= p[0] && (!positive || p[0] > 0)))
        rc = rb_cfg_error(c, "expected [min, max] with %s <= min <= max", positive ? "0 <" : "0");
    if (!rc)
        *lo = p[0], *hi = p[1];
    rb_cfg_pop(c);
    return rc;
}

int sim_scn_parse_random_contacts(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    rb_sim_random_contacts *r = &x->s->sim.random_contacts;
    static const char *const keys[] = {"frames", "rate", "from", "until", "duration", "force"};
    int rc = rb_cfg_check_object(c, v, keys, 6);
    for (size_t k = 0; !rc && k < 2; k++)
        if (!rb_cfg_member(v, k ? "force" : "frames") || !rb_cfg_member(v, "rate"))
            rc = rb_cfg_error(c, "missing key '%s'", !rb_cfg_member(v, "rate") ? "rate" : k ? "force" : "frames");
    const cJSON *fr = rb_cfg_member(v, "frames");
    if (!rc && (!cJSON_IsArray(fr) || cJSON_GetArraySize(fr) == 0)) {
        rb_cfg_push_key(c, "frames", 0);
        rc = rb_cfg_error(c, "expected a non-empty array of model frames");
        rb_cfg_pop(c);
    }
    if (rc)
        return rc;
    size_t n = (size_t)cJSON_GetArraySize(fr);
    if (!(x->s->contact_frames = rb_calloc(n, sizeof *x->s->contact_frames)))
        return rb_cfg_nomem(c);
    rb_cfg_push_key(c, "frames", 0);
    for (size_t k = 0; !rc && k < n; k++) {
        rb_cfg_push_index(c, k);
        rc = sim_scn_want_frame(x, cJSON_GetArrayItem(fr, (int)k), &x->s->contact_frames[k]);
        rb_cfg_pop(c);
    }
    rb_cfg_pop(c);
    r->frames = x->s->contact_frames, r->n_frames = n;
    r->until = INFINITY;
    r->duration_min = 0.1, r->duration_max = 0.3;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "rate", RB_CFG_POSITIVE, &r->rate);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "from", RB_CFG_NON_NEGATIVE, &r->from);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "until", RB_CFG_POSITIVE, &r->until);
    if (!rc && !(r->until > r->from)) {
        rb_cfg_push_key(c, "until", 0);
        rc = rb_cfg_error(c, "must be > from");
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = min_max(c, v, "duration", true, &r->duration_min, &r->duration_max);
    if (!rc)
        rc = min_max(c, v, "force", false, &r->force_min, &r->force_max);
    return rc;
}
