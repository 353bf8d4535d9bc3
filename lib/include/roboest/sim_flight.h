/*
 * roboest sim: the flight controller of a jet humanoid (seed 004, the paper's Section IV flight: take off, move,
 * hover; ../shared/design/PAPERS.md section 4). Included by roboest/sim.h; the jets it drives are sim.h's
 * ("jets"), their thrust model roboest/dynamics.h's ("jet engines").
 *
 * With rb_sim_scenario.flight.enabled the controller sets every jet's throttle; a jet's own throttle schedule is
 * then refused (RB_ECONFIG: it must be left unset, the all-zero rb_sim_ref; the scenario file refuses
 * jets[i].throttle). The joint references and the joint controller run as without it: the flight controller
 * treats the joints' motion as a disturbance.
 *
 * Loop (lib/sim/flight.c). At t = k / rate (the first sample at or after it; at most once per simulation sample) it
 * reads the TRUE state (q, nu) through the controller's model (the nominal one, or rb_sim_set_model_inertia's:
 * the same model the joint controllers use) and each jet's thrust model state (T, T_dot): the engine's own model,
 * i.e. an open-loop observer fed with the same throttles, so a jet failure's missing thrust is NOT seen by it,
 * only by its feedback. Between two updates the throttles are held. With the CoM c, its velocity l / m
 * (centroidal momentum h_G = [l; k_G] = A_G nu), the base orientation R_B and angular velocity w (world axes) and
 * the locked inertia about the CoM I_G (world axes, from A_G's base columns):
 *   1. CoM task: c_ref(t) = c(0) + the waypoints' offset (below), with its velocity and acceleration;
 *        a_des = a_ref + kp (c_ref - c) + kd (v_ref - c_dot) + ki int (c_ref - c) dt     (per axis x y z)
 *      the horizontal part limited to |a_xy| <= |g| tan(max_tilt); F_des = m (a_des - g) (world, N).
 *   2. Attitude: the jets push along their collective direction n = sum_i l_i T_hover,i / |.| (world; T_hover the
 *      hover split of step 4 at t = 0), and a force off n needs the whole robot tilted (near-parallel jets: the
 *      horizontal force rows of A are about zero). The desired tilt turns n onto F_des / |F_des| by the smallest
 *      rotation: e = -angle (n x F_des) / |n x F_des| (world rotation vector: roll about x, pitch about y);
 *        tau_des,xy = I_G (-kp_att e - kd_att w - ki_att int e dt)_xy
 *      so with no horizontal error the base is held level (the jets' axes as at t = 0). Yaw is left free by
 *      default: parallel jets have no yaw authority. With yaw.max_thrust > 0, tau_des,z = (I_G (-yaw.kp (psi -
 *      psi_0) - yaw.kd w_z))_z (psi the base's yaw) is sought along the null direction d (below) where the jets'
 *      tilt gives it a moment arm g = A_tz d: y = g r / (g^2 + (0.02 m)^2), |y| <= yaw.max_thrust, T0 += y d
 *      (r: the yaw moment the rows' solution leaves). Measured on thrust_flight.json (hover, no excitation, 20 s):
 *      yaw free swings by 18 deg (the torso-yaw sine's reaction); max_thrust 10 N, kp 1, kd 2: 9 deg; kp 4: lost.
 *   3. W_des = [F_des; tau_des] at the CoM. The jets' matrix A(q) (6 x n_jets, world axes about the CoM): column
 *      i = [l_i; r_i x l_i] (seed 004 eq. 3), l_i jet i's thrust direction in the world, r_i its frame origin minus
 *      the CoM.
 *   4. Allocation, damped least squares over the controllable rows:
 *        T_des = argmin (n^T A_f T - n^T F_des)^2 + |A_tx,ty T - tau_des,xy|^2 / L^2
 *                + 1e-8 sum_i (T_mean / T_max,i)^2 (T_i - T0_i)^2
 *      (A_f: A's force rows; L = the largest moment arm |(r_i x l_i)_xy| at t = 0, m; T_mean the jets' mean T_max;
 *      T0 = T_hover + the excitation (+ the yaw term)), then clamped to [T_ss(u_min), T_ss(u_max)] per jet; T_hover
 *      is the same solve at t = 0 for F = m |g| n, tau = 0, T0 = 0. With near-parallel jets only the thrust
 *      along n and the roll and pitch moments are controllable: the rows above are the ones kept; the damping
 *      term fixes the rest (the null space: the fourth combination of four jets) at T0's value, so the
 *      excitation passes into it and the rows' wrench is unchanged.
 *   5. Throttles: thrust_response = 0: u_i = rb_jet_steady_throttle(T_des,i) (the steady-state inversion: the
 *      jets then lag by their own dynamics, about 0.5 s for the P100, 0.75 s for the P220 Gazebo set at hover);
 *      thrust_response w_T > 0 (the default): lag compensation by the model's inverse,
 *        u_i = rb_jet_throttle_for_accel(T_i, T_dot_i, T_ddot*),  T_ddot* = w_T^2 (T_des,i - T_i) - 2 w_T
 *              T_dot_i + the excitation's own T_dot and T_ddot (feed-forward)
 *      (the thrust then follows T_des as a critically damped second-order system of w_T rad/s while the
 *      throttle stays in [u_min, u_max]; the steady-state inversion in a steady state); clamped to the range.
 * Integrals: each integral is held within |ki int| <= 2.5 m/s^2 (CoM) and <= 2.5 rad/s^2 (attitude).
 * Gains: the defaults below were tuned on configs/scenarios/thrust_flight.json (41.4 kg, two P100 arm jets, two P220
 * Gazebo chest jets, shoulder-roll and torso-yaw sines): hover 20 s: CoM error <= 1.3 cm, |roll| <= 0.13 deg,
 * |pitch| <= 0.94 deg; with its 15 N excitation 2.8 cm, 0.57 deg, 0.94 deg; a 0.3 m climb over 3 s: 1.3 cm (suites
 * sim_flight, cli_simulate_flight). The lag compensation is needed there: with thrust_response 0 the jets' lag
 * lets the joints' disturbance grow into a tumble within 10 s, for attitude kp from 25 down to 1.
 *
 * Excitation (for the estimators' sake): with near-parallel jets the centroidal momentum observes only three
 * combinations of the thrusts (the force along n, the roll and pitch moments); the fourth (for two arm and two
 * chest jets: left arm and right chest against right arm and left chest, in the ratio of their lever arms) is
 * seen only through the jet model, which is what the paper's combined estimator adds to the momentum: a flight
 * test must excite it, and the excitation must not disturb the flight. So the excitation is a thrust chirp
 *     delta(t) = amplitude env(t) sin(2 pi (freq tau + (freq_end - freq) tau^2 / (2 (until - from)))),  tau = t -
 *                from, in [from, until] (0 outside; env rises and falls by a smoothstep over min(1 s, (until -
 *                from) / 4) at the ends)
 * along the null direction d (unit max-norm: the jet with the largest share moves by delta, N): the projection of
 * `direction` (n_jets weights) on the null space of the three controllable rows at t = 0, or without one the
 * column of that projector with the largest norm; sign: its largest element positive. It enters T0 (step 4).
 *
 * Truth: truth->com_ref = c_ref(t) (world, m), truth->jet_thrust_des = T_des (N, per jet; NULL without flight);
 * the scenario run logs them as truth/flight/com_ref and truth/flight/desired_thrusts.
 *
 * Validation (rb_sim_init; RB_ECONFIG "sim: flight: ..."): a floating base, at least one jet, no balance, every
 * jet's throttle unset, rate > 0, gains >= 0 and finite, 0 < max_tilt < pi / 2, thrust_response >= 0, waypoint
 * times > 0 and increasing, excitation amplitude >= 0 and frequencies >= 0 (amplitude > 0: until > from, a
 * direction with a null-space part, at least four jets). Deterministic; rb_sim_step allocates nothing.
 *
 * Scenario key (roboest/sim.h "scenarios"), units SI:
 *   flight      {rate (Hz, > 0, default 100: the paper's Simulink controller), com: {kp (1/s^2, default
 *               [1.5 1.5 6]), kd (1/s, default [2.4 2.4 5]), ki (1/s^3, default [0 0 2])} (each a number for x y z
 *               or [x y z], >= 0), attitude: {kp (1/s^2, default 25), kd (1/s, default 10), ki (1/s^3, default 4)}
 *               (roll and pitch), yaw: {kp (1/s^2, default 1), kd (1/s, default 2), max_thrust (N, default 0: yaw
 *               free)}, max_tilt (rad, default 0.06), thrust_response (rad/s, default 10; 0: steady-state
 *               inversion only), waypoints: [{t (s, > 0, increasing), offset [x y z] (m, from the CoM at t = 0,
 *               world)}] (c_ref starts at offset 0 at t = 0, moves between consecutive points along the straight
 *               line with the smoothstep profile 3 s^2 - 2 s^3, at rest at each point, and holds the last),
 *               excitation: {amplitude (N, > 0, required), freq (Hz, default 0.1), freq_end (Hz, default freq),
 *               from (s, default 0), until (s, default the duration), direction [n_jets weights]}}
 */
#ifndef ROBOEST_SIM_FLIGHT_H
#define ROBOEST_SIM_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

RB_API_BEGIN

typedef struct rb_sim_flight_waypoint {
    double t;         /* s, > 0, increasing */
    double offset[3]; /* CoM reference at t minus the CoM at t = 0, world axes, m */
} rb_sim_flight_waypoint;

typedef struct rb_sim_flight_excitation {
    double amplitude;        /* N (0: none) */
    double freq, freq_end;   /* Hz: the chirp's frequency at from and at until */
    double from, until;      /* s */
    const double *direction; /* n_jets weights (copied by rb_sim_init), NULL: the default null direction */
} rb_sim_flight_excitation;

typedef struct rb_sim_flight {
    bool enabled;
    double rate;                             /* Hz */
    double com_kp[3], com_kd[3], com_ki[3];  /* x y z: 1/s^2, 1/s, 1/s^3 */
    double att_kp, att_kd, att_ki;           /* roll and pitch: 1/s^2, 1/s, 1/s^3 */
    double yaw_kp, yaw_kd, yaw_max_thrust;   /* 1/s^2, 1/s, N (0: yaw free) */
    double max_tilt;                         /* rad */
    double thrust_response;                  /* rad/s (0: steady-state inversion) */
    const rb_sim_flight_waypoint *waypoints; /* n_waypoints (copied by rb_sim_init) */
    size_t n_waypoints;
    rb_sim_flight_excitation excitation;
} rb_sim_flight;

/* The defaults above, enabled, no waypoints (hold the start), no excitation. */
rb_sim_flight rb_sim_flight_defaults(void);

RB_API_END

#endif
