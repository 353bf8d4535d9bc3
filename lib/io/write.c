/* Writing logs: output format from a path, dispatch to the writers, atomic replacement (shared with
 * rb_arrays_write). */
#include <string.h>

#include "h5isolate.h"
#include "io_internal.h"

/* ASCII-only case folding: the C library's tolower() depends on the locale. */
static bool ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (m > n)
        return false;
    for (size_t i = 0; i < m; i++) {
        char c = s[n - m + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != suffix[i])
            return false;
    }
    return true;
}

int rb_out_format_from_path(const char *path, rb_out_format *fmt, rb_err *err)
{
    if (!path || !fmt)
        return rb_err_set(err, RB_EINVAL, "rb_out_format_from_path: NULL argument");
    if (ends_with_ci(path, ".h5") || ends_with_ci(path, ".hdf5"))
        *fmt = RB_OUT_H5;
    else if (ends_with_ci(path, ".mat"))
        *fmt = RB_OUT_MAT73;
    else if (ends_with_ci(path, ".csv"))
        *fmt = RB_OUT_CSV;
    else
        return rb_err_set(err, RB_ECONFIG, "%s: unknown output format: use a .h5, .hdf5, .mat or .csv file name", path);
    return RB_OK;
}

static int write_as(const void *what, const char *file, const char *shown, const rb_write_opts *opts, rb_err *err)
{
    const rb_log *log = what;
    if (log->n_channels == 0) /* every reader refuses such a file */
        return rb_err_set(err, RB_EINPUT, "%s: no channels to write (an empty log reads back as an error)", shown);
    int rc = rb_io_check_element_names(log, shown, err); /* the readers refuse them too */
    if (rc)
        return rc;
    switch (opts->format) {
    case RB_OUT_H5:
    case RB_OUT_MAT73: { /* in-process HDF5 use: no fork for an isolated read meanwhile (h5isolate.h) */
        rb_io_h5_enter();
        rc = opts->format == RB_OUT_H5 ? rb_io_write_h5(log, file, shown, err)
                                       : rb_io_write_mat(log, file, shown, true, opts->root_name, err);
        rb_io_h5_leave();
        return rc;
    }
    case RB_OUT_MAT5: return rb_io_write_mat(log, file, shown, false, opts->root_name, err);
    case RB_OUT_CSV: return rb_io_write_csv(log, file, shown, err);
    }
    return rb_err_set(err, RB_EINVAL, "%s: unknown output format %d", shown, (int)opts->format);
}

/* The arguments of a writer (`fn` in the message) into *out: NULL opts is the format from the
 * extension, no overwrite, the default root name. */
static int resolve_args(const char *fn, const void *what, const char *path, const rb_write_opts *opts,
                        rb_write_opts *out, rb_err *err)
{
    if (!what || !path)
        return rb_err_set(err, RB_EINVAL, "%s: NULL argument", fn);
    if (opts) {
        *out = *opts;
        return RB_OK;
    }
    memset(out, 0, sizeof *out);
    return rb_out_format_from_path(path, &out->format, err);
}

int rb_io_write_atomic(const char *fn, const void *what, const char *path, const rb_write_opts *opts,
                       rb_io_write_fn write, rb_err *err)
{
    rb_write_opts o;
    int rc = resolve_args(fn, what, path, opts, &o, err);
    if (rc)
        return rc;
    rb_outfile out;
    rc = rb_outfile_begin(&out, path, o.overwrite, err);
    if (rc)
        return rc;
    rc = write(what, out.tmp_path, path, &o, err);
    if (rc) {
        rb_outfile_abort(&out);
        return rc;
    }
    return rb_outfile_commit(&out, err);
}

int rb_log_write_raw(const rb_log *log, const char *path, const rb_write_opts *opts, rb_err *err)
{
    rb_write_opts o;
    int rc = resolve_args("rb_log_write_raw", log, path, opts, &o, err);
    return rc ? rc : write_as(log, path, path, &o, err);
}

int rb_log_write(const rb_log *log, const char *path, const rb_write_opts *opts, rb_err *err)
{
    return rb_io_write_atomic("rb_log_write", log, path, opts, write_as, err);
}
