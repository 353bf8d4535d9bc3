/*
 * roboest rde: the public UKF joint-torque estimator's configuration (robot-dynamics-estimation, the
 * reference implementation of the joint-torque paper, ../shared/models/rde_configs) read and turned into a
 * roboest pipeline (`roboest import-rde`).
 *
 * ---- YARP-style .ini files (rb_ini) ----
 * The syntax of YARP's ResourceFinder / Property .ini files as the public estimator's configurations use it,
 * read strictly (anything else is an error, RB_ECONFIG "<file>:<line>: <what>"):
 *   - one statement per line: `key value`, `[GROUP]` or `[include GROUP "file.ini"]`; blank lines;
 *   - comments start at `;` or `#` outside a quoted string and run to the end of the line (whole lines,
 *     indented lines, after a value, and between the elements of a list);
 *   - key: letters, digits and `_ . -`, starting with a letter or `_`; unique within its group;
 *   - value: exactly one of a bare word (`0.01`, `true`: any run of characters but whitespace and
 *     `( ) , " ; # [ ]`), a quoted string (`"urdf/robot.urdf"`; escapes `\"` and `\\`, no line break), or a
 *     list in parentheses whose elements are bare words or quoted strings separated by commas and/or white
 *     space, which may span lines: `("a", "b")`, `(1e-3, 2e-3)`, `()`. A second value after the first
 *     ("key 1 2"), an empty element (`(1,, 2)`, `(1,)`), a nested list and a missing `)` are errors;
 *   - `[GROUP]` starts a group holding the following keys; groups of one file are siblings under the file's
 *     root (`GROUP` named like keys; unique among its siblings);
 *   - `[include GROUP "file.ini"]` (the file name may also be a bare word) makes GROUP a group of the
 *     including file's root whose keys are the included file's top-level keys and whose sub-groups are the
 *     included file's own [SECTION]s (and includes); the path is relative to the including file's folder. An include nested deeper than 8 files
 *     or a cycle is an error; so is a key right after an include line (start a [GROUP] first);
 *   - a NUL byte or a file above 64 MiB is an error; "\r\n" line ends are accepted.
 * Errors, e.g. "<file>:<line of the '('>: unterminated list for key 'k' (found '[' on line N)" (or "(no ')'
 * before the end of the file)"; a '(' on a later line reads the same), "<file>:<line>: include file 'x.ini'
 * not found (<resolved path>)", "<file>:<line>: duplicate key 'k' (first on line M)"; RB_ENOTFOUND when the
 * top file itself cannot be opened; RB_ENOMEM.
 */
#ifndef ROBOEST_RDE_H
#define ROBOEST_RDE_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

RB_API_BEGIN

typedef struct rb_ini_entry {
    char *key;
    size_t n_values;  /* 1 for a scalar; any count (0 included) for a list */
    char **values;    /* the texts, quotes and escapes removed */
    bool *quoted;     /* per value: written in double quotes */
    bool is_list;     /* written in parentheses */
    const char *file; /* where it is written (borrowed from rb_ini.files) */
    size_t line;      /* of the key */
} rb_ini_entry;

typedef struct rb_ini_group {
    char *name;       /* "" for the root of the top file */
    const char *file; /* the file holding its keys (borrowed from rb_ini.files) */
    size_t line;      /* its [GROUP] line in `file`; 0 for a whole file (a root or an include) */
    size_t n_entries;
    rb_ini_entry *entries; /* file order */
    size_t n_groups;
    struct rb_ini_group *groups; /* file order */
} rb_ini_group;

typedef struct rb_ini {
    rb_ini_group root;
    size_t n_files;
    char **files; /* every file read, top file first, as opened (include paths resolved) */
} rb_ini;

/* Read an .ini file and its includes (caller frees *out with rb_ini_free; *out NULL on failure). */
int rb_ini_load(const char *path, rb_ini **out, rb_err *err);
/* The same from text (len bytes); `name` starts messages and anchors relative include paths. */
int rb_ini_load_text(const char *text, size_t len, const char *name, rb_ini **out, rb_err *err);
void rb_ini_free(rb_ini *ini);

/* Sub-group / entry by exact (case-sensitive) name, NULL if absent (borrowed). */
const rb_ini_group *rb_ini_group_find(const rb_ini_group *g, const char *name);
const rb_ini_entry *rb_ini_entry_find(const rb_ini_group *g, const char *key);
/* "<file>:<line>: [NAME]" (a group with a header line) or "<file>:1: group NAME" into buf, for messages. */
void rb_ini_group_where(const rb_ini_group *g, char *buf, size_t size);

/* Typed reads of key `key` of group g. Absent: RB_ECONFIG "<group where>: missing key 'key'" when
 * `required`, else RB_OK with the output untouched. A value of the wrong shape: RB_ECONFIG "<file>:<line>:
 * key 'key': expected <what>, got ...". Numbers are decimal ([+-]digits[.digits][(e|E)[+-]digits], finite;
 * read under the C locale) written as bare words; booleans are 0, 1, true or false. */
int rb_ini_get_string(const rb_ini_group *g, const char *key, bool required, const char **out, rb_err *err);
int rb_ini_get_number(const rb_ini_group *g, const char *key, bool required, double *out, rb_err *err);
int rb_ini_get_bool(const rb_ini_group *g, const char *key, bool required, bool *out, rb_err *err);
/* A list of strings (bare or quoted): *out borrowed from the entry (n_values strings). */
int rb_ini_get_strings(const rb_ini_group *g, const char *key, bool required, const char *const **out, size_t *n,
                       rb_err *err);
/* A list of exactly `count` numbers into dst (else "expected a list of <count> numbers, got <m>"). */
int rb_ini_get_numbers(const rb_ini_group *g, const char *key, bool required, double *dst, size_t count, rb_err *err);
/* The decimal number syntax above, strictly (the whole of s). */
bool rb_ini_parse_number(const char *s, double *out);

/* ---- the import (rb_rde_import) ----
 * The folder of the public estimator's configuration (config.ini, including model.ini and ukf.ini, which
 * includes ukf/ukf_state.ini and ukf/ukf_measurement.ini) -> a roboest pipeline running the ukf_torque stage
 * on robot-logger channels. Every number is carried over unchanged (covariances are variances, as there).
 *
 * config.ini [GENERAL]
 *   urdf_path       -> "model"."urdf", found (unless opts->urdf is given) at the first existing of
 *                      B/urdf_path and B/<its file name> for B = DIR, DIR/.., DIR/../.. (the public repository
 *                      keeps configs in python/config/NAME and models in python/urdf); written relative to
 *                      the folder of opts->out_path (absolute without it)
 *   sampling_time   -> params.dt and "clock": {"rate": 1 / sampling_time}: the public estimator steps once
 *                      per sampling_time, so the pipeline resamples the log to that rate
 *   robot_name      not mapped (a label); dataset: not mapped (a note): the log is given to `roboest run`
 * model.ini (group MODEL)
 *   joint_list      -> "model"."joints" (the order of every joint vector), signal elements
 *   base_link       -> "model"."base" (fixed base: the public configurations are fixed-base)
 *   [FT] names      -> params.ft_sensors (URDF force/torque sensors of these names must exist) and the
 *                      signal "ft" bound to ["FTs/<name>", ...]; associated_joints must be the sensors' URDF
 *                      joints; frames are not mapped (the reading's frame is the URDF sensor's; a note names
 *                      frames the URDF lacks)
 *   [EXTERNAL_CONTACT] frames -> params.contacts (URDF frames)
 *   [ACCELEROMETER] / [GYROSCOPE] names, frames -> params.accelerometers / gyroscopes: the frames of the
 *                      IMUs the measurement dynamics_list uses, in model.ini order, and the signals "acc" /
 *                      "gyro" bound to ["accelerometers/<name>", ...] / ["gyros/<name>", ...]; unused IMUs:
 *                      notes
 * ukf.ini (group UKF): alpha, beta, kappa -> params alpha, beta, kappa
 * ukf_state.ini: the blocks of dynamics_list (others: notes), each with name, dynamic_model, covariance
 * (-> q_*), initial_covariance (-> p0_*), elements (checked: joint_list for per-joint blocks), by `name`:
 *   ds (JointVelocityStateDynamics)                     -> q_dq, p0_dq
 *   tau_m (ZeroVelocityStateDynamics)                   -> q_tau_m, p0_tau_m
 *   tau_F (FrictionTorqueStateDynamics, friction_k0/k1/k2) -> friction_dynamics "rate_model", friction_k0..2,
 *         (ZeroVelocityStateDynamics)                   -> friction_dynamics "random_walk"; q_tau_f, p0_tau_f
 *   an [FT] name (ZeroVelocityStateDynamics)            -> q_ft, p0_ft (6 per sensor, ft_sensors order)
 *   a contact frame (ZeroVelocityStateDynamics, or ExternalContactStateDynamics with k)
 *                                                       -> q_contact, p0_contact; contact_decay = k (one value)
 *   <FT name>_bias, <accelerometer name>_bias, <gyroscope name>_bias (ZeroVelocityStateDynamics)
 *                                                       -> q_ft_bias / q_acc_bias / q_gyro_bias and p0_bias
 *         ([one value]: the stage takes one), used when the sensors' measurements have use_bias 1
 *   ("ZeroVelocityDynamics" is read as ZeroVelocityStateDynamics, its older name)
 * ukf_measurement.ini: the blocks of dynamics_list, by name and dynamic_model:
 *   ds (ConstantMeasurementModel)                       -> r_dq
 *   i_m (MotorCurrentMeasurementDynamics, gear_ratio, torque_constant) -> r_current, gear_ratio, k_t
 *   an [FT] name (ConstantMeasurementModel, use_bias)   -> r_ft, ft_bias
 *   an [ACCELEROMETER] name (AccelerometerMeasurementDynamics, use_bias) -> r_acc, acc_bias
 *   a [GYROSCOPE] name (GyroscopeMeasurementDynamics, use_bias) -> r_gyro, gyro_bias
 *   tau_F (the friction network's output measured; needs opts.friction_network) -> r_friction, and a stage
 *         "friction" (friction_pinn, params.network the file, relative as the URDF) reading signal "wm" =
 *         motors_state/velocities (elements joint_list) and dq, its tau_F wired to the ukf's friction input
 * Signals (robot-logger channels): q = joints_state/positions, dq = joints_state/velocities (the public
 * estimator measures the logged velocities), current = motors_state/currents, each with elements joint_list;
 * ft, acc, gyro as above (absent groups leave the port unwired; acc and gyro "optional": true, so that a
 * log without those IMU channels still runs). Stage "ukf" of type ukf_torque with
 * ft_offset "first_sample" (the public application's start-up offset); outputs ukf/tau_j, ukf/tau_m, ukf/tau_f,
 * ukf/dq, ukf/ft, ukf/contacts, ukf/var, ukf/innovation, ukf/nis written to ukf_torque.h5. No "name" (the
 * pipeline file's stem), no "logs", no metrics.
 *
 * Notes (rb_rde_import.notes, one line each, "<file>:<line>: ..." where a line is known): the dataset; keys and
 * groups the import does not use; blocks not in a dynamics_list (the public estimator ignores them too); IMUs of
 * model.ini no measurement uses; bias states whose measurements have use_bias 0; [FT] frames the URDF lacks;
 * contacts on the base body of their sub-model (the tree cut at the FT sensors): in the public estimator's
 * process model (each sub-model's joint accelerations, its base acceleration known) no joint acceleration
 * depends on them, so no measurement observes them (in the shipped files: ergoCub's r_foot_front and
 * r_foot_rear, the four-joint model's base_link and link_6).
 *
 * Errors (RB_ECONFIG unless noted, "<file>:<line>: <what>"): the ini errors above; a missing required key
 * (name, dynamic_model, covariance, initial_covariance of a state block, ...); dynamics_list naming a block
 * without a [BLOCK] group; an unknown dynamic_model ("[BLOCK]: unknown dynamic_model 'X'"); a block name that
 * is none of the above (e.g. an FT name not in model.ini [FT] names); a block twice; a length that does not
 * fit (joints, 6 per FT / contact, 3 per IMU); an FT sensor or contact without its state block, an FT without
 * its measurement, no ds / i_m / tau_m / tau_F; unknown keys in a block; use_bias differing within FTs,
 * accelerometers or gyroscopes, or use_bias without the bias state; a friction (tau_F) measurement without
 * opts.friction_network, or opts.friction_network without one (RB_ENOTFOUND: no such file); the newer bipedal-locomotion-framework format (variable_name); no URDF found
 * (RB_ENOTFOUND naming every path tried); a joint_list name that is no movable URDF joint, a base_link that is
 * no link, an FT name that is no URDF force/torque sensor, a contact or measured IMU frame that is no frame
 * (RB_ENOTFOUND); associated_joints that are not the sensors' joints; the URDF loader's errors; RB_ENOMEM.
 */
typedef struct rb_rde_import_opts {
    const char *urdf;             /* the URDF to use; NULL: search as above */
    const char *out_path;         /* where the pipeline will be written (its folder must exist): the URDF path is made
                             relative to its folder; NULL: absolute */
    const char *friction_network; /* the network a friction torque measurement ("tau_F" in ukf_measurement.ini)
                                     reads, a file of `roboest train-friction`: a friction_pinn stage feeds
                                     ukf_torque's friction input (path relative as the URDF's); NULL: such a
                                     measurement is an error, and so is a network without one */
} rb_rde_import_opts;

typedef struct rb_rde_import {
    char *json; /* the pipeline: cJSON's indented text plus a newline, deterministic */
    char *urdf; /* the URDF file used, as opened */
    size_t n_joints, n_ft, n_contacts, n_acc, n_gyro;
    size_t n_notes;
    char **notes; /* one line each: what was read but not mapped, and why */
} rb_rde_import;

/* dir: the configuration folder, or its config.ini. Fills *out (release with rb_rde_import_free; it is
 * zeroed first and left empty on failure). */
int rb_rde_import_dir(const char *dir, const rb_rde_import_opts *opts, rb_rde_import *out, rb_err *err);
void rb_rde_import_free(rb_rde_import *imp);

RB_API_END

#endif
