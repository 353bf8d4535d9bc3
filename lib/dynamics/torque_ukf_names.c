/* The joint-torque UKF model's element names and units (states, measurements), for the stage's outputs and
 * messages. */
#include <stdio.h>
#include <string.h>

#include "torque_ukf_internal.h"

static const char *joint_unit(const rb_model *m, size_t i, int kind)
{
    bool prism = m->bodies[m->dof_body[i]].type == RB_JOINT_PRISMATIC;
    switch (kind) {
    case 0: return prism ? "N" : "N m";
    default: return prism ? "m/s" : "rad/s";
    }
}

static const char *ft_name(const rb_tukf *u, size_t e) { return u->model->ft[u->sm->ft[e / 6]].name; }
static const char *frame_name(const rb_tukf *u, const int *frames, size_t e)
{
    return u->model->frames[frames[e]].name;
}

/* The filter-order block of published element i, and i's place in it; N_BLK when out of range. */
static int published_block(const rb_tukf *u, size_t i, size_t *e)
{
    for (int k = 0; k < N_BLK; k++)
        if (i >= u->b[k].spec && i < u->b[k].spec + u->b[k].len) {
            *e = i - u->b[k].spec;
            return k;
        }
    return N_BLK;
}

static const char *corr_unit(const rb_tukf *u, size_t e)
{
    bool prism = joint_unit(u->model, e / u->nk, 0)[1] == 0;
    switch (u->corr[e % u->nk]) {
    case RB_TUKF_CORR_VISCOUS: return prism ? "N s/m" : "N m s/rad";
    case RB_TUKF_CORR_SCALE: return "1";
    default: return prism ? "N" : "N m";
    }
}

void rb_tukf_state_name(const rb_tukf *u, size_t i, char *buf, size_t size)
{
    static const char *const base_names[6] = {"a_x", "a_y", "a_z", "w_x", "w_y", "w_z"};
    size_t e = 0;
    int k = published_block(u, i, &e);
    const char *bn = k < N_BLK ? blk_name[k] : "";
    switch (k) {
    case B_DQ:
    case B_TM:
    case B_TF: snprintf(buf, size, "%s/%s", bn, u->model->dof_names[e]); return;
    case B_A: snprintf(buf, size, "base/%s", base_names[e]); return;
    case B_W: snprintf(buf, size, "base/%s", base_names[3 + e]); return;
    case B_FT:
    case B_FTB: snprintf(buf, size, "%s/%s/%s", bn, ft_name(u, e), wrench_axes[e % 6]); return;
    case B_C: snprintf(buf, size, "contact/%s/%s", frame_name(u, u->contact_frame, e / 6), wrench_axes[e % 6]); return;
    case B_AB: snprintf(buf, size, "acc_bias/%s/%c", frame_name(u, u->acc_frame, e / 3), "xyz"[e % 3]); return;
    case B_GB: snprintf(buf, size, "gyro_bias/%s/%c", frame_name(u, u->gyro_frame, e / 3), "xyz"[e % 3]); return;
    case B_FC:
        snprintf(buf, size, "fric_corr/%s/%s", corr_name[u->corr[e % u->nk]], u->model->dof_names[e / u->nk]);
        return;
    default: snprintf(buf, size, "element %zu", i); return;
    }
}

const char *rb_tukf_state_unit(const rb_tukf *u, size_t i)
{
    size_t e = 0;
    switch (published_block(u, i, &e)) {
    case B_DQ: return joint_unit(u->model, e, 1);
    case B_TM:
    case B_TF: return joint_unit(u->model, e, 0);
    case B_A:
    case B_AB: return "m/s^2";
    case B_W:
    case B_GB: return "rad/s";
    case B_FT:
    case B_C:
    case B_FTB: return wrench_units[e % 6];
    case B_FC: return corr_unit(u, e);
    default: return "";
    }
}

void rb_tukf_meas_name(const rb_tukf *u, size_t j, char *buf, size_t size)
{
    const rb_model *m = u->model;
    if (j < u->m_cur)
        snprintf(buf, size, "dq/%s", m->dof_names[j - u->m_dq]);
    else if (j < u->m_fric)
        snprintf(buf, size, "current/%s", m->dof_names[j - u->m_cur]);
    else if (j < u->m_ft)
        snprintf(buf, size, "friction/%s", m->dof_names[j - u->m_fric]);
    else if (j < u->m_acc)
        snprintf(buf, size, "ft/%s/%s", ft_name(u, j - u->m_ft), wrench_axes[(j - u->m_ft) % 6]);
    else if (j < u->m_gyro)
        snprintf(buf, size, "acc/%s/%c", frame_name(u, u->acc_frame, (j - u->m_acc) / 3), "xyz"[(j - u->m_acc) % 3]);
    else if (j < u->M)
        snprintf(buf, size, "gyro/%s/%c", frame_name(u, u->gyro_frame, (j - u->m_gyro) / 3),
                 "xyz"[(j - u->m_gyro) % 3]);
    else
        snprintf(buf, size, "element %zu", j);
}

const char *rb_tukf_meas_unit(const rb_tukf *u, size_t j)
{
    if (j < u->m_cur)
        return joint_unit(u->model, j - u->m_dq, 1);
    if (j < u->m_fric)
        return "A";
    if (j < u->m_ft)
        return joint_unit(u->model, j - u->m_fric, 0);
    if (j < u->m_acc)
        return wrench_units[(j - u->m_ft) % 6];
    if (j < u->m_gyro)
        return "m/s^2";
    return j < u->M ? "rad/s" : "";
}

/* The block and element of filter-order state index i, for messages. */
void rb_tukf_describe_state(const rb_tukf *u, size_t i, char *buf, size_t size)
{
    const rb_model *m = u->model;
    for (int k = 0; k < N_BLK; k++) {
        const block *b = &u->b[k];
        if (i < b->off || i >= b->off + b->len)
            continue;
        size_t e = i - b->off;
        switch (k) {
        case B_DQ:
        case B_TM:
        case B_TF: snprintf(buf, size, "%s (joint %s)", blk_name[k], m->dof_names[e]); return;
        case B_A: snprintf(buf, size, "base (linear acceleration %c)", "xyz"[e]); return;
        case B_W: snprintf(buf, size, "base (angular velocity %c)", "xyz"[e]); return;
        case B_FT:
        case B_FTB: snprintf(buf, size, "%s (%s %s)", blk_name[k], ft_name(u, e), wrench_axes[e % 6]); return;
        case B_C:
            snprintf(buf, size, "contact (%s/%s)", frame_name(u, u->contact_frame, e / 6), wrench_axes[e % 6]);
            return;
        case B_AB: snprintf(buf, size, "acc_bias (%s %c)", frame_name(u, u->acc_frame, e / 3), "xyz"[e % 3]); return;
        case B_GB: snprintf(buf, size, "gyro_bias (%s %c)", frame_name(u, u->gyro_frame, e / 3), "xyz"[e % 3]); return;
        case B_FC:
            snprintf(buf, size, "fric_corr (%s %s)", corr_name[u->corr[e % u->nk]], m->dof_names[e / u->nk]);
            return;
        }
    }
    snprintf(buf, size, "element %zu", i);
}
