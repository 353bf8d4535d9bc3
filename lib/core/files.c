#include "core_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *rb_path_relative_to(const char *base_file, const char *rel)
{
    if (!rel)
        return NULL;
    if (rel[0] == '/' || !base_file)
        return rb_strdup(rel);
    const char *slash = strrchr(base_file, '/');
    if (!slash)
        return rb_strdup(rel);
    return rb_asprintf("%.*s/%s", (int)(slash - base_file), base_file, rel);
}

/* Split the absolute path `abs` into components, resolving "." and ".." lexically (in place; at most max). */
static size_t path_components(char *abs, char **parts, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *c = strtok_r(abs, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        if (strcmp(c, "..") == 0) {
            n -= n > 0;
            continue;
        }
        if (n < max)
            parts[n++] = c;
    }
    return n;
}

char *rb_path_between(const char *dir, const char *path)
{
    enum { MAX_PARTS = 256 };
    if (!dir || !path || dir[0] != '/' || path[0] != '/')
        return NULL;
    char *a = rb_strdup(dir), *b = rb_strdup(path), *out = NULL;
    if (a && b) {
        char *pa[MAX_PARTS], *pb[MAX_PARTS];
        size_t na = path_components(a, pa, MAX_PARTS), nb = path_components(b, pb, MAX_PARTS), common = 0, len = 2;
        while (common < na && common + 1 < nb && strcmp(pa[common], pb[common]) == 0)
            common++;
        for (size_t i = common; i < nb; i++)
            len += strlen(pb[i]) + 1;
        len += 3 * (na - common);
        if ((out = rb_malloc(len))) {
            out[0] = '\0';
            for (size_t i = common; i < na; i++)
                strcat(out, "../");
            for (size_t i = common; i < nb; i++)
                strcat(strcat(out, pb[i]), i + 1 < nb ? "/" : "");
        }
    }
    rb_free(a);
    rb_free(b);
    return out;
}

char *rb_path_in(const char *dir, const char *rel)
{
    return dir && dir[0] && strcmp(dir, ".") != 0 ? rb_asprintf("%s/%s", dir, rel) : rb_strdup(rel);
}

const char *rb_path_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

const char *rb_path_stem(const char *path, size_t *len)
{
    const char *base = rb_path_basename(path), *dot = strrchr(base, '.');
    *len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return base;
}

static const char *file_kind(mode_t mode)
{
    if (S_ISLNK(mode))
        return "symbolic link";
    if (S_ISDIR(mode))
        return "folder";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "device";
    if (S_ISFIFO(mode))
        return "FIFO";
    if (S_ISSOCK(mode))
        return "socket";
    return "special file";
}

/* The temporary is forgotten by the signal guard once it is gone; if the guard's handler took it,
 * the string is left to it (the process is being stopped). */
static void outfile_release(rb_outfile *out)
{
    if (out->tmp_path && !rb_outfile_untrack(out->tmp_path))
        out->tmp_path = NULL;
    rb_free(out->tmp_path);
    rb_free(out->path);
    out->tmp_path = out->path = NULL;
}

int rb_outfile_check(const char *path, bool overwrite, rb_err *err)
{
    int rc = rb_outfile_check_input(path, err);
    struct stat st;
    if (rc || lstat(path, &st) != 0)
        return rc;
    /* A rename would replace the link or device itself with a regular file, never write through it. */
    if (!S_ISREG(st.st_mode))
        return rb_err_set(err, RB_EIO, "%s: is a %s, not a regular file; choose another output", path,
                          file_kind(st.st_mode));
    return overwrite ? RB_OK : rb_err_set(err, RB_EEXISTS, "%s: exists (use --force to overwrite)", path);
}

int rb_outfile_begin(rb_outfile *out, const char *path, bool overwrite, rb_err *err)
{
    out->path = out->tmp_path = NULL;
    out->overwrite = overwrite;
    int rc = rb_outfile_check(path, overwrite, err);
    if (rc)
        return rc;
    struct stat st;
    const char *base = rb_path_basename(path);
    int dir_len = (int)(base - path);
    if (dir_len > 0) {
        char *dir = rb_strndup(path, (size_t)dir_len);
        if (!dir)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        int missing = stat(dir, &st) != 0 || !S_ISDIR(st.st_mode);
        rb_free(dir);
        if (missing)
            return rb_err_set(err, RB_EIO, "%s: folder %.*s does not exist", path, dir_len, path);
    }
    out->path = rb_strdup(path);
    out->tmp_path = rb_asprintf("%.*s.%s.tmp-XXXXXX", dir_len, path, base);
    if (!out->path || !out->tmp_path) {
        rb_outfile_abort(out);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    /* Tracked before it exists: a signal right after mkstemp's open finds it (one before finds no file). */
    if (rb_outfile_track(out->tmp_path) != 0) {
        outfile_release(out);
        return rb_err_set(err, RB_EIO, "%s: too many output files at once, or the command is being stopped", path);
    }
    int fd = mkstemp(out->tmp_path);
    if (fd < 0) {
        int e = errno;
        outfile_release(out);
        return rb_err_set(err, RB_EIO, "%s: cannot create a temporary file: %s", path, strerror(e));
    }
    /* mkstemp creates mode 0600; outputs get the permissions any new file would get. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    return RB_OK;
}

int rb_outfile_commit(rb_outfile *out, rb_err *err)
{
    int rc = RB_OK;
    /* The file is renamed (or removed) before it is untracked: a signal in between finds nothing to remove. */
    if (!out->overwrite) {
        /* link() fails if the target appeared meanwhile, so a concurrent writer is never clobbered. */
        if (link(out->tmp_path, out->path) != 0) {
            rc = rb_err_set(err, errno == EEXIST ? RB_EEXISTS : RB_EIO, "%s: cannot create: %s", out->path,
                            strerror(errno));
        }
        unlink(out->tmp_path);
    } else if (rename(out->tmp_path, out->path) != 0) {
        rc = rb_err_set(err, RB_EIO, "%s: cannot rename the temporary file into place: %s", out->path, strerror(errno));
        unlink(out->tmp_path);
    }
    outfile_release(out);
    return rc;
}

void rb_outfile_abort(rb_outfile *out)
{
    if (out->tmp_path)
        unlink(out->tmp_path);
    outfile_release(out);
}

char *rb_format_double(double x, char buf[32])
{
    if (isnan(x))
        return strcpy(buf, "nan");
    if (isinf(x))
        return strcpy(buf, x > 0 ? "inf" : "-inf");
    /* snprintf and strtod follow LC_NUMERIC. Should the C locale be out of reach (no memory; never
     * with glibc), the digits are still right, only the decimal point is the locale's. */
    rb_locale_scope c_locale;
    rb_c_locale_push(&c_locale, NULL);
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    rb_c_locale_pop(&c_locale);
    return buf;
}

double rb_monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- folders and text files ---------------------------------------------------------------------- */
/* mkdir that accepts an existing folder; *made tells whether this call created it. */
int rb_dir_make(const char *dir, bool *made, rb_err *err)
{
    *made = false;
    if (mkdir(dir, 0777) == 0) {
        *made = true;
        return RB_OK;
    }
    struct stat st;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return RB_OK;
    return rb_err_set(err, RB_EIO, "%s: cannot create the output folder: %s", dir, strerror(errno));
}

static int write_text(const char *text, const rb_outfile *f, rb_err *err)
{
    FILE *fp = fopen(f->tmp_path, "wb");
    size_t n = strlen(text);
    bool ok = fp && fwrite(text, 1, n, fp) == n;
    if (fp && fclose(fp) != 0)
        ok = false;
    return ok ? RB_OK : rb_err_set(err, RB_EIO, "%s: cannot write", f->path);
}

int rb_texts_write(const char *dir, const char *const *names, const char *const *texts, size_t n, bool overwrite,
                   rb_err *err)
{
    size_t begun = 0;
    dir = dir && dir[0] ? dir : ".";
    rb_outfile *files = rb_calloc(n ? n : 1, sizeof *files);
    bool made = false;
    int rc = files ? rb_dir_make(dir, &made, err) : rb_err_set(err, RB_ENOMEM, "out of memory");
    for (; !rc && begun < n; begun++) { /* every target first: a clash fails before anything is written */
        char *path = rb_asprintf("%s/%s", dir, names[begun]);
        rc = path ? rb_outfile_begin(&files[begun], path, overwrite, err) : rb_err_set(err, RB_ENOMEM, "out of memory");
        rb_free(path);
        if (rc)
            break;
    }
    for (size_t i = 0; !rc && i < n; i++)
        rc = write_text(texts[i], &files[i], err);
    for (size_t i = 0; i < begun; i++) {
        if (!rc)
            rc = rb_outfile_commit(&files[i], err);
        else
            rb_outfile_abort(&files[i]);
    }
    if (rc && made)
        rmdir(dir);
    rb_free(files);
    return rc;
}

/* ---- reading input files ------------------------------------------------------------------------------ */
int rb_file_open_regular(const char *path, const char *what, FILE **out, long long *size, rb_err *err)
{
    *out = NULL;
    rb_input_note(path); /* never an output of this command */
    /* Opening a FIFO for reading waits for a writer: open without waiting, look, then read blocking. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return rb_err_set(err, RB_ENOTFOUND, "%s: no such file", path);
        return rb_err_set(err, RB_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    }
    /* Checked before reading: a device (/dev/zero, /dev/urandom) or a FIFO never ends. */
    struct stat st;
    int flags;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        if (what)
            return rb_err_set(err, RB_EINPUT, "%s: not %s (not a regular file)", path, what);
        return rb_err_set(err, RB_EINPUT, "%s: not a regular file", path);
    }
    FILE *f = NULL;
    if ((flags = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1 ||
        !(f = fdopen(fd, "rb"))) {
        int e = errno;
        close(fd);
        return rb_err_set(err, e == ENOMEM ? RB_ENOMEM : RB_EINPUT, "%s: cannot open: %s", path, strerror(e));
    }
    if (size)
        *size = (long long)st.st_size;
    *out = f;
    return RB_OK;
}

int rb_file_read_all(const char *path, size_t max_bytes, char **text, size_t *len, rb_err *err)
{
    *text = NULL;
    *len = 0;
    FILE *f;
    long long size;
    int rc = rb_file_open_regular(path, NULL, &f, &size, err);
    if (rc)
        return rc;
    char *buf = NULL;
    if (size < 0 || (unsigned long long)size > max_bytes) { /* refused before it is in memory */
        rc = rb_err_set(err, RB_EINPUT, "%s: larger than %zu MiB", path, max_bytes >> 20);
        goto done;
    }
    /* One byte more than the size says, to notice a file that grew in between. */
    size_t want = (size_t)size + 1;
    if (!(buf = rb_malloc(want + 1))) {
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    size_t n = fread(buf, 1, want, f);
    if (ferror(f))
        rc = rb_err_set(err, RB_EINPUT, "%s: read error", path);
    else if (n > max_bytes)
        rc = rb_err_set(err, RB_EINPUT, "%s: larger than %zu MiB", path, max_bytes >> 20);
    else if (n == want)
        rc = rb_err_set(err, RB_EINPUT, "%s: changed while being read", path);
    if (!rc) {
        buf[n] = '\0';
        *text = buf;
        *len = n;
        buf = NULL;
    }
done:
    rb_free(buf);
    fclose(f);
    return rc;
}
