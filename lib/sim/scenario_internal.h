/* Private to lib/sim's scenario loader: the parsing context and the helpers scenario.c and scenario_world.c share. */
#ifndef ROBOEST_SIM_SCENARIO_INTERNAL_H
#define ROBOEST_SIM_SCENARIO_INTERNAL_H

#include "roboest/config.h"
#include "roboest/sim.h"

/* The loader's context: a section's rb_cfg * is the scn * it sits first in. */
typedef struct scn {
    rb_cfg c;
    rb_scenario *s;
    const cJSON *root; /* the whole file (a section that depends on another's presence) */
} scn;

/* ---- key helpers (scenario_keys.c) ---- */
/* A reference r(t) {kind: "const" | "sine" | "chirp" | "step" | "spline" | "ramp", offset, amplitude, freq, freq_end,
 * phase, t0, t1, times, values} (roboest/sim.h, rb_sim_ref): a joint's reference or a jet's throttle. Keys absent
 * keep r's values (set the default offset before); times and values (allocated) only for spline and ramp. */
int sim_scn_parse_ref(rb_cfg *c, const cJSON *v, rb_sim_ref *r);
/* A contact named by another section (an event, a scale): its index in "contacts" or its frame's name (with a
 * suggestion); `purpose` ends the message when the scenario has none ("the scenario has no contacts <purpose>"). */
int sim_scn_want_contact(scn *x, const cJSON *v, const char *purpose, size_t *k);
/* Optional member `key`: true or false (*out untouched when absent). */
int sim_scn_opt_bool(rb_cfg *c, const cJSON *obj, const char *key, bool *out);
/* A fixed-length array of numbers. */
int sim_scn_want_numbers(rb_cfg *c, const cJSON *v, size_t n, double *out);
/* Optional member `key`: n numbers (*out untouched when absent). */
int sim_scn_opt_numbers(rb_cfg *c, const cJSON *obj, const char *key, size_t n, double *out);
/* A name among `names` (n), with a suggestion; error at the current path. */
int sim_scn_want_name(rb_cfg *c, const char *what, const char *name, char *const *names, size_t n, size_t *index);
/* A model frame by name (string value at the current path). */
int sim_scn_want_frame(scn *x, const cJSON *v, int *frame);
/* Member `key` of obj as a model frame (*frame untouched when absent and not `required`). */
int sim_scn_member_frame(scn *x, const cJSON *obj, const char *key, bool required, int *frame);

/* ---- sections (scenario_world.c), read in the order of scenario.c's table ---- */
int sim_scn_parse_contacts(rb_cfg *c, const cJSON *v);
int sim_scn_parse_events(rb_cfg *c, const cJSON *v);
int sim_scn_parse_pushes(rb_cfg *c, const cJSON *v);
int sim_scn_parse_random_pushes(rb_cfg *c, const cJSON *v);
/* scenario_mismatch.c: "mismatch" and "random_contacts" (roboest/sim_mismatch.h) */
int sim_scn_parse_mismatch(rb_cfg *c, const cJSON *v);
int sim_scn_parse_random_contacts(rb_cfg *c, const cJSON *v);
int sim_scn_parse_payload(rb_cfg *c, const cJSON *v);
int sim_scn_parse_balance(rb_cfg *c, const cJSON *v);
int sim_scn_parse_gait(rb_cfg *c, const cJSON *v); /* scenario_gait.c: after balance */
int sim_scn_parse_sensors(rb_cfg *c, const cJSON *v);

/* ---- jets, temperature, scales (scenario_jets.c), read before the sensors ---- */
int sim_scn_parse_jets(rb_cfg *c, const cJSON *v);
int sim_scn_parse_temperature(rb_cfg *c, const cJSON *v);
int sim_scn_parse_scales(rb_cfg *c, const cJSON *v);
/* An FT sensor's temperature_drift key (is_ft: the sensor is an FT sensor). */
int sim_scn_parse_temperature_drift(scn *x, const cJSON *e, bool is_ft, rb_scenario_sensor *ss);
/* The jets' and scales' owned arrays (rb_scenario_free); the flight's too. */
void sim_scn_free_jets(rb_scenario *s);

/* ---- flight (scenario_flight.c), read after the jets ---- */
int sim_scn_parse_flight(rb_cfg *c, const cJSON *v);
void sim_scn_free_flight(rb_scenario *s);
/* ---- floor friction (scenario_friction.c), read after the contacts; its arrays live in s->sim.floor ---- */
int sim_scn_parse_floor(rb_cfg *c, const cJSON *v);
void sim_scn_free_floor(rb_scenario *s);

/* ---- log_channels (scenario_run.c) ---- */
/* Whether an entry of log_channels (a channel name, or a prefix ending in '/') matches the channel. */
bool sim_scn_entry_matches(const char *entry, const char *channel);
/* Whether a run of s writes the channel to its log (every channel when log_channels is absent). */
bool sim_scn_log_keeps(const rb_scenario *s, const char *channel);
/* The channels a run of s logs, in log order (*names: n new strings, rb_strings_free). truth/pushes is counted
 * when random pushes are configured, though a run may draw none. */
int sim_scn_channel_names(const rb_scenario *s, char ***names, size_t *n, rb_err *err);

#endif
