/*
 * lib/rde internals (not installed): the .ini reader (ini.c), the public estimator's configuration read into
 * one struct (import_rde.c), checked against the URDF (import_rde_model.c), then written as a pipeline
 * (import_rde_json.c). See roboest/rde.h (rb_rde_import_dir) for the mapping.
 */
#ifndef ROBOEST_RDE_INTERNAL_H
#define ROBOEST_RDE_INTERNAL_H

#include "roboest/config.h"
#include "roboest/model.h"
#include "roboest/rde.h"

/* An IMU list of model.ini ([ACCELEROMETER] or [GYROSCOPE]): names (channel leaves), frames (URDF frames). */
typedef struct rde_imus {
    const char *const *names, *const *frames;
    size_t n;
    const rb_ini_group *group;
    bool *used;               /* n: measured (in the measurement dynamics_list) */
    int use_bias;             /* -1 until a measurement block says; then 0 or 1 */
    const char *bias_block;   /* the block that set use_bias, for messages */
    double *r;                /* 3 n measurement variances */
    double *q_bias, *p0_bias; /* 3 n, from <name>_bias state blocks */
    bool *bias_seen;          /* n */
} rde_imus;

/* Everything the pipeline needs, borrowed from the ini tree or held in `arena`. */
typedef struct rde {
    rb_err *err;
    rb_ini *ini;
    char *config; /* the config.ini path */
    const rb_ini_group *general, *model_ini, *ukf, *state, *meas;
    /* [GENERAL] */
    double dt;
    const char *urdf_path; /* as written (NULL: absent) */
    const rb_ini_entry *urdf_entry;
    /* model.ini */
    const char *base;
    const char *const *joints;
    size_t n;
    const rb_ini_entry *joints_entry, *base_entry;
    const char *const *ft, *const *ft_frames, *const *ft_joints; /* frames, joints: NULL when absent */
    size_t n_ft;
    const rb_ini_group *ft_group, *contact_group;
    const char *const *contacts;
    size_t n_c;
    rde_imus acc, gyro;
    /* ukf.ini */
    double alpha, beta, kappa;
    /* state blocks (variances) */
    double *q_dq, *p0_dq, *q_tau_m, *p0_tau_m, *q_tau_f, *p0_tau_f, *k0, *k1, *k2;
    double *q_ft, *p0_ft, *q_contact, *p0_contact, *q_ft_bias, *p0_ft_bias;
    bool friction_rate;                               /* FrictionTorqueStateDynamics: the rate model */
    double contact_decay;                             /* k of ExternalContactStateDynamics (0: random walk) */
    const char *decay_block;                          /* the block that set contact_decay */
    const char *state_ds, *state_tau_m, *state_tau_f; /* the blocks giving them (NULL: none yet) */
    bool *ft_state_seen, *contact_seen, *ft_bias_seen, *ft_meas_seen;
    int ft_use_bias;
    const char *ft_bias_block;
    /* measurement blocks */
    double *r_dq, *r_current, *gear, *k_t, *r_ft, *r_friction;
    const char *meas_ds, *meas_current, *meas_friction;
    const char *friction_network; /* the network the "tau_F" measurement reads (opts; NULL: none given) */
    /* the import's output */
    char *urdf; /* the URDF found, as opened */
    rb_model *model;
    double *arena;
    bool *flags;
    size_t n_notes;
    char **notes;
} rde;

/* RB_ECONFIG (or `code`) "<file>:<line>: <what>" at an entry of the configuration. */
int rde_fail_at(rde *r, int code, const rb_ini_entry *e, const char *fmt, ...) RB_PRINTF(4, 5);

/* A regular file exists at path. */
bool rde_is_file(const char *path);

/* import_rde_model.c: r->urdf from urdf_path (B/urdf_path, then B/<its file name>, for B = dir, dir/..,
 * dir/../..; RB_ENOTFOUND naming every path tried). */
int rde_find_urdf(rde *r, const char *dir);
/* Load r->model (joint_list, base_link) and check the FT sensors, contact frames and measured IMU frames;
 * notes for [FT] frames the URDF lacks and for unobservable contacts. */
int rde_load_model(rde *r);
/* The file `to` relative to the folder `from_dir` (both canonicalized; RB_EIO: no such folder). */
int rde_relative_path(rde *r, const char *from_dir, const char *to, char **out);
/* The folder part of a file path ("." without one; caller frees with rb_free; NULL: out of memory). */
char *rde_folder_of(const char *path);

/* Add a note (printf format); RB_ENOMEM. */
int rde_note(rde *r, const char *fmt, ...) RB_PRINTF(2, 3);

/* The pipeline text (cJSON's indented print plus a newline) with the URDF written as `urdf_in_json` and, with a
 * friction measurement, the network as `network_in_json`; caller frees with rb_free. RB_ENOMEM. */
int rde_pipeline_json(const rde *r, const char *urdf_in_json, const char *network_in_json, char **out, rb_err *err);

#endif
