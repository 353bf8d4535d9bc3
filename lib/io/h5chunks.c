/*
 * Whole-dataset reads of compressed doubles with the decompression outside HDF5's global lock
 * (h5read.h, rb_h5r_read_chunks).
 *
 * The thread-safe HDF5 library holds one global lock for the whole of every API call, so H5Dread
 * inflates every chunk with the lock held: two threads reading two files take turns, and reading is
 * then the serial part of `roboest compare`. Here only H5Dread_chunk (the stored bytes of one
 * chunk) runs under the lock; inflating, unshuffling and placing the values are ours. The datasets
 * this applies to are the ones our writers make (write_h5.c, write_mat.c): chunked little-endian
 * IEEE doubles, shuffled and deflated. Anything else, or a chunk that does not decode, goes back
 * to H5Dread, which reads it (or says what is wrong) exactly as before.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "h5read.h"

enum { MAX_FILTERS = 2 };

/* What is needed to decode one chunk: the chunk grid and the filter pipeline in write order. */
typedef struct chunk_plan {
    int rank;
    hsize_t dims[RB_H5_MAX_RANK], chunk[RB_H5_MAX_RANK], grid[RB_H5_MAX_RANK];
    size_t chunk_values, chunk_bytes, row_values; /* row: one index of axis 0, all of the others */
    int n_filters;
    H5Z_filter_t filters[MAX_FILTERS];
} chunk_plan;

/* Scratch for one dataset: stored bytes, and three chunk-sized buffers: the filters alternate between
 * two of them, the third takes a chunk that is not decoded in place. */
typedef struct chunk_bufs {
    unsigned char *stored, *tmp[3];
    size_t stored_cap;
    z_stream z;
    bool z_ready;
} chunk_bufs;

/* Shuffle of 8-byte elements (the only element size written here) or deflate: the filters undone here. */
static bool known_filter(hid_t dcpl, unsigned k, H5Z_filter_t *id)
{
    unsigned flags, cd[8], config;
    size_t n_cd = 8;
    char name[64];
    *id = H5Pget_filter2(dcpl, k, &flags, &n_cd, cd, sizeof name, name, &config);
    if (*id == H5Z_FILTER_DEFLATE)
        return true;
    return *id == H5Z_FILTER_SHUFFLE && n_cd >= 1 && cd[0] == sizeof(double);
}

/* Stored as the host's doubles, and the host little-endian (for unshuffle's integers too). */
static bool is_native_double(hid_t dset)
{
    hid_t type = H5Dget_type(dset);
    bool yes = type >= 0 && H5Tequal(type, H5T_NATIVE_DOUBLE) > 0 && H5Tequal(type, H5T_IEEE_F64LE) > 0 &&
               H5Tequal(H5T_NATIVE_UINT64, H5T_STD_U64LE) > 0;
    if (type >= 0)
        H5Tclose(type);
    return yes;
}

/* The chunk grid and filters of dset, when it is a dataset this file decodes (false otherwise). */
static bool make_plan(hid_t dset, size_t npoints, chunk_plan *p)
{
    memset(p, 0, sizeof *p);
    if (!is_native_double(dset))
        return false;
    hid_t dcpl = H5Dget_create_plist(dset), space = H5Dget_space(dset);
    bool ok = dcpl >= 0 && space >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED;
    int rank = ok ? H5Sget_simple_extent_ndims(space) : -1;
    ok = ok && rank >= 1 && rank <= RB_H5_MAX_RANK && H5Sget_simple_extent_dims(space, p->dims, NULL) == rank &&
         H5Pget_chunk(dcpl, rank, p->chunk) == rank;
    /* Edge chunks left unfiltered by this option are not marked in their filter masks: left to HDF5. */
    unsigned opts = 0;
    ok = ok && H5Pget_chunk_opts(dcpl, &opts) >= 0 && !(opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
    int n_filters = ok ? H5Pget_nfilters(dcpl) : -1;
    ok = ok && n_filters >= 0 && n_filters <= MAX_FILTERS;
    for (int k = 0; ok && k < n_filters; k++)
        ok = known_filter(dcpl, (unsigned)k, &p->filters[k]);
    /* Each at most once, shuffle before deflate (as our writers do): every stage then sees a whole chunk. */
    for (int k = 1; ok && k < n_filters; k++)
        ok = p->filters[k - 1] == H5Z_FILTER_SHUFFLE && p->filters[k] == H5Z_FILTER_DEFLATE;
    p->rank = rank;
    p->n_filters = n_filters;
    size_t values = 1, chunk_values = 1, row_values = 1;
    for (int d = 0; ok && d < rank; d++) {
        ok = p->chunk[d] >= 1 && p->chunk[d] <= SIZE_MAX && p->dims[d] <= SIZE_MAX &&
             rb_size_mul(values, (size_t)p->dims[d], &values) &&
             rb_size_mul(chunk_values, (size_t)p->chunk[d], &chunk_values) &&
             (d == 0 || rb_size_mul(row_values, (size_t)p->dims[d], &row_values));
        p->grid[d] = ok ? (p->dims[d] + p->chunk[d] - 1) / p->chunk[d] : 0;
    }
    ok = ok && values == npoints && npoints > 0 && rb_size_mul(chunk_values, sizeof(double), &p->chunk_bytes);
    p->chunk_values = chunk_values;
    p->row_values = row_values;
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return ok;
}

/* The stored bytes of the chunk at `offset` into b->stored (*size of them); false when the chunk is not
 * stored (fill values: left to H5Dread) or implausibly large for its values. */
static bool read_stored(hid_t dset, const chunk_plan *p, const hsize_t *offset, chunk_bufs *b, size_t *size,
                        uint32_t *mask, int *rc)
{
    hsize_t stored = 0;
    if (H5Dget_chunk_storage_size(dset, offset, &stored) < 0 || stored == 0 || stored > p->chunk_bytes * 2 + 4096)
        return false;
    if ((size_t)stored > b->stored_cap) {
        unsigned char *grown = rb_realloc(b->stored, (size_t)stored);
        if (!grown) {
            *rc = RB_ENOMEM;
            return false;
        }
        b->stored = grown;
        b->stored_cap = (size_t)stored;
    }
    *size = (size_t)stored;
    return H5Dread_chunk(dset, H5P_DEFAULT, offset, mask, b->stored) >= 0;
}

/* zlib stream of exactly `cap` bytes of output, as HDF5's deflate filter wrote it. */
static bool inflate_exact(chunk_bufs *b, const unsigned char *in, size_t n_in, unsigned char *out, size_t cap)
{
    if (!b->z_ready) {
        memset(&b->z, 0, sizeof b->z);
        if (inflateInit(&b->z) != Z_OK)
            return false;
        b->z_ready = true;
    } else if (inflateReset(&b->z) != Z_OK) {
        return false;
    }
    if (n_in > UINT_MAX || cap > UINT_MAX)
        return false;
    b->z.next_in = (unsigned char *)in; /* zlib's API is not const; it does not write there */
    b->z.avail_in = (unsigned)n_in;
    b->z.next_out = out;
    b->z.avail_out = (unsigned)cap;
    int zrc = inflate(&b->z, Z_FINISH);
    return zrc == Z_STREAM_END && b->z.total_out == cap;
}

/* HDF5's shuffle put byte k of every element together; put each element's bytes back together. Built
 * as a 64-bit integer whose lowest byte is byte 0: make_plan checked that the host is little-endian. */
static void unshuffle(const unsigned char *in, size_t n, unsigned char *out)
{
    const unsigned char *s0 = in, *s1 = in + n, *s2 = in + 2 * n, *s3 = in + 3 * n, *s4 = in + 4 * n, *s5 = in + 5 * n,
                        *s6 = in + 6 * n, *s7 = in + 7 * n;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)s0[i] | (uint64_t)s1[i] << 8 | (uint64_t)s2[i] << 16 | (uint64_t)s3[i] << 24 |
                     (uint64_t)s4[i] << 32 | (uint64_t)s5[i] << 40 | (uint64_t)s6[i] << 48 | (uint64_t)s7[i] << 56;
        memcpy(out + i * sizeof v, &v, sizeof v);
    }
}

/* Undo the chunk's filters (last first, skipping those its mask says were not applied) into dst, which
 * holds chunk_bytes; false when the stored bytes do not decode to a whole chunk. */
static bool decode(const chunk_plan *p, chunk_bufs *b, size_t size, uint32_t mask, unsigned char *dst)
{
    int last = -1; /* the first filter in write order that was applied: it writes into dst */
    for (int k = 0; k < p->n_filters; k++)
        if (!(mask & (1u << k))) {
            last = k;
            break;
        }
    const unsigned char *src = b->stored;
    size_t n = size;
    for (int k = p->n_filters - 1; k >= 0; k--) {
        if (mask & (1u << k))
            continue;
        unsigned char *out = dst;
        for (int t = 0; k != last && (out == dst || out == src); t++)
            out = b->tmp[t];
        if (p->filters[k] == H5Z_FILTER_DEFLATE) {
            if (!inflate_exact(b, src, n, out, p->chunk_bytes))
                return false;
        } else {
            if (n != p->chunk_bytes)
                return false;
            unshuffle(src, p->chunk_values, out);
        }
        src = out;
        n = p->chunk_bytes;
    }
    if (last < 0) { /* stored unfiltered */
        if (n != p->chunk_bytes)
            return false;
        memcpy(dst, src, n);
    }
    return true;
}

/* True when the chunk at `offset` is one contiguous run of `out` (every axis but the first whole, the
 * first inside the extent): it can then be decoded in place. */
static bool in_place(const chunk_plan *p, const hsize_t *offset)
{
    for (int d = 1; d < p->rank; d++)
        if (p->chunk[d] != p->dims[d])
            return false;
    return offset[0] + p->chunk[0] <= p->dims[0];
}

/* Copy the part of a decoded chunk inside the dataset's extent to its place in out (row-major). */
static void place(const chunk_plan *p, const hsize_t *offset, const double *chunk, double *out)
{
    int last = p->rank - 1;
    hsize_t count[RB_H5_MAX_RANK], idx[RB_H5_MAX_RANK] = {0};
    for (int d = 0; d < p->rank; d++)
        count[d] = p->dims[d] - offset[d] < p->chunk[d] ? p->dims[d] - offset[d] : p->chunk[d];
    for (;;) {
        size_t from = 0, to = 0;
        for (int d = 0; d < p->rank; d++) {
            from = from * (size_t)p->chunk[d] + (size_t)idx[d];
            to = to * (size_t)p->dims[d] + (size_t)(offset[d] + idx[d]);
        }
        memcpy(out + to, chunk + from, (size_t)count[last] * sizeof(double));
        int d = last - 1;
        while (d >= 0 && ++idx[d] == count[d])
            idx[d--] = 0;
        if (d < 0)
            return;
    }
}

/* Every chunk in grid order; false (rc untouched) to fall back to H5Dread. */
static bool read_all(hid_t dset, const chunk_plan *p, chunk_bufs *b, double *out, int *rc)
{
    hsize_t g[RB_H5_MAX_RANK] = {0}, offset[RB_H5_MAX_RANK];
    for (;;) {
        for (int d = 0; d < p->rank; d++)
            offset[d] = g[d] * p->chunk[d];
        size_t size;
        uint32_t mask = 0;
        if (!read_stored(dset, p, offset, b, &size, &mask, rc))
            return false;
        if (in_place(p, offset)) {
            if (!decode(p, b, size, mask, (unsigned char *)(out + (size_t)offset[0] * p->row_values)))
                return false;
        } else {
            if (!decode(p, b, size, mask, b->tmp[2]))
                return false;
            place(p, offset, (const double *)(void *)b->tmp[2], out);
        }
        int d = p->rank - 1;
        while (d >= 0 && ++g[d] == p->grid[d])
            g[d--] = 0;
        if (d < 0)
            return true;
    }
}

int rb_h5r_read_chunks(rb_h5r *r, hid_t dset, size_t npoints, double *out, bool *done)
{
    *done = false;
    chunk_plan p;
    if (!make_plan(dset, npoints, &p))
        return RB_OK;
    chunk_bufs b = {0};
    int rc = RB_OK;
    for (int t = 0; t < 3; t++)
        if (!(b.tmp[t] = rb_malloc(p.chunk_bytes)))
            rc = RB_ENOMEM;
    if (!rc)
        *done = read_all(dset, &p, &b, out, &rc);
    if (b.z_ready)
        inflateEnd(&b.z);
    rb_free(b.stored);
    for (int t = 0; t < 3; t++)
        rb_free(b.tmp[t]);
    if (rc) {
        *done = false;
        return rb_h5r_nomem(r);
    }
    return RB_OK;
}
