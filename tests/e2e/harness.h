/* Runs the roboest binary for end-to-end tests and inspects what it left behind. */
#ifndef ROBOEST_TEST_HARNESS_H
#define ROBOEST_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../unit/support.h" /* test_count_entries, test_need_shared */

/* The exit codes as documented (README "Exit codes", roboest --help): what the tests expect, written here once. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_INTERNAL = 1,
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_INPUT = 3,
    CLI_EXIT_NUMERIC = 4,
    CLI_EXIT_OUTPUT = 5,
    CLI_EXIT_CHECK = 6
};

typedef struct cli_result {
    int status; /* exit code, or 128 + signal */
    char *out;  /* everything written to stdout */
    char *err;  /* everything written to stderr */
} cli_result;

/* Run build/roboest with the NULL-terminated arguments (not including the program name), in `cwd`
 * (NULL: the test's working directory). */
cli_result cli_run(const char *cwd, const char *const *args);
/* Start build/roboest with the arguments, not waited for: stdin from /dev/null, stdout to out_fd, stderr to
 * err_fd, in cwd (NULL: here), SIGINT and SIGTERM at their default action; file_size > 0: a file size limit
 * of that many bytes with SIGXFSZ ignored (a write past it fails with EFBIG, as on a full disk). */
pid_t cli_spawn(const char *cwd, const char *const *args, int out_fd, int err_fd, long file_size);
/* The same under `mpirun --allow-run-as-root --oversubscribe -np np` (as root where CI runs), with LeakSanitizer off in
 * the ranks (Open MPI's own allocations outlive MPI_Finalize). */
cli_result cli_run_mpi(int np, const char *const *args);
pid_t cli_spawn_mpi(int np, const char *const *args, int out_fd, int err_fd);
void cli_result_free(cli_result *r);

/* A fresh empty folder under /tmp (caller frees the string with free()). */
char *test_tmpdir(void);
/* Path join into a new string (free()). */
char *test_path(const char *dir, const char *name);
void test_write_file(const char *path, const char *text);
char *test_read_file(const char *path, size_t *len);
/* The JSON document in dir/name (dir NULL: name is the path); a missing or malformed file fails the test. */
struct cJSON *test_read_json(const char *dir, const char *name);
bool test_exists(const char *path);
/* Lines in s (a final line without a newline counts). */
int test_count_lines(const char *s);
/* Copy the first `len` bytes of src to dst. */
void test_truncate_copy(const char *src, const char *dst, size_t len);
size_t test_file_size(const char *path);
/* The value of a log's attribute (an output's provenance), NULL without it (borrowed). */
struct rb_log;
const char *test_log_attr(const struct rb_log *log, const char *key);
/* Logs a and b (any layout) read back hold the same channels (names, element names, units), the same attributes
 * and the same samples bit for bit (NaN included), in the same layout (rb_log_detect's format), asserted; the
 * number of values compared (timestamps and data). For outputs whose values, not bytes, are the promise: .h5 and
 * .mat written window by window. */
size_t test_same_log_values(const char *a, const char *b);

#endif
