/* .h5 and MATLAB v7.3 logs written a block of rows at a time (a run in windows, io.h: rb_h5_stream): the file made
 * on disk with its layout and every dataset at its full size (write_h5.c, write_mat.c: deferred), then each block
 * written into its rows (HDF5 hyperslabs of the chunked datasets). The values read back are those of rb_log_write
 * for the same log; the bytes are not (the chunks are laid out as they are written). */
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "h5isolate.h"
#include "io_internal.h"

struct rb_h5_stream {
    hid_t file;
    bool mat; /* MATLAB v7.3: the header over the user block at close */
    char *path, *shown;
    size_t n, T, at;    /* channels, samples in all, samples written */
    hid_t *data, *time; /* per channel: its datasets (-1: none to write, 0 elements or samples) */
    size_t *width;
    int rc; /* the first failure of a block, said at close */
    rb_err err;
    int disk; /* errno of the first write of the disk that failed (h5soft.c: HDF5 is not told) */
};

/* HDF5 1.10 cannot close a file whose last writes failed: the flush inside H5Fclose fails again, leaves a freed file
 * behind a live id, and the library's exit handler (H5close) then crashes (write_h5.c). The file is removed after
 * anyway: its descriptor is pointed at /dev/null first, where every write succeeds. */
static void close_datasets(rb_h5_stream *s)
{
    for (size_t c = 0; c < s->n; c++) {
        if (s->data && s->data[c] >= 0)
            H5Dclose(s->data[c]);
        if (s->time && s->time[c] >= 0)
            H5Dclose(s->time[c]);
        if (s->data)
            s->data[c] = -1;
        if (s->time)
            s->time[c] = -1;
    }
}

static void stream_free(rb_h5_stream *s)
{
    rb_free(s->data);
    rb_free(s->time);
    rb_free(s->width);
    rb_free(s->path);
    rb_free(s->shown);
    rb_free(s);
}

void rb_h5_stream_abort(rb_h5_stream *s)
{
    if (!s)
        return;
    rb_io_h5_enter();
    close_datasets(s);
    if (s->file >= 0)
        H5Fclose(s->file);
    rb_io_h5_leave();
    stream_free(s);
}

/* Channel c's datasets, opened by their paths. */
static int open_channel(rb_h5_stream *s, const char *prefix, const rb_channel *ch, size_t c, rb_err *err)
{
    s->width[c] = ch->n_elements;
    if (s->T == 0)
        return RB_OK;
    const char *names[2] = {"data", "timestamps"};
    hid_t *ids[2] = {&s->data[c], &s->time[c]};
    for (int k = 0; k < 2; k++) {
        if (k == 0 && ch->n_elements == 0) /* nothing to write (in .mat an empty array, not a double dataset) */
            continue;
        char *path = rb_asprintf("%s/%s/%s", prefix, ch->name, names[k]);
        if (!path)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        *ids[k] = H5Dopen2(s->file, path, H5P_DEFAULT);
        int rc = *ids[k] < 0 ? rb_io_h5_fail(s->shown, err, "cannot open dataset %s", path) : RB_OK;
        rb_free(path);
        if (rc)
            return rc;
    }
    return RB_OK;
}

int rb_h5_stream_open(const rb_log *log, size_t n_samples, rb_out_format format, const char *root_name,
                      const char *file, const char *shown, rb_h5_stream **out, rb_err *err)
{
    *out = NULL;
    if (format != RB_OUT_H5 && format != RB_OUT_MAT73)
        return rb_err_set(err, RB_EINVAL, "%s: only .h5 and MATLAB v7.3 files are written a block at a time", shown);
    if (log->n_channels == 0) /* every reader refuses such a file (write.c) */
        return rb_err_set(err, RB_EINPUT, "%s: no channels to write (an empty log reads back as an error)", shown);
    int rc = rb_io_check_element_names(log, shown, err);
    if (rc)
        return rc;
    rb_h5_stream *s = rb_calloc(1, sizeof *s);
    rb_log view = *log; /* the channels at their full length, without samples: the layout */
    view.channels = rb_calloc(log->n_channels, sizeof *view.channels);
    if (s) {
        s->file = -1, s->mat = format == RB_OUT_MAT73, s->n = log->n_channels, s->T = n_samples;
        s->data = rb_malloc(s->n * sizeof *s->data);
        s->time = rb_malloc(s->n * sizeof *s->time);
        s->width = rb_calloc(s->n, sizeof *s->width);
        s->path = rb_strdup(file);
        s->shown = rb_strdup(shown);
    }
    if (!s || !view.channels || !s->data || !s->time || !s->width || !s->path || !s->shown) {
        rb_free(view.channels);
        if (s)
            stream_free(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    for (size_t c = 0; c < s->n; c++) {
        view.channels[c] = log->channels[c];
        view.channels[c].n_samples = n_samples;
        view.channels[c].time = view.channels[c].data = NULL;
        s->data[c] = s->time[c] = -1;
    }
    rb_io_h5_enter();
    char *prefix = s->mat ? rb_asprintf("/%s", root_name ? root_name : "robot_logger_device") : rb_strdup("");
    rc = prefix ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc)
        rc = s->mat ? rb_io_mat73_create_deferred(&view, file, shown, root_name, &s->file, err)
                    : rb_io_h5_create_deferred(&view, file, shown, &s->file, err);
    if (!rc && rb_io_h5_soft_watch(s->file, &s->disk) < 0)
        rc = rb_err_set(err, RB_EIO, "%s: the file has not the driver of files written a block at a time", shown);
    if (!rc && s->disk)
        rc = rb_err_set(err, RB_EIO, "%s: cannot write: %s", shown, strerror(s->disk));
    for (size_t c = 0; !rc && c < s->n; c++)
        rc = open_channel(s, prefix, &log->channels[c], c, err);
    rb_io_h5_leave();
    rb_free(prefix);
    rb_free(view.channels);
    if (rc)
        rb_h5_stream_abort(s);
    else
        *out = s;
    return rc;
}

/* n rows from row s->at of dataset id, whose rows are the axis `axis` of its `rank` dimensions, each `width`
 * values (the other dimensions: 1 and width). */
static int write_rows(rb_h5_stream *s, hid_t id, int rank, int axis, size_t width, const double *rows, size_t n)
{
    hsize_t start[3] = {0, 0, 0}, count[3] = {1, 1, 1}, mem = (hsize_t)n * width;
    start[axis] = s->at, count[axis] = n;
    count[rank - 1] = rank - 1 == axis ? n : width;
    hid_t fspace = H5Dget_space(id), mspace = H5Screate_simple(1, &mem, NULL);
    bool ok = fspace >= 0 && mspace >= 0 &&
              H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
              H5Dwrite(id, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, rows) >= 0;
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    return ok ? RB_OK : rb_io_h5_fail(s->shown, &s->err, "cannot write samples %zu to %zu", s->at, s->at + n - 1);
}

void rb_h5_stream_rows(rb_h5_stream *s, const double *t, const double *const *data, size_t n)
{
    if (!s || s->rc || n == 0)
        return;
    if (n > s->T - s->at) {
        s->rc = rb_err_set(&s->err, RB_EINVAL, "%s: %zu samples written past the %zu made", s->shown, s->at + n, s->T);
        return;
    }
    rb_io_h5_enter();
    /* .h5: data T x w, timestamps T; .mat (HDF5's order, MATLAB's reversed): data T x 1 x w, timestamps 1 x T. */
    for (size_t c = 0; !s->rc && c < s->n; c++) {
        if (s->data[c] >= 0)
            s->rc = write_rows(s, s->data[c], s->mat ? 3 : 2, 0, s->width[c], data[c], n);
        if (!s->rc)
            s->rc = s->mat ? write_rows(s, s->time[c], 2, 1, 1, t, n) : write_rows(s, s->time[c], 1, 0, 1, t, n);
    }
    rb_io_h5_leave();
    if (!s->rc && s->disk) /* a write of the disk failed (HDF5 was not told: h5soft.c) */
        s->rc = rb_err_set(&s->err, RB_EIO, "%s: cannot write: %s", s->shown, strerror(s->disk));
    s->at += n;
}

/* The MATLAB header over the first bytes of the file (the user block HDF5 left). */
static int write_header(const rb_h5_stream *s, rb_err *err)
{
    unsigned char head[128];
    rb_io_mat73_header(head);
    FILE *f = fopen(s->path, "r+b");
    bool ok = f && fwrite(head, 1, sizeof head, f) == sizeof head;
    if (f && fclose(f) != 0)
        ok = false;
    return ok ? RB_OK : rb_err_set(err, RB_EIO, "%s: cannot write the MATLAB header", s->shown);
}

int rb_h5_stream_close(rb_h5_stream *s, rb_err *err)
{
    if (!s)
        return RB_OK;
    int rc = s->rc;
    if (rc && err)
        *err = s->err;
    if (!rc && s->at != s->T)
        rc = rb_err_set(err, RB_EINVAL, "%s: %zu of %zu samples written", s->shown, s->at, s->T);
    rb_io_h5_enter();
    close_datasets(s);
    if (!rc && H5Fflush(s->file, H5F_SCOPE_GLOBAL) < 0)
        rc = rb_io_h5_fail(s->shown, err, "cannot write the file");
    if (H5Fclose(s->file) < 0 && !rc)
        rc = rb_io_h5_fail(s->shown, err, "cannot close the file");
    rb_io_h5_leave();
    s->file = -1;
    if (!rc && s->disk) /* the flush's writes and the close's (h5soft.c) */
        rc = rb_err_set(err, RB_EIO, "%s: cannot write: %s", s->shown, strerror(s->disk));
    if (!rc && s->mat)
        rc = write_header(s, err);
    stream_free(s);
    return rc;
}
