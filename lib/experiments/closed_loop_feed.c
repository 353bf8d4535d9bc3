/* What a closed-loop run reads besides the torque signals (roboest/experiments.h, the closed loop): the
 * inertial-parameter estimates the controller's model takes (seed 001, Table II), and the task it is scored on. */
#include <math.h>
#include <string.h>

#include "experiments_internal.h"

static const char *const PARAMS[10] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};

static long param_index(const char *p)
{
    for (long k = 0; k < 10; k++)
        if (strcmp(PARAMS[k], p) == 0)
            return k;
    return -1;
}

/* The slot of `body` in the map, added if new. */
static size_t body_slot(rb_cl_inertia *in, size_t body)
{
    for (size_t i = 0; i < in->n; i++)
        if (in->body[i] == body)
            return i;
    in->body[in->n] = body;
    for (size_t k = 0; k < 10; k++)
        in->elem[in->n * 10 + k] = -1;
    return in->n++;
}

int rb_cl_inertia_map(rb_cl_inertia *in, const rb_model *m, rb_stream *stream, const char *signal, const char *body1,
                      const char *who, rb_err *err)
{
    long sig = rb_stream_find(stream, signal);
    size_t w = rb_stream_width(stream, sig);
    const char *const *el = rb_stream_elements(stream, sig);
    size_t cap = w ? w : 1;
    in->body = rb_calloc(cap, sizeof *in->body);
    in->elem = rb_calloc(cap * 10, sizeof *in->elem);
    in->pi = rb_calloc(cap * 10, sizeof *in->pi);
    if (!in->body || !in->elem || !in->pi)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t e = 0; body1 && e < w; e++) {
        long k = el ? param_index(el[e]) : -1;
        if (k < 0)
            return rb_err_set(err, RB_EINPUT,
                              "%s: inertia signal '%s' element '%s': expected one of m hx hy hz Ixx Ixy Ixz Iyy Iyz "
                              "Izz (the parameters of body '%s')",
                              who, signal, el ? el[e] : "?", body1);
        in->elem[body_slot(in, (size_t)rb_model_body_index(m, body1)) * 10 + (size_t)k] = (long)e;
    }
    for (size_t e = 0; !body1 && e < w; e++) {
        const char *slash = el ? strrchr(el[e], '/') : NULL;
        if (!slash)
            return rb_err_set(err, RB_EINPUT, "%s: inertia signal '%s' element '%s' is not \"<body>/<parameter>\"", who,
                              signal, el ? el[e] : "?");
        char body[256];
        size_t len = (size_t)(slash - el[e]);
        long k = param_index(slash + 1);
        if (len >= sizeof body || k < 0)
            return rb_err_set(err, RB_EINPUT,
                              "%s: inertia signal '%s' element '%s': expected \"<body>/<p>\", p one of m hx hy hz Ixx "
                              "Ixy Ixz Iyy Iyz Izz",
                              who, signal, el[e]);
        memcpy(body, el[e], len);
        body[len] = '\0';
        long b = rb_model_body_index(m, body);
        if (b < 0)
            return rb_err_set(err, RB_ENOTFOUND,
                              "%s: inertia signal '%s' element '%s': no body '%s' in the scenario's model", who, signal,
                              el[e], body);
        in->elem[body_slot(in, (size_t)b) * 10 + (size_t)k] = (long)e;
    }
    for (size_t i = 0; i < in->n; i++)
        for (size_t k = 0; k < 10; k++)
            if (in->elem[i * 10 + k] < 0)
                return rb_err_set(err, RB_EINPUT, "%s: inertia signal '%s' has no element '%s/%s'", who, signal,
                                  m->bodies[in->body[i]].name, PARAMS[k]);
    in->row = rb_stream_row(stream, sig);
    return RB_OK;
}

int rb_cl_inertia_feed(rb_cl_inertia *in, rb_sim *sim, rb_err *err)
{
    for (size_t i = 0; i < in->n; i++) {
        double *pi = in->pi + i * 10;
        bool finite = true;
        for (size_t k = 0; k < 10; k++) {
            pi[k] = in->row[in->elem[i * 10 + k]];
            finite = finite && isfinite(pi[k]);
        }
        if (!finite || !rb_inertia_is_physical(pi))
            continue;
        int rc = rb_sim_set_model_inertia(sim, in->body[i], pi, err);
        if (rc)
            return rc;
    }
    return RB_OK;
}

void rb_cl_inertia_free(rb_cl_inertia *in)
{
    rb_free(in->body);
    rb_free(in->elem);
    rb_free(in->pi);
    *in = (rb_cl_inertia){0};
}

static int find_element(const rb_channel_info *channels, size_t n_channels, const char *channel, const char *element,
                        size_t *c_out, size_t *e_out, rb_err *err)
{
    for (size_t c = 0; c < n_channels; c++) {
        if (strcmp(channels[c].name, channel) != 0)
            continue;
        for (size_t e = 0; e < channels[c].width; e++) {
            char num[32];
            snprintf(num, sizeof num, "%zu", e);
            const char *name = channels[c].elements ? channels[c].elements[e] : num;
            if (strcmp(name, element) == 0) {
                *c_out = c;
                *e_out = e;
                return RB_OK;
            }
        }
        return rb_err_set(err, RB_ENOTFOUND, "task: channel '%s' has no element '%s'", channel, element);
    }
    return rb_err_set(err, RB_ENOTFOUND, "task: the scenario logs no channel '%s'", channel);
}

int rb_cl_task_map_channels(rb_cl_task_map *tm, const rb_closed_loop_task *task, const rb_channel_info *channels,
                            size_t n_channels, rb_err *err)
{
    int rc = find_element(channels, n_channels, task->actual_channel, task->actual_element, &tm->actual_channel,
                          &tm->actual_element, err);
    return rc ? rc
              : find_element(channels, n_channels, task->reference_channel, task->reference_element,
                             &tm->reference_channel, &tm->reference_element, err);
}
