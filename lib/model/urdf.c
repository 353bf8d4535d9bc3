/* URDF reader: libxml2 tree -> links and joints -> (re-rooted, reduced, merged) rb_model.
 *
 * Three stages, each finished before the next starts:
 *   1. read (urdf_read.c): every <link>, <joint>, top-level <sensor> and <gazebo><sensor type="imu"> into
 *      plain arrays, with each value checked where it is read (so the message can name the element and its line);
 *   2. tree: name lookups, one parent per link, one root, no cycle; the joint list and locked joints;
 *   3. build: a depth-first walk from the base link orients every joint away from the base (reversing those
 *      on the path to the URDF root), makes a body for each kept joint (movable in the joint list, or fixed
 *      with a force/torque sensor) and merges every other child link into its parent's body; then frames,
 *      sensors, dof order, and rb_model_end's validation.
 * Names are borrowed from the libxml2 document until the model copies them. */
#include "roboest/model.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "urdf_internal.h"

/* ---- stage 2: the tree ---------------------------------------------------------------------------------- */

static int find_name(const rb_name_ref *refs, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(refs[mid].name, name);
        if (c == 0) {
            while (mid > 0 && strcmp(refs[mid - 1].name, name) == 0)
                mid--;
            return (int)refs[mid].index;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Sorted name index over `n` items whose name is at `first` with `stride` bytes between items; duplicate
 * names are an error naming the later element. */
static int index_names(urdf *u, const char *what, const char *const *first, const xmlNode *const *nodes, size_t stride,
                       size_t n, rb_name_ref **out)
{
    rb_name_ref *refs = rb_calloc(n ? n : 1, sizeof *refs);
    if (!refs)
        return rb_model_urdf_no_memory(u);
    *out = refs;
    for (size_t i = 0; i < n; i++) {
        refs[i].name = *(const char *const *)((const char *)first + i * stride);
        refs[i].index = i;
    }
    qsort(refs, n, sizeof *refs, rb_name_ref_cmp);
    for (size_t i = 1; i < n; i++)
        if (strcmp(refs[i - 1].name, refs[i].name) == 0) {
            const xmlNode *node = *(const xmlNode *const *)((const char *)nodes + refs[i].index * stride);
            char ctx[300];
            snprintf(ctx, sizeof ctx, "%s %.200s", what, refs[i].name);
            return rb_model_urdf_bad(u, node, ctx, "duplicate %s name", what);
        }
    return RB_OK;
}

static int build_tree(urdf *u)
{
    int rc;
    if ((rc = index_names(u, "link", &u->links[0].name, (const xmlNode *const *)&u->links[0].node, sizeof *u->links,
                          u->n_links, &u->link_names)) < 0 ||
        (rc = index_names(u, "joint", u->n_joints ? &u->joints[0].name : NULL,
                          u->n_joints ? (const xmlNode *const *)&u->joints[0].node : NULL, sizeof *u->joints,
                          u->n_joints, &u->joint_names)) < 0)
        return rc;
    for (size_t k = 0; k < u->n_joints; k++) {
        ujoint *j = &u->joints[k];
        char ctx[300];
        snprintf(ctx, sizeof ctx, "joint %.200s", j->name);
        j->parent = find_name(u->link_names, u->n_links, j->parent_name);
        j->child = find_name(u->link_names, u->n_links, j->child_name);
        if (j->parent < 0)
            return rb_model_urdf_bad(u, j->node, ctx, "parent link %.200s does not exist", j->parent_name);
        if (j->child < 0)
            return rb_model_urdf_bad(u, j->node, ctx, "child link %.200s does not exist", j->child_name);
        if (j->parent == j->child)
            return rb_model_urdf_bad(u, j->node, ctx, "link %.200s is its own parent (a cycle)", j->child_name);
        ulink *c = &u->links[j->child];
        if (c->parent_joint >= 0)
            return rb_model_urdf_bad(u, j->node, ctx, "link %.200s already has parent joint %.200s (two parents)",
                                     c->name, u->joints[c->parent_joint].name);
        c->parent_joint = (int)k;
    }
    int root = -1;
    for (size_t i = 0; i < u->n_links; i++) {
        if (u->links[i].parent_joint >= 0)
            continue;
        if (root >= 0)
            return rb_model_urdf_bad(u, u->links[i].node, "robot",
                                     "two root links (%.200s and %.200s): the links are not one tree",
                                     u->links[root].name, u->links[i].name);
        root = (int)i;
    }
    if (root < 0)
        return rb_model_urdf_bad(u, u->links[0].node, "robot", "no root link: the joints form a cycle");

    /* Children lists (CSR, document order), then every link must hang from the root: with one parent per
     * link and one root, a link out of reach sits on a cycle. */
    u->child_start = rb_calloc(u->n_links + 1, sizeof *u->child_start);
    u->child_list = rb_calloc(u->n_joints ? u->n_joints : 1, sizeof *u->child_list);
    int *fill = rb_calloc(u->n_links, sizeof *fill), *stack = rb_calloc(u->n_links, sizeof *stack);
    if (!u->child_start || !u->child_list || !fill || !stack) {
        rc = rb_model_urdf_no_memory(u);
        goto done;
    }
    for (size_t k = 0; k < u->n_joints; k++)
        u->child_start[u->joints[k].parent + 1]++;
    for (size_t i = 0; i < u->n_links; i++)
        u->child_start[i + 1] += u->child_start[i];
    for (size_t k = 0; k < u->n_joints; k++) {
        int p = u->joints[k].parent;
        u->child_list[u->child_start[p] + fill[p]++] = (int)k;
    }
    size_t top = 0, seen = 1;
    stack[top++] = root;
    u->links[root].visited = true;
    while (top) {
        int l = stack[--top];
        for (int e = u->child_start[l]; e < u->child_start[l + 1]; e++) {
            int c = u->joints[u->child_list[e]].child;
            if (!u->links[c].visited) {
                u->links[c].visited = true;
                stack[top++] = c;
                seen++;
            }
        }
    }
    if (seen != u->n_links)
        for (size_t i = 0; i < u->n_links; i++)
            if (!u->links[i].visited) {
                char ctx[300];
                snprintf(ctx, sizeof ctx, "link %.200s", u->links[i].name);
                rc = rb_model_urdf_bad(u, u->links[i].node, ctx, "on a cycle of joints");
                goto done;
            }
    for (size_t i = 0; i < u->n_links; i++)
        u->links[i].visited = false;
    u->base = root;
    rc = RB_OK;
done:
    rb_free(fill);
    rb_free(stack);
    return rc;
}

/* Sensors: resolve parents, mark FT joints. */
static int resolve_sensors(urdf *u)
{
    for (size_t k = 0; k < u->n_sensors; k++) {
        usensor *s = &u->sensors[k];
        char ctx[300];
        snprintf(ctx, sizeof ctx, "sensor %.200s", s->name);
        if (s->kind == US_FT) {
            s->parent = find_name(u->joint_names, u->n_joints, s->parent_name);
            if (s->parent < 0)
                return rb_model_urdf_bad(u, s->node, ctx, "parent joint %.200s does not exist", s->parent_name);
            ujoint *j = &u->joints[s->parent];
            if (j->type != UJ_FIXED)
                return rb_model_urdf_bad(u, s->node, ctx, "parent joint %.200s is not a fixed joint", s->parent_name);
            j->has_ft = true;
        } else {
            s->parent = find_name(u->link_names, u->n_links, s->parent_name);
            if (s->parent < 0)
                return rb_model_urdf_bad(u, s->node, ctx, "parent link %.200s does not exist", s->parent_name);
        }
    }
    return RB_OK;
}

/* Options: which movable joints stay dofs, where the others are locked, and the base link. */
static int apply_options(urdf *u)
{
    const rb_model_opts *o = u->opts;
    for (size_t k = 0; k < u->n_joints; k++)
        u->joints[k].kept = u->joints[k].type != UJ_FIXED && (!o || !o->joints);
    if (!o)
        return RB_OK;
    if ((o->n_joints && !o->joints) || (o->n_locked && (!o->locked || !o->locked_at)))
        return rb_err_set(u->err, RB_EINVAL, "%s: model options: NULL list with a non-zero length", u->src);
    for (size_t i = 0; i < o->n_joints && o->joints; i++) {
        const char *name = o->joints[i];
        int k = name ? find_name(u->joint_names, u->n_joints, name) : -1;
        if (k < 0)
            return rb_err_set(u->err, RB_ENOTFOUND, "%s: joint list: no joint named %.200s", u->src,
                              name ? name : "(null)");
        if (u->joints[k].type == UJ_FIXED)
            return rb_err_set(u->err, RB_EINPUT, "%s: joint list: joint %.200s is fixed", u->src, name);
        if (u->joints[k].kept)
            return rb_err_set(u->err, RB_EINVAL, "%s: joint list: joint %.200s listed twice", u->src, name);
        u->joints[k].kept = true;
    }
    for (size_t i = 0; i < o->n_locked; i++) {
        const char *name = o->locked[i];
        int k = name ? find_name(u->joint_names, u->n_joints, name) : -1;
        if (k < 0)
            return rb_err_set(u->err, RB_ENOTFOUND, "%s: locked joints: no joint named %.200s", u->src,
                              name ? name : "(null)");
        ujoint *j = &u->joints[k];
        if (j->type == UJ_FIXED)
            return rb_err_set(u->err, RB_EINPUT, "%s: locked joints: joint %.200s is fixed", u->src, name);
        if (o->joints && j->kept)
            return rb_err_set(u->err, RB_EINVAL, "%s: joint %.200s is both in the joint list and locked", u->src, name);
        if (!isfinite(o->locked_at[i]))
            return rb_err_set(u->err, RB_EINVAL, "%s: locked joints: position of %.200s is not finite", u->src, name);
        j->kept = false;
        j->locked_at = o->locked_at[i];
    }
    if (o->base) {
        int b = find_name(u->link_names, u->n_links, o->base);
        if (b < 0)
            return rb_err_set(u->err, RB_ENOTFOUND, "%s: base link %.200s does not exist", u->src, o->base);
        u->base = b;
    }
    return RB_OK;
}

/* ---- stage 3: bodies ------------------------------------------------------------------------------------ */

/* X_joint(q) about (REVOLUTE) or along (PRISMATIC) the unit axis a. */
static void joint_motion(enum ujoint_type type, const double a[3], double q, rb_xform *X)
{
    rb_xform_identity(X);
    if (type == UJ_PRISMATIC)
        for (int i = 0; i < 3; i++)
            X->p[i] = a[i] * q;
    else if (type != UJ_FIXED)
        rb_m3_from_axis_angle(a, q, X->R);
}

/* Visit link `l`, reached from its new parent link through joint k (reversed if the URDF child is the new
 * parent). The joint frame F sits in the new parent link at X_pf; the new child link sits in F (after the
 * motion) at X_fc; the axis is a' in F:
 *     forward:  X_pf = origin, X_fc = 1, a' = a;
 *     reversed: X_pf = 1, X_fc = origin^-1, a' = -a,
 * so that the reversed joint at q gives C_X_P(q) = X_joint(-a, q) origin^-1 = (origin X_joint(a, q))^-1: the
 * same relative pose of the two links for the same q. A kept joint's body frame is F. */
static int visit(urdf *u, int l, int k, bool reversed)
{
    ulink *L = &u->links[l];
    ujoint *j = &u->joints[k];
    ulink *P = &u->links[reversed ? j->child : j->parent];
    rb_xform X_pf, X_fc, t1, t2;
    double a[3];
    if (reversed) {
        rb_xform_identity(&X_pf);
        rb_xform_inverse(&j->origin, &X_fc);
        for (int i = 0; i < 3; i++)
            a[i] = -j->axis[i];
    } else {
        X_pf = j->origin;
        rb_xform_identity(&X_fc);
        memcpy(a, j->axis, sizeof a);
    }
    j->reversed = reversed;
    if (j->kept || j->has_ft) {
        tmp_body *b = &u->bodies[u->n_bodies];
        memset(b, 0, sizeof *b);
        b->link = l;
        b->parent = P->body;
        b->joint = k;
        b->type = j->type == UJ_FIXED       ? RB_JOINT_FIXED
                  : j->type == UJ_PRISMATIC ? RB_JOINT_PRISMATIC
                                            : RB_JOINT_REVOLUTE;
        rb_xform_compose(&P->in_body, &X_pf, &b->X_parent);
        if (b->type != RB_JOINT_FIXED)
            memcpy(b->axis, a, sizeof a);
        j->body = (int)u->n_bodies;
        L->body = (int)u->n_bodies++;
        L->in_body = X_fc;
    } else {
        rb_xform J;
        joint_motion(j->type, a, j->type == UJ_FIXED ? 0.0 : j->locked_at, &J);
        rb_xform_compose(&P->in_body, &X_pf, &t1);
        rb_xform_compose(&t1, &J, &t2);
        rb_xform_compose(&t2, &X_fc, &L->in_body);
        L->body = P->body;
    }
    return RB_OK;
}

static int make_bodies(urdf *u)
{
    int rc = RB_OK;
    /* Each stack entry: link, joint it was reached through, reversed flag. */
    int *stack = NULL;
    double *subtree = NULL;
    size_t cap;
    if (!rb_size_mul(u->n_links, 3 * sizeof *stack, &cap) || !(stack = rb_malloc(cap)) ||
        !(u->bodies = rb_calloc(u->n_links, sizeof *u->bodies))) {
        rc = rb_model_urdf_no_memory(u);
        goto done;
    }
    ulink *B = &u->links[u->base];
    B->body = 0;
    rb_xform_identity(&B->in_body);
    u->bodies[0].link = u->base;
    u->bodies[0].parent = -1;
    u->bodies[0].joint = -1;
    u->bodies[0].type = RB_JOINT_FIXED;
    rb_xform_identity(&u->bodies[0].X_parent);
    u->n_bodies = 1;
    B->visited = true;

    /* Depth-first, children in document order (pushed in reverse), the reversed parent edge first. */
    size_t top = 0;
    int l = u->base;
    for (;;) {
        ulink *L = &u->links[l];
        for (int e = u->child_start[l + 1] - 1; e >= u->child_start[l]; e--) {
            int k = u->child_list[e], c = u->joints[k].child;
            if (u->links[c].visited)
                continue;
            u->links[c].visited = true;
            stack[3 * top] = c, stack[3 * top + 1] = k, stack[3 * top + 2] = 0;
            top++;
        }
        if (L->parent_joint >= 0) {
            int k = L->parent_joint, p = u->joints[k].parent;
            if (!u->links[p].visited) {
                u->links[p].visited = true;
                stack[3 * top] = p, stack[3 * top + 1] = k, stack[3 * top + 2] = 1;
                top++;
            }
        }
        if (!top)
            break;
        top--;
        l = stack[3 * top];
        if ((rc = visit(u, l, stack[3 * top + 1], stack[3 * top + 2] != 0)) < 0)
            goto done;
    }

    /* Inertias: every link into its body. */
    for (size_t i = 0; i < u->n_links; i++) {
        ulink *L = &u->links[i];
        double pi[10];
        rb_inertia_to_parent(&L->in_body, L->pi, pi);
        for (int m = 0; m < 10; m++)
            u->bodies[L->body].pi[m] += pi[m];
    }

    /* A dof that moves no mass makes the mass matrix singular: that is where a missing <inertial> is an
     * error (a massless link merged into a parent, a frame link, or a massless link between two joints is
     * fine). The subtree masses are summed leaves first (bodies are in topological order). */
    if (!(subtree = rb_calloc(u->n_bodies, sizeof *subtree))) {
        rc = rb_model_urdf_no_memory(u);
        goto done;
    }
    for (size_t b = u->n_bodies; b-- > 0;) {
        subtree[b] += u->bodies[b].pi[0];
        if (b > 0)
            subtree[u->bodies[b].parent] += subtree[b];
    }
    for (size_t b = 1; b < u->n_bodies; b++) {
        const tmp_body *t = &u->bodies[b];
        if (t->type != RB_JOINT_FIXED && !(subtree[b] > 0)) {
            const ujoint *j = &u->joints[t->joint];
            char ctx[300];
            snprintf(ctx, sizeof ctx, "joint %.200s", j->name);
            rc = rb_model_urdf_bad(u, j->node, ctx,
                                   "moves no mass (link %.200s and everything beyond it have no <inertial>)",
                                   u->links[t->link].name);
            break;
        }
    }
    if (rc == RB_OK && u->opts && u->opts->floating && !(subtree[0] > 0))
        rc = rb_model_urdf_bad(u, NULL, "robot", "a floating base needs mass, but no link has an <inertial>");
done:
    rb_free(subtree);
    rb_free(stack);
    return rc;
}

static bool xform_close(const rb_xform *a, const rb_xform *b, double tol)
{
    for (int i = 0; i < 9; i++)
        if (fabs(a->R[i] - b->R[i]) > tol)
            return false;
    for (int i = 0; i < 3; i++)
        if (fabs(a->p[i] - b->p[i]) > tol)
            return false;
    return true;
}

/* A sensor's frame, named after the sensor. If a frame of that name exists (ergoCub names its IMU sensors
 * after the frame links that carry them) and sits on the same body at the same pose (1e-6 m, 1e-6 in each
 * rotation entry), the sensor uses it; otherwise the name clash is an error. */
static int sensor_frame(urdf *u, rb_model *m, const usensor *s, int body, const rb_xform *X, int *frame)
{
    /* The link frames come first, in link order (make_model): a link's index is its frame's. */
    long f = find_name(u->link_names, u->n_links, s->name);
    for (size_t i = u->n_links; f < 0 && i < m->n_frames; i++)
        if (strcmp(m->frames[i].name, s->name) == 0)
            f = (long)i;
    if (f >= 0) {
        const rb_frame *fr = &m->frames[f];
        if (fr->body != body || !xform_close(&fr->X_body, X, 1e-6)) {
            char ctx[300];
            snprintf(ctx, sizeof ctx, "sensor %.200s", s->name);
            return rb_model_urdf_bad(u, s->node, ctx, "its frame name is taken by a frame at another pose");
        }
        *frame = (int)f;
        return RB_OK;
    }
    int rc = rb_model_add_frame(m, s->name, body, X, RB_FRAME_SENSOR, u->err);
    if (rc < 0)
        return rc;
    *frame = (int)m->n_frames - 1;
    return RB_OK;
}

/* One accelerometer or gyroscope; the same sensor described twice (ergoCub has a top-level accelerometer
 * and a gazebo IMU of the same name at the same frame) is kept once. */
static int add_imu(urdf *u, rb_model *m, const usensor *s, rb_imu_kind kind, int frame)
{
    for (size_t i = 0; i < m->n_imu; i++)
        if (m->imu[i].kind == kind && strcmp(m->imu[i].name, s->name) == 0) {
            if (m->imu[i].frame == frame)
                return RB_OK;
            char ctx[300];
            snprintf(ctx, sizeof ctx, "sensor %.200s", s->name);
            return rb_model_urdf_bad(u, s->node, ctx, "another %s of this name sits at another frame",
                                     kind == RB_SENSOR_ACCELEROMETER ? "accelerometer" : "gyroscope");
        }
    return rb_model_add_imu(m, s->name, kind, frame, u->err);
}

static int make_model(urdf *u, rb_model **out)
{
    int rc;
    rb_model *m = NULL;
    const char **order = NULL;
    const tmp_body *b0 = &u->bodies[0];
    bool floating = u->opts && u->opts->floating;
    if ((rc = rb_model_begin(&m, u->robot_name, u->links[b0->link].name, b0->pi, floating, u->err)) < 0)
        goto done;
    if (!(m->source = rb_strdup(u->src))) {
        rc = rb_model_urdf_no_memory(u);
        goto done;
    }
    for (size_t i = 1; i < u->n_bodies; i++) {
        const tmp_body *b = &u->bodies[i];
        const ujoint *j = &u->joints[b->joint];
        if ((rc = rb_model_add_body(m, u->links[b->link].name, b->parent, b->type, j->name, &b->X_parent, b->axis,
                                    b->pi, u->err)) < 0)
            goto done;
        if (b->type != RB_JOINT_FIXED && (rc = rb_model_set_dof_limits(m, (size_t)m->bodies[i].dof, j->lower, j->upper,
                                                                       j->effort, j->velocity, u->err)) < 0)
            goto done;
    }
    for (size_t i = 0; i < u->n_links; i++)
        if ((rc = rb_model_add_frame(m, u->links[i].name, u->links[i].body, &u->links[i].in_body, RB_FRAME_LINK,
                                     u->err)) < 0)
            goto done;
    for (size_t k = 0; k < u->n_sensors; k++) {
        const usensor *s = &u->sensors[k];
        int frame;
        rb_xform X;
        if (s->kind == US_FT) {
            const ujoint *j = &u->joints[s->parent];
            const ulink *child = &u->links[j->child];
            rb_xform_compose(&child->in_body, &s->origin, &X);
            if ((rc = sensor_frame(u, m, s, child->body, &X, &frame)) < 0)
                goto done;
            int reading = s->frame_choice == 2 ? frame : s->frame_choice == 0 ? j->child : j->parent;
            /* The model's sign is relative to the model's parent and child bodies, which a reversed joint
             * swaps. */
            if ((rc = rb_model_add_ft_sensor(m, s->name, j->body, reading, frame, j->reversed ? -s->sign : s->sign,
                                             u->err)) < 0)
                goto done;
        } else {
            const ulink *L = &u->links[s->parent];
            rb_xform_compose(&L->in_body, &s->origin, &X);
            if ((rc = sensor_frame(u, m, s, L->body, &X, &frame)) < 0)
                goto done;
            if (s->kind != US_GYRO && (rc = add_imu(u, m, s, RB_SENSOR_ACCELEROMETER, frame)) < 0)
                goto done;
            if (s->kind != US_ACC && (rc = add_imu(u, m, s, RB_SENSOR_GYROSCOPE, frame)) < 0)
                goto done;
        }
    }
    /* Dof order: the joint list, else the URDF's document order. */
    if (m->n_dofs) {
        if (!(order = rb_calloc(m->n_dofs, sizeof *order))) {
            rc = rb_model_urdf_no_memory(u);
            goto done;
        }
        size_t n = 0;
        if (u->opts && u->opts->joints)
            for (size_t i = 0; i < u->opts->n_joints; i++)
                order[n++] = u->opts->joints[i];
        else
            for (size_t k = 0; k < u->n_joints; k++)
                if (u->joints[k].kept)
                    order[n++] = u->joints[k].name;
        if ((rc = rb_model_set_dof_order(m, order, n, u->err)) < 0)
            goto done;
    }
    if ((rc = rb_model_end(m, u->err)) < 0) {
        rb_err_prefix(u->err, rc, "%s: ", u->src);
        goto done;
    }
    *out = m;
    m = NULL;
done:
    rb_free(order);
    rb_model_free(m);
    return rc;
}

/* ---- entry points --------------------------------------------------------------------------------------- */

/* A URDF file of 50,000 links with inertias is about 16 MiB. */
#define URDF_MAX_BYTES ((size_t)64 << 20)

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;
static void xml_init(void) { xmlInitParser(); }

/* The parser reports through this instead of printing; the message is taken from the context afterwards. */
static void silent_errors(void *ctx, xmlErrorPtr error) { (void)ctx, (void)error; }

int rb_model_load_urdf_text(const char *xml, size_t len, const char *name, const rb_model_opts *opts, rb_model **out,
                            rb_err *err)
{
    if (!out || (!xml && len) || !name)
        return rb_err_set(err, RB_EINVAL, "rb_model_load_urdf_text: NULL argument");
    *out = NULL;
    int rc;
    urdf u = {.src = name, .err = err, .opts = opts, .base = -1};
    xmlParserCtxt *ctxt = NULL;
    rb_locale_scope loc = {NULL, NULL};
    bool blank = true;
    for (size_t i = 0; i < len && blank; i++)
        blank = xml[i] == ' ' || xml[i] == '\t' || xml[i] == '\n' || xml[i] == '\r';
    if (blank)
        return rb_err_set(err, RB_EINPUT, "%s: empty file", name);
    if (len > INT_MAX)
        return rb_err_set(err, RB_EINPUT, "%s: too large for the XML parser", name);

    pthread_once(&xml_once, xml_init);
    if (!(ctxt = xmlNewParserCtxt())) {
        rc = rb_model_urdf_no_memory(&u);
        goto done;
    }
    ctxt->sax->serror = silent_errors;
    u.doc = xmlCtxtReadMemory(ctxt, xml, (int)len, NULL, NULL,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
    if (!u.doc) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        char msg[300] = "not well-formed";
        if (e && e->message) {
            snprintf(msg, sizeof msg, "%s", e->message);
            for (size_t n = strlen(msg); n && (msg[n - 1] == '\n' || msg[n - 1] == ' '); n--)
                msg[n - 1] = '\0';
        }
        rc = rb_err_set(err, RB_EINPUT, "%s:%d: not XML: %s", name, e ? e->line : 0, msg);
        goto done;
    }
    /* Freed now, before the document: freeing its large input buffer after the document's many small nodes
     * makes glibc consolidate them all (a quarter of the load time of a 50,000-link chain). */
    xmlFreeParserCtxt(ctxt);
    ctxt = NULL;
    if ((rc = rb_c_locale_push(&loc, err)) < 0)
        goto done;
    if ((rc = rb_model_urdf_read_document(&u)) < 0 || (rc = build_tree(&u)) < 0 || (rc = resolve_sensors(&u)) < 0 ||
        (rc = apply_options(&u)) < 0 || (rc = make_bodies(&u)) < 0 || (rc = make_model(&u, out)) < 0)
        goto done;
    rc = RB_OK;
done:
    rb_c_locale_pop(&loc);
    rb_free(u.links);
    rb_free(u.joints);
    rb_free(u.sensors);
    rb_free(u.link_names);
    rb_free(u.joint_names);
    rb_free(u.child_start);
    rb_free(u.child_list);
    rb_free(u.bodies);
    if (u.doc)
        xmlFreeDoc(u.doc);
    if (ctxt)
        xmlFreeParserCtxt(ctxt);
    return rc;
}

int rb_model_load_urdf(const char *path, const rb_model_opts *opts, rb_model **out, rb_err *err)
{
    if (!path || !out)
        return rb_err_set(err, RB_EINVAL, "rb_model_load_urdf: NULL argument");
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = rb_file_read_all(path, URDF_MAX_BYTES, &text, &len, err);
    if (!rc)
        rc = rb_model_load_urdf_text(text, len, path, opts, out, err);
    rb_free(text);
    return rc;
}
