/* Corrupt HDF5 files that crash libhdf5 1.10.8 itself (lib/io/h5isolate.c): with rb_io_set_hdf5_isolation on,
 * reading them is RB_EINPUT naming the file, on one line, and the caller lives on; isolated reads of good
 * files give exactly the in-process result, also from several threads while another thread writes HDF5.
 *
 * The mutants are made here from the h5py fixture roboest.h5 by byte edits found by fuzzing, located by
 * what they are rather than by offset: the global heap object holding the element name "torso_pitch" with
 * its size inflated, and the variable-length string descriptors (length, heap address, object index) of
 * that name and of the root attribute roboest_layout ("channels/1") pointing past the heap's objects; and
 * number types whose bits lie outside their bytes, which the readers check before reading. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/valgrind.h>

#include "roboest/io.h"
#include "support.h"

static size_t find(const char *hay, size_t n, const void *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return i;
    cr_assert_fail("pattern not found in the fixture");
    return 0;
}

/* Offset of the variable-length string descriptor {len, address of the global heap, index} of a string of
 * `len` bytes (the first one). */
static size_t descriptor(const char *b, size_t n, uint32_t len)
{
    uint64_t heap = find(b, n, "GCOL", 4); /* the file has no user block: addresses are offsets */
    unsigned char d[12];
    for (int k = 0; k < 4; k++)
        d[k] = (unsigned char)(len >> (8 * k));
    for (int k = 0; k < 8; k++)
        d[4 + k] = (unsigned char)(heap >> (8 * k));
    return find(b, n, d, sizeof d);
}

typedef enum mutant { HEAP_SIZE, NAME_INDEX, LAYOUT_INDEX } mutant;

/* The mutant written into dir; its path (caller frees). */
static char *write_mutant(mutant m, const char *dir)
{
    size_t n;
    char *b = test_slurp(RB_FIXTURES "/roboest.h5", &n);
    if (m == HEAP_SIZE)
        b[find(b, n, "torso_pitch", 11) - 7] = 0x35; /* object size 11 -> 0x350b */
    else                                             /* object index 0x4fxx: far past the heap's objects */
        b[descriptor(b, n, m == NAME_INDEX ? 11 : 10) + 13] = 0x4f;
    char *path = rb_asprintf("%s/mutant%d.h5", dir, (int)m);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
    free(b);
    return path;
}

static void assert_corrupt(int rc, const rb_err *err, const char *path)
{
    cr_assert_eq(rc, RB_EINPUT, "%s", err->msg);
    cr_assert(strncmp(err->msg, path, strlen(path)) == 0, "%s", err->msg);
    cr_assert(strstr(err->msg, ": corrupt HDF5 file (the HDF5 library failed reading it: "), "%s", err->msg);
    cr_assert_null(strchr(err->msg, '\n'), "%s", err->msg);
}

/* Under valgrind (make test-valgrind), the reading child's reads past libhdf5's buffers, which these tests
 * provoke on purpose, are valgrind errors in the log: those tests are skipped there. */
static void skip_under_valgrind(void)
{
    if (RUNNING_ON_VALGRIND)
        cr_skip_test(
            "valgrind reports libhdf5's reads past its buffers in the reading child, which this test provokes");
}

static void isolate(void)
{
    test_deadline(60);
    rb_io_set_hdf5_isolation(true);
}
static void in_process(void) { rb_io_set_hdf5_isolation(false); }

TestSuite(io_h5_hostile, .init = isolate, .fini = in_process);

Test(io_h5_hostile, heap_object_size)
{
    skip_under_valgrind();
    char *dir = test_temp_dir(), *path = write_mutant(HEAP_SIZE, dir);
    rb_log *log = (rb_log *)1;
    rb_err err;
    assert_corrupt(rb_log_read(path, &log, &err), &err, path);
    cr_assert_null(log);
    rb_free(path);
    test_remove_tree(dir);
}

Test(io_h5_hostile, heap_object_index)
{
    skip_under_valgrind();
    char *dir = test_temp_dir(), *path = write_mutant(NAME_INDEX, dir);
    rb_log *log = NULL;
    rb_err err;
    assert_corrupt(rb_log_read(path, &log, &err), &err, path);
    cr_assert_null(log);
    rb_free(path);
    test_remove_tree(dir);
}

/* The root attributes: the layout marker read by rb_log_read, every string attribute by rb_arrays_read. */
Test(io_h5_hostile, root_attribute_log_and_arrays)
{
    skip_under_valgrind();
    char *dir = test_temp_dir(), *path = write_mutant(LAYOUT_INDEX, dir);
    rb_log *log = NULL;
    rb_arrays *arrays = NULL;
    rb_err err;
    assert_corrupt(rb_log_read(path, &log, &err), &err, path);
    assert_corrupt(rb_arrays_read(path, &arrays, &err), &err, path);
    cr_assert_null(arrays);
    rb_free(path);
    test_remove_tree(dir);
}

/* ---- the checks before trusting: in-process, no child needed ---- */

/* A copy of fixture `name` in dir whose every 16-bit integer datatype message (version 1 to 3, offset 0,
 * precision 16) claims 0 bits at bit offset 8365 instead, as a fuzzed file did: libhdf5 1.10.8 converts
 * such numbers by reading far past its buffers (SIGBUS in H5T__bit_copy). */
static char *write_bad_int16(const char *name, const char *dir)
{
    size_t n, hits = 0;
    char *src = rb_asprintf("%s/%s", RB_FIXTURES, name);
    unsigned char *b = (unsigned char *)test_slurp(src, &n);
    static const unsigned char props[8] = {2, 0, 0, 0, 0, 0, 16, 0}; /* size 2; offset 0, precision 16 */
    for (size_t i = 4; i + 8 <= n; i++) {
        unsigned version = b[i - 4] >> 4;
        if (memcmp(b + i, props, 8) == 0 && (b[i - 4] & 0x0f) == 0 && version >= 1 && version <= 3) {
            memcpy(b + i + 4, (const unsigned char[4]){0xad, 0x20, 0, 0}, 4);
            hits++;
        }
    }
    cr_assert_gt(hits, 0, "no 16-bit integer type in %s", src);
    char *path = rb_asprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
    free(b);
    rb_free(src);
    return path;
}

Test(io_h5_hostile, corrupt_number_type_of_an_array, .init = in_process)
{
    char *dir = test_temp_dir(), *path = write_bad_int16("arrays_h5py73.mat", dir);
    rb_arrays *arrays = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_read(path, &arrays, &err), RB_EINPUT, "%s", err.msg);
    cr_assert(strstr(err.msg, ": /k16: corrupt number type (2 bytes, 0 bits at offset 8365)"), "%s", err.msg);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
    rb_free(path);
    test_remove_tree(dir);
}

/* The logger's element names are 16-bit char codes: read as they were, they came out as garbage. */
Test(io_h5_hostile, corrupt_number_type_of_element_names, .init = in_process)
{
    char *dir = test_temp_dir(), *path = write_bad_int16("logger_h5py73.mat", dir);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_EINPUT, "%s", err.msg);
    cr_assert(strstr(err.msg, "/elements_names{1}: corrupt number type"), "%s", err.msg);
    cr_assert_null(log);
    rb_free(path);
    test_remove_tree(dir);
}

/* ---- good files: the isolated read is the in-process read ---- */

static void assert_same_log(const rb_log *a, const rb_log *b)
{
    cr_assert_eq(a->format, b->format);
    cr_assert((a->root_name == NULL) == (b->root_name == NULL));
    cr_assert(!a->root_name || strcmp(a->root_name, b->root_name) == 0);
    cr_assert_eq(a->n_attrs, b->n_attrs);
    for (size_t k = 0; k < a->n_attrs; k++)
        cr_assert(strcmp(a->attrs[k].key, b->attrs[k].key) == 0 && strcmp(a->attrs[k].value, b->attrs[k].value) == 0);
    cr_assert_eq(a->n_skipped, b->n_skipped);
    for (size_t k = 0; k < a->n_skipped; k++)
        cr_assert(strcmp(a->skipped[k].name, b->skipped[k].name) == 0 &&
                  strcmp(a->skipped[k].reason, b->skipped[k].reason) == 0);
    cr_assert_eq(a->n_channels, b->n_channels);
    for (size_t c = 0; c < a->n_channels; c++) {
        const rb_channel *x = &a->channels[c], *y = &b->channels[c];
        cr_assert_str_eq(x->name, y->name);
        cr_assert(x->n_samples == y->n_samples && x->n_elements == y->n_elements, "%s", x->name);
        cr_assert(memcmp(x->time, y->time, x->n_samples * sizeof(double)) == 0, "%s", x->name);
        cr_assert(memcmp(x->data, y->data, x->n_samples * x->n_elements * sizeof(double)) == 0, "%s", x->name);
        for (size_t i = 0; i < x->n_elements; i++)
            cr_assert(strcmp(x->element_names[i], y->element_names[i]) == 0 && strcmp(x->units[i], y->units[i]) == 0);
    }
}

static const char *const GOOD[] = {
    "roboest.h5",           "plain.h5",         "logger_h5py73.mat",    "logger_matio73.mat",
    "logger_h5py73_u8.mat", "plain_h5py73.mat", "logger_h5py73_old.mat"};

Test(io_h5_hostile, isolated_read_is_the_in_process_read)
{
    for (size_t k = 0; k < sizeof GOOD / sizeof GOOD[0]; k++) {
        char *path = rb_asprintf("%s/%s", RB_FIXTURES, GOOD[k]);
        rb_log *iso = NULL, *own = NULL;
        rb_log_format fi, fo;
        rb_err err;
        rb_io_set_hdf5_isolation(true);
        cr_assert_eq(rb_log_read(path, &iso, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_log_detect(path, &fi, &err), RB_OK, "%s", err.msg);
        rb_io_set_hdf5_isolation(false);
        cr_assert_eq(rb_log_read(path, &own, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_log_detect(path, &fo, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(fi, fo, "%s", path);
        cr_assert_gt(own->n_channels, 0, "%s", path);
        assert_same_log(iso, own);
        rb_log_free(iso);
        rb_log_free(own);
        rb_free(path);
    }
}

/* Errors of a file HDF5 reads without crashing come back from the child as they are. */
Test(io_h5_hostile, isolated_errors_are_the_in_process_errors)
{
    static const char *const bad[] = {"bad_time_mismatch73.mat", "bad_huge73.mat", "bad_no_time.h5",
                                      "trunc_roboest_half.h5"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *path = rb_asprintf("%s/%s", RB_FIXTURES, bad[k]);
        rb_log *log = NULL;
        rb_err iso, own;
        rb_io_set_hdf5_isolation(true);
        int rc_iso = rb_log_read(path, &log, &iso);
        rb_io_set_hdf5_isolation(false);
        int rc_own = rb_log_read(path, &log, &own);
        cr_assert_eq(rc_iso, RB_EINPUT, "%s: %s", path, iso.msg);
        cr_assert_eq(rc_iso, rc_own);
        cr_assert_str_eq(iso.msg, own.msg);
        rb_free(path);
    }
}

Test(io_h5_hostile, isolated_arrays_are_the_in_process_arrays)
{
    static const char *const files[] = {"arrays_h5py.h5", "arrays_h5py73.mat"};
    for (size_t k = 0; k < 2; k++) {
        char *path = rb_asprintf("%s/%s", RB_FIXTURES, files[k]);
        rb_arrays *iso = NULL, *own = NULL;
        rb_err err;
        rb_io_set_hdf5_isolation(true);
        cr_assert_eq(rb_arrays_read(path, &iso, &err), RB_OK, "%s", err.msg);
        rb_io_set_hdf5_isolation(false);
        cr_assert_eq(rb_arrays_read(path, &own, &err), RB_OK, "%s", err.msg);
        cr_assert(iso->n == own->n && own->n > 0 && iso->n_attrs == own->n_attrs);
        for (size_t a = 0; a < own->n; a++) {
            const rb_array *x = &iso->items[a], *y = &own->items[a];
            cr_assert_str_eq(x->name, y->name);
            cr_assert(x->ndim == y->ndim && memcmp(x->dims, y->dims, sizeof x->dims) == 0);
            cr_assert(memcmp(x->data, y->data, x->dims[0] * x->dims[1] * x->dims[2] * sizeof(double)) == 0);
        }
        for (size_t a = 0; a < own->n_attrs; a++)
            cr_assert(strcmp(iso->attrs[a].key, own->attrs[a].key) == 0 &&
                      strcmp(iso->attrs[a].value, own->attrs[a].value) == 0);
        rb_arrays_free(iso);
        rb_arrays_free(own);
        rb_free(path);
    }
}

/* ---- threads: isolated reads beside in-process HDF5 writes ---- */

typedef struct worker {
    const char *path; /* read, or NULL: write `out` over and over */
    char *out;
    const rb_log *src;
    int rounds, failures;
    rb_err err;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (int k = 0; k < w->rounds; k++) {
        int rc;
        if (w->path) {
            rb_log *log = NULL;
            rc = rb_log_read(w->path, &log, &w->err);
            rb_log_free(log);
        } else {
            rb_write_opts opts = {RB_OUT_H5, true, NULL};
            rc = rb_log_write(w->src, w->out, &opts, &w->err);
        }
        w->failures += rc != RB_OK;
    }
    return NULL;
}

/* A fork while another thread is inside HDF5 would leave HDF5's lock held in the child, which would then
 * never answer: the suite's timeout catches that. */
Test(io_h5_hostile, isolated_reads_beside_writes_in_threads)
{
    skip_under_valgrind();
    char *good = rb_asprintf("%s/%s", RB_FIXTURES, "roboest.h5");
    char *dir = test_temp_dir(), *bad = write_mutant(HEAP_SIZE, dir);
    rb_log *src = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(good, &src, &err), RB_OK, "%s", err.msg);
    worker w[4] = {{good, NULL, NULL, 40, 0, {0}},
                   {bad, NULL, NULL, 40, 0, {0}},
                   {NULL, rb_asprintf("%s/a.h5", dir), src, 40, 0, {0}},
                   {NULL, rb_asprintf("%s/b.h5", dir), src, 40, 0, {0}}};
    pthread_t tid[4];
    for (int t = 0; t < 4; t++)
        cr_assert_eq(pthread_create(&tid[t], NULL, work, &w[t]), 0);
    for (int t = 0; t < 4; t++)
        pthread_join(tid[t], NULL);
    cr_assert_eq(w[0].failures, 0, "%s", w[0].err.msg);
    cr_assert_eq(w[1].failures, 40);
    assert_corrupt(RB_EINPUT, &w[1].err, bad);
    cr_assert_eq(w[2].failures + w[3].failures, 0);
    rb_log_free(src);
    rb_free(w[2].out);
    rb_free(w[3].out);
    rb_free(good);
    rb_free(bad);
    test_remove_tree(dir);
}
