/*
 * Reading HDF5-based files (MATLAB v7.3, .h5) in a child process (rb_io_set_hdf5_isolation).
 *
 * Why: Debian's libhdf5 1.10.8 trusts metadata it cannot check (global heap object sizes and indices
 * behind variable-length strings, among others) and overflows heap buffers on some corrupt files, below
 * any call we make. Whatever can be checked through the API is (h5read.c); the rest is contained here:
 * a forked child reads the file and streams the finished log (or arrays, or the layout) back through a
 * pipe, and a child that dies instead is a corrupt file, RB_EINPUT, not a crash of the caller.
 *
 * Threads: a thread inside HDF5 at the moment of fork would leave HDF5's global lock held in the child
 * forever. Every in-process HDF5 user of the library (the writers, in-process reads) holds the fork lock
 * shared (rb_io_h5_enter); fork happens with it held exclusively, so no thread is inside HDF5 then. The pipe is made and the
 * parent's write end closed in the same exclusive section, so a child never holds another read's write end.
 *
 * Some corrupt files send libhdf5 into an endless loop instead: the child has a CPU time limit (CPU_BASE_S).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "h5isolate.h"

enum {
    BUF_BYTES = 1 << 16,
    PIPE_BYTES = 1 << 20,   /* Linux's default limit for an unprivileged pipe */
    RB_F_SETPIPE_SZ = 1031, /* F_SETPIPE_SZ, Linux only, hidden without _GNU_SOURCE */
    MAX_STRING = 1 << 24,   /* bytes of one name, unit, attribute or message from the child */
    /* CPU seconds the child may take: some corrupt files send libhdf5 1.10 into an endless loop (loading a
     * global heap). Reading takes well under 0.1 s per MB of file (make bench); this is 10x that and more. */
    CPU_BASE_S = 10,
    CPU_PER_MB_S = 1
};
static const uint64_t MAGIC = 0x3548486f62526272ull, END = 0x444e4535484f4272ull;

static atomic_bool isolating;

void rb_io_set_hdf5_isolation(bool on) { atomic_store(&isolating, on); }
bool rb_io_hdf5_isolation(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* GCC 12's AddressSanitizer does not hold its allocator's locks across fork: a fork while another thread is
     * inside it leaves the child blocked on a lock forever (seen: a threaded `roboest compare` under ASan in CI).
     * An ASan build therefore reads in process, as with isolation off, while the library's pools run threads; the
     * plain build forks (glibc's malloc holds its arenas across fork). */
    if (rb_threads_running() > 0)
        return false;
#endif
    return atomic_load(&isolating) && !rb_io_h5_in_child();
}

/* ---- the stream: unsigned 64-bit integers, strings (length, bytes; NULL is length UINT64_MAX), doubles ---- */

typedef struct wbuf {
    int fd;
    size_t n;
    bool failed;
    unsigned char buf[BUF_BYTES];
} wbuf;

static void w_flush(wbuf *w)
{
    for (size_t done = 0; done < w->n && !w->failed;) {
        ssize_t k = write(w->fd, w->buf + done, w->n - done);
        if (k > 0)
            done += (size_t)k;
        else if (k < 0 && errno != EINTR)
            w->failed = true;
    }
    w->n = 0;
}

static void w_bytes(wbuf *w, const void *p, size_t len)
{
    const unsigned char *s = p;
    while (len > 0 && !w->failed) {
        if (w->n == BUF_BYTES)
            w_flush(w);
        size_t k = BUF_BYTES - w->n < len ? BUF_BYTES - w->n : len;
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        len -= k;
    }
}

static void w_u64(wbuf *w, uint64_t v) { w_bytes(w, &v, sizeof v); }

static void w_str(wbuf *w, const char *s)
{
    if (!s) {
        w_u64(w, UINT64_MAX);
        return;
    }
    size_t len = strlen(s);
    w_u64(w, len);
    w_bytes(w, s, len);
}

typedef struct rbuf {
    int fd;
    size_t pos, n;
    bool failed; /* short or unreadable stream */
    unsigned char buf[BUF_BYTES];
} rbuf;

static bool r_bytes(rbuf *r, void *p, size_t len)
{
    unsigned char *d = p;
    while (len > 0 && !r->failed) {
        if (r->pos == r->n) {
            ssize_t k = read(r->fd, r->buf, BUF_BYTES);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                r->failed = true;
                break;
            }
            r->pos = 0;
            r->n = (size_t)k;
        }
        size_t k = r->n - r->pos < len ? r->n - r->pos : len;
        memcpy(d, r->buf + r->pos, k);
        r->pos += k;
        d += k;
        len -= k;
    }
    return !r->failed;
}

static bool r_u64(rbuf *r, uint64_t *v) { return r_bytes(r, v, sizeof *v); }

/* A string (NULL for the NULL string); false on a short stream, a length over MAX_STRING or no memory. */
static bool r_str(rbuf *r, char **s)
{
    uint64_t len;
    *s = NULL;
    if (!r_u64(r, &len))
        return false;
    if (len == UINT64_MAX)
        return true;
    if (len > MAX_STRING || !(*s = rb_malloc((size_t)len + 1))) {
        r->failed = true;
        return false;
    }
    if (!r_bytes(r, *s, (size_t)len)) {
        rb_free(*s);
        *s = NULL;
        return false;
    }
    (*s)[len] = '\0';
    return true;
}

/* ---- what each read sends ------------------------------------------------------------------------ */

static void send_attrs(wbuf *w, const rb_attr *attrs, size_t n)
{
    w_u64(w, n);
    for (size_t k = 0; k < n; k++) {
        w_str(w, attrs[k].key);
        w_str(w, attrs[k].value);
    }
}

static int recv_attrs(rbuf *r, rb_io_attrs attrs, rb_err *err)
{
    uint64_t n;
    int rc = r_u64(r, &n) ? RB_OK : RB_EIO;
    for (uint64_t k = 0; rc == RB_OK && k < n; k++) {
        char *key = NULL, *value = NULL;
        if (!r_str(r, &key) || !r_str(r, &value) || !key)
            rc = RB_EIO;
        else
            rc = rb_io_attrs_set(attrs, key, value, err);
        rb_free(key);
        rb_free(value);
    }
    return rc;
}

/* The log; each channel's samples are freed once sent, so that the two processes together hold about one
 * copy of the data. */
static void send_log(wbuf *w, rb_log *log)
{
    w_u64(w, (uint64_t)log->format);
    w_str(w, log->root_name);
    send_attrs(w, log->attrs, log->n_attrs);
    w_u64(w, log->n_skipped);
    for (size_t k = 0; k < log->n_skipped; k++) {
        w_str(w, log->skipped[k].name);
        w_str(w, log->skipped[k].reason);
    }
    w_u64(w, log->n_channels);
    for (size_t c = 0; c < log->n_channels; c++) {
        rb_channel *ch = &log->channels[c];
        w_str(w, ch->name);
        w_u64(w, ch->n_samples);
        w_u64(w, ch->n_elements);
        for (size_t i = 0; i < ch->n_elements; i++) {
            w_str(w, ch->element_names[i]);
            w_str(w, ch->units[i]);
        }
        w_bytes(w, ch->time, ch->n_samples * sizeof(double));
        w_bytes(w, ch->data, ch->n_samples * ch->n_elements * sizeof(double));
        rb_free(ch->time);
        rb_free(ch->data);
        ch->time = ch->data = NULL; /* the child exits without freeing the log */
    }
}

static int recv_log(rbuf *r, rb_log *log, rb_err *err)
{
    uint64_t format, n_skipped, n_channels;
    char *root = NULL;
    if (!r_u64(r, &format) || !r_str(r, &root))
        return RB_EIO;
    log->format = (rb_log_format)format;
    log->root_name = root;
    int rc = recv_attrs(r, RB_IO_ATTRS(log), err);
    if (rc == RB_OK && !r_u64(r, &n_skipped))
        rc = RB_EIO;
    for (uint64_t k = 0; rc == RB_OK && k < n_skipped; k++) {
        char *name = NULL, *reason = NULL;
        if (!r_str(r, &name) || !r_str(r, &reason) || !name || !reason)
            rc = RB_EIO;
        else
            rc = rb_log_note_skipped(log, name, reason, err);
        rb_free(name);
        rb_free(reason);
    }
    if (rc == RB_OK && !r_u64(r, &n_channels))
        rc = RB_EIO;
    for (uint64_t c = 0; rc == RB_OK && c < n_channels; c++) {
        uint64_t T, n;
        char *name = NULL;
        rb_channel *ch = NULL;
        if (!r_str(r, &name) || !name || !r_u64(r, &T) || !r_u64(r, &n) || T > SIZE_MAX || n > SIZE_MAX)
            rc = RB_EIO;
        else
            rc = rb_log_add_channel(log, name, (size_t)T, (size_t)n, &ch, err);
        rb_free(name);
        for (size_t i = 0; rc == RB_OK && i < ch->n_elements; i++) {
            char *el = NULL, *unit = NULL;
            if (!r_str(r, &el) || !r_str(r, &unit) || !el || !unit)
                rc = RB_EIO;
            else if ((rc = rb_channel_set_name(ch, i, el, err)) == RB_OK)
                rc = rb_channel_set_unit(ch, i, unit, err);
            rb_free(el);
            rb_free(unit);
        }
        if (rc == RB_OK && (!r_bytes(r, ch->time, ch->n_samples * sizeof(double)) ||
                            !r_bytes(r, ch->data, ch->n_samples * ch->n_elements * sizeof(double))))
            rc = RB_EIO;
    }
    return rc;
}

static void send_arrays(wbuf *w, const rb_arrays *a)
{
    send_attrs(w, a->attrs, a->n_attrs);
    w_u64(w, a->n);
    for (size_t k = 0; k < a->n; k++) {
        const rb_array *arr = &a->items[k];
        w_str(w, arr->name);
        w_u64(w, arr->ndim);
        for (int d = 0; d < 3; d++)
            w_u64(w, arr->dims[d]);
        w_bytes(w, arr->data, arr->dims[0] * arr->dims[1] * arr->dims[2] * sizeof(double));
    }
}

static int recv_arrays(rbuf *r, rb_arrays *a, rb_err *err)
{
    uint64_t n;
    int rc = recv_attrs(r, RB_IO_ATTRS(a), err);
    if (rc == RB_OK && !r_u64(r, &n))
        rc = RB_EIO;
    for (uint64_t k = 0; rc == RB_OK && k < n; k++) {
        uint64_t ndim, d[3];
        char *name = NULL;
        rb_array *arr = NULL;
        if (!r_str(r, &name) || !name || !r_u64(r, &ndim) || !r_u64(r, &d[0]) || !r_u64(r, &d[1]) || !r_u64(r, &d[2]) ||
            d[0] > SIZE_MAX || d[1] > SIZE_MAX || d[2] > SIZE_MAX)
            rc = RB_EIO;
        else
            rc = rb_arrays_add(a, name, (size_t)ndim, (size_t[3]){(size_t)d[0], (size_t)d[1], (size_t)d[2]}, &arr, err);
        rb_free(name);
        if (rc == RB_OK && !r_bytes(r, arr->data, arr->dims[0] * arr->dims[1] * arr->dims[2] * sizeof(double)))
            rc = RB_EIO;
    }
    return rc;
}

/* ---- the child and the parent ----------------------------------------------------------------------- */

typedef enum job_kind { JOB_DETECT, JOB_LOG, JOB_ARRAYS } job_kind;

typedef struct job {
    job_kind kind;
    const char *path;
    rb_io_kind io_kind;
    rb_log_format *fmt; /* JOB_DETECT */
    rb_log *log;        /* JOB_LOG */
    rb_arrays *arrays;  /* JOB_ARRAYS */
} job;

static int classify(const job *jb, rb_log_format *fmt, rb_err *err)
{
    return jb->io_kind == RB_IO_MAT73 ? rb_io_classify_mat73(jb->path, fmt, err)
                                      : rb_io_classify_h5(jb->path, fmt, err);
}

/* In the child: the whole read in-process, then its outcome down the pipe. */
static void child_run(const job *jb, wbuf *w)
{
    rb_err err;
    rb_err_clear(&err);
    rb_log_format fmt = RB_FMT_MEMORY;
    int rc = RB_OK;
    if (jb->kind == JOB_ARRAYS)
        rc = jb->io_kind == RB_IO_MAT73 ? rb_io_read_arrays_mat73(jb->path, jb->arrays, &err)
                                        : rb_io_read_arrays_h5(jb->path, jb->arrays, &err);
    else if ((rc = classify(jb, &fmt, &err)) == RB_OK && jb->kind == JOB_LOG) {
        jb->log->format = fmt;
        rc = jb->io_kind == RB_IO_MAT73 ? rb_io_read_mat73(jb->path, fmt, jb->log, &err)
                                        : rb_io_read_h5(jb->path, fmt, jb->log, &err);
    }
    w_u64(w, MAGIC);
    w_u64(w, (uint64_t)(int64_t)rc);
    if (rc != RB_OK) {
        w_str(w, err.msg);
    } else if (jb->kind == JOB_DETECT) {
        w_u64(w, (uint64_t)fmt);
    } else if (jb->kind == JOB_LOG) {
        send_log(w, jb->log);
    } else {
        send_arrays(w, jb->arrays);
    }
    w_u64(w, END);
    w_flush(w);
}

/* In the parent: the child's outcome. RB_EIO (with nothing set in err) for a short or malformed stream. */
static int parent_run(const job *jb, rbuf *r, rb_err *err)
{
    uint64_t magic, code, end, fmt;
    if (!r_u64(r, &magic) || magic != MAGIC || !r_u64(r, &code))
        return RB_EIO;
    int rc = (int)(int64_t)code;
    if (rc != RB_OK) {
        char *msg = NULL;
        if (rc == RB_EIO || !r_str(r, &msg) || !msg) {
            rb_free(msg);
            return RB_EIO;
        }
        rb_err_set(err, rc, "%s", msg);
        rb_free(msg);
    } else if (jb->kind == JOB_DETECT) {
        if (!r_u64(r, &fmt))
            return RB_EIO;
        *jb->fmt = (rb_log_format)fmt;
    } else {
        int got = jb->kind == JOB_LOG ? recv_log(r, jb->log, err) : recv_arrays(r, jb->arrays, err);
        if (got)
            return got == RB_EIO || err->code != got ? RB_EIO : got;
    }
    return r_u64(r, &end) && end == END ? rc : RB_EIO;
}

static const char *signal_name(int sig, char buf[32])
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGABRT, "SIGABRT"}, {SIGFPE, "SIGFPE"},
                 {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (names[k].sig == sig)
            return names[k].name;
    snprintf(buf, 32, "signal %d", sig);
    return buf;
}

/* The child's first lines: no output (the library never prints: sanitizer reports from a corrupt file
 * neither), default deadly signals (a crash is the outcome the parent reports, not a handler's business),
 * a CPU time limit. */
static void child_setup(rlim_t cpu_seconds)
{
    struct rlimit cpu = {cpu_seconds, cpu_seconds + 5};
    setrlimit(RLIMIT_CPU, &cpu);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
    }
    static const int deadly[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGXCPU};
    for (size_t k = 0; k < sizeof deadly / sizeof deadly[0]; k++)
        signal(deadly[k], SIG_DFL);
    signal(SIGPIPE, SIG_IGN); /* the parent gave up: write fails, the child exits */
}

static int run(const job *jb, rb_err *err)
{
    int fds[2];
    struct stat st;
    rlim_t cpu_seconds = CPU_BASE_S + (stat(jb->path, &st) == 0 ? (rlim_t)(st.st_size >> 20) * CPU_PER_MB_S : 0);
    rb_io_h5_fork_begin();
    if (pipe(fds) != 0) {
        int e = errno;
        rb_io_h5_fork_end(false);
        return rb_err_set(err, RB_EIO, "%s: cannot start the HDF5 reader process: %s", jb->path, strerror(e));
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC); /* another thread's fork + exec must not keep the write end open */
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], RB_F_SETPIPE_SZ, PIPE_BYTES); /* fewer switches between the two (best effort) */
    pid_t pid = fork();
    if (pid == 0) {
        rb_io_h5_fork_end(true);
        close(fds[0]);
        child_setup(cpu_seconds);
        static wbuf w; /* the child's own copy: no other thread runs here */
        w.fd = fds[1];
        child_run(jb, &w);
        _exit(w.failed ? 2 : 0); /* no atexit handlers, no stdio buffers of the parent flushed twice */
    }
    int fork_errno = errno;
    close(fds[1]);
    rb_io_h5_fork_end(false);
    if (pid < 0) {
        close(fds[0]);
        return rb_err_set(err, RB_EIO, "%s: cannot start the HDF5 reader process: %s", jb->path, strerror(fork_errno));
    }
    rbuf *r = rb_malloc(sizeof *r);
    int rc = RB_ENOMEM;
    if (r) {
        memset(r, 0, offsetof(rbuf, buf));
        r->fd = fds[0];
        rc = parent_run(jb, r, err);
    }
    rb_free(r);
    close(fds[0]); /* a child still writing gets EPIPE and exits */
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    char buf[32];
    if (got == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
        return rb_err_set(err, RB_EINPUT,
                          "%s: corrupt HDF5 file (the HDF5 library was still reading it after %llu s of CPU time)",
                          jb->path, (unsigned long long)cpu_seconds);
    if (got == pid && WIFSIGNALED(status))
        return rb_err_set(err, RB_EINPUT, "%s: corrupt HDF5 file (the HDF5 library failed reading it: %s)", jb->path,
                          signal_name(WTERMSIG(status), buf));
    if (got == pid && WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return rb_err_set(err, RB_EINPUT, "%s: corrupt HDF5 file (the HDF5 library failed reading it: exit status %d)",
                          jb->path, WEXITSTATUS(status));
    if (rc == RB_ENOMEM && !r)
        return rb_err_set(err, RB_ENOMEM, "%s: out of memory", jb->path);
    if (rc == RB_EIO)
        return rb_err_set(err, RB_EINPUT, "%s: corrupt HDF5 file (the HDF5 reader process ended without a result)",
                          jb->path);
    return rc;
}

int rb_io_h5_isolated_detect(const char *path, rb_io_kind kind, rb_log_format *fmt, rb_err *err)
{
    job jb = {JOB_DETECT, path, kind, fmt, NULL, NULL};
    return run(&jb, err);
}

int rb_io_h5_isolated_log(const char *path, rb_io_kind kind, rb_log *log, rb_err *err)
{
    job jb = {JOB_LOG, path, kind, NULL, log, NULL};
    return run(&jb, err);
}

int rb_io_h5_isolated_arrays(const char *path, rb_io_kind kind, rb_arrays *a, rb_err *err)
{
    job jb = {JOB_ARRAYS, path, kind, NULL, NULL, a};
    return run(&jb, err);
}
