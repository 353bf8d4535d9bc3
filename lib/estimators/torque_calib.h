/* Private to lib/estimators: the start-up FT offset calibration that rnea_torque and ukf_torque share (ft_offset
 * "first_sample" / "still_window" / "none") and ukf_torque's check of the motor constants against the FT-based
 * joint torques. Nothing here allocates per sample. */
#ifndef ROBOEST_TORQUE_CALIB_H
#define ROBOEST_TORQUE_CALIB_H

#include "roboest/filters.h"
#include "torque_common.h"

/* ---- the start-up FT offset ------------------------------------------------------------------------------------
 * The filters module's still-window offset (roboest/filters.h, rb_still_offset) of f_measured - f_predicted, set up
 * from the parameters ft_offset ("first_sample": the window of one sample; "still_window"; "none"),
 * ft_offset_window, ft_offset_still_speed / _min / _max, with the note for the run's warnings. */
typedef enum { TQ_OFF_NONE, TQ_OFF_FIRST, TQ_OFF_WINDOW } tq_off_mode;

typedef struct tq_ftoff {
    tq_off_mode mode;
    double t_min;        /* a detected window shorter than this is no still window (note) */
    rb_still_offset est; /* est.offset: the offset in use (m values) */
    char note[400];      /* "" or the finding for the run's warnings (tq_ftoff_finish) */
} tq_ftoff;

/* From the parameters (RB_ECONFIG naming the key; RB_ENOMEM); m = 6 n_ft. */
int tq_ftoff_init(tq_ftoff *c, const rb_params *p, size_t m, rb_err *err);
void tq_ftoff_free(tq_ftoff *c);
/* True while the offset still changes: the caller predicts the readings of this sample for tq_ftoff_add. */
static inline bool tq_ftoff_collecting(const tq_ftoff *c)
{
    return c->mode != TQ_OFF_NONE && rb_still_offset_collecting(&c->est);
}
/* One sample (a finite q; meas may hold NaN elements, left out): t its time, dq (n) its joint velocities, meas
 * and pred the measured and predicted readings (m each). */
static inline void tq_ftoff_add(tq_ftoff *c, double t, const double *dq, size_t n, const double *meas,
                                const double *pred)
{
    if (c->mode != TQ_OFF_NONE)
        rb_still_offset_add(&c->est, t, dq, n, meas, pred);
}
/* At the end of the run: the note when no still window was found or the given one held no sample. */
void tq_ftoff_finish(tq_ftoff *c);

/* The stages' documentation of "still_window" (a Markdown paragraph). */
#define TQ_FTOFF_MD                                                                                                    \
    "Still-window FT offset (`ft_offset` `\"still_window\"`): one sample leaves the sensor noise in the\n"             \
    "offset (a constant torque bias of 0.1-0.25 N m on the paper's logs); this mean over N still samples\n"            \
    "has sqrt(N) times less. `o` is the mean of `f_measured - f_predicted` (per element, non-finite\n"                 \
    "readings left out) over a still window at the log's start: `ft_offset_window` `[t0, t1]` (s from the\n"           \
    "first complete sample), or detected: from the first complete sample while every joint's `|dq|` stays\n"           \
    "below `ft_offset_still_speed`, ending at the first faster sample or after `ft_offset_still_max` s (when\n"        \
    "a joint starts to move, the last 0.05-0.1 s are dropped: it accelerated before its speed crossed the\n"           \
    "threshold). The stage is causal: until the window ends each sample uses the running mean (the first\n"            \
    "sample's offset before a given window starts; metrics windows normally start later), then the offset\n"           \
    "is frozen\n"                                                                                                      \
    "(output `ft_offset` of `rnea_torque` shows it). A detected window shorter than `ft_offset_still_min`\n"           \
    "(the joints move from the start) is no still window: the offset stays the mean of the still samples\n"            \
    "seen (the first sample's when even that one moved) and the run's warnings say so; so do they for a\n"             \
    "given window that holds no sample (the first sample's offset is used).\n"

/* Choices of ft_offset; the parameter specs both stages list after it (ft_offset itself is the stage's). */
extern const char *const tq_offset_choices[];
#define TQ_CHECK_MD                                                                                                    \
    "Motor-constant check (`check_constants`, on by default; needs FT sensors): a pipeline copied onto\n"              \
    "another robot with the wrong `gear_ratio` sign or `k_t` runs without error but estimates nonsense. On\n"          \
    "every sample where a joint is slow but moving (`check_speed_min <= |dq| <= check_speed_max`: at rest\n"           \
    "static friction holds any torque), the stage compares the motor torque `k_t R i` with the FT-based\n"             \
    "joint torque (the RNEA in each sub-model from the offset-corrected FT readings, the stage's contacts\n"           \
    "estimated, joint accelerations from `dq` differentiated and low-passed over 0.02 s): at the end of the\n"         \
    "run, per joint, an intercept and `sign(dq)` (Coulomb friction) are removed from both by least squares\n"          \
    "and the slope is the reduced major axis `sign(cov) sd(k_t R i) / sd(FT-based)` (both are noisy: the\n"            \
    "slope of one regressed on the other shrinks by their correlation). A slope below 0 is a warning naming\n"         \
    "the joint and its `gear_ratio` sign; a slope\n"                                                                   \
    "outside [0.5, 2] one naming its `k_t` and gear ratio magnitude; both give the slope, the sample count\n"          \
    "and the correlation. A joint is judged only with at least 200 such samples, a spread of its FT-based\n"           \
    "torque (beyond the nuisance terms) of at least `check_min_spread` and a correlation of the two of at\n"           \
    "least `check_min_correlation` in magnitude (a sign flip or a wrong scale keeps it); other joints are\n"           \
    "not judged, silently. The shipped logs' robots (leg_pole_*, other_robot_*, humanoid_balance*) raise none.\n"
#define TQ_FTOFF_DOC                                                                                                   \
    "\"first_sample\": o = f_measured - f_predicted at the first complete sample; \"still_window\": its mean over a "  \
    "still window at the start (ft_offset_window, or detected); subtracted from every reading; \"none\""
#define TQ_FTOFF_SPECS                                                                                                 \
    {.name = "ft_offset_window",                                                                                       \
     .kind = RB_PARAM_NUMBER_ARRAY,                                                                                    \
     .max_count = 2,                                                                                                   \
     .has_min = true,                                                                                                  \
     .min = 0,                                                                                                         \
     .doc = "[t0, t1], s from the first complete sample: the still window of \"still_window\"; default: detected",     \
     .details = "two values, t1 > t0; only with `\"still_window\"`"},                                                  \
        {.name = "ft_offset_still_speed",                                                                              \
         .kind = RB_PARAM_NUMBER,                                                                                      \
         .def_number = 0.05,                                                                                           \
         .has_min = true,                                                                                              \
         .min_exclusive = true,                                                                                        \
         .min = 0,                                                                                                     \
         .doc = "detected still window: every joint's |dq| below this, rad/s (m/s)"},                                  \
        {.name = "ft_offset_still_min",                                                                                \
         .kind = RB_PARAM_NUMBER,                                                                                      \
         .def_number = 0.1,                                                                                            \
         .has_min = true,                                                                                              \
         .min = 0,                                                                                                     \
         .doc = "detected still window: its shortest length, s (shorter: a note, the mean of what was still)"},        \
    {                                                                                                                  \
        .name = "ft_offset_still_max", .kind = RB_PARAM_NUMBER, .def_number = 1.0, .has_min = true,                    \
        .min_exclusive = true, .min = 0, .doc = "detected still window: it ends after this length, s"                  \
    }

/* ---- ukf_torque: the offset in the stage, and the motor-constant check ------------------------------------------
 * With "still_window" the stage corrects the readings (f - o) before the torque UKF model (made with its own
 * offset off); "first_sample" stays the model's (rb_tukf_initial_state), reproduced here only for the check.
 * The check: over slow-but-moving samples of each joint (check_speed), k_t R i against the FT-based joint torque
 * (joint accelerations from dq differentiated), a Coulomb friction term sign(dq) and an intercept removed from
 * both, the reduced-major-axis slope; a slope < 0 names the gear ratio's sign, a slope outside [0.5, 2] the torque
 * constant or the gear ratio's magnitude. */
typedef struct tq_ukf_calib tq_ukf_calib;

/* The ports are ukf_torque's: q, dq, current, ft, acc, gyro (in order, from port `q_port`). */
int tq_ukf_calib_create(const rb_stage_setup *st, size_t q_port, tq_ukf_calib **out, rb_err *err);
void tq_ukf_calib_free(tq_ukf_calib *c);
/* One sample with a finite q: returns the FT readings the UKF is to use (the corrected ones with "still_window",
 * else `in[ft]` itself). Predictions that fail leave the sample out of the offset and the check. */
const double *tq_ukf_calib_step(tq_ukf_calib *c, double t, const double *const *in);
/* End of the run: compose the notes. RB_ENOMEM. */
int tq_ukf_calib_finish(tq_ukf_calib *c, rb_err *err);
size_t tq_ukf_calib_notes(tq_ukf_calib *c, const char *const **lines);
#define TQ_CHECK_SPECS                                                                                                 \
    {.name = "check_constants",                                                                                        \
     .kind = RB_PARAM_BOOLEAN,                                                                                         \
     .def_number = 1,                                                                                                  \
     .doc = "compare k_t R i with the FT-based joint torques over slow samples; a mismatch is a run warning"},         \
        {.name = "check_speed_min",                                                                                    \
         .kind = RB_PARAM_NUMBER,                                                                                      \
         .def_number = 0.02,                                                                                           \
         .has_min = true,                                                                                              \
         .min = 0,                                                                                                     \
         .doc =                                                                                                        \
             "the check's samples of a joint: |dq| at least this (moving: static friction holds any torque), rad/s"},  \
        {.name = "check_speed_max",                                                                                    \
         .kind = RB_PARAM_NUMBER,                                                                                      \
         .def_number = 0.5,                                                                                            \
         .has_min = true,                                                                                              \
         .min_exclusive = true,                                                                                        \
         .min = 0,                                                                                                     \
         .doc = "... and at most this (slow: the torques at zero acceleration hold), rad/s"},                          \
        {.name = "check_min_spread",                                                                                   \
         .kind = RB_PARAM_NUMBER,                                                                                      \
         .def_number = 0.5,                                                                                            \
         .has_min = true,                                                                                              \
         .min_exclusive = true,                                                                                        \
         .min = 0,                                                                                                     \
         .doc = "a joint is judged when its FT-based torque varies by at least this (std beyond friction), N m"},      \
    {                                                                                                                  \
        .name = "check_min_correlation", .kind = RB_PARAM_NUMBER, .def_number = 0.5, .has_min = true, .min = 0,        \
        .has_max = true, .max = 1,                                                                                     \
        .doc = "... and its correlation with k_t R i (beyond friction) is at least this in magnitude"                  \
    }

#endif
