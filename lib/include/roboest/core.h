/*
 * roboest core: status codes, error context, allocation, matrix views, small utilities.
 *
 * Error style (one for the whole library):
 *   - every fallible function returns RB_OK (0) or a negative rb_status and takes an
 *     `rb_err *err` last; the one-line message is kept in *err (err may be NULL);
 *   - a callee's code travels up unchanged; a caller may prepend context with rb_err_prefix
 *     ("log.mat: " + "channel joints_state/positions: " + detail);
 *   - the library never prints and never exits: the command-line tool does.
 *
 * Matrices are row-major: element (i, j) of a rb_mat is data[i * stride + j].
 * Sample-major signals follow the same rule: sample t, element i is at t * n + i.
 */
#ifndef ROBOEST_CORE_H
#define ROBOEST_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RB_VERSION "0.1.0"

/* What libroboest.so exports: the library is built with -fvisibility=hidden, and every public header
 * (lib/include/roboest/) declares its API between RB_API_BEGIN and RB_API_END, which give those declarations
 * default visibility. Functions declared only in a module's internal header stay inside the library. */
#if defined(__GNUC__)
#define RB_API_BEGIN _Pragma("GCC visibility push(default)")
#define RB_API_END _Pragma("GCC visibility pop")
#define RB_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define RB_API_BEGIN
#define RB_API_END
#define RB_PRINTF(fmt, args)
#endif

RB_API_BEGIN

typedef enum rb_status {
    RB_OK = 0,
    RB_ENOMEM = -1,    /* allocation failed */
    RB_ENOTFOUND = -2, /* a file, channel, element, key or name does not exist */
    RB_EINPUT = -3,    /* an input file or signal is malformed, corrupt or unsupported */
    RB_ECONFIG = -4,   /* a configuration (pipeline, suite, scenario) is invalid */
    RB_EDIM = -5,      /* dimensions do not agree */
    RB_ENUMERIC = -6,  /* numeric failure: non-finite value, matrix not positive definite */
    RB_EIO = -7,       /* an operating-system or library I/O call failed while writing */
    RB_EEXISTS = -8,   /* an output exists and overwriting was not allowed */
    RB_EINVAL = -9     /* a caller passed an invalid argument (a programming error) */
} rb_status;

#define RB_ERR_MSG_MAX 1024

typedef struct rb_err {
    int code;                 /* last rb_status set, RB_OK if none */
    char msg[RB_ERR_MSG_MAX]; /* one line, no trailing newline */
} rb_err;

/* Symbolic name of a status ("RB_ENOTFOUND"); never NULL. */
const char *rb_status_name(int code);

/* Reset err to RB_OK with an empty message. err may be NULL. */
void rb_err_clear(rb_err *err);

/* Set err's code and message (printf format); returns code so callers can `return rb_err_set(...)`.
 * Newlines in the formatted message are replaced by spaces: messages are one line. */
int rb_err_set(rb_err *err, int code, const char *fmt, ...) RB_PRINTF(3, 4);

/* Prepend context to err's message ("file.mat: " + old message) and return code, the status being
 * passed up (the callee's return value), so callers can `return rb_err_prefix(err, rc, ...)`. The
 * code comes from the caller, never from *err: err may be NULL (then only code is returned) and a
 * failure still returns its negative code. err->code is left as the callee set it. */
int rb_err_prefix(rb_err *err, int code, const char *fmt, ...) RB_PRINTF(3, 4);

/* ---- allocation --------------------------------------------------------------------------
 * All library allocations go through these so tests can make the Nth allocation fail.
 * rb_free(NULL) is a no-op. */
void *rb_malloc(size_t size);
void *rb_calloc(size_t count, size_t size);
void *rb_realloc(void *ptr, size_t size);
void rb_free(void *ptr);
/* The library's own threads running besides their callers (the thread pools of lib/experiments): a pool adds n
 * before it starts n threads and takes them off once joined. What forks asks (lib/io/h5isolate.c: under
 * AddressSanitizer a fork while another thread allocates can leave the child blocked forever). */
void rb_threads_add(long n);
long rb_threads_running(void);
/* Copy of s (caller frees with rb_free); NULL on allocation failure or s == NULL. */
char *rb_strdup(const char *s);
/* Copy of the first n bytes of s plus a terminating NUL (caller frees with rb_free). */
char *rb_strndup(const char *s, size_t n);
/* printf into a new string (caller frees with rb_free); NULL on allocation failure. */
char *rb_asprintf(const char *fmt, ...) RB_PRINTF(1, 2);

/* Frees n strings and the array (s may be NULL). */
void rb_strings_free(char **s, size_t n);

/* A name and its position in a list, for lists sorted by name (duplicates, bisection). */
typedef struct rb_name_ref {
    const char *name;
    size_t index;
} rb_name_ref;

/* qsort / bsearch order: by name, then by position. */
int rb_name_ref_cmp(const void *a, const void *b);
/* In refs sorted with rb_name_ref_cmp: the lowest position whose name repeats an earlier one's (*dup,
 * with that earlier position in *first), or SIZE_MAX in both. */
void rb_name_refs_first_repeat(const rb_name_ref *refs, size_t n, size_t *dup, size_t *first);

/* Optimal-string-alignment edit distance (insert, delete, substitute, swap neighbours); strings
 * longer than 63 bytes compare as SIZE_MAX unless equal. */
size_t rb_edit_distance(const char *a, const char *b);

/* Closest-name suggestion: init with the unknown name, consider each candidate, then best() gives the
 * closest one near enough to be a likely typo, or NULL. No allocation. */
typedef struct rb_suggest {
    const char *name;
    const char *best;
    size_t best_distance;
} rb_suggest;

void rb_suggest_init(rb_suggest *s, const char *name);
void rb_suggest_consider(rb_suggest *s, const char *candidate);
const char *rb_suggest_best(const rb_suggest *s);

/* Test hook: make the allocation after `n` more successful ones fail (n < 0 disables).
 * Returns how many allocations were made since the last call. The counters are atomic (threads may
 * allocate meanwhile; which of them gets the failure is then up to timing). */
long rb_alloc_fail_after(long n);

/* a * b into *out; false (and *out untouched) on overflow. */
static inline bool rb_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

/* ---- matrices ----------------------------------------------------------------------------
 * A descriptor over a row-major buffer. Views never own memory; only rb_mat_alloc does. */
typedef struct rb_mat {
    size_t rows, cols, stride; /* stride >= cols, in elements */
    double *data;
} rb_mat;

static inline double *rb_mat_at(const rb_mat *m, size_t i, size_t j) { return m->data + i * m->stride + j; }

/* A view over caller-owned storage. */
static inline rb_mat rb_mat_view(double *data, size_t rows, size_t cols, size_t stride)
{
    rb_mat m = {rows, cols, stride, data};
    return m;
}

/* Allocate a zeroed rows x cols matrix (stride = cols); free with rb_mat_free. */
int rb_mat_alloc(rb_mat *m, size_t rows, size_t cols, rb_err *err);
void rb_mat_free(rb_mat *m);

/* ---- provenance ------------------------------------------------------------------------------------
 * What every output of roboest records, built once by its producer and handed to the container's
 * writer (rb_log_set_provenance, rb_arrays_set_provenance, rb_report_set_provenance,
 * rb_comparison_set_provenance, rb_friction_net_file_set_provenance): "roboest_version" first, then the
 * producer's pairs in the order added (config file and its SHA-256, inputs and theirs, model, ...). */
typedef struct rb_provenance {
    size_t n;
    char **keys, **values;
} rb_provenance;

/* An empty provenance holding "roboest_version" = RB_VERSION (release with rb_provenance_free, also after
 * a failure). RB_ENOMEM. */
int rb_provenance_init(rb_provenance *pv, rb_err *err);
/* Append key = value; a NULL value adds nothing (an absent item, e.g. no model). RB_ENOMEM. */
int rb_provenance_add(rb_provenance *pv, const char *key, const char *value, rb_err *err);
/* The same with the key formatted (e.g. "variant %s: pipeline"). RB_ENOMEM. */
int rb_provenance_addf(rb_provenance *pv, const char *value, rb_err *err, const char *key_fmt, ...) RB_PRINTF(4, 5);
void rb_provenance_free(rb_provenance *pv);
/* set(target, key, value, err) for every pair in order, stopping at the first failure (its code). The
 * containers' set_provenance functions are this with their attribute setter. */
int rb_provenance_each(const rb_provenance *pv,
                       int (*set)(void *target, const char *key, const char *value, rb_err *err), void *target,
                       rb_err *err);

/* ---- checksums ---------------------------------------------------------------------------- */
typedef struct rb_sha256 {
    uint32_t state[8];
    uint64_t length;
    uint8_t block[64];
    size_t used;
} rb_sha256;

void rb_sha256_init(rb_sha256 *ctx);
void rb_sha256_update(rb_sha256 *ctx, const void *data, size_t len);
/* Writes the digest as 64 lowercase hex characters plus NUL into hex[65]. */
void rb_sha256_final(rb_sha256 *ctx, char hex[65]);
/* SHA-256 of len bytes as a new hex string (caller frees with rb_free); NULL when out of memory. */
char *rb_sha256_hexdup(const void *data, size_t len);
/* SHA-256 of a whole file as hex; RB_ENOTFOUND / RB_EINPUT with the path in the message. */
int rb_sha256_file(const char *path, char hex[65], rb_err *err);

/* ---- paths and files ----------------------------------------------------------------------- */
/* `rel` resolved against the folder holding `base_file` (absolute `rel` is returned as is).
 * Caller frees with rb_free; NULL on allocation failure. */
char *rb_path_relative_to(const char *base_file, const char *rel);
/* The absolute path `path` as seen from the absolute folder `dir` ("../x/y"), "." and ".." components resolved
 * lexically (give canonical paths, realpath, where symbolic links matter); at most 256 components each. Caller frees
 * with rb_free; NULL when out of memory or not both absolute. */
char *rb_path_between(const char *dir, const char *path);
/* "dir/rel", or rel itself when dir is NULL, "" or "." (caller frees with rb_free; NULL when out of memory). */
char *rb_path_in(const char *dir, const char *rel);
/* Last component of a path (borrowed pointer into `path`). */
const char *rb_path_basename(const char *path);
/* The file name of `path` (borrowed) with *len set to the length of its stem: the name without its
 * extension, where a leading dot starts no extension (".hidden" is its own stem). */
const char *rb_path_stem(const char *path, size_t *len);

/* Write-then-rename output: rb_outfile_begin makes a unique temporary file next to `path`
 * (same folder, so the rename is atomic) and returns its name in out->tmp_path. Nothing is
 * ever written to `path` itself until rb_outfile_commit renames the temporary over it;
 * rb_outfile_abort removes the temporary. If `path` exists and !overwrite, begin fails
 * with RB_EEXISTS; a missing folder gives RB_EIO naming it. Refused with RB_EIO, overwrite or
 * not: a `path` that exists and is not a regular file (a symbolic link, even to a regular file,
 * a device, FIFO, socket or folder: a rename would replace the node itself), and, while the
 * input guard is on, a noted input (rb_input_note). Until commit or abort, the temporary is
 * known to rb_outfiles_unlink_all. */
typedef struct rb_outfile {
    char *path;
    char *tmp_path;
    bool overwrite;
} rb_outfile;

int rb_outfile_begin(rb_outfile *out, const char *path, bool overwrite, rb_err *err);
int rb_outfile_commit(rb_outfile *out, rb_err *err);
void rb_outfile_abort(rb_outfile *out);
/* The target checks of rb_outfile_begin alone, nothing created: for a command that checks every target
 * before its work (a missing `path` is fine). */
int rb_outfile_check(const char *path, bool overwrite, rb_err *err);

/* Removes every temporary of an rb_outfile begun and not yet committed or aborted, and makes later
 * begins fail: for a SIGINT/SIGTERM handler that then ends the process (async-signal-safe, lock-free;
 * the rb_outfile structs are left as they are). */
void rb_outfiles_unlink_all(void);

/* Input guard, off unless a program turns it on: rb_input_note records a file the process reads
 * (its device, inode and resolved path; a missing file is ignored), and rb_outfile_begin then refuses
 * to make it an output: RB_EIO "<out>: is an input of this command (<input>); choose another output".
 * The readers of logs, arrays, configurations, URDFs and friction networks note their files. Thread-safe.
 * rb_inputs_guard_clear turns the guard off and forgets the inputs. */
void rb_inputs_guard_enable(void);
void rb_inputs_guard_clear(void);
void rb_input_note(const char *path);

/* mkdir (one level) that accepts an existing folder; *made tells whether this call created it.
 * RB_EIO "<dir>: cannot create the output folder: <reason>". */
int rb_dir_make(const char *dir, bool *made, rb_err *err);
/* n texts into files dir/names[i] (dir created if missing, one level), all or nothing: every file goes to a
 * temporary first (a clash without overwrite fails before anything is written: RB_EEXISTS) and all are
 * renamed only when all were written; a folder this call made is removed again on failure. RB_EIO,
 * RB_ENOMEM. */
int rb_texts_write(const char *dir, const char *const *names, const char *const *texts, size_t n, bool overwrite,
                   rb_err *err);
/* Open `path` for reading (*out, fclose) only when it is a regular file, noting it with rb_input_note: a FIFO,
 * device or folder is refused without blocking, before anything is read; *size (may be NULL) its size in bytes.
 * RB_ENOTFOUND "<path>: no such file"; RB_EINPUT "<path>: not <what> (not a regular file)" ("<path>: not a regular
 * file" when what is NULL) or "<path>: cannot open: <reason>"; RB_ENOMEM. */
int rb_file_open_regular(const char *path, const char *what, FILE **out, long long *size, rb_err *err);
/* The whole of the regular file `path` (at most max_bytes, checked before reading; noted by rb_input_note) as
 * *text, NUL-terminated,
 * *len bytes before the terminator (caller frees *text with rb_free; NULL on failure). RB_ENOTFOUND / RB_EINPUT
 * "<path>: cannot open: <reason>"; RB_EINPUT "<path>: not a regular file" (a folder, device or FIFO),
 * "<path>: larger than <max_bytes in MiB> MiB", "<path>: read error"; RB_ENOMEM. */
int rb_file_read_all(const char *path, size_t max_bytes, char **text, size_t *len, rb_err *err);

/* Locale-independent number formatting for data: shortest "%.17g"-style round-trip text
 * ("nan"/"inf" for non-finite) into buf (at least 32 bytes), with a '.' decimal point whatever
 * the locale: it formats under the C locale itself (rb_c_locale_push), so callers need not (only
 * if that push fails for lack of memory, which glibc's never does, is the thread's locale used).
 * Returns buf. */
char *rb_format_double(double x, char buf[32]);

/* ---- locale --------------------------------------------------------------------------------
 * Data text (numbers read from or written to files and reports) must not depend on the program's
 * locale, while printf and strtod follow LC_NUMERIC. rb_c_locale_push switches the calling thread,
 * and only it, to the C locale (a process-wide setlocale would race with other threads);
 * rb_c_locale_pop restores what the thread had. Pushes nest; pop each on the thread that pushed
 * it, in reverse order. The fields are opaque (locale_t stays out of this header). */
typedef struct rb_locale_scope {
    void *c_locale; /* the C locale object, freed by pop; NULL when push failed */
    void *previous; /* the thread's locale before push, restored by pop */
} rb_locale_scope;

/* RB_ENOMEM "out of memory (C locale)" when the C locale cannot be made: the thread's locale is
 * unchanged and rb_c_locale_pop is then a no-op. */
int rb_c_locale_push(rb_locale_scope *scope, rb_err *err);
void rb_c_locale_pop(rb_locale_scope *scope);

/* ---- random numbers ---------------------------------------------------------------------------
 * xoshiro256** seeded through splitmix64: the same seed gives the same sequence on every machine.
 * All randomness in roboest (simulation noise, Monte Carlo tests, training) comes from one of these,
 * seeded from the config. */
typedef struct rb_rng {
    uint64_t s[4];
    double spare; /* second normal deviate of the last pair */
    bool has_spare;
} rb_rng;

void rb_rng_seed(rb_rng *rng, uint64_t seed);
uint64_t rb_rng_next(rb_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
double rb_rng_uniform(rb_rng *rng);
/* Standard normal (Marsaglia's polar method). */
double rb_rng_normal(rb_rng *rng);

/* Wall-clock seconds from a monotonic clock (for progress reporting and benchmarks). */
double rb_monotonic_seconds(void);

RB_API_END

#endif
