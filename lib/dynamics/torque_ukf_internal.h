/* The joint-torque UKF model's workspace, shared by torque_ukf.c (the model, the structure, the start, the workspace)
 * and torque_ukf_names.c (element names and units). Not a public header. */
#ifndef ROBOEST_TORQUE_UKF_INTERNAL_H
#define ROBOEST_TORQUE_UKF_INTERNAL_H

#include "roboest/dynamics.h"

/* State blocks in the filter order: the velocities first (see the top comment). */
enum { B_DQ, B_W, B_A, B_TM, B_TF, B_FT, B_C, B_FTB, B_AB, B_GB, B_FC, N_BLK };
/* The published order (rb_tukf_block) in filter-order blocks. */
static const int spec_order[N_BLK] = {B_DQ, B_TM, B_TF, B_FT, B_C, B_A, B_W, B_FTB, B_AB, B_GB, B_FC};
static const char *const blk_name[N_BLK] = {"dq",      "base",    "base",     "tau_m",     "tau_f",    "ft",
                                            "contact", "ft_bias", "acc_bias", "gyro_bias", "fric_corr"};
static const char *const corr_name[RB_TUKF_CORR_TERMS] = {"coulomb", "viscous", "offset", "scale", "stribeck"};
static const char *const wrench_axes[6] = {"fx", "fy", "fz", "mx", "my", "mz"};
static const char *const wrench_units[6] = {"N", "N", "N", "N m", "N m", "N m"};

typedef struct block {
    size_t off, len, spec; /* filter-order offset, length, offset in the published order */
} block;

/* Velocity-product terms at one velocity (s_dot, w_B): the process's s_ddot offset and the accelerometers'. */
typedef struct vel_slot {
    bool valid;
    double *key;  /* n + 3 */
    double *b;    /* n: s_ddot at zero torques, wrenches and base linear acceleration */
    double *dacc; /* 3 n_acc */
} vel_slot;

struct rb_tukf {
    const rb_model *model;
    rb_submodels *sm;
    rb_cut_dyn *cd;
    rb_ft_est *est_init; /* the start-up FT prediction */
    size_t n, n_ft, nc, nacc, ngyro, N, M;
    bool floating, fric_meas, rate_model, calibrate, mean_terms;
    size_t nk;                    /* friction correction terms per joint (0: none) */
    int corr[RB_TUKF_CORR_TERMS]; /* their kinds */
    double v_c, v_s;
    block b[N_BLK];
    rb_tukf_layout lay;
    size_t m_dq, m_cur, m_fric, m_ft, m_acc, m_gyro;
    size_t lo, na; /* columns lo .. lo + na of the state drive s_ddot (base acc. to contacts) */

    /* configuration */
    double *ktR;  /* n: k_t R (signed), N m/A */
    double *refl; /* n: R^2 J_m, kg m^2 */
    double *k0, *k1, *k2;
    double decay;
    int *acc_frame, *gyro_frame, *contact_frame, base_frame;
    size_t base_acc, base_gyro; /* base_imu's place in the accelerometer / gyroscope lists */
    double aB_fixed[6];

    /* per configuration */
    double *As, *AsT;    /* K^-1 [blocks driving s_ddot]: n x na row-major, and column-major (BLAS) */
    double *Kinv, *Kc;   /* K^-1: row-major, column-major */
    double *c0;          /* n: s_ddot of the fixed base's gravity */
    double *Jacc, *Jgyr; /* 3 n_acc x (6 + n): linear rows; 3 n_gyro x (6 + n): angular rows */
    double *J6;          /* 6 x (6 + n) scratch */
    vel_slot slot[2];
    int victim;         /* the slot a miss overwrites */
    bool phase_first;   /* the next lookup is a batch's first (the mean's velocity): keep its slot */
    double *h, *sdd;    /* n each */
    double *XaT;        /* 2N + 1 x na: the sigma points' driving blocks, transposed */
    double *Sdd, *Dacc; /* n x (2N + 1), 3 n_acc x (2N + 1): per sigma point */
    double *phi0, *phi; /* n x nk each: the friction correction's regressors at a batch's first state, at the current */
    /* a batch's distinct velocities (rb_cut_dyn_bias_batch in chunks of dcap): Vd (n x dcap), Wd (3 x dcap), their
     * terms Hd, Bd (n x dcap each: h, then s_ddot's offset) and Dd (3 n_acc x dcap); dmap (2N + 1): each sigma
     * point's column among the distinct ones */
    size_t dcap;
    double *Vd, *Wd, *Hd, *Bd, *Dd;
    size_t *dmap, *dsrc; /* 2N + 1 each: a sigma point's distinct column; a distinct column's first sigma point */

    /* the start */
    double *offset; /* 6 n_ft */
    double *pred;   /* 6 n_ft */

    /* rb_tukf_affine's compressed rows */
    size_t *jptr, *jcol;
    double *jval;

    double *block_mem;
};

#endif
