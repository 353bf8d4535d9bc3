/* A log read in bounded parts (roboest/io.h, rb_log_source): the HDF5-based layouts by hyperslab, anything else
 * whole at opening, with its size checked against the caller's memory limit. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "h5isolate.h"
#include "h5read.h"

struct rb_log_source {
    char *path;
    rb_log *log;      /* channels; time and data NULL when chunked */
    bool chunked;     /* else log holds every sample */
    hid_t file;       /* chunked: open between reads */
    hid_t *ts, *data; /* chunked: per channel, opened at its first read (-1 until then) */
    rb_h5r_layouts layouts;
    double *scratch; /* a transposed part before it is put sample-major */
    size_t scratch_cap;
};

static int nomem(const char *path, rb_err *err) { return rb_err_set(err, RB_ENOMEM, "%s: out of memory", path); }

/* Bytes of every channel's samples (time and data), and the largest channel's. */
static size_t log_bytes(const rb_log *log, size_t *largest, size_t *largest_bytes)
{
    size_t total = 0;
    *largest = 0;
    *largest_bytes = 0;
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        double b = (double)ch->n_samples * (double)(ch->n_elements + 1) * sizeof(double);
        size_t bytes = b < (double)SIZE_MAX ? (size_t)b : SIZE_MAX;
        total = SIZE_MAX - total > bytes ? total + bytes : SIZE_MAX;
        if (bytes > *largest_bytes) {
            *largest_bytes = bytes;
            *largest = c;
        }
    }
    return total;
}

static double mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* Said up front: a layout read whole does not fit the limit. */
static int too_large(const rb_log_source *s, rb_log_format fmt, size_t need, const char *channel, size_t ch_bytes,
                     size_t limit, rb_err *err)
{
    const char *why = fmt == RB_FMT_LOGGER_MAT5 || fmt == RB_FMT_PLAIN_MAT5
                          ? "libmatio cannot read part of a compressed MATLAB v5/v7 variable"
                      : fmt == RB_FMT_CSV ? "CSV text is read whole"
                                          : "a plain file's channels share one time vector and are read whole";
    if (channel)
        return rb_err_set(err, RB_EINPUT,
                          "%s: %s logs must fit in memory (%s): this one needs %.1f MiB (channel %s: %.1f MiB), over "
                          "the memory limit of %.1f MiB; convert it to MATLAB v7.3 (save -v7.3) or .h5, or raise the "
                          "limit",
                          s->path, rb_log_format_name(fmt), why, mib(need), channel, mib(ch_bytes), mib(limit));
    return rb_err_set(err, RB_EINPUT,
                      "%s: %s logs must fit in memory (%s): this one needs at least %.1f MiB (its size on disk), over "
                      "the memory limit of %.1f MiB; convert it to MATLAB v7.3 (save -v7.3) or .h5, or raise the "
                      "limit",
                      s->path, rb_log_format_name(fmt), why, mib(need), mib(limit));
}

static int open_whole(rb_log_source *s, rb_log_format fmt, size_t limit, rb_err *err)
{
    struct stat st;
    if (limit && stat(s->path, &st) == 0 && (size_t)st.st_size > limit)
        return too_large(s, fmt, (size_t)st.st_size, NULL, 0, limit, err);
    int rc = rb_log_read(s->path, &s->log, err);
    if (rc)
        return rc;
    size_t largest, largest_bytes, need = log_bytes(s->log, &largest, &largest_bytes);
    if (limit && need > limit)
        return too_large(s, fmt, need, s->log->channels[largest].name, largest_bytes, limit, err);
    return RB_OK;
}

static int open_chunked(rb_log_source *s, rb_log_format fmt, rb_err *err)
{
    int rc = rb_log_new(&s->log, err);
    if (rc)
        return rc;
    s->log->format = fmt;
    rc = fmt == RB_FMT_LOGGER_MAT73 ? rb_io_layout_mat73(s->path, s->log, &s->layouts, err)
                                    : rb_io_layout_h5(s->path, fmt, s->log, &s->layouts, err);
    if (!rc)
        rc = rb_io_check_read(s->path, s->log, err);
    if (!rc && s->layouts.n != s->log->n_channels)
        rc = rb_err_set(err, RB_EINPUT, "%s: %zu channels but %zu layouts", s->path, s->log->n_channels, s->layouts.n);
    if (rc)
        return rc;
    size_t n = s->log->n_channels ? s->log->n_channels : 1;
    s->ts = rb_malloc(n * sizeof *s->ts);
    s->data = rb_malloc(n * sizeof *s->data);
    if (!s->ts || !s->data)
        return nomem(s->path, err);
    for (size_t c = 0; c < s->log->n_channels; c++)
        s->ts[c] = s->data[c] = -1;
    rb_io_h5_enter();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
        s->file = H5Fopen(s->path, H5F_ACC_RDONLY, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    rb_io_h5_leave();
    if (s->file < 0)
        return rb_err_set(err, RB_EINPUT, "%s: not a readable HDF5 file (truncated or corrupt)", s->path);
    s->chunked = true;
    return RB_OK;
}

int rb_log_source_open(const char *path, size_t memory_limit, rb_log_source **out, rb_err *err)
{
    if (!path || !out)
        return rb_err_set(err, RB_EINVAL, "rb_log_source_open: NULL argument");
    *out = NULL;
    rb_log_source *s = rb_calloc(1, sizeof *s);
    if (!s || !(s->path = rb_strdup(path))) {
        rb_free(s);
        return nomem(path, err);
    }
    s->file = -1;
    rb_log_format fmt;
    int rc = rb_log_detect(path, &fmt, err);
    if (!rc)
        rc = fmt == RB_FMT_LOGGER_MAT73 || fmt == RB_FMT_ROBOEST_H5 || fmt == RB_FMT_GROUPS_H5
                 ? open_chunked(s, fmt, err)
                 : open_whole(s, fmt, memory_limit, err);
    if (rc) {
        rb_log_source_free(s);
        return rc;
    }
    *out = s;
    return RB_OK;
}

const rb_log *rb_log_source_log(const rb_log_source *s) { return s ? s->log : NULL; }

bool rb_log_source_chunked(const rb_log_source *s) { return s && s->chunked; }

/* Rows [first, first + count) along the axis of T (axis) of a dataset, every other axis whole, into out. */
static int read_rows(rb_log_source *s, hid_t dset, const char *obj, int axis, size_t T, size_t first, size_t count,
                     double *out, rb_err *err)
{
    hid_t space = H5Dget_space(dset), mem = -1;
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[RB_H5_MAX_RANK], start[RB_H5_MAX_RANK], cnt[RB_H5_MAX_RANK];
    int rc = RB_OK;
    if (rank < 1 || rank > RB_H5_MAX_RANK || H5Sget_simple_extent_dims(space, dims, NULL) < 0 || axis >= rank ||
        dims[axis] != T) {
        rc = rb_err_set(err, RB_EINPUT, "%s: %s: changed while read (its shape)", s->path, obj);
        goto done;
    }
    hsize_t total = 1;
    for (int a = 0; a < rank; a++) {
        start[a] = a == axis ? first : 0;
        cnt[a] = a == axis ? count : dims[a];
        total *= cnt[a];
    }
    if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
        (mem = H5Screate_simple(1, &total, NULL)) < 0 ||
        H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, out) < 0)
        rc = rb_err_set(err, RB_EINPUT, "%s: %s: cannot read samples %zu to %zu (truncated or corrupt?)", s->path, obj,
                        first, first + count);
done:
    if (mem >= 0)
        H5Sclose(mem);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* The axis of a vector of T values (any orientation). */
static int vector_axis(hid_t dset, size_t T)
{
    hid_t space = H5Dget_space(dset);
    hsize_t dims[RB_H5_MAX_RANK];
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1, axis = 0;
    if (rank >= 1 && rank <= RB_H5_MAX_RANK && H5Sget_simple_extent_dims(space, dims, NULL) >= 0)
        for (int a = 0; a < rank; a++)
            if (dims[a] == T && (T != 1 || a == 0)) {
                axis = a;
                break;
            }
    if (space >= 0)
        H5Sclose(space);
    return axis;
}

static int open_datasets(rb_log_source *s, size_t c, rb_err *err)
{
    const rb_h5r_layout *l = &s->layouts.items[c];
    if (s->ts[c] < 0)
        s->ts[c] = H5Dopen2(s->file, l->ts_obj, H5P_DEFAULT);
    if (s->data[c] < 0)
        s->data[c] = H5Dopen2(s->file, l->data_obj, H5P_DEFAULT);
    if (s->ts[c] < 0 || s->data[c] < 0)
        return rb_err_set(err, RB_EINPUT, "%s: %s: cannot open it again (the file changed?)", s->path,
                          s->ts[c] < 0 ? l->ts_obj : l->data_obj);
    return RB_OK;
}

static int read_part(rb_log_source *s, size_t c, size_t first, size_t count, double *time, double *data, rb_err *err)
{
    const rb_channel *ch = &s->log->channels[c];
    const rb_h5r_layout *l = &s->layouts.items[c];
    size_t T = ch->n_samples, n = ch->n_elements;
    int rc = open_datasets(s, c, err);
    if (!rc && time)
        rc = read_rows(s, s->ts[c], l->ts_obj, vector_axis(s->ts[c], T), T, first, count, time, err);
    if (rc || !data)
        return rc;
    if (!l->transposed)
        return read_rows(s, s->data[c], l->data_obj, 0, T, first, count, data, err);
    if (count * n > s->scratch_cap) { /* [n][T]: read n x count, then put it sample-major */
        double *grown = rb_realloc(s->scratch, count * n * sizeof *grown);
        if (!grown)
            return nomem(s->path, err);
        s->scratch = grown;
        s->scratch_cap = count * n;
    }
    rc = read_rows(s, s->data[c], l->data_obj, 1, T, first, count, s->scratch, err);
    if (!rc)
        rb_io_transpose(data, s->scratch, n, count);
    return rc;
}

int rb_log_source_read(rb_log_source *s, size_t channel, size_t first, size_t count, double *time, double *data,
                       rb_err *err)
{
    if (!s || channel >= s->log->n_channels)
        return rb_err_set(err, RB_EINVAL, "rb_log_source_read: no channel %zu", channel);
    const rb_channel *ch = &s->log->channels[channel];
    if (first > ch->n_samples || count > ch->n_samples - first)
        return rb_err_set(err, RB_EINVAL, "%s: channel %s: samples %zu to %zu of %zu", s->path, ch->name, first,
                          first + count, ch->n_samples);
    if (count == 0)
        return RB_OK;
    if (!s->chunked) {
        if (time)
            memcpy(time, ch->time + first, count * sizeof *time);
        if (data)
            memcpy(data, ch->data + first * ch->n_elements, count * ch->n_elements * sizeof *data);
        return RB_OK;
    }
    rb_io_h5_enter();
    int rc = read_part(s, channel, first, count, time, data, err);
    rb_io_h5_leave();
    return rc;
}

void rb_log_source_free(rb_log_source *s)
{
    if (!s)
        return;
    if (s->file >= 0) {
        rb_io_h5_enter();
        for (size_t c = 0; c < s->log->n_channels; c++) {
            if (s->ts && s->ts[c] >= 0)
                H5Dclose(s->ts[c]);
            if (s->data && s->data[c] >= 0)
                H5Dclose(s->data[c]);
        }
        H5Fclose(s->file);
        rb_io_h5_leave();
    }
    rb_h5r_layouts_free(s->layouts.items, s->layouts.n);
    rb_free(s->ts);
    rb_free(s->data);
    rb_free(s->scratch);
    rb_log_free(s->log);
    rb_free(s->path);
    rb_free(s);
}

/* ---- a channel's samples around a window of clock times ------------------------------------------------ */
void rb_channel_window_free(rb_channel_window *w)
{
    if (!w)
        return;
    rb_free(w->time);
    rb_free(w->data);
    *w = (rb_channel_window){0};
}

static int window_room(rb_log_source *s, rb_channel_window *w, size_t n, size_t need, rb_err *err)
{
    if (need <= w->cap)
        return RB_OK;
    size_t cap = w->cap ? w->cap : 1;
    while (cap < need)
        cap *= 2;
    double *t = rb_realloc(w->time, cap * sizeof *t),
           *d = t ? rb_realloc(w->data, cap * (n ? n : 1) * sizeof *d) : NULL;
    if (t)
        w->time = t;
    if (d)
        w->data = d;
    if (!t || !d)
        return nomem(s->path, err);
    w->cap = cap;
    return RB_OK;
}

int rb_channel_window_advance(rb_log_source *s, size_t c, rb_channel_window *w, size_t keep_from, double t_last,
                              size_t part, rb_err *err)
{
    if (!s || !w || c >= s->log->n_channels || part == 0 || keep_from < w->first)
        return rb_err_set(err, RB_EINVAL, "rb_channel_window_advance: bad argument");
    const rb_channel *ch = &s->log->channels[c];
    size_t n = ch->n_elements, T = ch->n_samples;
    if (keep_from > w->first) { /* drop what no resampler needs any more */
        size_t drop = keep_from - w->first < w->count ? keep_from - w->first : w->count;
        memmove(w->time, w->time + drop, (w->count - drop) * sizeof *w->time);
        memmove(w->data, w->data + drop * n, (w->count - drop) * n * sizeof *w->data);
        w->first += drop;
        w->count -= drop;
    }
    while (w->first + w->count < T && !(w->count && w->time[w->count - 1] > t_last)) {
        size_t at = w->first + w->count, more = T - at < part ? T - at : part;
        int rc = window_room(s, w, n, w->count + more, err);
        if (!rc)
            rc = rb_log_source_read(s, c, at, more, w->time + w->count, w->data + w->count * n, err);
        if (rc)
            return rc;
        w->count += more;
    }
    return RB_OK;
}

int rb_log_source_start(rb_log_source *src, double *start, rb_err *err)
{
    const rb_log *log = rb_log_source_log(src);
    double t = NAN, part[64];
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        bool found = false;
        for (size_t k = 0; k < ch->n_samples && !found; k += 64) {
            size_t n = ch->n_samples - k < 64 ? ch->n_samples - k : 64;
            int rc = rb_log_source_read(src, c, k, n, part, NULL, err);
            if (rc)
                return rc;
            for (size_t i = 0; i < n && !found; i++)
                if ((found = isfinite(part[i])) && !(part[i] >= t))
                    t = part[i];
        }
    }
    *start = t;
    return RB_OK;
}

int rb_log_source_load(rb_log_source *src, const rb_channel *ch, bool data, rb_channel *copy, rb_err *err)
{
    *copy = *ch;
    if (ch->time) /* read whole already */
        return RB_OK;
    const rb_log *log = rb_log_source_log(src);
    size_t T = ch->n_samples ? ch->n_samples : 1, n = ch->n_elements ? ch->n_elements : 1;
    copy->time = rb_malloc(T * sizeof *copy->time);
    copy->data = data ? rb_malloc(T * n * sizeof *copy->data) : NULL;
    int rc = copy->time && (!data || copy->data) ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc)
        rc = rb_log_source_read(src, (size_t)(ch - log->channels), 0, ch->n_samples, copy->time, copy->data, err);
    if (rc)
        rb_log_source_unload(ch, copy);
    return rc;
}

void rb_log_source_unload(const rb_channel *ch, rb_channel *copy)
{
    if (copy->time != ch->time)
        rb_free(copy->time);
    if (copy->data != ch->data)
        rb_free(copy->data);
    copy->time = copy->data = NULL;
}
