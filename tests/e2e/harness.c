#include "harness.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roboest/io.h"

char *test_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

char *test_tmpdir(void)
{
    char tmpl[] = "/tmp/roboest_e2e_XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fputs(text, f);
    fclose(f);
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

bool test_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

size_t test_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

int test_count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n')
            n++;
    if (*s && s[strlen(s) - 1] != '\n')
        n++;
    return n;
}

void test_truncate_copy(const char *src, const char *dst, size_t len)
{
    size_t n;
    char *data = test_read_file(src, &n);
    if (!data)
        abort();
    FILE *f = fopen(dst, "wb");
    fwrite(data, 1, len < n ? len : n, f);
    fclose(f);
    free(data);
}

/* argv: the command, then args. np > 0: the command is mpirun's, build/roboest under it with np ranks. */
static pid_t spawn(int np, const char *cwd, const char *const *args, int out_fd, int err_fd, long file_size)
{
    size_t argc = 0;
    while (args[argc])
        argc++;
    char n[16];
    snprintf(n, sizeof n, "%d", np);
    const char *mpi[] = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", n};
    size_t pre = np > 0 ? sizeof mpi / sizeof *mpi : 0, k = 0;
    char **argv = calloc(pre + argc + 2, sizeof *argv);
    for (; k < pre; k++)
        argv[k] = (char *)mpi[k];
    argv[k++] = RB_BUILD "/roboest";
    for (size_t i = 0; i < argc; i++)
        argv[k++] = (char *)args[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null_fd = open("/dev/null", O_RDONLY);
        dup2(null_fd, STDIN_FILENO);
        dup2(out_fd, STDOUT_FILENO);
        dup2(err_fd, STDERR_FILENO);
        signal(SIGINT, SIG_DFL); /* a shell may start a background job with SIGINT ignored */
        signal(SIGTERM, SIG_DFL);
        if (np > 0)
            setenv("ASAN_OPTIONS", "detect_leaks=0", 1); /* Open MPI's own allocations outlive MPI_Finalize */
        if (file_size > 0) {
            struct rlimit rl = {(rlim_t)file_size, (rlim_t)file_size};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
                _exit(126);
        }
        if (cwd && chdir(cwd) != 0)
            _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    free(argv);
    return pid;
}

pid_t cli_spawn(const char *cwd, const char *const *args, int out_fd, int err_fd, long file_size)
{
    return spawn(0, cwd, args, out_fd, err_fd, file_size);
}

pid_t cli_spawn_mpi(int np, const char *const *args, int out_fd, int err_fd)
{
    return spawn(np, NULL, args, out_fd, err_fd, 0);
}

static cli_result run(int np, const char *cwd, const char *const *args)
{
    cli_result r = {-1, NULL, NULL};
    char out_tmpl[] = "/tmp/roboest_out_XXXXXX", err_tmpl[] = "/tmp/roboest_err_XXXXXX";
    int out_fd = mkstemp(out_tmpl), err_fd = mkstemp(err_tmpl);
    int wstatus = 0;
    waitpid(spawn(np, cwd, args, out_fd, err_fd, 0), &wstatus, 0);
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    close(out_fd);
    close(err_fd);
    r.out = test_read_file(out_tmpl, NULL);
    r.err = test_read_file(err_tmpl, NULL);
    unlink(out_tmpl);
    unlink(err_tmpl);
    return r;
}

cli_result cli_run(const char *cwd, const char *const *args) { return run(0, cwd, args); }

cli_result cli_run_mpi(int np, const char *const *args) { return run(np, NULL, args); }

void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

cJSON *test_read_json(const char *dir, const char *name)
{
    char *path = dir ? test_path(dir, name) : NULL;
    const char *p = path ? path : name;
    char *text = test_read_file(p, NULL);
    cr_assert_not_null(text, "%s missing", p);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc, "%s is not JSON", p);
    free(text);
    free(path);
    return doc;
}

const char *test_log_attr(const rb_log *log, const char *key)
{
    for (size_t i = 0; i < log->n_attrs; i++)
        if (strcmp(log->attrs[i].key, key) == 0)
            return log->attrs[i].value;
    return NULL;
}

size_t test_same_log_values(const char *a, const char *b)
{
    rb_log *la = NULL, *lb = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(a, &la, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_read(b, &lb, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(la->format, lb->format, "%s, %s: layouts %d and %d", a, b, (int)la->format, (int)lb->format);
    cr_assert_eq(la->n_channels, lb->n_channels, "%s, %s", a, b);
    cr_assert_eq(la->n_attrs, lb->n_attrs, "%s, %s", a, b);
    for (size_t i = 0; i < la->n_attrs; i++)
        cr_assert(strcmp(la->attrs[i].key, lb->attrs[i].key) == 0 &&
                      strcmp(la->attrs[i].value, lb->attrs[i].value) == 0,
                  "%s: attribute %s", b, la->attrs[i].key);
    size_t values = 0;
    for (size_t c = 0; c < la->n_channels; c++) {
        const rb_channel *x = &la->channels[c], *y = rb_log_find(lb, x->name);
        cr_assert_not_null(y, "%s: no channel %s", b, x->name);
        cr_assert(x->n_samples == y->n_samples && x->n_elements == y->n_elements,
                  "%s: channel %s: %zu x %zu, %zu x %zu", b, x->name, x->n_samples, x->n_elements, y->n_samples,
                  y->n_elements);
        for (size_t e = 0; e < x->n_elements; e++)
            cr_assert(strcmp(x->element_names[e], y->element_names[e]) == 0 && strcmp(x->units[e], y->units[e]) == 0,
                      "%s: channel %s element %zu", b, x->name, e);
        cr_assert(x->n_samples == 0 || memcmp(x->time, y->time, x->n_samples * sizeof(double)) == 0,
                  "%s: channel %s: timestamps differ", b, x->name);
        for (size_t k = 0; k < x->n_samples * x->n_elements; k++)
            cr_assert(memcmp(&x->data[k], &y->data[k], sizeof(double)) == 0, "%s: channel %s: value %zu: %.17g, %.17g",
                      b, x->name, k, x->data[k], y->data[k]);
        values += x->n_samples * (x->n_elements + 1);
    }
    rb_log_free(la), rb_log_free(lb);
    return values;
}
