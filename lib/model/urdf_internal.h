/* Private to lib/model's URDF reader: the links, joints and sensors urdf_read.c reads and urdf.c builds on. */
#ifndef ROBOEST_MODEL_URDF_INTERNAL_H
#define ROBOEST_MODEL_URDF_INTERNAL_H

#include <libxml/tree.h>

#include "roboest/model.h"

enum ujoint_type { UJ_FIXED, UJ_REVOLUTE, UJ_CONTINUOUS, UJ_PRISMATIC };

typedef struct ulink {
    const char *name;
    xmlNode *node;
    double pi[10];    /* inertial parameters about the link origin, in link axes */
    int parent_joint; /* -1 for the URDF root */
    int body;         /* model body holding the link */
    rb_xform in_body; /* pose of the link frame in its body frame */
    bool visited;
} ulink;

typedef struct ujoint {
    const char *name;
    xmlNode *node;
    enum ujoint_type type;
    const char *parent_name, *child_name;
    int parent, child; /* link indices, URDF direction */
    rb_xform origin;   /* child link frame in the parent link frame at q = 0 */
    double axis[3];    /* unit, in the child link frame */
    double lower, upper, effort, velocity;
    bool has_ft;      /* a six-axis FT sensor sits on it: kept as a FIXED body */
    bool kept;        /* a dof of the model */
    bool reversed;    /* oriented child -> parent by re-rooting */
    double locked_at; /* position when movable but not kept */
    int body;         /* body it is the parent joint of (kept joints), else -1 */
} ujoint;

typedef enum usensor_kind { US_FT, US_ACC, US_GYRO, US_IMU } usensor_kind;

typedef struct usensor {
    const char *name;
    xmlNode *node;
    usensor_kind kind;
    const char *parent_name; /* joint (FT) or link */
    int parent;              /* joint or link index */
    rb_xform origin;         /* in the FT joint's child link, or in the parent link */
    int frame_choice;        /* FT: 0 child, 1 parent, 2 sensor */
    int sign;                /* FT: +1 parent_to_child, -1 child_to_parent */
} usensor;

typedef struct tmp_body {
    int link;   /* link the body is named after */
    int parent; /* parent body */
    int joint;  /* its parent joint (-1 for the base) */
    rb_joint_type type;
    rb_xform X_parent;
    double axis[3];
    double pi[10];
} tmp_body;

typedef struct urdf {
    const char *src;
    rb_err *err;
    const rb_model_opts *opts;
    xmlDoc *doc;
    const char *robot_name;
    ulink *links;
    size_t n_links;
    ujoint *joints;
    size_t n_joints;
    usensor *sensors;
    size_t n_sensors;
    rb_name_ref *link_names, *joint_names; /* sorted by name for bsearch */
    int *child_start, *child_list;         /* CSR: link i's child joints are child_list[child_start[i] ..] */
    int base;                              /* base link */
    tmp_body *bodies;
    size_t n_bodies;
} urdf;

/* RB_EINPUT "<src>:<line>: <context>: <detail>" */
int rb_model_urdf_bad(const urdf *u, const xmlNode *node, const char *ctx, const char *fmt, ...) RB_PRINTF(4, 5);
/* RB_ENOMEM "<src>: out of memory" */
int rb_model_urdf_no_memory(const urdf *u);
/* Stage 1: every <link>, <joint>, top-level <sensor> and <gazebo><sensor type="imu"> of u->doc into u's arrays. */
int rb_model_urdf_read_document(urdf *u);

#endif
