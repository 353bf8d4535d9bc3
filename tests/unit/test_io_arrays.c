/* Named arrays (io.h): the set, round trips through .h5, .mat v7.3, .mat v5 and .csv, files from
 * independent writers (h5py, scipy.io, an h5py MATLAB-v7.3-layout writer; tests/fixtures/gen_fixtures.py)
 * read back in the right element order, roboest's files checked by h5py / scipy.io / csv / libmatio
 * (io_arrays_check.py), bad inputs, atomic writing, allocation failures. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roboest/io.h"
#include "support.h"

#define CHECK_PY RB_SOURCE "/tests/unit/io_arrays_check.py"
#define PYTHON "/usr/bin/python3" /* Debian's, with python3-h5py and python3-scipy */

/* ---- values: element (i, j, k) of array c is 1000 c + 100 i + 10 j + k + 0.5 ------------------ */
static double val(int c, size_t i, size_t j, size_t k)
{
    return 1000.0 * c + 100.0 * (double)i + 10.0 * (double)j + (double)k + 0.5;
}

static const double SPECIAL[8] = {0.1, NAN, 1.0 / 3.0, -INFINITY, -2.5e-300, 1e300, -0.0, 5.0};
static const char *const ATTRS[3][2] = {
    {"roboest_version", "0.1.0"}, {"model", "arm.urdf"}, {"note", "\xce\x94\xce\xb8 ok"}}; /* Δθ ok */

static char *fixture(const char *name) { return rb_asprintf("%s/%s", RB_FIXTURES, name); }

static rb_array *add(rb_arrays *a, const char *name, size_t ndim, size_t d0, size_t d1, size_t d2, int c)
{
    size_t dims[3] = {d0, d1, d2};
    rb_array *arr = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_add(a, name, ndim, dims, &arr, &err), RB_OK, "%s", err.msg);
    for (size_t i = 0; i < arr->dims[0]; i++)
        for (size_t j = 0; j < arr->dims[1]; j++)
            for (size_t k = 0; k < arr->dims[2]; k++)
                arr->data[(i * arr->dims[1] + j) * arr->dims[2] + k] = val(c, i, j, k);
    return arr;
}

/* What io_arrays_check.py expects: the CSV set (every array with 4 rows) or the full set. */
static rb_arrays *make_set(bool csv_set)
{
    rb_arrays *a;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    add(a, "v", 1, 4, 0, 0, 1);
    add(a, "q", 2, 4, 3, 0, 2);
    add(a, "M", 3, 4, 3, 2, 3);
    add(a, "c1", 2, 4, 1, 0, 4);
    rb_array *x = add(a, "x", 2, 4, 2, 0, 0);
    memcpy(x->data, SPECIAL, sizeof SPECIAL);
    if (!csv_set) {
        add(a, "w", 2, 2, 5, 0, 5);
        add(a, "E", 2, 0, 3, 0, 0);
        add(a, "T1", 3, 4, 3, 1, 6);
        add(a, "one", 3, 1, 3, 2, 7);
        add(a, "r1", 2, 1, 3, 0, 8);
    }
    for (size_t k = 0; k < 3; k++)
        cr_assert_eq(rb_arrays_set_attr(a, ATTRS[k][0], ATTRS[k][1], &err), RB_OK);
    return a;
}

static const char *get_attr(const rb_arrays *a, const char *key)
{
    for (size_t k = 0; k < a->n_attrs; k++)
        if (strcmp(a->attrs[k].key, key) == 0)
            return a->attrs[k].value;
    return NULL;
}

/* got holds want's arrays (any order) bit for bit, and its attributes. `matlab`: a 2-D array with one
 * row or one column comes back as the 1-D vector MATLAB cannot tell it from. */
static void check_same(const rb_arrays *want, const rb_arrays *got, bool matlab, const char *what)
{
    cr_assert_eq(got->n, want->n, "%s: %zu arrays, want %zu", what, got->n, want->n);
    for (size_t k = 0; k < want->n; k++) {
        const rb_array *w = &want->items[k], *g = rb_arrays_find(got, w->name);
        cr_assert_not_null(g, "%s: array %s missing", what, w->name);
        size_t ndim = w->ndim, dims[3] = {w->dims[0], w->dims[1], w->dims[2]};
        if (matlab && ndim == 2 && (dims[0] == 1 || dims[1] == 1)) {
            ndim = 1;
            dims[0] *= dims[1];
            dims[1] = 1;
        }
        cr_assert_eq(g->ndim, ndim, "%s: %s: ndim %zu, want %zu", what, w->name, g->ndim, ndim);
        for (size_t d = 0; d < 3; d++)
            cr_assert_eq(g->dims[d], dims[d], "%s: %s: dims[%zu] = %zu, want %zu", what, w->name, d, g->dims[d],
                         dims[d]);
        size_t count = dims[0] * dims[1] * dims[2];
        for (size_t i = 0; i < count; i++)
            cr_assert(memcmp(&g->data[i], &w->data[i], sizeof(double)) == 0, "%s: %s[%zu] = %.17g, want %.17g", what,
                      w->name, i, g->data[i], w->data[i]);
    }
    cr_assert_eq(got->n_attrs, want->n_attrs, "%s: %zu attributes", what, got->n_attrs);
    for (size_t k = 0; k < want->n_attrs; k++) {
        const char *v = get_attr(got, want->attrs[k].key);
        cr_assert_not_null(v, "%s: attribute %s", what, want->attrs[k].key);
        cr_assert_str_eq(v, want->attrs[k].value, "%s: attribute %s", what, want->attrs[k].key);
    }
}

static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* Run io_arrays_check.py; assert it exits 0 and show what it printed otherwise. */
static void python_check(const char *mode, const char *path, bool csv_set)
{
    char cmd[1024], out[4096] = "";
    snprintf(cmd, sizeof cmd, "%s %s %s '%s'%s 2>&1", PYTHON, CHECK_PY, mode, path, csv_set ? " --csv-set" : "");
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed: %s", cmd, out);
}

static char *write_set(const rb_arrays *a, const char *dir, const char *file, rb_out_format fmt)
{
    char *path = rb_asprintf("%s/%s", dir, file);
    rb_write_opts opts = {.format = fmt};
    rb_err err;
    cr_assert_eq(rb_arrays_write(a, path, &opts, &err), RB_OK, "%s", err.msg);
    return path;
}

static rb_arrays *read_ok(const char *path)
{
    rb_arrays *a = NULL;
    rb_err err;
    rb_err_clear(&err);
    cr_assert_eq(rb_arrays_read(path, &a, &err), RB_OK, "%s: %s", path, err.msg);
    cr_assert_not_null(a);
    return a;
}

/* ---- the set ---------------------------------------------------------------------------------- */
Test(io_arrays, add_find_and_attributes)
{
    rb_arrays *a;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    size_t dims[3] = {5, 7, 9};
    rb_array *arr;
    cr_assert_eq(rb_arrays_add(a, "q", 2, dims, &arr, &err), RB_OK);
    cr_assert(arr->ndim == 2 && arr->dims[0] == 5 && arr->dims[1] == 7 && arr->dims[2] == 1, "dims beyond ndim are 1");
    for (size_t i = 0; i < 35; i++)
        cr_assert_eq(arr->data[i], 0.0);
    cr_assert_eq(rb_arrays_add(a, "q", 1, dims, NULL, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "q"), "%s", err.msg);
    cr_assert_eq(rb_arrays_add(a, "z", 0, dims, NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_arrays_add(a, "z", 4, dims, NULL, &err), RB_EINVAL);
    size_t huge[3] = {SIZE_MAX / 2, 3, 1};
    cr_assert_eq(rb_arrays_add(a, "huge", 2, huge, NULL, &err), RB_ENOMEM);
    size_t empty[3] = {0, 4, 4};
    cr_assert_eq(rb_arrays_add(a, "E", 3, empty, NULL, &err), RB_OK);
    cr_assert_eq(a->n, 2);
    cr_assert_eq(rb_arrays_find(a, "q"), &a->items[0]);
    cr_assert_null(rb_arrays_find(a, "Q"));
    cr_assert_eq(rb_arrays_set_attr(a, "k", "v1", &err), RB_OK);
    cr_assert_eq(rb_arrays_set_attr(a, "k", "v2", &err), RB_OK);
    cr_assert_eq(a->n_attrs, 1);
    cr_assert_str_eq(get_attr(a, "k"), "v2");
    rb_arrays_free(a);
    rb_arrays_free(NULL);
}

Test(io_arrays, null_arguments)
{
    rb_arrays *a;
    rb_err err;
    cr_assert_eq(rb_arrays_read(NULL, &a, &err), RB_EINVAL);
    cr_assert_eq(rb_arrays_read("x.h5", NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_arrays_write(NULL, "x.h5", NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    cr_assert_eq(rb_arrays_write(a, NULL, NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_arrays_write(a, "x.json", NULL, &err), RB_ECONFIG, "format from the extension");
    rb_arrays_free(a);
}

/* ---- round trips, each file checked by an independent reader too ------------------------------ */
static void round_trip(rb_out_format fmt, const char *file, const char *mode, bool csv_set)
{
    char *dir = test_temp_dir();
    rb_arrays *a = make_set(csv_set);
    char *path = write_set(a, dir, file, fmt);
    python_check(mode, path, csv_set);
    rb_arrays *b = read_ok(path);
    check_same(a, b, fmt == RB_OUT_MAT73 || fmt == RB_OUT_MAT5, file);
    rb_arrays_free(b);
    rb_arrays_free(a);
    rb_free(path);
    test_remove_tree(dir);
}

Test(io_arrays, h5_round_trip_and_h5py) { round_trip(RB_OUT_H5, "out.h5", "h5", false); }
Test(io_arrays, mat73_round_trip_and_h5py) { round_trip(RB_OUT_MAT73, "out.mat", "mat73", false); }
Test(io_arrays, mat5_round_trip_and_scipy) { round_trip(RB_OUT_MAT5, "out.mat", "mat5", false); }
Test(io_arrays, csv_round_trip_and_python_csv) { round_trip(RB_OUT_CSV, "out.csv", "csv", true); }

/* The h5 writer keeps the order of the set; NULL options take the format from the extension. */
Test(io_arrays, h5_keeps_order_and_format_from_extension)
{
    char *dir = test_temp_dir();
    rb_arrays *a = make_set(false);
    const char *files[] = {"o.h5", "o.mat", "o.csv"};
    for (size_t f = 0; f < 3; f++) {
        char *path = rb_asprintf("%s/%s", dir, files[f]);
        rb_err err;
        if (f == 2) { /* CSV needs every array with the same rows */
            rb_arrays_free(a);
            a = make_set(true);
        }
        cr_assert_eq(rb_arrays_write(a, path, NULL, &err), RB_OK, "%s: %s", files[f], err.msg);
        size_t len;
        char *head = test_slurp(path, &len);
        cr_assert(f != 1 || strncmp(head, "MATLAB 7.3 MAT-file", 19) == 0, ".mat is v7.3");
        cr_assert(f != 2 || strncmp(head, "# roboest_version: 0.1.0\n", 25) == 0, ".csv: %.40s", head);
        free(head);
        rb_arrays *b = read_ok(path);
        check_same(a, b, f == 1, files[f]);
        if (f == 0)
            for (size_t k = 0; k < a->n; k++)
                cr_assert_str_eq(b->items[k].name, a->items[k].name, "creation order");
        rb_arrays_free(b);
        rb_free(path);
    }
    rb_arrays_free(a);
    test_remove_tree(dir);
}

/* libmatio (independent of roboest's writer) reads both .mat versions with MATLAB's sizes. */
Test(io_arrays, mat_files_read_by_libmatio)
{
    char *dir = test_temp_dir();
    rb_arrays *a = make_set(false);
    const rb_out_format fmts[] = {RB_OUT_MAT73, RB_OUT_MAT5};
    for (size_t f = 0; f < 2; f++) {
        char *path = write_set(a, dir, f ? "m5.mat" : "m73.mat", fmts[f]);
        mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
        cr_assert_not_null(mat, "%s", path);
        matvar_t *M = Mat_VarRead(mat, "M"), *v = Mat_VarRead(mat, "v");
        cr_assert(M && v);
        cr_assert(M->class_type == MAT_C_DOUBLE && M->rank == 3 && M->dims[0] == 4 && M->dims[1] == 3 &&
                      M->dims[2] == 2,
                  "M is 4 x 3 x 2 in MATLAB");
        const double *x = M->data;
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 3; j++)
                for (size_t k = 0; k < 2; k++)
                    cr_assert_eq(x[i + 4 * (j + 3 * k)], val(3, i, j, k), "M(%zu,%zu,%zu)", i, j, k);
        cr_assert(v->rank == 2 && v->dims[0] == 4 && v->dims[1] == 1, "v is 4 x 1");
        Mat_VarFree(M);
        Mat_VarFree(v);
        Mat_Close(mat);
        rb_free(path);
    }
    rb_arrays_free(a);
    test_remove_tree(dir);
}

/* ---- files from independent writers (tests/fixtures/gen_fixtures.py) -------------------------- */
/* v (4), q (4 x 3), M (4 x 3 x 2), k16 (int16, 4 x 3, integer values), f32 (single, 4 x 2). */
static void check_common(const rb_arrays *a, const char *file)
{
    static const struct {
        const char *name;
        int c;
        size_t ndim, dims[3];
        bool integer;
    } want[] = {{"v", 1, 1, {4, 1, 1}, false},
                {"q", 2, 2, {4, 3, 1}, false},
                {"M", 3, 3, {4, 3, 2}, false},
                {"k16", 4, 2, {4, 3, 1}, true},
                {"f32", 5, 2, {4, 2, 1}, false}};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        const rb_array *arr = rb_arrays_find(a, want[w].name);
        cr_assert_not_null(arr, "%s: %s missing", file, want[w].name);
        cr_assert_eq(arr->ndim, want[w].ndim, "%s: %s: ndim %zu", file, arr->name, arr->ndim);
        for (size_t d = 0; d < 3; d++)
            cr_assert_eq(arr->dims[d], want[w].dims[d], "%s: %s: dims[%zu] = %zu", file, arr->name, d, arr->dims[d]);
        for (size_t i = 0; i < arr->dims[0]; i++)
            for (size_t j = 0; j < arr->dims[1]; j++)
                for (size_t k = 0; k < arr->dims[2]; k++) {
                    double x = arr->data[(i * arr->dims[1] + j) * arr->dims[2] + k];
                    double e = val(want[w].c, i, j, k) - (want[w].integer ? 0.5 : 0.0);
                    cr_assert_eq(x, e, "%s: %s(%zu,%zu,%zu) = %.17g, want %.17g", file, arr->name, i, j, k, x, e);
                }
    }
}

static void check_vector(const rb_arrays *a, const char *file, const char *name, size_t n, int c)
{
    const rb_array *arr = rb_arrays_find(a, name);
    cr_assert_not_null(arr, "%s: %s missing", file, name);
    cr_assert(arr->ndim == 1 && arr->dims[0] == n && arr->dims[1] == 1 && arr->dims[2] == 1, "%s: %s: %zu-D %zu", file,
              name, arr->ndim, arr->dims[0]);
    for (size_t i = 0; c && i < n; i++)
        cr_assert_eq(arr->data[i], val(c, i, 0, 0), "%s: %s[%zu]", file, name, i);
}

Test(io_arrays, reads_h5py_numpy_shapes)
{
    char *path = fixture("arrays_h5py.h5");
    rb_arrays *a = read_ok(path);
    check_common(a, path);
    const rb_array *row = rb_arrays_find(a, "row"), *s = rb_arrays_find(a, "s");
    cr_assert(row && row->ndim == 2 && row->dims[0] == 1 && row->dims[1] == 3, "numpy (1, 3) stays one row");
    for (size_t j = 0; j < 3; j++)
        cr_assert_eq(row->data[j], val(6, 0, j, 0));
    cr_assert(s && s->ndim == 1 && s->dims[0] == 1 && s->data[0] == 3.5, "a scalar is one row");
    cr_assert_null(rb_arrays_find(a, "label"), "strings are skipped");
    cr_assert_null(rb_arrays_find(a, "cplx"), "complex numbers are skipped");
    cr_assert_null(rb_arrays_find(a, "g"), "groups are skipped");
    cr_assert_null(rb_arrays_find(a, "g/inner"), "nested datasets are skipped");
    cr_assert_eq(a->n, 7, "%zu arrays", a->n);
    cr_assert_str_eq(get_attr(a, "model"), "arm.urdf");
    cr_assert_str_eq(get_attr(a, "fixed"), "abc");
    cr_assert_null(get_attr(a, "count"), "non-string attributes are ignored");
    rb_arrays_free(a);
    rb_free(path);
}

/* MATLAB files: v is a 1 x 4 row, vcol 4 x 1, flags logical 4 x 1, s 1 x 1, E 0 x 3; char, cell,
 * complex and structs are skipped; roboest_provenance's char fields are the attributes. */
static void check_matlab_fixture(const char *name)
{
    char *path = fixture(name);
    rb_arrays *a = read_ok(path);
    check_common(a, path);
    check_vector(a, path, "vcol", 4, 7);
    check_vector(a, path, "s", 1, 0);
    cr_assert_eq(rb_arrays_find(a, "s")->data[0], 3.5);
    const rb_array *flags = rb_arrays_find(a, "flags"), *E = rb_arrays_find(a, "E");
    cr_assert(flags && flags->ndim == 1 && flags->dims[0] == 4, "%s: flags", name);
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(flags->data[i], (double)(i % 2));
    cr_assert(E && E->ndim == 2 && E->dims[0] == 0 && E->dims[1] == 3, "%s: E is 0 x 3", name);
    const char *skipped[] = {"label", "names", "cplx", "st", "roboest_provenance"};
    for (size_t k = 0; k < 5; k++)
        cr_assert_null(rb_arrays_find(a, skipped[k]), "%s: %s is skipped", name, skipped[k]);
    cr_assert_eq(a->n, 9, "%s: %zu arrays", name, a->n);
    cr_assert_eq(a->n_attrs, 2, "%s: %zu attributes", name, a->n_attrs);
    cr_assert_str_eq(get_attr(a, "model"), "arm.urdf");
    cr_assert_str_eq(get_attr(a, "note"), "\xce\x94\xce\xb8 ok");
    rb_arrays_free(a);
    rb_free(path);
}

Test(io_arrays, reads_h5py_matlab73_layout) { check_matlab_fixture("arrays_h5py73.mat"); }
Test(io_arrays, reads_scipy_v5) { check_matlab_fixture("arrays_scipy5.mat"); }
Test(io_arrays, reads_scipy_v7_compressed) { check_matlab_fixture("arrays_scipy7.mat"); }

Test(io_arrays, reads_csv_columns_in_any_order)
{
    char *path = fixture("arrays.csv");
    rb_arrays *a = read_ok(path);
    cr_assert_eq(a->n, 3);
    check_vector(a, path, "v", 4, 1);
    const rb_array *q = rb_arrays_find(a, "q"), *M = rb_arrays_find(a, "M");
    cr_assert(q && q->ndim == 2 && q->dims[0] == 4 && q->dims[1] == 3);
    cr_assert(M && M->ndim == 3 && M->dims[0] == 4 && M->dims[1] == 3 && M->dims[2] == 2);
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++) {
            cr_assert_eq(q->data[i * 3 + j], val(2, i, j, 0), "q(%zu,%zu)", i, j);
            for (size_t k = 0; k < 2; k++)
                cr_assert_eq(M->data[(i * 3 + j) * 2 + k], val(3, i, j, k), "M(%zu,%zu,%zu)", i, j, k);
        }
    cr_assert_eq(a->n_attrs, 1);
    cr_assert_str_eq(get_attr(a, "model"), "arm.urdf");
    rb_arrays_free(a);
    rb_free(path);
}

/* Numbers are read and written with '.' under a decimal-comma locale. */
Test(io_arrays, csv_ignores_the_locale)
{
    char locale_dir[] = "/tmp/rb_locale_XXXXXX";
    cr_assert(test_decimal_comma_locale(LC_ALL, locale_dir), "a decimal-comma locale (localedef, Debian's locales)");
    char *dir = test_temp_dir();
    rb_arrays *a = make_set(true);
    char *path = write_set(a, dir, "l.csv", RB_OUT_CSV);
    rb_arrays *b = read_ok(path);
    test_locale_restore(LC_ALL, locale_dir);
    check_same(a, b, false, "decimal-comma locale");
    python_check("csv", path, true);
    rb_arrays_free(a);
    rb_arrays_free(b);
    rb_free(path);
    test_remove_tree(dir);
}

/* ---- bad inputs: one-line RB_ENOTFOUND / RB_EINPUT messages starting with the path ------------- */
static void check_failure(const char *path, int want, const char *contains)
{
    rb_arrays *a = (rb_arrays *)1;
    rb_err err;
    rb_err_clear(&err);
    int rc = rb_arrays_read(path, &a, &err);
    cr_assert_eq(rc, want, "%s: %s (%s)", path, rb_status_name(rc), err.msg);
    cr_assert_null(a, "%s: no set on failure", path);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "message starts with the path: %s", err.msg);
    cr_assert_null(strchr(err.msg, '\n'), "%s", err.msg);
    if (contains)
        cr_assert(strstr(err.msg, contains), "'%s' in: %s", contains, err.msg);
}

Test(io_arrays, missing_empty_and_text_files)
{
    char *path = fixture("no_such_states.h5");
    check_failure(path, RB_ENOTFOUND, ": no such file");
    rb_free(path);
    path = fixture("text.mat");
    check_failure(path, RB_EINPUT, ": not an array file (neither HDF5, MATLAB nor CSV)");
    rb_free(path);
    path = fixture("empty.mat");
    check_failure(path, RB_EINPUT, ": not an array file (empty file)");
    rb_free(path);
    check_failure(RB_FIXTURES, RB_EINPUT, "not an array file (not a regular file)");
}

Test(io_arrays, truncated_files)
{
    DIR *d = opendir(RB_FIXTURES);
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "arrays_trunc_", 13) != 0)
            continue;
        char *path = fixture(e->d_name);
        check_failure(path, RB_EINPUT, NULL);
        rb_free(path);
        n++;
    }
    closedir(d);
    cr_assert_eq(n, 16, "the truncated fixtures exist (%zu)", n);
}

Test(io_arrays, unsupported_and_corrupt_datasets_are_named)
{
    char *path = fixture("arrays_bad_4d.h5");
    check_failure(path, RB_EINPUT, ": /T4: 4 dimensions (arrays have 1 to 3)");
    rb_free(path);
    path = fixture("arrays_bad_huge.h5");
    check_failure(path, RB_EINPUT, ": /huge: claims 3298534883328 values");
    rb_free(path);
}

static void csv_failure(const char *text, const char *contains)
{
    char *dir = test_temp_dir(), *path = rb_asprintf("%s/bad.csv", dir);
    put_text(path, text);
    check_failure(path, RB_EINPUT, contains);
    rb_free(path);
    test_remove_tree(dir);
}

Test(io_arrays, csv_errors_name_line_and_column)
{
    csv_failure("q:0,q:1\n1,2\n3,x\n", "bad.csv:3: column 'q:1': not a number: 'x'");
    csv_failure("q:0,q:1\n1,2\n3\n", "bad.csv:3: 1 fields, the header has 2 (column 'q:1' missing)");
    csv_failure("q:0,q:2\n1,2\n", "bad.csv:1: array q: 2 columns, but its indices up to q:2 need 3 x 1");
    csv_failure("M:0:0,M:1:1\n1,2\n", "bad.csv:1: array M: 2 columns, but its indices up to M:1:1 need 2 x 2");
    csv_failure("q:0,q:1,q:0\n1,2,3\n", "bad.csv:1: column 'q:0' appears twice");
    csv_failure("v,v\n1,2\n", "bad.csv:1: column 'v' appears twice");
    csv_failure("q:0,p,q:1\n1,2,3\n", "bad.csv:1: column 'q:1': the columns of array q are not together");
    csv_failure("q:0,q:0:1\n1,2\n", "bad.csv:1: column 'q:0:1': array q has columns with 1 and 2 indices");
    csv_failure("# only: comments\n\n", "not an array file (neither HDF5, MATLAB nor CSV)");
    csv_failure("q:0,q:-1\n1,2\n", "not an array file");
    csv_failure("time,x:0 [m]\n1,2\n", "not an array file");
}

/* A CSV without rows is a set of empty arrays; quoted fields and CRLF line ends are read; a header
 * longer than the 64 KiB sniffed is still recognized. */
Test(io_arrays, csv_without_rows_quoted_and_long_header)
{
    char *dir = test_temp_dir(), *path = rb_asprintf("%s/h.csv", dir);
    put_text(path, "# k: v\nq:0,q:1,p\n");
    rb_arrays *a = read_ok(path);
    cr_assert(a->n == 2 && a->items[0].dims[0] == 0 && a->items[0].dims[1] == 2 && a->items[1].ndim == 1);
    cr_assert_str_eq(get_attr(a, "k"), "v");
    rb_arrays_free(a);
    put_text(path, "\"q:1\", \"q:0\"\r\n\"1.5\",2.5\r\n");
    a = read_ok(path);
    cr_assert(a->n == 1 && a->items[0].dims[0] == 1 && a->items[0].dims[1] == 2);
    cr_assert(a->items[0].data[0] == 2.5 && a->items[0].data[1] == 1.5);
    rb_arrays_free(a);
    FILE *f = fopen(path, "wb");
    size_t cols = 9000; /* about 90 KiB of header */
    for (size_t j = 0; j < cols; j++)
        fprintf(f, "%sbig_name:%zu", j ? "," : "", j);
    fputc('\n', f);
    for (size_t j = 0; j < cols; j++)
        fprintf(f, "%s%zu", j ? "," : "", j);
    fputc('\n', f);
    fclose(f);
    a = read_ok(path);
    cr_assert(a->n == 1 && a->items[0].dims[0] == 1 && a->items[0].dims[1] == cols);
    cr_assert_eq(a->items[0].data[cols - 1], (double)(cols - 1));
    rb_arrays_free(a);
    rb_free(path);
    test_remove_tree(dir);
}

/* Content, not the extension, picks the reader. */
Test(io_arrays, format_comes_from_content)
{
    const char *files[] = {"arrays_h5py.h5", "arrays_h5py73.mat", "arrays_scipy5.mat", "arrays.csv"};
    char *dir = test_temp_dir();
    for (size_t k = 0; k < 4; k++) {
        char *src = fixture(files[k]), *dst = rb_asprintf("%s/renamed%zu.txt", dir, k);
        size_t len;
        char *bytes = test_slurp(src, &len);
        FILE *f = fopen(dst, "wb");
        fwrite(bytes, 1, len, f);
        fclose(f);
        free(bytes);
        rb_arrays *a = read_ok(src), *b = read_ok(dst);
        check_same(a, b, false, files[k]);
        rb_arrays_free(a);
        rb_arrays_free(b);
        rb_free(src);
        rb_free(dst);
    }
    test_remove_tree(dir);
}

/* ---- writing: atomic, names each format can hold ------------------------------------------------ */
Test(io_arrays, existing_file_is_kept_without_overwrite)
{
    const rb_out_format fmts[] = {RB_OUT_H5, RB_OUT_MAT73, RB_OUT_MAT5, RB_OUT_CSV};
    for (size_t f = 0; f < 4; f++) {
        char *dir = test_temp_dir(), *path = rb_asprintf("%s/keep.out", dir);
        put_text(path, "old contents");
        rb_arrays *a = make_set(fmts[f] == RB_OUT_CSV);
        rb_write_opts opts = {.format = fmts[f]};
        rb_err err;
        cr_assert_eq(rb_arrays_write(a, path, &opts, &err), RB_EEXISTS, "%s", err.msg);
        cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
        size_t len;
        char *text = test_slurp(path, &len);
        cr_assert_str_eq(text, "old contents");
        free(text);
        cr_assert_eq(test_count_entries(dir), 1, "no temporary file left");
        opts.overwrite = true;
        cr_assert_eq(rb_arrays_write(a, path, &opts, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(test_count_entries(dir), 1);
        rb_arrays *b = read_ok(path);
        check_same(a, b, fmts[f] == RB_OUT_MAT73 || fmts[f] == RB_OUT_MAT5, "overwritten");
        rb_arrays_free(b);
        rb_arrays_free(a);
        rb_free(path);
        test_remove_tree(dir);
    }
}

Test(io_arrays, missing_folder_is_an_io_error)
{
    char *dir = test_temp_dir(), *path = rb_asprintf("%s/no/such/out.h5", dir);
    rb_arrays *a = make_set(false);
    rb_err err;
    cr_assert_eq(rb_arrays_write(a, path, NULL, &err), RB_EIO);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, "does not exist"), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0);
    rb_arrays_free(a);
    rb_free(path);
    test_remove_tree(dir);
}

static void expect_write_error(const rb_arrays *a, rb_out_format fmt, const char *text)
{
    char *dir = test_temp_dir(), *path = rb_asprintf("%s/bad", dir);
    rb_write_opts opts = {.format = fmt};
    rb_err err;
    cr_assert_eq(rb_arrays_write(a, path, &opts, &err), RB_EINPUT, "format %d: %s", (int)fmt, err.msg);
    cr_assert(strstr(err.msg, text), "'%s' in: %s", text, err.msg);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "message starts with the path: %s", err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
    cr_assert_eq(test_count_entries(dir), 0, "nothing left");
    rb_free(path);
    test_remove_tree(dir);
}

Test(io_arrays, names_each_format_cannot_hold_are_refused)
{
    rb_arrays *a;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    add(a, "q", 2, 4, 2, 0, 1);
    add(a, "a/b", 1, 4, 0, 0, 2);
    expect_write_error(a, RB_OUT_H5, "array 'a/b': not an HDF5 dataset name");
    expect_write_error(a, RB_OUT_MAT73, "array 'a/b': not a MATLAB variable name");
    expect_write_error(a, RB_OUT_MAT5, "array 'a/b': not a MATLAB variable name");
    rb_arrays_free(a);

    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    add(a, "with space", 1, 4, 0, 0, 1);
    expect_write_error(a, RB_OUT_CSV, "array 'with space': not a CSV column name");
    rb_arrays_free(a);

    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    add(a, "ok", 1, 4, 0, 0, 1);
    add(a, "bad\xff", 1, 4, 0, 0, 1);
    expect_write_error(a, RB_OUT_H5, "the name of array 1 is not valid UTF-8");
    rb_arrays_free(a);

    /* the attributes' struct takes that name in .mat files */
    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    add(a, "roboest_provenance", 1, 4, 0, 0, 1);
    cr_assert_eq(rb_arrays_set_attr(a, "model", "x", &err), RB_OK);
    expect_write_error(a, RB_OUT_MAT5, "array 'roboest_provenance': the name of the attributes' struct");
    cr_assert_eq(rb_arrays_set_attr(a, "note", "bad \xff byte", &err), RB_OK);
    expect_write_error(a, RB_OUT_H5, "attribute 1 is not valid UTF-8");
    rb_arrays_free(a);
}

Test(io_arrays, csv_needs_equal_rows_and_a_column)
{
    rb_arrays *a = make_set(false);
    expect_write_error(a, RB_OUT_CSV,
                       "array w has 2 rows, array v 4: CSV output needs every array with the same "
                       "number of rows");
    rb_arrays_free(a);
    rb_err err;
    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    expect_write_error(a, RB_OUT_CSV, "no columns to write");
    add(a, "E", 2, 4, 0, 0, 1);
    expect_write_error(a, RB_OUT_CSV, "no columns to write");
    rb_arrays_free(a);
}

/* An empty set writes a file that reads back empty (not CSV: no header to write). */
Test(io_arrays, empty_set)
{
    const rb_out_format fmts[] = {RB_OUT_H5, RB_OUT_MAT73, RB_OUT_MAT5};
    const char *files[] = {"e.h5", "e73.mat", "e5.mat"};
    char *dir = test_temp_dir();
    rb_arrays *a;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&a, &err), RB_OK);
    for (size_t f = 0; f < 3; f++) {
        char *path = write_set(a, dir, files[f], fmts[f]);
        rb_arrays *b = read_ok(path);
        cr_assert(b->n == 0 && b->n_attrs == 0, "%s", files[f]);
        rb_arrays_free(b);
        rb_free(path);
    }
    rb_arrays_free(a);
    test_remove_tree(dir);
}

/* The same set always gives the same bytes (no object times or dates). */
Test(io_arrays, bytes_are_deterministic)
{
    const rb_out_format fmts[] = {RB_OUT_H5, RB_OUT_MAT73, RB_OUT_MAT5, RB_OUT_CSV};
    const char *files[] = {"d.h5", "d73.mat", "d5.mat", "d.csv"};
    char *dir = test_temp_dir(), *first[4];
    rb_arrays *full = make_set(false), *small = make_set(true);
    for (size_t f = 0; f < 4; f++)
        first[f] = write_set(f == 3 ? small : full, dir, files[f], fmts[f]);
    sleep(1); /* HDF5 object times have one-second resolution: they would differ now */
    for (size_t f = 0; f < 4; f++) {
        char *name = rb_asprintf("2%s", files[f]);
        char *second = write_set(f == 3 ? small : full, dir, name, fmts[f]);
        size_t la, lb;
        char *x = test_slurp(first[f], &la), *y = test_slurp(second, &lb);
        cr_assert(la == lb && memcmp(x, y, la) == 0, "%s: the two files differ", files[f]);
        free(x);
        free(y);
        rb_free(name);
        rb_free(second);
        rb_free(first[f]);
    }
    rb_arrays_free(full);
    rb_arrays_free(small);
    test_remove_tree(dir);
}

/* ---- allocation failures ---------------------------------------------------------------------- */
Test(io_arrays, every_read_allocation_failure_is_reported)
{
    const char *files[] = {"arrays_h5py.h5", "arrays_h5py73.mat", "arrays_scipy5.mat", "arrays_scipy7.mat",
                           "arrays.csv"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *path = fixture(files[f]);
        int rc = RB_ENOMEM;
        long k;
        for (k = 0; rc != RB_OK && k < 100000; k++) {
            rb_arrays *a = NULL;
            rb_err err;
            rb_alloc_fail_after(k);
            rc = rb_arrays_read(path, &a, &err);
            rb_alloc_fail_after(-1);
            cr_assert(rc == RB_OK || rc == RB_ENOMEM, "%s: allocation %ld: %s", files[f], k, err.msg);
            cr_assert(rc == RB_OK || strncmp(err.msg, path, strlen(path)) == 0, "%s: %s", files[f], err.msg);
            cr_assert((rc == RB_OK) == (a != NULL));
            rb_arrays_free(a);
        }
        cr_assert_eq(rc, RB_OK, "%s", files[f]);
        cr_assert_gt(k, 5, "%s: the read allocates", files[f]);
        rb_free(path);
    }
}

Test(io_arrays, every_write_allocation_failure_is_reported)
{
    const rb_out_format fmts[] = {RB_OUT_H5, RB_OUT_MAT73, RB_OUT_MAT5, RB_OUT_CSV};
    const char *files[] = {"f.h5", "f.mat", "f5.mat", "f.csv"};
    for (size_t f = 0; f < 4; f++) {
        rb_arrays *a = make_set(fmts[f] == RB_OUT_CSV);
        char *dir = test_temp_dir(), *path = rb_asprintf("%s/%s", dir, files[f]);
        rb_write_opts opts = {.format = fmts[f]};
        int rc = RB_ENOMEM;
        long n;
        for (n = 0; rc != RB_OK && n < 10000; n++) {
            rb_err err;
            rb_alloc_fail_after(n);
            rc = rb_arrays_write(a, path, &opts, &err);
            rb_alloc_fail_after(-1);
            if (rc != RB_OK) {
                cr_assert(rc == RB_ENOMEM || rc == RB_EIO, "%s, failure %ld: %s", files[f], n, err.msg);
                cr_assert_eq(test_count_entries(dir), 0, "%s, failure %ld: a file was left", files[f], n);
            }
        }
        cr_assert_eq(rc, RB_OK, "%s never succeeded", files[f]);
        cr_assert_gt(n, 1, "%s: no allocation was failed", files[f]);
        rb_free(path);
        test_remove_tree(dir);
        rb_arrays_free(a);
    }
}
