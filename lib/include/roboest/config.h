/*
 * roboest config: the toolkit every JSON configuration format of roboest is read with (pipelines,
 * scenarios, comparison suites, closed loops, friction training specs, and the formats to come).
 *
 * What it gives a format:
 *   - one loader (rb_cfg_load / rb_cfg_load_text): the file read (at most 64 MiB), its SHA-256, its
 *     default name (the file stem), the JSON parsed with cJSON, then the format's own parse function;
 *   - messages that name the place: "<file>:<line>:<col>: <key path>: <what>" (RB_ECONFIG), the key
 *     path written like stages[2].params.alpha and located in the source text (cJSON keeps no
 *     positions), "<file>:<line>:<col>: malformed JSON (...)" for text that is not JSON;
 *   - typed getters that report at the current key path (strings, numbers, integers, choices with a
 *     "did you mean" suggestion, windows, string arrays, sessions), objects checked for unknown keys
 *     (with the closest allowed key suggested) and duplicated keys, and a table of sections for a
 *     format's top level.
 *
 * A format's parse function gets the context rb_cfg (file, text, base file, the key path, the error);
 * it pushes a key or index on the way into a member and pops it on the way out, so that every
 * message it raises names and locates what it checks. A format that needs more state defines its
 * own context with an rb_cfg as first member, copies the loader's context into it, and converts
 * back from the rb_cfg pointer its section functions receive.
 *
 * Errors: RB_ECONFIG as above, RB_ENOTFOUND (a file that cannot be opened), RB_EINPUT (a file above
 * 64 MiB, a read error), RB_ENOMEM ("<file>: out of memory").
 */
#ifndef ROBOEST_CONFIG_H
#define ROBOEST_CONFIG_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

RB_API_BEGIN

/* ---- key paths in JSON text ------------------------------------------------------------------------ */
/* One step of a key path: an object member (key, occurrence: 0 = first member with that key) or, with
 * key NULL, an array element (index). */
typedef struct rb_json_step {
    const char *key;
    size_t index;
} rb_json_step;

#define RB_JSON_PATH_MAX 16

/* Find a key path in JSON text: *line and *col (1-based; col counts bytes) of the member's key, or of
 * the element's value, for the deepest step found (1:1 for an empty path). Returns how many steps were
 * found. Never reads past len; tolerant of malformed text. */
size_t rb_json_locate(const char *text, size_t len, const rb_json_step *path, size_t depth, size_t *line, size_t *col);
/* "stages[2].params.alpha" into buf (truncated to size); keys that are not identifiers are written
 * as ["a key"]. */
void rb_json_path_format(const rb_json_step *path, size_t depth, char *buf, size_t size);

/* Where a text stops being JSON (as cJSON reads it: numbers as strtod takes them, nesting at most 1000):
 * the byte offset of the first error with *what describing it ("expected ',' or '}'"), or SIZE_MAX when
 * the text is well-formed. */
size_t rb_json_syntax_error(const char *text, size_t len, const char **what);
/* The first string of JSON text holding a \u0000 escape: the byte offset of its opening quote, *end just past
 * its closing one, *is_key whether a ':' follows it; SIZE_MAX when no string holds one. */
size_t rb_json_nul_escape(const char *text, size_t len, size_t *end, bool *is_key);

/* ---- the context ----------------------------------------------------------------------------------- */
typedef struct rb_cfg {
    const char *file; /* for messages (the path as given, or the name given with the text) */
    const char *text; /* NUL-terminated copy of the source */
    size_t len;
    const char *base_file; /* relative paths in the file resolve against its folder (NULL: as written) */
    rb_err *err;
    size_t depth; /* may exceed RB_JSON_PATH_MAX: deeper steps are counted, not kept */
    rb_json_step path[RB_JSON_PATH_MAX];
} rb_cfg;

/* The key path of what is being checked names and locates every message: push on the way in, pop on
 * the way out. */
static inline void rb_cfg_push_key(rb_cfg *c, const char *key, size_t occurrence)
{
    if (c->depth < RB_JSON_PATH_MAX)
        c->path[c->depth] = (rb_json_step){key, occurrence};
    c->depth++;
}

static inline void rb_cfg_push_index(rb_cfg *c, size_t i)
{
    if (c->depth < RB_JSON_PATH_MAX)
        c->path[c->depth] = (rb_json_step){NULL, i};
    c->depth++;
}

static inline void rb_cfg_pop(rb_cfg *c) { c->depth--; }

/* The steps of the path that are kept (at most RB_JSON_PATH_MAX). */
static inline size_t rb_cfg_depth(const rb_cfg *c) { return c->depth < RB_JSON_PATH_MAX ? c->depth : RB_JSON_PATH_MAX; }

/* RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>" at the current path. */
int rb_cfg_error(rb_cfg *c, const char *fmt, ...) RB_PRINTF(2, 3);
/* RB_ENOMEM "<file>: out of memory". */
int rb_cfg_nomem(rb_cfg *c);
/* A library call's error (its message) at the current path: RB_ENOMEM stays "out of memory". */
int rb_cfg_relay(rb_cfg *c, const rb_err *e);

/* ---- loading ---------------------------------------------------------------------------------------- */
/* A configuration format: how rb_cfg_load makes, reads and frees one document of it. */
typedef struct rb_cfg_format {
    const char *default_file; /* names a text loaded without a name, for messages ("scenario.json") */
    const char *default_name; /* the document's name when the file's stem is empty ("scenario") */
    bool base_is_file;        /* text loaded without a base file resolves paths against its name */
    size_t size;              /* bytes of the document, allocated zeroed */
    /* Before parsing: the document's identity (borrowed strings: copy what is kept) and its defaults.
     * Returns RB_OK or RB_ENOMEM (the loader writes the message). */
    int (*init)(void *doc, const char *file, const char *name, const char *sha256);
    /* The parsed JSON into the document; errors through c (rb_cfg_error). arg: rb_cfg_load's. */
    int (*parse)(const rb_cfg *c, const cJSON *root, void *doc, const void *arg);
    void (*free)(void *doc); /* also after a failed init or parse */
} rb_cfg_format;

/* Load a document of format f from the file `path` (relative paths in it resolve against its folder).
 * *out: the new document (free it with the format's free function), NULL on failure. */
int rb_cfg_load(const rb_cfg_format *f, const char *path, const void *arg, void **out, rb_err *err);
/* The same from text (len bytes, need not be NUL-terminated): name_for_messages starts the messages and
 * gives the default name (NULL: f->default_file); relative paths resolve against the folder of base_file
 * (NULL: as written, or against name_for_messages when f->base_is_file). */
int rb_cfg_load_text(const rb_cfg_format *f, const char *text, size_t len, const char *name_for_messages,
                     const char *base_file, const void *arg, void **out, rb_err *err);

/* Read a whole configuration file (a regular file of at most 64 MiB: rb_file_read_all) into a new
 * NUL-terminated buffer (*text, *len; caller frees with rb_free). RB_ENOTFOUND, RB_EINPUT, RB_ENOMEM. */
int rb_cfg_read_file(const char *path, char **text, size_t *len, rb_err *err);
/* Parse NUL-terminated text[0..len) as JSON into *root (caller frees with cJSON_Delete); a NUL byte inside
 * or malformed JSON gives "<file>:<line>:<col>: malformed JSON (...)" (RB_ECONFIG), a key or string holding
 * the escape \u0000 "<file>:<line>:<col>: the key "..." holds \u0000, ..." (RB_ECONFIG, *root NULL). */
int rb_cfg_parse_json(const char *file, const char *text, size_t len, cJSON **root, rb_err *err);
/* RB_ECONFIG "<file>:<line>:<col>: malformed JSON (...)" for text cJSON rejected at cjson_offset (why:
 * the reason when known, else NULL to find it). */
int rb_cfg_malformed(const char *file, const char *text, size_t len, size_t cjson_offset, const char *why, rb_err *err);

/* ---- objects and sections --------------------------------------------------------------------------- */
/* Member `key` of obj (case-sensitive), NULL when absent. */
const cJSON *rb_cfg_member(const cJSON *obj, const char *key);
/* obj must be an object whose keys are unique and (allowed != NULL) among `allowed`; an unknown key is
 * reported with the closest allowed one as a suggestion, a duplicated one with where it first was. */
int rb_cfg_check_object(rb_cfg *c, const cJSON *obj, const char *const *allowed, size_t n_allowed);

/* One member of an object read by its own function, with its key on the path. `parse` receives the
 * context it was given (a format's context whose first member is the rb_cfg). */
typedef struct rb_cfg_section {
    const char *key;
    bool required;
    int (*parse)(rb_cfg *c, const cJSON *v);
} rb_cfg_section;

/* obj is an object with only the n sections' keys; each present one is read in table order (a missing
 * required one: "missing key 'k'"). */
int rb_cfg_sections(rb_cfg *c, const cJSON *obj, const rb_cfg_section *sections, size_t n);
/* One member through parse, with its key on the path; absent: "missing key 'k'" when required, else RB_OK. */
int rb_cfg_with_member(rb_cfg *c, const cJSON *obj, const char *key, bool required,
                       int (*parse)(rb_cfg *c, const cJSON *v));

/* ---- typed values at the current path ---------------------------------------------------------------- */
/* A string (a new copy in *out; empty only when allow_empty). */
int rb_cfg_want_string(rb_cfg *c, const cJSON *v, bool allow_empty, char **out);
/* A finite number. */
int rb_cfg_want_number(rb_cfg *c, const cJSON *v, double *out);
/* An integer in [lo, 2^53] ("expected an integer >= lo"). */
int rb_cfg_want_integer(rb_cfg *c, const cJSON *v, double lo, double *out);
/* One of `choices` (NULL-terminated) with a suggestion for a near miss. */
int rb_cfg_want_choice(rb_cfg *c, const cJSON *v, const char *const *choices, size_t *index);
/* A time window, every config's one form (configs/README.md, "Time windows"): `[t0, t1]`, absolute log seconds, or
 * `{"from_start": [t0, t1]}`, seconds after the log's first sample, resolved per log (rb_window_resolve); t0 < t1. */
typedef struct rb_window {
    double t0, t1;
    bool from_start;
} rb_window;
/* A window at the current path. absolute_only: "from_start" is an error at this key (a suite's events.window is
 * relative to each event already; a thrust validation's windows are absolute only). */
int rb_cfg_want_window(rb_cfg *c, const cJSON *v, bool absolute_only, rb_window *w);
/* The window in the log's time: *t0, *t1 shifted by t_start (the log's first sample, rb_log_start) when from_start. */
void rb_window_resolve(const rb_window *w, double t_start, double *t0, double *t1);
/* The window as a config writes it (a new item; NULL when out of memory). */
cJSON *rb_window_json(const rb_window *w);
/* "[t0, t1] s" or "[t0, t1] s after the log's first sample" (%.17g) into buf (n bytes). */
void rb_window_text(const rb_window *w, char *buf, size_t n);
/* An array of non-empty strings (new copies; *n may be 0 only when allow_empty). On failure *out may hold
 * what was read (free with rb_strings_free(*out, *n)). */
int rb_cfg_want_strings(rb_cfg *c, const cJSON *v, bool allow_empty, char ***out, size_t *n);

/* What a number must satisfy; a violation is reported at the current path ("must be > 0", ...). */
typedef enum rb_cfg_rule {
    RB_CFG_ANY,
    RB_CFG_POSITIVE,     /* > 0 */
    RB_CFG_NON_NEGATIVE, /* >= 0 */
    RB_CFG_NON_ZERO,     /* != 0 */
    RB_CFG_UNIT_OPEN,    /* in [0, 1) */
    RB_CFG_UNIT_CLOSED   /* in [0, 1] */
} rb_cfg_rule;
/* x checked against `rule` (RB_ECONFIG at the current path). */
int rb_cfg_check_rule(rb_cfg *c, double x, rb_cfg_rule rule);

/* Members: absent is an error when required, else leaves *out (the default) as it is. */
int rb_cfg_member_string(rb_cfg *c, const cJSON *obj, const char *key, bool required, char **out);
int rb_cfg_member_choice(rb_cfg *c, const cJSON *obj, const char *key, const char *const *choices, size_t *index);
int rb_cfg_member_number(rb_cfg *c, const cJSON *obj, const char *key, rb_cfg_rule rule, double *out);
int rb_cfg_member_strings(rb_cfg *c, const cJSON *obj, const char *key, bool required, bool allow_empty, char ***out,
                          size_t *n);

/* A name made of letters, digits, '_' and '-', starting with a letter or '_' (variants, configurations). */
bool rb_cfg_valid_name(const char *s);

/* ---- logs: sessions ------------------------------------------------------------------------------------ */
/* One log: the files of one recording session (the logger splits a session every 30 min), in order. */
typedef struct rb_cfg_session {
    size_t n_paths;
    char **paths; /* resolved against the config's folder; concatenated in order */
} rb_cfg_session;

/* A path or an array of paths (one session), resolved against c->base_file. */
int rb_cfg_want_session(rb_cfg *c, const cJSON *v, rb_cfg_session *s);
/* A path in the file made relative to the folder of c->base_file, replacing *path. RB_ENOMEM. */
int rb_cfg_resolve_path(rb_cfg *c, char **path);

/* ---- duplicates ---------------------------------------------------------------------------------------- */
/* The lowest position among n names whose name repeats an earlier one's (*dup, with that earlier position in
 * *first; `first` may be NULL), or SIZE_MAX in both. NULL names are skipped. O(n log n). RB_ENOMEM. */
int rb_cfg_find_duplicate(rb_cfg *c, const char *const *names, size_t n, size_t *dup, size_t *first);

/* ---- building JSON (resolved configurations, imported pipelines) ---------------------------------------- */
/* cJSON builders return NULL when out of memory; `ok` collects that so each call site stays one line. */
typedef struct rb_cfg_builder {
    bool ok;
} rb_cfg_builder;
/* item added to parent under key (key NULL: appended to the array parent); NULL item or a failed add
 * (item freed) clears b->ok and gives NULL. */
cJSON *rb_cfg_add(rb_cfg_builder *b, cJSON *parent, const char *key, cJSON *item);
/* A new array of copies of n strings, NULL when out of memory. */
cJSON *rb_cfg_strings(const char *const *s, size_t n);

RB_API_END

#endif
