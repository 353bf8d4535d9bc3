/* One recording session over several files: read, concatenated, identified (rb_log_read_session). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "roboest/io.h"
#include "support.h"

/* A one-channel log of 3 samples from t0 on, written to dir/name. */
static char *write_part(const char *dir, const char *name, double t0, const char *element)
{
    rb_err err;
    rb_log *log = NULL;
    double t[3] = {t0, t0 + 0.1, t0 + 0.2}, x[3] = {t0, 2 * t0, 3 * t0};
    const char *names[1] = {element}, *units[1] = {"rad"};
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "joints/q", 3, 1, t, x, names, units, &err), RB_OK, "%s", err.msg);
    char *path = rb_path_in(dir, name);
    rb_write_opts wo = {RB_OUT_H5, true, NULL};
    cr_assert_eq(rb_log_write(log, path, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    return path;
}

Test(io_session, files_concatenated_in_order_with_names_and_checksums)
{
    char *dir = test_temp_dir();
    char *a = write_part(dir, "part_a.h5", 0.0, "knee"), *b = write_part(dir, "part_b.h5", 1.0, "knee");
    const char *paths[2] = {a, b};
    rb_err err;
    rb_log *log = NULL;
    rb_session_id id = {NULL, NULL};
    cr_assert_eq(rb_log_read_session(paths, 2, &log, &id, &err), RB_OK, "%s", err.msg);
    const rb_channel *q = rb_log_find(log, "joints/q");
    cr_assert_not_null(q);
    cr_assert_eq(q->n_samples, 6);
    cr_assert_float_eq(q->time[3], 1.0, 0);
    cr_assert_float_eq(q->data[5], 3.0, 0);
    cr_assert_str_eq(id.names, "part_a.h5,part_b.h5");
    char ha[65], hb[65], both[140];
    cr_assert_eq(rb_sha256_file(a, ha, &err), RB_OK);
    cr_assert_eq(rb_sha256_file(b, hb, &err), RB_OK);
    snprintf(both, sizeof both, "%s,%s", ha, hb);
    cr_assert_str_eq(id.sha256, both);

    rb_provenance pv = {0, NULL, NULL};
    cr_assert_eq(rb_session_provenance(&id, &pv, &err), RB_OK);
    cr_assert_eq(pv.n, 3);
    cr_assert_str_eq(pv.keys[1], "input");
    cr_assert_str_eq(pv.values[1], "part_a.h5,part_b.h5");
    cr_assert_str_eq(pv.keys[2], "input_sha256");
    cr_assert_str_eq(pv.values[2], both);
    rb_provenance_free(&pv);
    rb_session_id_free(&id);
    rb_log_free(log);

    /* without an id the log alone */
    cr_assert_eq(rb_log_read_session(paths, 1, &log, NULL, &err), RB_OK);
    cr_assert_eq(rb_log_find(log, "joints/q")->n_samples, 3);
    rb_log_free(log);
    rb_free(a);
    rb_free(b);
    test_remove_tree(dir);
}

Test(io_session, a_file_that_does_not_follow_is_named)
{
    char *dir = test_temp_dir();
    char *a = write_part(dir, "a.h5", 0.0, "knee"), *b = write_part(dir, "b.h5", 1.0, "hip");
    const char *paths[2] = {a, b};
    rb_err err;
    rb_log *log = (rb_log *)&err; /* untouched on failure */
    rb_session_id id = {NULL, NULL};
    int rc = rb_log_read_session(paths, 2, &log, &id, &err);
    cr_assert_eq(rc, RB_EINPUT);
    char want[512];
    snprintf(want, sizeof want, "%s: appending %s: channel joints/q: element 0 is knee, in the next file hip", a, b);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(log, (rb_log *)&err);
    cr_assert_null(id.names);

    /* nor when a file is missing, or when none is given */
    char *missing = rb_path_in(dir, "missing.h5");
    const char *gone[2] = {a, missing};
    cr_assert_eq(rb_log_read_session(gone, 2, &log, NULL, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "missing.h5"), "%s", err.msg);
    cr_assert_eq(rb_log_read_session(gone, 0, &log, NULL, &err), RB_EINVAL);
    rb_free(missing);
    rb_free(a);
    rb_free(b);
    test_remove_tree(dir);
}
