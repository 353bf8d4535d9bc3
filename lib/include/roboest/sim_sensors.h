/*
 * roboest sim: the sensor models (lib/sim/sensors.c). Included by roboest/sim.h: the sensors a scenario samples
 * (rb_scenario_sensor) and the simulator's logger use them.
 */
#ifndef ROBOEST_SIM_SENSORS_H
#define ROBOEST_SIM_SENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roboest/core.h"

RB_API_BEGIN

/* ---- sensor models -------------------------------------------------------------------------
 * What a real robot's sensors do to the true signals before the logger writes them. One
 * rb_sensor per logged channel of n elements (a joints_state::positions channel, an FT sensor,
 * an IMU's accelerometer, ...). Lifecycle: fill an rb_sensor_params (rb_sensor_params_default or
 * a preset, then the scenario's values), rb_sensor_init (validates, copies every parameter, seeds,
 * allocates once), then rb_sensor_step at every simulation step (allocates nothing), rb_sensor_free.
 *
 * Measurement of element i at a sample taken at simulation time t (t0 = the init time):
 *     v = u[i] + offset[i] + bias[i] + drift_i(t) + noise_std[i] * N(0, 1)           (in this order)
 *     u = gain * truth (gain n x n, row-major) when a gain is given, else u = truth
 *         (a raw FT sensor: u = K w, K = diag(counts per unit) (I + cross-talk), so that the
 *          calibrated wrench is w = C (r + o) with C = K^-1 and o = -offset: the slides' convention)
 *     drift_i(t) = w_i(t) + drift_rate[i] * (t - t0)
 *     w_i: random walk, w_i(t0) = 0, at each sample w_i += drift_rw_std[i] * sqrt(t - t_prev) * N(0, 1)
 *                                                          (t_prev: previous sample, or t0)
 *     v = resolution[i] * round(v / resolution[i])     when resolution[i] > 0 (round half away from 0)
 *     v = min(max(v, lo[i]), hi[i])                    saturation (after quantization)
 *     v wrapped into [-pi, pi)                         when wrap_angles (orientation, RPY)
 * With every noise, bias, drift and offset term zero and no quantization, v == truth[i] exactly.
 *
 * Sampling: the channel's nominal sample instants are t0 + k / rate_hz, k = 0, 1, ... A sample is
 * due at the first simulation step with t >= the next nominal instant (less 1e-6 of a period, to
 * absorb rounding of the simulation clock); instants the simulation stepped over are skipped, so
 * a sensor faster than the simulation gives one sample per step. The value is measured at t; the
 * logged timestamp is t + U(-jitter_s, jitter_s) (timestamp jitter; 0 gives exactly t).
 *
 * Randomness and determinism: each sensor owns an rb_rng seeded with
 *     rb_sensor_seed(scenario_seed, name) = fnv1a64(name) XOR scenario_seed
 * (64-bit FNV-1a over the name's bytes: offset basis 0xcbf29ce484222325, prime 0x100000001b3;
 * rb_rng_seed then mixes it through splitmix64), so adding, removing or reordering sensors never
 * changes another sensor's stream. Every sample draws the same deviates whatever the parameter
 * values (one uniform for the jitter, then per element one normal for the random walk and one for
 * the white noise), so element i's noise does not change when another element's parameters do.
 * Same seed, name, parameters and call sequence: the same bytes on every machine.
 */

/* Longest sensor name kept (longer names are rejected by validation). */
#define RB_SENSOR_NAME_MAX 128

typedef enum rb_sensor_kind {
    RB_SENS_CUSTOM = 0,    /* any channel; units are the caller's */
    RB_SENS_JOINT_ENCODER, /* joints_state::positions, rad (link side) */
    RB_SENS_MOTOR_ENCODER, /* motors_state::positions, rad, rotor side (about R times the joint's) */
    RB_SENS_MOTOR_CURRENT, /* motors_state::currents, A */
    RB_SENS_FT,            /* FTs::<sensor>: fx fy fz (N) mx my mz (N m), sensor frame */
    RB_SENS_ACCELEROMETER, /* accelerometers::<imu>: m/s^2, proper acceleration (gravity included) */
    RB_SENS_GYROSCOPE,     /* gyros::<imu>: rad/s, sensor frame */
    RB_SENS_ORIENTATION,   /* orientations::<imu>: roll pitch yaw, rad */
    RB_SENS_FT_RAW         /* FTs_raw::<sensor>: six strain-gauge channels, counts (gain = the inverse of C) */
} rb_sensor_kind;

/* "custom", "joint_encoder", "motor_encoder", "motor_current", "ft", "accelerometer", "gyroscope",
 * "orientation", "ft_raw"; "unknown" otherwise. Never NULL. */
const char *rb_sensor_kind_name(rb_sensor_kind kind);
/* Unit of element i of a channel of this kind ("rad", "A", "N", "N m", "m/s^2", "rad/s", "counts"; "n.d."
 * for custom), as the logger's units_of_measure. Never NULL. */
const char *rb_sensor_kind_unit(rb_sensor_kind kind, size_t i);

/* A per-element parameter: element i is each[i] when each is non-NULL (n values, borrowed until
 * rb_sensor_init returns, which copies them), else all. */
typedef struct rb_sensor_vec {
    double all;
    const double *each;
} rb_sensor_vec;

static inline double rb_sensor_vec_at(rb_sensor_vec v, size_t i) { return v.each ? v.each[i] : v.all; }

/* Config-facing parameters of one channel (units: the channel's, per second where stated). */
typedef struct rb_sensor_params {
    const char *name; /* channel name, e.g. "FTs::r_foot_front_ft" (borrowed; init copies it) */
    rb_sensor_kind kind;
    size_t n;                   /* elements (FT 6; accelerometer, gyroscope, orientation 3) */
    double rate_hz;             /* sample rate, > 0 */
    double jitter_s;            /* timestamp jitter half-width, 0 <= jitter_s < 0.5 / rate_hz */
    rb_sensor_vec noise_std;    /* white Gaussian noise std, >= 0 */
    rb_sensor_vec bias;         /* constant bias */
    rb_sensor_vec drift_rw_std; /* random-walk drift std per sqrt(s), >= 0 */
    rb_sensor_vec drift_rate;   /* linear drift per s */
    rb_sensor_vec resolution;   /* quantization step, >= 0 (0: none); encoders 2 pi / counts per rev */
    rb_sensor_vec lo, hi;       /* saturation limits, lo <= hi (may be -INFINITY / INFINITY) */
    rb_sensor_vec offset;       /* start-up offset (FT: the wrench read before calibration) */
    bool wrap_angles;           /* wrap every element into [-pi, pi) (orientation) */
    const double *gain;         /* n x n row-major, applied to the truth first (NULL: none); borrowed */
} rb_sensor_params;

/* Everything off: no noise, bias, drift, offset, quantization; limits -inf..inf; rate_hz 0 (must be
 * set); kind custom. name is borrowed. */
rb_sensor_params rb_sensor_params_default(const char *name, size_t n);

/* Typical values of a real robot's sensors (ergoCub / iCub class hardware), a starting point for a
 * scenario; every field may be changed afterwards. n is taken for encoders and currents (one
 * element per joint or motor) and fixed for the others (FT 6, IMU parts 3).
 *   joint encoder  1 kHz, 14-bit absolute encoder: resolution 2 pi / 2^14 rad, no noise
 *   motor encoder  1 kHz, rotor side, 4096 counts per revolution x4 decoding: 2 pi / 16384 rad
 *   motor current  1 kHz, noise 0.02 A, resolution 1 mA, saturation +-10 A
 *   FT             1 kHz, noise 0.5 N on forces (all elements; set noise_std.each to give the
 *                  moments their own, typically 0.02 N m), no offset (set offset for the start-up
 *                  wrench), saturation +-1500 (N and N m)
 *   accelerometer  100 Hz, noise 0.02 m/s^2, random walk 1e-3 m/s^2 per sqrt(s), +-16 g
 *   gyroscope      100 Hz, noise 0.005 rad/s, random walk 1e-4 rad/s per sqrt(s), +-2000 deg/s
 *   orientation    100 Hz, noise 0.005 rad, wrap_angles
 *   FT raw         1 kHz, noise 2 counts, resolution 1 count, saturation +-32767 counts (16 bit), no gain
 *                  (set it: the scenario's counts_per_unit and cross_talk)
 * Use rb_sensor_encoder_resolution(counts) for another encoder. */
rb_sensor_params rb_sensor_preset(rb_sensor_kind kind, const char *name, size_t n);
/* 2 pi / counts_per_rev (rad); 0 when counts_per_rev is 0. */
double rb_sensor_encoder_resolution(uint64_t counts_per_rev);

/* RB_ECONFIG "sensor <name>: <parameter>[<i>] = <value> must be ..." for a negative or non-finite
 * noise_std / drift_rw_std / resolution, rate_hz <= 0 or non-finite, jitter_s out of range,
 * non-finite bias / drift_rate / offset / gain, lo > hi or a NaN limit, n == 0, a missing, empty or too
 * long name. */
int rb_sensor_params_validate(const rb_sensor_params *p, rb_err *err);

/* Per-sensor seed: fnv1a64(name) ^ scenario_seed (see above). */
uint64_t rb_sensor_seed(uint64_t scenario_seed, const char *name);

/* One channel's state. Fields are read-only for callers. */
typedef struct rb_sensor {
    char name[RB_SENSOR_NAME_MAX];
    rb_sensor_kind kind;
    size_t n;
    double rate_hz, jitter_s, period;
    bool wrap_angles;
    double t0;        /* init time */
    double t_prev;    /* last sample (t0 before the first) */
    uint64_t k_next;  /* index of the next nominal sample instant */
    uint64_t samples; /* samples given so far */
    rb_rng rng;
    double *buf; /* one allocation: the per-element arrays below */
    double *noise_std, *bias, *drift_rw_std, *drift_rate, *resolution, *lo, *hi, *offset;
    double *walk; /* random-walk state w_i */
    double *gain; /* n x n (NULL: none), then n of scratch for gain * truth */
} rb_sensor;

/* Validate p, copy it, seed from rb_sensor_seed(scenario_seed, p->name), first nominal sample at
 * t0. RB_ECONFIG (see validate), RB_ENOMEM. On failure *s is left freeable (rb_sensor_free). */
int rb_sensor_init(rb_sensor *s, const rb_sensor_params *p, uint64_t scenario_seed, double t0, rb_err *err);
void rb_sensor_free(rb_sensor *s);

/* Simulation step at time t (non-decreasing across calls) with the true values truth (n). True
 * when a sample is due: then y (n) gets the measured values and *stamp (may be NULL) the logged
 * timestamp. False: y and *stamp untouched, no random numbers drawn. Allocates nothing. */
bool rb_sensor_step(rb_sensor *s, double t, const double *truth, double *y, double *stamp);

/* Whether rb_sensor_step at time t would give a sample (the rule above; draws nothing). A caller uses it
 * to compute only the truth the due sensors need. */
bool rb_sensor_due(const rb_sensor *s, double t);

/* Next nominal sample instant (s). */
double rb_sensor_next_time(const rb_sensor *s);

RB_API_END

#endif /* ROBOEST_SIM_SENSORS_H */
