/*
 * roboest model: robot models from URDF (libxml2) as kinematic trees of rigid bodies, with frames
 * and sensors. A loaded model is immutable and shareable between threads; algorithms (roboest/
 * dynamics.h) take `const rb_model *` plus a caller-owned workspace.
 *
 * Conventions: roboest/spatial.h (6D vectors linear first; rb_xform = pose of a frame in another;
 * inertial parameters [m, h, I] about the body frame origin).
 *
 * Bodies. URDF links joined by fixed joints are merged into one rigid body at load time (their
 * inertias added, the merged links kept as frames), EXCEPT across a fixed joint that carries a
 * six-axis force/torque sensor: there the two halves stay separate bodies joined by a FIXED joint,
 * because the sensor measures the wrench between them. Bodies are stored in topological order
 * (a parent's index is below its children's); bodies[0] is the base.
 *
 * Joints. Body i moves relative to its parent body by
 *     parent_X_i(q) = X_parent * X_joint(q_i),
 * X_joint a rotation by q_i about `axis` (REVOLUTE; URDF revolute and continuous) or a translation by
 * q_i along `axis` (PRISMATIC), the identity for FIXED; `axis` is a unit vector in the body frame.
 * The body frame is the URDF child link's frame, except for bodies whose joint was reversed to
 * re-root the tree at another base link: there it is the joint frame (the link frame is a frame of
 * the body at a fixed offset).
 *
 * Joint vectors. The model's n movable joints ("dofs") are ordered by the joint list given at load
 * time (default: every movable URDF joint in document order); every per-joint vector in roboest
 * follows that order. Fixed base: nq = nv = n. Floating base: q = [p_WB (3), quat_WB (4: w x y z),
 * s (n)] (nq = 7 + n) and nu = [v_B (3), w_B (3), s_dot (n)] (nv = 6 + n): the base twist is
 * body-fixed (left-trivialized, expressed in the base frame), linear part first, as in the public
 * UKF joint-torque estimator; nu_dot's base part is its time derivative.
 *
 * Frames. Every URDF link is a frame named after it; every sensor is a frame named after the
 * sensor. A frame is rigidly attached to a body at pose X_body.
 *
 * Sensors (iDynTree's URDF convention):
 *   - six-axis force/torque: top-level <sensor name=... type="force_torque"> with
 *     <parent joint="J"/> (a fixed joint), <origin> = the sensor frame's pose in J's CHILD link,
 *     <force_torque><frame>child|parent|sensor</frame><measure_direction>child_to_parent|
 *     parent_to_child</measure_direction>. The reading is the wrench the parent half exerts on the
 *     child half (parent_to_child) or the opposite (child_to_parent), force first, expressed in the
 *     chosen frame with the moment about its origin;
 *   - accelerometer / gyroscope: <sensor type="accelerometer"|"gyroscope"> with <parent link=.../>
 *     and <origin>, or <gazebo reference="LINK"><sensor type="imu"> (an IMU gives one accelerometer
 *     and one gyroscope frame, named after the sensor, with its <pose> x y z roll pitch yaw).
 *
 * Reading URDF (rb_model_load_urdf):
 *   - <link> <inertial>: <origin xyz rpy> of the centre-of-mass frame (default identity), <mass value>, and
 *     <inertia ixx ixy ixz iyy iyz izz> about the centre of mass in that frame, all required inside
 *     <inertial>. Mass must be >= 0 and the inertia physical (rb_inertia_is_physical). A link without
 *     <inertial> is massless, which is fine for frame links and links merged into a body; it is an error
 *     (RB_EINPUT naming the joint) only where it makes the dynamics singular: a movable joint whose child
 *     body and all its descendants have no mass, or a floating base model without any mass.
 *   - <joint> types revolute, continuous (revolute without position limits), prismatic, fixed; floating
 *     and planar are RB_EINPUT. <axis xyz> defaults to 1 0 0 and is normalized (zero: error); <limit>:
 *     lower/upper default 0 (URDF), effort/velocity INFINITY when absent; no <limit>: no limits.
 *   - Reduced models: the movable joints not in opts->joints are locked (at zero, or at their
 *     opts->locked_at position) and merged like fixed joints. Without a joint list, every movable joint
 *     not named in opts->locked is a dof.
 *   - Re-rooting (opts->base): the joints on the path from the URDF root to the base link are reversed.
 *     A reversed joint's axis is negated so that q keeps its meaning: the relative pose of its two links at
 *     a given q is the URDF's. The body beyond a reversed joint is named after the URDF link the joint
 *     reaches and its body frame is the joint frame, which coincides with the joint's URDF child link at
 *     q = 0 (see Frames for the link's own frame).
 *   - Sensors: every sensor becomes a frame named after it. If the name is already a frame (ergoCub names
 *     IMUs after the frame links carrying them), the sensor uses that frame when it lies on the same body
 *     at the same pose (within 1e-6), and the load fails otherwise. An IMU described twice (a top-level
 *     accelerometer and a gazebo IMU of the same name at the same frame) is kept once. A force/torque
 *     sensor needs both <frame> and <measure_direction> (no guessed sign). Top-level sensors of other types
 *     (camera, depth, ray, ...) and every <gazebo> sensor but type="imu" are ignored.
 *
 * Errors: RB_ENOTFOUND (no such file, joint, link or frame named in the options), RB_EINPUT (a
 * malformed URDF: one line naming the file, the line when known, and the element, e.g.
 * "robot.urdf:42: joint r_knee: child link r_shank_x does not exist"), RB_EINVAL (bad arguments),
 * RB_ENOMEM. The library never prints: libxml2's messages are caught and reported the same way.
 */
#ifndef ROBOEST_MODEL_H
#define ROBOEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"
#include "roboest/spatial.h"

RB_API_BEGIN

typedef enum rb_joint_type { RB_JOINT_FIXED, RB_JOINT_REVOLUTE, RB_JOINT_PRISMATIC } rb_joint_type;

typedef struct rb_body {
    char *name;         /* the URDF link the body is named after */
    int parent;         /* parent body index; -1 for the base */
    rb_joint_type type; /* joint to the parent (FIXED for the base and for FT-sensor joints) */
    char *joint_name;   /* URDF joint to the parent; NULL for the base */
    int dof;            /* index in the joint vectors, -1 for FIXED */
    rb_xform X_parent;  /* pose of the joint frame at q = 0 in the parent body frame */
    double axis[3];     /* unit joint axis in the body frame (zero for FIXED) */
    double inertia[10]; /* inertial parameters about the body frame origin (merged links included) */
} rb_body;

typedef enum rb_frame_kind { RB_FRAME_LINK, RB_FRAME_SENSOR, RB_FRAME_USER } rb_frame_kind;

typedef struct rb_frame {
    char *name;
    int body;        /* the body it is attached to */
    rb_xform X_body; /* its pose in the body frame */
    rb_frame_kind kind;
} rb_frame;

typedef struct rb_ft_sensor {
    char *name;
    char *joint_name; /* the fixed joint it sits on */
    int child_body;   /* the body on the joint's child side (its parent joint is the FT joint) */
    int parent_body;  /* the body on the joint's parent side */
    int frame;        /* frame the reading is expressed in (child link, parent link or sensor frame) */
    int sensor_frame; /* the sensor's own frame (from <origin>) */
    int sign;         /* the reading is sign * (wrench that the parent_body side exerts on the child_body
                          * side): +1 for parent_to_child, -1 for child_to_parent, negated when re-rooting
                          * reversed the joint (the model's parent side is then the URDF child link's) */
} rb_ft_sensor;

typedef enum rb_imu_kind { RB_SENSOR_ACCELEROMETER, RB_SENSOR_GYROSCOPE } rb_imu_kind;

typedef struct rb_imu_sensor {
    char *name;
    rb_imu_kind kind;
    int frame; /* the sensor frame */
} rb_imu_sensor;

typedef struct rb_model {
    char *name;    /* URDF robot name */
    char *source;  /* file it was loaded from (or the name given to the string loader) */
    bool floating; /* floating base: 6 more velocity coordinates */
    size_t n_bodies;
    rb_body *bodies;                   /* topological order, bodies[0] the base */
    size_t n_dofs;                     /* movable joints n */
    char **dof_names;                  /* n joint names, joint-list order */
    int *dof_body;                     /* n body indices */
    double *dof_lower, *dof_upper;     /* n position limits (-INFINITY / INFINITY when none) */
    double *dof_effort, *dof_velocity; /* n limits (INFINITY when none) */
    size_t nq, nv;                     /* n and n (fixed base); 7 + n and 6 + n (floating base) */
    size_t n_frames;
    rb_frame *frames;
    size_t n_ft;
    rb_ft_sensor *ft;
    size_t n_imu;
    rb_imu_sensor *imu;
    double gravity[3];            /* world gravity, m/s^2, default (0, 0, -9.81) */
    double total_mass;            /* kg */
    struct rb_model_names *names; /* private: the name look-ups' sorted indexes, made by rb_model_end (any
                                   * builder call after it drops them, the look-ups then scan the arrays) */
} rb_model;

typedef struct rb_model_opts {
    const char *const *joints; /* joint list: the movable joints kept, in this order (NULL: all, URDF order) */
    size_t n_joints;
    const char *const *locked; /* movable joints locked at locked_at (optional; with a joint list, the
                                 * joints not in the list and not here are locked at zero) */
    const double *locked_at;   /* n_locked positions, rad or m */
    size_t n_locked;
    const char *base; /* base link (NULL: the URDF root) */
    bool floating;    /* floating base */
} rb_model_opts;

/* Load a URDF file (caller frees *out with rb_model_free; *out is NULL on failure). opts may be NULL (all
 * joints, URDF root, fixed base). RB_ENOTFOUND: no such file, or a joint/base link named in opts missing;
 * RB_EINPUT: not a regular file or larger than 64 MiB (rb_file_read_all), malformed URDF ("file:line: element
 * name: detail") or a fixed joint in the joint list;
 * RB_EINVAL: a joint listed twice, both listed and locked, or a NULL list with a length. */
int rb_model_load_urdf(const char *path, const rb_model_opts *opts, rb_model **out, rb_err *err);
/* The same from text; `name` starts error messages and becomes model->source. */
int rb_model_load_urdf_text(const char *xml, size_t len, const char *name, const rb_model_opts *opts, rb_model **out,
                            rb_err *err);
void rb_model_free(rb_model *model);

/* Index lookups by exact name, -1 if absent. */
long rb_model_body_index(const rb_model *model, const char *name);
long rb_model_frame_index(const rb_model *model, const char *name);
long rb_model_dof_index(const rb_model *model, const char *joint_name);
long rb_model_ft_index(const rb_model *model, const char *sensor_name);

/* ---- building models in code (tests, generated models) -------------------------------------------- *
 * rb_model_begin makes an empty model with a base body of the given inertia; rb_model_add_body
 * appends a body (its parent must exist; movable joints get the next dof index); rb_model_add_frame
 * attaches a frame; rb_model_end validates (unique body, joint, frame and FT sensor names, unit axes,
 * physically valid inertias, finite rigid poses), adds a LINK frame named after each body at its origin
 * unless a frame of that name already exists, and fills nq, nv, total_mass. Names are copied. On an error
 * the model stays valid for rb_model_free (the caller frees it). The builder functions return RB_EINVAL
 * for bad indices or NULL arguments and RB_ENOMEM; rb_model_end returns RB_EINPUT for an invalid model.
 * rb_model_add_body: joint_name is required; axis (unit, in the new body's frame) is ignored for FIXED and
 * may then be NULL; inertia about the new body's origin. */
int rb_model_begin(rb_model **out, const char *name, const char *base_name, const double base_inertia[10],
                   bool floating, rb_err *err);
int rb_model_add_body(rb_model *model, const char *name, int parent, rb_joint_type type, const char *joint_name,
                      const rb_xform *X_parent, const double axis[3], const double inertia[10], rb_err *err);
int rb_model_add_frame(rb_model *model, const char *name, int body, const rb_xform *X_body, rb_frame_kind kind,
                       rb_err *err);
/* Position, effort and velocity limits of dof `dof` (defaults: none, i.e. -INFINITY / INFINITY);
 * RB_EINVAL if lower > upper, a limit is NaN or effort/velocity is negative. */
int rb_model_set_dof_limits(rb_model *model, size_t dof, double lower, double upper, double effort, double velocity,
                            rb_err *err);
/* A six-axis FT sensor on the FIXED joint of body `child_body` (> 0); `frame` is the frame the reading is
 * expressed in, `sensor_frame` the sensor's own frame (indices of existing frames), sign +1 for
 * parent_to_child, -1 for child_to_parent. */
int rb_model_add_ft_sensor(rb_model *model, const char *name, int child_body, int frame, int sensor_frame, int sign,
                           rb_err *err);
/* An accelerometer or gyroscope at an existing frame. */
int rb_model_add_imu(rb_model *model, const char *name, rb_imu_kind kind, int frame, rb_err *err);
/* Reorder the dofs to follow `names` (every movable joint exactly once); RB_ENOTFOUND / RB_EINVAL. */
int rb_model_set_dof_order(rb_model *model, const char *const *names, size_t n, rb_err *err);
int rb_model_end(rb_model *model, rb_err *err);

/* Physical consistency of inertial parameters: m >= 0, rotational inertia about the centre of mass
 * positive semi-definite and satisfying the triangle inequalities. */
bool rb_inertia_is_physical(const double pi[10]);

RB_API_END

#endif
