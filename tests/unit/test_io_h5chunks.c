/* Reading compressed doubles chunk by chunk outside HDF5's lock (lib/io/h5chunks.c): for every chunk
 * geometry and filter pipeline HDF5 itself writes, the values are exactly the ones written and the ones
 * H5Dread gives; datasets of other kinds, and chunks that do not decode, go back to H5Dread. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <string.h>

#include "../../lib/io/h5read.h"
#include "support.h"

enum { F_SHUFFLE = 1, F_DEFLATE = 2, F_DEFLATE_FIRST = 4, F_FLETCHER = 8, F_RAW_EDGES = 16 };

typedef struct shape {
    int rank;
    hsize_t dims[3], chunk[3];
} shape;

static size_t count_of(const shape *s)
{
    size_t n = 1;
    for (int d = 0; d < s->rank; d++)
        n *= (size_t)s->dims[d];
    return n;
}

/* Smooth values with noise in the low bits (what sensor logs look like), and some specials. */
static double value_at(size_t i)
{
    double v = sin(0.001 * (double)i) + 1e-9 * (double)((i * 2654435761u) % 1000);
    return i % 97 == 5 ? -0.0 : i % 101 == 7 ? 1e300 : v;
}

static hid_t make_dcpl(const shape *s, int filters)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    cr_assert(dcpl >= 0 && H5Pset_chunk(dcpl, s->rank, s->chunk) >= 0);
    if (filters & F_FLETCHER)
        cr_assert(H5Pset_fletcher32(dcpl) >= 0);
    if (filters & F_DEFLATE_FIRST) /* deflate, then shuffle: unusual but legal */
        cr_assert(H5Pset_deflate(dcpl, 6) >= 0 && H5Pset_shuffle(dcpl) >= 0);
    else {
        if (filters & F_SHUFFLE)
            cr_assert(H5Pset_shuffle(dcpl) >= 0);
        if (filters & F_DEFLATE)
            cr_assert(H5Pset_deflate(dcpl, 4) >= 0);
    }
    if (filters & F_RAW_EDGES) /* edge chunks stored unfiltered (HDF5 1.10 leaves their masks 0) */
        cr_assert(H5Pset_chunk_opts(dcpl, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) >= 0);
    return dcpl;
}

/* A file holding dataset "x" of the shape, filters and file type, with value_at(i) at row-major index i. */
static char *write_file(const char *dir, const char *name, const shape *s, int filters, hid_t file_type)
{
    char *path = rb_asprintf("%s/%s", dir, name);
    size_t n = count_of(s);
    double *v = rb_malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = value_at(i);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
          space = H5Screate_simple(s->rank, s->dims, NULL);
    hid_t dcpl = make_dcpl(s, filters);
    hid_t d = H5Dcreate2(f, "x", file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    cr_assert(d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0, "%s", name);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(f);
    rb_free(v);
    return path;
}

typedef struct read_out {
    bool fast;   /* rb_h5r_read_chunks read it */
    double *v;   /* what rb_h5r_read_chunks gave (fast) */
    double *ref; /* what H5Dread gives */
} read_out;

static read_out read_both(const char *path, size_t n)
{
    read_out o = {false, rb_calloc(n, sizeof(double)), rb_calloc(n, sizeof(double))};
    rb_h5r r;
    rb_err err;
    cr_assert_eq(rb_h5r_open(&r, path, NULL, &err), RB_OK);
    hid_t d = H5Dopen2(r.file, "x", H5P_DEFAULT);
    cr_assert(d >= 0);
    cr_assert_eq(rb_h5r_read_chunks(&r, d, n, o.v, &o.fast), RB_OK);
    cr_assert(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, o.ref) >= 0);
    H5Dclose(d);
    rb_h5r_close(&r);
    return o;
}

static void free_out(read_out *o)
{
    rb_free(o->v);
    rb_free(o->ref);
}

static const shape shapes[] = {
    {1, {1000}, {64}},           /* edge chunk */
    {1, {640}, {64}},            /* whole chunks only */
    {1, {1}, {1}},               /* one value */
    {2, {1001, 12}, {170, 12}},  /* our writers: whole rows, decoded in place but the last */
    {2, {37, 11}, {8, 4}},       /* partial rows: placed, edges in both axes */
    {2, {5, 300}, {1, 300}},     /* MATLAB's [n][T] with one row per chunk */
    {3, {7, 1, 13}, {3, 1, 13}}, /* MATLAB's [T][1][n] */
    {3, {9, 10, 11}, {2, 3, 4}}, /* edges in three axes */
};

static const int pipelines[] = {0, F_SHUFFLE, F_DEFLATE, F_SHUFFLE | F_DEFLATE};

Test(io_h5chunks, every_geometry_and_pipeline_reads_the_written_values)
{
    char *dir = test_temp_dir();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t p = 0; p < sizeof pipelines / sizeof pipelines[0]; p++) {
            char *path = write_file(dir, "x.h5", &shapes[s], pipelines[p], H5T_IEEE_F64LE);
            size_t n = count_of(&shapes[s]);
            read_out o = read_both(path, n);
            cr_assert(o.fast, "shape %zu, filters %d: read by chunks", s, pipelines[p]);
            for (size_t i = 0; i < n; i++) {
                double want = value_at(i);
                cr_assert(memcmp(&o.v[i], &want, sizeof want) == 0,
                          "shape %zu, filters %d, value %zu: %.17g, wrote %.17g", s, pipelines[p], i, o.v[i], want);
                cr_assert(memcmp(&o.v[i], &o.ref[i], sizeof want) == 0, "shape %zu, filters %d, value %zu vs H5Dread",
                          s, pipelines[p], i);
            }
            free_out(&o);
            rb_free(path);
        }
    test_remove_tree(dir);
}

/* Not ours to decode: the slow path must still read them (through rb_h5r_read_doubles). */
static void check_falls_back(const char *dir, const shape *s, int filters, hid_t file_type, bool partial)
{
    char *path = write_file(dir, "y.h5", s, filters, file_type);
    size_t n = count_of(s);
    if (partial) { /* only the first chunk written: the others hold fill values */
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t space = H5Screate_simple(s->rank, s->dims, NULL), dcpl = make_dcpl(s, filters);
        H5Ldelete(f, "x", H5P_DEFAULT);
        hid_t d = H5Dcreate2(f, "x", file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        hsize_t start[3] = {0, 0, 0};
        hid_t mem = H5Screate_simple(s->rank, s->chunk, NULL);
        double *v = rb_calloc(n, sizeof *v);
        for (size_t i = 0; i < (size_t)s->chunk[0]; i++)
            v[i] = value_at(i);
        cr_assert(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, s->chunk, NULL) >= 0);
        cr_assert(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, v) >= 0);
        rb_free(v);
        H5Sclose(mem);
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(space);
        H5Fclose(f);
    }
    read_out o = read_both(path, n);
    cr_assert_not(o.fast, "filters %d, partial %d: left to H5Dread", filters, partial);
    rb_h5r r;
    rb_err err;
    cr_assert_eq(rb_h5r_open(&r, path, NULL, &err), RB_OK);
    hid_t d = H5Dopen2(r.file, "x", H5P_DEFAULT);
    cr_assert_eq(rb_h5r_read_doubles(&r, d, "/x", n, o.v), RB_OK, "%s", err.msg);
    for (size_t i = 0; i < n; i++) {
        cr_assert(memcmp(&o.v[i], &o.ref[i], sizeof(double)) == 0, "value %zu", i);
        if (partial && i >= (size_t)s->chunk[0])
            cr_assert_eq(o.v[i], 0.0);
    }
    H5Dclose(d);
    rb_h5r_close(&r);
    free_out(&o);
    rb_free(path);
}

Test(io_h5chunks, other_kinds_are_left_to_h5dread)
{
    char *dir = test_temp_dir();
    const shape s = {1, {1000}, {64}};
    check_falls_back(dir, &s, F_SHUFFLE | F_DEFLATE | F_FLETCHER, H5T_IEEE_F64LE, false);  /* checksummed */
    check_falls_back(dir, &s, F_DEFLATE_FIRST, H5T_IEEE_F64LE, false);                     /* shuffled after */
    check_falls_back(dir, &s, F_SHUFFLE | F_DEFLATE | F_RAW_EDGES, H5T_IEEE_F64LE, false); /* edges unfiltered */
    check_falls_back(dir, &s, F_SHUFFLE | F_DEFLATE, H5T_IEEE_F64BE, false);               /* big-endian */
    check_falls_back(dir, &s, F_SHUFFLE | F_DEFLATE, H5T_IEEE_F32LE, false);               /* float */
    check_falls_back(dir, &s, F_SHUFFLE | F_DEFLATE, H5T_IEEE_F64LE, true);                /* unwritten chunks */
    test_remove_tree(dir);
}

/* A chunk whose stored bytes do not inflate: H5Dread reports it, as it always did. */
Test(io_h5chunks, a_corrupt_chunk_is_reported_as_before)
{
    char *dir = test_temp_dir();
    const shape s = {2, {1001, 12}, {170, 12}};
    char *path = write_file(dir, "z.h5", &s, F_SHUFFLE | F_DEFLATE, H5T_IEEE_F64LE);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "x", H5P_DEFAULT);
    hsize_t offset[2] = {340, 0}, size;
    cr_assert(H5Dget_chunk_storage_size(d, offset, &size) >= 0 && size > 0);
    unsigned char *junk = rb_malloc((size_t)size);
    for (size_t i = 0; i < (size_t)size; i++)
        junk[i] = (unsigned char)(i * 7 + 3);
    cr_assert(H5Dwrite_chunk(d, H5P_DEFAULT, 0, offset, (size_t)size, junk) >= 0);
    rb_free(junk);
    H5Dclose(d);
    H5Fclose(f);
    size_t n = count_of(&s);
    double *v = rb_calloc(n, sizeof *v);
    rb_h5r r;
    rb_err err;
    cr_assert_eq(rb_h5r_open(&r, path, NULL, &err), RB_OK);
    d = H5Dopen2(r.file, "x", H5P_DEFAULT);
    bool fast = true;
    cr_assert_eq(rb_h5r_read_chunks(&r, d, n, v, &fast), RB_OK);
    cr_assert_not(fast);
    cr_assert_eq(rb_h5r_read_doubles(&r, d, "/x", n, v), RB_EINPUT);
    char *want = rb_asprintf("%s: /x: cannot read the values (truncated or corrupt?)", path);
    cr_assert_str_eq(err.msg, want);
    rb_free(want);
    H5Dclose(d);
    rb_h5r_close(&r);
    rb_free(v);
    rb_free(path);
    test_remove_tree(dir);
}

/* A chunk stored with a filter skipped (its filter mask bit set) is decoded without that filter. */
Test(io_h5chunks, the_filter_mask_of_a_chunk_is_honoured)
{
    char *dir = test_temp_dir();
    const shape s = {1, {256}, {64}};
    char *path = write_file(dir, "m.h5", &s, F_SHUFFLE | F_DEFLATE, H5T_IEEE_F64LE);
    double v[64];
    unsigned char shuffled[sizeof v];
    for (size_t i = 0; i < 64; i++) {
        v[i] = -3.0 * value_at(1000 + i);
        for (size_t k = 0; k < sizeof(double); k++)
            shuffled[k * 64 + i] = ((const unsigned char *)&v[i])[k];
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "x", H5P_DEFAULT);
    hsize_t offset[1] = {128};
    cr_assert(H5Dwrite_chunk(d, H5P_DEFAULT, 0x2, offset, sizeof shuffled, shuffled) >= 0); /* deflate skipped */
    H5Dclose(d);
    H5Fclose(f);
    read_out o = read_both(path, 256);
    cr_assert(o.fast);
    for (size_t i = 0; i < 256; i++) {
        double want = i >= 128 && i < 192 ? v[i - 128] : value_at(i);
        cr_assert(memcmp(&o.ref[i], &want, sizeof want) == 0, "H5Dread, value %zu", i);
        cr_assert(memcmp(&o.v[i], &want, sizeof want) == 0, "value %zu: %.17g, want %.17g", i, o.v[i], want);
    }
    free_out(&o);
    rb_free(path);
    test_remove_tree(dir);
}
