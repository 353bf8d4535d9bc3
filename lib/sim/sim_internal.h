/* Private to lib/sim: the engine layout shared by sim.c (physics) and sim_init.c (set-up). */
#ifndef ROBOEST_SIM_INTERNAL_H
#define ROBOEST_SIM_INTERNAL_H

#include "roboest/sim.h"

struct rb_sim {
    rb_sim_scenario sc;
    const rb_model *m;
    rb_dyn *plant, *ctrl;
    size_t n, nq, nv, voff, nc, npush, nf, max_rows;
    double t;
    size_t step, n_steps;

    /* owned copies of the scenario */
    rb_sim_ref *refs;
    rb_sim_joint_ctrl *gains;
    rb_sim_actuator *act;
    rb_friction_model *fric;
    rb_friction_state *fst;
    rb_sim_contact *contacts;
    rb_sim_contact_event *events;
    size_t next_event;
    rb_sim_push *pushes;
    int *frames;

    /* contact state */
    unsigned char *active;
    rb_xform *cref;

    /* state and per-sample values */
    double *q, *nu, *nu_dot;
    double *tau_net;            /* n: tau_m - tau_F of the non-held joints (held over the step) */
    unsigned char *held;        /* n: held by stiction over the step */
    double *tau_j, *tau_m, *tau_f, *tau_des, *cur, *cur_cmd, *mpos, *mvel, *macc, *ref, *ref_d, *ref_dd;
    unsigned char *stuck;
    double *cw, *pw, *ft;
    rb_xform *fpose;
    double *fvel, *facc;
    double *tau_prev, *int_e;   /* torque loop */
    double payload_pi[10];
    rb_ext_wrench *ext;         /* pushes, then contacts (for the logging RNEA) */

    /* linear algebra scratch */
    double *M, *b, *a0, *Jc, *Y, *S, *c, *lam, *J6, *tmp, *hold;
    /* RK4 */
    double *qs, *nus, *kv, *ka;
    /* balance IK (controller model) */
    double *q_r, *nu_r, *nu_r_prev, *A, *AtA, *rhs, com0[3], R_B0[9];

    rb_sim_truth truth;
};

/* Switch contact k on with the frame's current pose as its reference. */
int sim_activate_contact(rb_sim *s, size_t k, rb_err *err);
/* Everything of the sample at s->t (controller, actuators, friction, accelerations, truth). */
int sim_compute_sample(rb_sim *s, rb_err *err);

#endif
