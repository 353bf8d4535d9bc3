/* URDF reader, stage 1 (see urdf.c): the document's links, joints and sensors read into plain arrays. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_internal.h"

/* ---- messages ------------------------------------------------------------------------------------------- */

int rb_model_urdf_bad(const urdf *u, const xmlNode *node, const char *ctx, const char *fmt, ...)
{
    char detail[RB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    long line = node ? xmlGetLineNo(node) : -1;
    if (line > 0)
        return rb_err_set(u->err, RB_EINPUT, "%s:%ld: %s: %s", u->src, line, ctx, detail);
    return rb_err_set(u->err, RB_EINPUT, "%s: %s: %s", u->src, ctx, detail);
}

int rb_model_urdf_no_memory(const urdf *u) { return rb_err_set(u->err, RB_ENOMEM, "%s: out of memory", u->src); }

/* ---- XML helpers ---------------------------------------------------------------------------------------- */

static bool is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static xmlNode *child_elem(const xmlNode *n, const char *name)
{
    for (xmlNode *c = n->children; c; c = c->next)
        if (is_elem(c, name))
            return c;
    return NULL;
}

/* The value of attribute `name`, borrowed from the document; NULL if absent. A value made of several nodes
 * (entity references left unexpanded, which this reader never expands) counts as absent. */
static const char *attr(const xmlNode *n, const char *name)
{
    for (xmlAttr *a = n->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, name) != 0)
            continue;
        if (!a->children)
            return "";
        if (a->children->type == XML_TEXT_NODE && !a->children->next && a->children->content)
            return (const char *)a->children->content;
        return NULL;
    }
    return NULL;
}

/* Text content of an element made of a single text node (borrowed), "" if empty, NULL otherwise. */
static const char *text_of(const xmlNode *n)
{
    if (!n->children)
        return "";
    if (n->children->type == XML_TEXT_NODE && !n->children->next && n->children->content)
        return (const char *)n->children->content;
    return NULL;
}

/* Names end up in messages, text output and the headers of result files, so a name holding a control
 * character (C0, DEL or C1: a newline written as &#10;, a tab) is refused, the name shown with \xNN escapes.
 * libxml2 has already refused text that is not UTF-8. */
static int check_name(const urdf *u, const xmlNode *n, const char *ctx, const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    bool bad = false;
    for (size_t i = 0; p[i] && !bad; i++)
        bad = p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f);
    if (!bad)
        return RB_OK;
    char shown[200];
    size_t k = 0;
    for (size_t i = 0; p[i] && k + 9 < sizeof shown; i++) {
        if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
            k += (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x\\x%02x", p[i], p[i + 1]);
            i++;
        } else if (p[i] < 0x20 || p[i] == 0x7f) {
            k += (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x", p[i]);
        } else {
            shown[k++] = (char)p[i];
        }
    }
    shown[k] = '\0';
    return rb_model_urdf_bad(u, n, ctx, "name \"%s\" holds a control character", shown);
}

/* Exactly n whitespace-separated finite numbers (the thread is under the C locale during a load). */
static bool parse_numbers(const char *s, double *out, size_t n)
{
    if (!s)
        return false;
    const char *p = s;
    for (size_t i = 0; i < n; i++) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            return false;
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v) || (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r'))
            return false;
        out[i] = v;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return *p == '\0';
}

/* A number attribute; `dflt` when absent (NaN dflt: required). */
static int num_attr(const urdf *u, const xmlNode *n, const char *name, double dflt, double *out, const char *ctx)
{
    const char *s = attr(n, name);
    if (!s) {
        if (isnan(dflt))
            return rb_model_urdf_bad(u, n, ctx, "<%s> needs attribute %s", (const char *)n->name, name);
        *out = dflt;
        return RB_OK;
    }
    if (!parse_numbers(s, out, 1))
        return rb_model_urdf_bad(u, n, ctx, "<%s> %s=\"%.60s\" is not a finite number", (const char *)n->name, name, s);
    return RB_OK;
}

static void xform_from_xyz_rpy(const double xyz[3], const double rpy[3], rb_xform *X)
{
    rb_m3_from_rpy(rpy[0], rpy[1], rpy[2], X->R);
    memcpy(X->p, xyz, sizeof X->p);
}

/* <origin xyz rpy> (both optional, zero by default); a NULL element is the identity. */
static int parse_origin(const urdf *u, const xmlNode *origin, rb_xform *X, const char *ctx)
{
    double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
    if (origin) {
        const char *s;
        if ((s = attr(origin, "xyz")) && !parse_numbers(s, xyz, 3))
            return rb_model_urdf_bad(u, origin, ctx, "<origin> xyz=\"%.60s\" is not 3 finite numbers", s);
        if ((s = attr(origin, "rpy")) && !parse_numbers(s, rpy, 3))
            return rb_model_urdf_bad(u, origin, ctx, "<origin> rpy=\"%.60s\" is not 3 finite numbers", s);
    }
    xform_from_xyz_rpy(xyz, rpy, X);
    return RB_OK;
}

/* ---- stage 1: reading ----------------------------------------------------------------------------------- */

static int read_inertial(urdf *u, ulink *l, const char *ctx)
{
    memset(l->pi, 0, sizeof l->pi);
    xmlNode *in = child_elem(l->node, "inertial");
    if (!in)
        return RB_OK; /* massless: a frame, or a link merged into its parent (checked after merging) */
    int rc;
    rb_xform X;
    double m, I[6];
    static const char *const inames[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
    xmlNode *mass = child_elem(in, "mass"), *inertia = child_elem(in, "inertia");
    if (!mass)
        return rb_model_urdf_bad(u, in, ctx, "<inertial> has no <mass>");
    if (!inertia)
        return rb_model_urdf_bad(u, in, ctx, "<inertial> has no <inertia>");
    if ((rc = parse_origin(u, child_elem(in, "origin"), &X, ctx)) < 0 ||
        (rc = num_attr(u, mass, "value", NAN, &m, ctx)) < 0)
        return rc;
    for (int i = 0; i < 6; i++)
        if ((rc = num_attr(u, inertia, inames[i], NAN, &I[i], ctx)) < 0)
            return rc;
    if (m < 0)
        return rb_model_urdf_bad(u, mass, ctx, "negative mass %g", m);
    double at_com[10] = {m, 0, 0, 0, I[0], I[1], I[2], I[3], I[4], I[5]};
    if (!rb_inertia_is_physical(at_com))
        return rb_model_urdf_bad(u, inertia, ctx,
                                 m == 0
                                     ? "zero mass with a non-zero rotational inertia"
                                     : "rotational inertia is not physically consistent (not positive semi-definite or "
                                       "violates the triangle inequality)");
    /* About the link origin: h = m c, I_O = R I_c R^T + m (|c|^2 1 - c c^T). */
    rb_inertia_to_parent(&X, at_com, l->pi);
    return RB_OK;
}

static int read_link(urdf *u, xmlNode *n, ulink *l)
{
    l->node = n;
    l->parent_joint = -1;
    l->body = -1;
    l->name = attr(n, "name");
    if (!l->name || !*l->name)
        return rb_model_urdf_bad(u, n, "link", "<link> without a name");
    int rc = check_name(u, n, "link", l->name);
    if (rc < 0)
        return rc;
    char ctx[300];
    snprintf(ctx, sizeof ctx, "link %.200s", l->name);
    return read_inertial(u, l, ctx);
}

static int read_joint(urdf *u, xmlNode *n, ujoint *j)
{
    int rc;
    j->node = n;
    j->parent = j->child = j->body = -1;
    j->name = attr(n, "name");
    if (!j->name || !*j->name)
        return rb_model_urdf_bad(u, n, "joint", "<joint> without a name");
    if ((rc = check_name(u, n, "joint", j->name)) < 0)
        return rc;
    char ctx[300];
    snprintf(ctx, sizeof ctx, "joint %.200s", j->name);
    const char *type = attr(n, "type");
    if (!type)
        return rb_model_urdf_bad(u, n, ctx, "no type");
    if (strcmp(type, "fixed") == 0)
        j->type = UJ_FIXED;
    else if (strcmp(type, "revolute") == 0)
        j->type = UJ_REVOLUTE;
    else if (strcmp(type, "continuous") == 0)
        j->type = UJ_CONTINUOUS;
    else if (strcmp(type, "prismatic") == 0)
        j->type = UJ_PRISMATIC;
    else if (strcmp(type, "floating") == 0 || strcmp(type, "planar") == 0)
        return rb_model_urdf_bad(u, n, ctx, "joint type %s is not supported (use a floating base instead)", type);
    else
        return rb_model_urdf_bad(u, n, ctx, "unknown joint type \"%.60s\"", type);

    xmlNode *parent = child_elem(n, "parent"), *child = child_elem(n, "child");
    if (!parent || !(j->parent_name = attr(parent, "link")))
        return rb_model_urdf_bad(u, n, ctx, "no <parent link=...>");
    if (!child || !(j->child_name = attr(child, "link")))
        return rb_model_urdf_bad(u, n, ctx, "no <child link=...>");
    if ((rc = parse_origin(u, child_elem(n, "origin"), &j->origin, ctx)) < 0)
        return rc;

    j->lower = -INFINITY, j->upper = INFINITY, j->effort = INFINITY, j->velocity = INFINITY;
    if (j->type == UJ_FIXED)
        return RB_OK; /* a fixed joint's axis and limits mean nothing (ergoCub writes axis 0 0 0 there) */

    double a[3] = {1, 0, 0};
    xmlNode *axis = child_elem(n, "axis");
    if (axis) {
        const char *s = attr(axis, "xyz");
        if (s && !parse_numbers(s, a, 3))
            return rb_model_urdf_bad(u, axis, ctx, "<axis> xyz=\"%.60s\" is not 3 finite numbers", s);
    }
    double norm = sqrt(rb_v3_dot(a, a));
    if (!(norm > 1e-12))
        return rb_model_urdf_bad(u, axis ? axis : n, ctx, "zero joint axis");
    for (int i = 0; i < 3; i++)
        j->axis[i] = a[i] / norm;

    xmlNode *limit = child_elem(n, "limit");
    if (limit) {
        /* URDF: lower and upper default to 0; effort and velocity are required by the spec, read as
         * "no limit" when absent. A continuous joint has no position limits whatever it says. */
        if ((rc = num_attr(u, limit, "effort", INFINITY, &j->effort, ctx)) < 0 ||
            (rc = num_attr(u, limit, "velocity", INFINITY, &j->velocity, ctx)) < 0)
            return rc;
        if (j->effort < 0 || j->velocity < 0)
            return rb_model_urdf_bad(u, limit, ctx, "negative effort or velocity limit");
        if (j->type != UJ_CONTINUOUS) {
            if ((rc = num_attr(u, limit, "lower", 0.0, &j->lower, ctx)) < 0 ||
                (rc = num_attr(u, limit, "upper", 0.0, &j->upper, ctx)) < 0)
                return rc;
            if (j->lower > j->upper)
                return rb_model_urdf_bad(u, limit, ctx, "lower limit %g above upper limit %g", j->lower, j->upper);
        }
    }
    return RB_OK;
}

/* Top-level <sensor>: force_torque, accelerometer, gyroscope; other types (camera, ray, ...) are skipped
 * (*s->name stays NULL). */
static int read_sensor(urdf *u, xmlNode *n, usensor *s)
{
    int rc;
    const char *type = attr(n, "type");
    if (!type ||
        (strcmp(type, "force_torque") != 0 && strcmp(type, "accelerometer") != 0 && strcmp(type, "gyroscope") != 0))
        return RB_OK;
    s->node = n;
    s->parent = -1;
    s->name = attr(n, "name");
    if (!s->name || !*s->name)
        return rb_model_urdf_bad(u, n, "sensor", "<sensor type=\"%s\"> without a name", type);
    if ((rc = check_name(u, n, "sensor", s->name)) < 0)
        return rc;
    char ctx[300];
    snprintf(ctx, sizeof ctx, "sensor %.200s", s->name);
    xmlNode *parent = child_elem(n, "parent");
    if ((rc = parse_origin(u, child_elem(n, "origin"), &s->origin, ctx)) < 0)
        return rc;
    if (strcmp(type, "force_torque") != 0) {
        s->kind = strcmp(type, "accelerometer") == 0 ? US_ACC : US_GYRO;
        if (!parent || !(s->parent_name = attr(parent, "link")))
            return rb_model_urdf_bad(u, n, ctx, "no <parent link=...>");
        return RB_OK;
    }
    s->kind = US_FT;
    if (!parent || !(s->parent_name = attr(parent, "joint")))
        return rb_model_urdf_bad(u, n, ctx, "no <parent joint=...>");
    xmlNode *ft = child_elem(n, "force_torque");
    xmlNode *frame = ft ? child_elem(ft, "frame") : NULL, *dir = ft ? child_elem(ft, "measure_direction") : NULL;
    const char *f = frame ? text_of(frame) : NULL, *d = dir ? text_of(dir) : NULL;
    /* Required rather than defaulted: a guessed frame or sign would silently corrupt every reading. */
    if (!f || !d)
        return rb_model_urdf_bad(u, n, ctx, "needs <force_torque><frame> and <measure_direction>");
    if (strcmp(f, "child") == 0)
        s->frame_choice = 0;
    else if (strcmp(f, "parent") == 0)
        s->frame_choice = 1;
    else if (strcmp(f, "sensor") == 0)
        s->frame_choice = 2;
    else
        return rb_model_urdf_bad(u, frame, ctx, "<frame> must be child, parent or sensor, not \"%.60s\"", f);
    if (strcmp(d, "parent_to_child") == 0)
        s->sign = 1;
    else if (strcmp(d, "child_to_parent") == 0)
        s->sign = -1;
    else
        return rb_model_urdf_bad(u, dir, ctx,
                                 "<measure_direction> must be parent_to_child or child_to_parent, not \"%.60s\"", d);
    return RB_OK;
}

/* <gazebo reference="LINK"><sensor type="imu" name=...><pose>x y z r p y</pose>: one accelerometer and one
 * gyroscope. Gazebo sensors of other types (force_torque included: the top-level tag is authoritative) are
 * for the simulator and skipped. */
static int read_gazebo_imu(urdf *u, const xmlNode *gz, xmlNode *n, usensor *s)
{
    s->node = n;
    s->parent = -1;
    s->kind = US_IMU;
    s->name = attr(n, "name");
    if (!s->name || !*s->name)
        return rb_model_urdf_bad(u, n, "gazebo sensor", "<sensor type=\"imu\"> without a name");
    int rc = check_name(u, n, "sensor", s->name);
    if (rc < 0)
        return rc;
    char ctx[300];
    snprintf(ctx, sizeof ctx, "sensor %.200s", s->name);
    if (!(s->parent_name = attr(gz, "reference")))
        return rb_model_urdf_bad(u, n, ctx, "IMU in a <gazebo> element without reference=LINK");
    double pose[6] = {0, 0, 0, 0, 0, 0};
    xmlNode *p = child_elem(n, "pose");
    if (p && !parse_numbers(text_of(p), pose, 6))
        return rb_model_urdf_bad(u, p, ctx, "<pose> is not 6 finite numbers");
    xform_from_xyz_rpy(pose, pose + 3, &s->origin);
    return RB_OK;
}

static bool is_gazebo_imu(const xmlNode *n)
{
    const char *t;
    return is_elem(n, "sensor") && (t = attr(n, "type")) && strcmp(t, "imu") == 0;
}

int rb_model_urdf_read_document(urdf *u)
{
    xmlNode *robot = xmlDocGetRootElement(u->doc);
    if (!robot || !is_elem(robot, "robot"))
        return rb_model_urdf_bad(u, robot, "document", "the root element is <%s>, not <robot>",
                                 robot ? (const char *)robot->name : "(none)");
    u->robot_name = attr(robot, "name");
    if (!u->robot_name)
        u->robot_name = "";
    int rc = check_name(u, robot, "robot", u->robot_name);
    if (rc < 0)
        return rc;
    size_t nl = 0, nj = 0, ns = 0;
    for (xmlNode *c = robot->children; c; c = c->next) {
        if (is_elem(c, "link"))
            nl++;
        else if (is_elem(c, "joint"))
            nj++;
        else if (is_elem(c, "sensor"))
            ns++;
        else if (is_elem(c, "gazebo"))
            for (xmlNode *g = c->children; g; g = g->next)
                ns += is_gazebo_imu(g);
    }
    if (nl == 0)
        return rb_model_urdf_bad(u, robot, "robot", "no <link>");
    if (nl >= INT_MAX / 2 || nj >= INT_MAX / 2 || ns >= INT_MAX / 2)
        return rb_model_urdf_bad(u, robot, "robot", "too many elements");
    u->links = rb_calloc(nl, sizeof *u->links);
    u->joints = rb_calloc(nj, sizeof *u->joints);
    u->sensors = rb_calloc(ns, sizeof *u->sensors);
    if (!u->links || !u->joints || !u->sensors)
        return rb_model_urdf_no_memory(u);
    for (xmlNode *c = robot->children; c; c = c->next) {
        if (is_elem(c, "link")) {
            if ((rc = read_link(u, c, &u->links[u->n_links++])) < 0)
                return rc;
        } else if (is_elem(c, "joint")) {
            if ((rc = read_joint(u, c, &u->joints[u->n_joints++])) < 0)
                return rc;
        } else if (is_elem(c, "sensor")) {
            if ((rc = read_sensor(u, c, &u->sensors[u->n_sensors])) < 0)
                return rc;
            if (u->sensors[u->n_sensors].name)
                u->n_sensors++;
        } else if (is_elem(c, "gazebo")) {
            for (xmlNode *g = c->children; g; g = g->next)
                if (is_gazebo_imu(g) && (rc = read_gazebo_imu(u, c, g, &u->sensors[u->n_sensors++])) < 0)
                    return rc;
        }
    }
    return RB_OK;
}
