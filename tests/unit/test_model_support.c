/* Helpers shared by the test_model*.c files (named test_model_* so that every build of the model tests links it). */
#include "model_support.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void fk_bodies(const rb_model *m, const double *q, rb_xform *pose)
{
    for (size_t i = 0; i < m->n_bodies; i++) {
        const rb_body *b = &m->bodies[i];
        rb_xform J, t;
        rb_xform_identity(&J);
        if (b->type == RB_JOINT_REVOLUTE)
            rb_m3_from_axis_angle(b->axis, q[b->dof], J.R);
        else if (b->type == RB_JOINT_PRISMATIC)
            for (int k = 0; k < 3; k++)
                J.p[k] = b->axis[k] * q[b->dof];
        if (b->parent < 0) {
            rb_xform_compose(&b->X_parent, &J, &pose[i]);
            continue;
        }
        rb_xform_compose(&pose[b->parent], &b->X_parent, &t);
        rb_xform_compose(&t, &J, &pose[i]);
    }
}

void fk_frame(const rb_model *m, const rb_xform *pose, long f, rb_xform *out)
{
    rb_xform_compose(&pose[m->frames[f].body], &m->frames[f].X_body, out);
}

void relative_pose(const rb_model *m, const rb_xform *pose, long a, long b, rb_xform *out)
{
    rb_xform A, B, Ai;
    fk_frame(m, pose, a, &A);
    fk_frame(m, pose, b, &B);
    rb_xform_inverse(&A, &Ai);
    rb_xform_compose(&Ai, &B, out);
}

void model_composite(const rb_model *m, const double *q, long frame, double out[10])
{
    rb_xform *pose = calloc(m->n_bodies, sizeof *pose), F, Fi;
    double total[10] = {0}, pi[10];
    fk_bodies(m, q, pose);
    for (size_t i = 0; i < m->n_bodies; i++) {
        rb_inertia_to_parent(&pose[i], m->bodies[i].inertia, pi);
        for (int k = 0; k < 10; k++)
            total[k] += pi[k];
    }
    fk_frame(m, pose, frame, &F);
    rb_xform_inverse(&F, &Fi);
    rb_inertia_to_parent(&Fi, total, out);
    free(pose);
}

void urdf_composite(const test_urdf *u, double out[10])
{
    memset(out, 0, 10 * sizeof *out);
    for (size_t i = 0; i < u->n_links; i++) {
        double pi[10];
        rb_inertia_to_parent(&u->pose[i], u->pi[i], pi);
        for (int k = 0; k < 10; k++)
            out[k] += pi[k];
    }
}

static const char *prop(xmlNode *n, const char *name, char *buf, size_t size)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v)
        return NULL;
    snprintf(buf, size, "%s", (const char *)v);
    xmlFree(v);
    return buf;
}

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
            return c;
    return NULL;
}

static void origin(xmlNode *o, rb_xform *X)
{
    char buf[256];
    double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
    if (o && prop(o, "xyz", buf, sizeof buf))
        sscanf(buf, "%lf %lf %lf", &xyz[0], &xyz[1], &xyz[2]);
    if (o && prop(o, "rpy", buf, sizeof buf))
        sscanf(buf, "%lf %lf %lf", &rpy[0], &rpy[1], &rpy[2]);
    rb_m3_from_rpy(rpy[0], rpy[1], rpy[2], X->R);
    memcpy(X->p, xyz, sizeof xyz);
}

static double num(xmlNode *n, const char *name)
{
    char buf[128];
    return prop(n, name, buf, sizeof buf) ? strtod(buf, NULL) : 0.0;
}

long test_urdf_link(const test_urdf *u, const char *name)
{
    for (size_t i = 0; i < u->n_links; i++)
        if (strcmp(u->link_names[i], name) == 0)
            return (long)i;
    return -1;
}

bool test_urdf_read(const char *path, test_urdf *u)
{
    memset(u, 0, sizeof *u);
    xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    if (!doc)
        return false;
    xmlNode *robot = xmlDocGetRootElement(doc);
    size_t nl = 0, nj = 0;
    for (xmlNode *c = robot->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            nl += strcmp((const char *)c->name, "link") == 0, nj += strcmp((const char *)c->name, "joint") == 0;
    u->link_names = calloc(nl, sizeof *u->link_names);
    u->pi = calloc(nl, sizeof *u->pi);
    u->pose = calloc(nl, sizeof *u->pose);
    char(*jparent)[256] = calloc(nj, sizeof *jparent), (*jchild)[256] = calloc(nj, sizeof *jchild);
    rb_xform *jorigin = calloc(nj, sizeof *jorigin);
    bool *placed = calloc(nl, sizeof *placed);
    char buf[256];
    for (xmlNode *c = robot->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (strcmp((const char *)c->name, "link") == 0) {
            size_t i = u->n_links++;
            u->link_names[i] = strdup(prop(c, "name", buf, sizeof buf));
            xmlNode *in = child(c, "inertial");
            if (in) {
                rb_xform X;
                origin(child(in, "origin"), &X);
                xmlNode *I = child(in, "inertia");
                double m = num(child(in, "mass"), "value");
                double at_com[10] = {m,
                                     0,
                                     0,
                                     0,
                                     num(I, "ixx"),
                                     num(I, "ixy"),
                                     num(I, "ixz"),
                                     num(I, "iyy"),
                                     num(I, "iyz"),
                                     num(I, "izz")};
                rb_inertia_to_parent(&X, at_com, u->pi[i]);
                u->total_mass += m;
            }
        } else if (strcmp((const char *)c->name, "joint") == 0) {
            size_t k = u->n_joints++;
            prop(child(c, "parent"), "link", jparent[k], sizeof jparent[k]);
            prop(child(c, "child"), "link", jchild[k], sizeof jchild[k]);
            origin(child(c, "origin"), &jorigin[k]);
            u->n_movable += strcmp(prop(c, "type", buf, sizeof buf), "fixed") != 0;
        }
    }
    /* the root is never a child; poses by relaxation (each pass places the children of placed links) */
    for (size_t i = 0; i < u->n_links; i++) {
        bool is_child = false;
        for (size_t k = 0; k < u->n_joints; k++)
            is_child |= strcmp(jchild[k], u->link_names[i]) == 0;
        if (!is_child) {
            u->root = strdup(u->link_names[i]);
            rb_xform_identity(&u->pose[i]);
            placed[i] = true;
        }
    }
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t k = 0; k < u->n_joints; k++) {
            long p = test_urdf_link(u, jparent[k]), c = test_urdf_link(u, jchild[k]);
            if (placed[p] && !placed[c]) {
                rb_xform_compose(&u->pose[p], &jorigin[k], &u->pose[c]);
                placed[c] = progress = true;
            }
        }
    }
    free(jparent), free(jchild), free(jorigin), free(placed);
    xmlFreeDoc(doc);
    return u->root != NULL;
}

void test_urdf_free(test_urdf *u)
{
    for (size_t i = 0; i < u->n_links; i++)
        free(u->link_names[i]);
    free(u->link_names), free(u->pi), free(u->pose), free(u->root);
}

static uint64_t state = 0x853c49e6748fea9bull;
double test_uniform(double lo, double hi)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * ((double)(z >> 11) / 9007199254740992.0);
}
