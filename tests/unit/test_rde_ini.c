/* YARP-style .ini reader: the syntax the public estimator's files use, includes, typed reads, and every
 * error with its file:line message. */
#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roboest/rde.h"
#include "support.h"

#define RDE_CONFIGS RB_SHARED "/models/rde_configs"

static rb_ini *parse(const char *text)
{
    rb_ini *ini = NULL;
    rb_err err;
    int rc = rb_ini_load_text(text, strlen(text), "t.ini", &ini, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return ini;
}

static void expect_error(const char *text, const char *message)
{
    rb_ini *ini = (rb_ini *)1;
    rb_err err;
    int rc = rb_ini_load_text(text, strlen(text), "t.ini", &ini, &err);
    cr_assert_eq(rc, RB_ECONFIG, "rc %d (%s) for:\n%s", rc, err.msg, text);
    cr_assert_null(ini);
    cr_assert_str_eq(err.msg, message);
}

static void expect_strings(const rb_ini_group *g, const char *key, const char *const *want, size_t n)
{
    const char *const *got;
    size_t m = 99;
    rb_err err;
    cr_assert_eq(rb_ini_get_strings(g, key, true, &got, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m, n, "%s: %zu values", key, m);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(got[i], want[i], "%s[%zu]", key, i);
}

Test(rde_ini, syntax_of_the_public_files)
{
    rb_ini *ini = parse("; a comment\n"
                        "# another\n"
                        "   ; indented comment\n"
                        "robot \"ergoCub\"   # trailing comment\n"
                        "dt 0.01\r\n"
                        "flag true\n"
                        "\n"
                        "[FT]\n"
                        "names (\"a\", \"b\")\n"
                        ";names (\"x\")\n"
                        "  covariance (1e-3, 2E+1,\n"
                        "      -0.5 ; a comment inside a list\n"
                        "      .25 3.)\n"
                        "empty ()\n"
                        "bare (x y, z)\n"
                        "quoted \"semi;colon # hash\"\n"
                        "escaped \"say \\\"hi\\\" \\\\ \\n\"\n"
                        "[ OTHER ]\n"
                        "k 1\n");
    const rb_ini_group *root = &ini->root;
    const char *s = NULL;
    double x = 0;
    bool b = false;
    rb_err err;
    cr_assert_eq(rb_ini_get_string(root, "robot", true, &s, &err), RB_OK);
    cr_assert_str_eq(s, "ergoCub");
    cr_assert_eq(rb_ini_get_number(root, "dt", true, &x, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(x, 0.01);
    cr_assert_eq(rb_ini_get_bool(root, "flag", true, &b, &err), RB_OK);
    cr_assert(b);
    cr_assert_eq(root->n_groups, 2);
    const rb_ini_group *ft = rb_ini_group_find(root, "FT");
    cr_assert_not_null(ft);
    cr_assert_eq(ft->line, 8);
    expect_strings(ft, "names", (const char *const[]){"a", "b"}, 2);
    double cov[5];
    cr_assert_eq(rb_ini_get_numbers(ft, "covariance", true, cov, 5, &err), RB_OK, "%s", err.msg);
    const double want[5] = {1e-3, 2e1, -0.5, 0.25, 3.0};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(cov[i], want[i], "covariance[%d] = %g", i, cov[i]);
    cr_assert_eq(rb_ini_entry_find(ft, "covariance")->line, 11);
    expect_strings(ft, "empty", NULL, 0);
    expect_strings(ft, "bare", (const char *const[]){"x", "y", "z"}, 3);
    cr_assert_eq(rb_ini_get_string(ft, "quoted", true, &s, &err), RB_OK);
    cr_assert_str_eq(s, "semi;colon # hash");
    cr_assert_eq(rb_ini_get_string(ft, "escaped", true, &s, &err), RB_OK);
    cr_assert_str_eq(s, "say \"hi\" \\ \\n", "only \\\" and \\\\ are escapes");
    cr_assert_not_null(rb_ini_group_find(root, "OTHER"));
    cr_assert_null(rb_ini_group_find(root, "other"), "names are case-sensitive");
    cr_assert_null(rb_ini_entry_find(ft, "k"));
    rb_ini_free(ini);
}

Test(rde_ini, syntax_errors_name_file_and_line)
{
    expect_error("a 1\nlist (1, 2,\n 3\n",
                 "t.ini:2: unterminated list for key 'list' (no ')' before the end of the file)");
    expect_error("list (\"a\", \"b\"\n\n[NEXT]\nk 1\n",
                 "t.ini:1: unterminated list for key 'list' (found '[' on line 3)");
    expect_error("s \"abc\nt 1\n", "t.ini:1: unterminated string (no closing '\"' on the line)");
    expect_error("a 1\na 2\n", "t.ini:2: duplicate key 'a' (first on line 1)");
    expect_error("[G]\n[G]\n", "t.ini:2: duplicate group [G] (first on line 1)");
    expect_error("a 1 2\n", "t.ini:1: key 'a': more than one value (write a list in parentheses)");
    expect_error("a (1) x\n", "t.ini:1: key 'a': more than one value (write a list in parentheses)");
    expect_error("a (1,, 2)\n", "t.ini:1: key 'a': empty list element before ','");
    expect_error("a (, 2)\n", "t.ini:1: key 'a': empty list element before ','");
    expect_error("a (1, 2,)\n", "t.ini:1: key 'a': empty list element before ')'");
    expect_error("a ((1))\n", "t.ini:1: key 'a': nested lists are not supported");
    expect_error("a (\"x\"\"y\")\n", "t.ini:1: key 'a': expected ',' or ')' between list elements, found '\"'");
    expect_error("\n  a   ; nothing\n", "t.ini:2: key 'a' has no value");
    expect_error("a )\n", "t.ini:1: key 'a': unexpected ')'");
    expect_error("(1, 2)\n", "t.ini:1: expected a key, found '('");
    expect_error("1abc 2\n", "t.ini:1: '1abc' is not a key (letters, digits, '_', '.', '-')");
    expect_error("[G\n", "t.ini:1: expected ']' after the group name, found the end of the line");
    expect_error("[G] x\n", "t.ini:1: unexpected 'x' after ']'");
    expect_error("[include G]\n", "t.ini:1: expected [include GROUP \"file.ini\"]");
    expect_error("[include \"f.ini\"]\n", "t.ini:1: expected [include GROUP \"file.ini\"]");
    expect_error("[9G]\n", "t.ini:1: '9G' is not a group name (letters, digits, '_', '.', '-')");
    rb_ini *ini = (rb_ini *)1;
    rb_err err;
    cr_assert_eq(rb_ini_load_text("a 1\nb\0 2\n", 9, "t.ini", &ini, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:2: NUL byte");
    cr_assert_null(ini);
}

Test(rde_ini, typed_reads_are_strict)
{
    rb_ini *ini = parse("[G]\n"
                        "n1 1e\nn2 0x10\nn3 nan\nn4 inf\nn5 \"1\"\nn6 1e999\nn7 -.5e-3\n"
                        "b1 yes\nb2 0\nb3 false\n"
                        "list (1, two, 3)\nscalar x\n");
    const rb_ini_group *g = rb_ini_group_find(&ini->root, "G");
    rb_err err;
    double x = 42, v[3];
    const char *bad[] = {"n1", "n2", "n3", "n4", "n6"};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(rb_ini_get_number(g, bad[i], true, &x, &err), RB_ECONFIG, "%s", bad[i]);
        cr_assert_eq(x, 42, "%s: output untouched", bad[i]);
    }
    cr_assert_str_eq(err.msg, "t.ini:7: key 'n6': expected a number, got '1e999'");
    cr_assert_eq(rb_ini_get_number(g, "n5", true, &x, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:6: key 'n5': expected a number, got \"1\"");
    cr_assert_eq(rb_ini_get_number(g, "n7", true, &x, &err), RB_OK);
    cr_assert_eq(x, -0.5e-3);
    bool b = true;
    cr_assert_eq(rb_ini_get_bool(g, "b1", true, &b, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:9: key 'b1': expected 0, 1, true or false, got 'yes'");
    cr_assert_eq(rb_ini_get_bool(g, "b2", true, &b, &err), RB_OK);
    cr_assert(!b);
    b = true;
    cr_assert_eq(rb_ini_get_bool(g, "b3", true, &b, &err), RB_OK);
    cr_assert(!b);
    cr_assert_eq(rb_ini_get_numbers(g, "list", true, v, 2, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:12: key 'list': expected a list of 2 numbers, got a list of 3");
    cr_assert_eq(rb_ini_get_numbers(g, "list", true, v, 3, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:12: key 'list': element 2: expected a number, got 'two'");
    const char *const *names;
    size_t n;
    cr_assert_eq(rb_ini_get_strings(g, "scalar", true, &names, &n, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:13: key 'scalar': expected a list in parentheses, got 'x'");
    const char *s;
    cr_assert_eq(rb_ini_get_string(g, "list", true, &s, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:12: key 'list': expected a string, got a list of 3");
    /* missing keys: an error only when required */
    cr_assert_eq(rb_ini_get_number(g, "absent", true, &x, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:1: [G]: missing key 'absent'");
    x = 7;
    cr_assert_eq(rb_ini_get_number(g, "absent", false, &x, &err), RB_OK);
    cr_assert_eq(x, 7);
    cr_assert_eq(rb_ini_get_string(&ini->root, "absent", true, &s, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "t.ini:1: missing key 'absent'");
    rb_ini_free(ini);
}

Test(rde_ini, numbers_ignore_the_locale)
{
    char dir[] = "/tmp/rb_locale_XXXXXX";
    if (!test_decimal_comma_locale(LC_ALL, dir))
        cr_skip_test("no decimal-comma locale available");
    double x = 0;
    bool ok = rb_ini_parse_number("2.5e-1", &x);
    bool comma = rb_ini_parse_number("2,5", &x) || x != 0.25;
    test_locale_restore(LC_ALL, dir);
    cr_assert(ok);
    cr_assert(!comma, "'2,5' is no number and 2.5e-1 read as 0.25 under a decimal-comma locale");
}

/* ---- includes ---------------------------------------------------------------------------------------- */
static char *write_in(const char *dir, const char *name, const char *text)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = malloc(len);
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

Test(rde_ini, includes_nest_the_file_under_its_group)
{
    char *dir = test_temp_dir();
    char sub[512];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    free(write_in(dir, "sub/state.ini", "dynamics_list (\"A\")\n[A]\nname \"ds\"\n"));
    free(write_in(dir, "ukf.ini", "alpha 1\n[include UKF_STATE sub/state.ini]\n[AFTER]\nx 2\n"));
    char *top = write_in(dir, "config.ini", "[GENERAL]\nt 0.01\n[include UKF \"ukf.ini\"]\n");
    rb_ini *ini = NULL;
    rb_err err;
    cr_assert_eq(rb_ini_load(top, &ini, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(ini->n_files, 3);
    const rb_ini_group *ukf = rb_ini_group_find(&ini->root, "UKF");
    cr_assert_not_null(ukf);
    cr_assert_not_null(rb_ini_entry_find(ukf, "alpha"), "the included file's top keys belong to UKF");
    cr_assert_str_eq(rb_path_basename(ukf->file), "ukf.ini");
    cr_assert_eq(ukf->line, 0);
    const rb_ini_group *state = rb_ini_group_find(ukf, "UKF_STATE");
    cr_assert_not_null(state);
    const rb_ini_group *a = rb_ini_group_find(state, "A");
    cr_assert_not_null(a, "a [SECTION] of the included file is a sub-group");
    cr_assert_str_eq(rb_ini_entry_find(a, "name")->values[0], "ds");
    cr_assert_eq(rb_ini_entry_find(a, "name")->line, 3);
    cr_assert_not_null(rb_ini_group_find(ukf, "AFTER"), "sections after an include are siblings of it");
    char where[512];
    rb_ini_group_where(state, where, sizeof where);
    cr_assert(strstr(where, "sub/state.ini:1: group UKF_STATE"), "%s", where);
    rb_ini_group_where(a, where, sizeof where);
    cr_assert(strstr(where, "sub/state.ini:2: [A]"), "%s", where);
    const char *s;
    cr_assert_eq(rb_ini_get_string(a, "dynamic_model", true, &s, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "sub/state.ini:2: [A]: missing key 'dynamic_model'"), "%s", err.msg);
    rb_ini_free(ini);
    free(top);
    test_remove_tree(dir);
}

Test(rde_ini, include_errors)
{
    char *dir = test_temp_dir();
    char *top = write_in(dir, "a.ini", "x 1\n[include G \"missing/b.ini\"]\n");
    rb_ini *ini = (rb_ini *)1;
    rb_err err;
    char want[1024];
    cr_assert_eq(rb_ini_load(top, &ini, &err), RB_ECONFIG);
    snprintf(want, sizeof want, "%s:2: include file 'missing/b.ini' not found (%s/missing/b.ini)", top, dir);
    cr_assert_str_eq(err.msg, want);
    cr_assert_null(ini);
    free(top);

    top = write_in(dir, "c.ini", "[include G \"d.ini\"]\nkey 1\n");
    free(write_in(dir, "d.ini", "k 1\n"));
    cr_assert_eq(rb_ini_load(top, &ini, &err), RB_ECONFIG);
    snprintf(want, sizeof want, "%s:2: a key after an [include ...] line: start a [GROUP] first", top);
    cr_assert_str_eq(err.msg, want);
    free(top);

    top = write_in(dir, "e.ini", "[include G \"f.ini\"]\n");
    char *f = write_in(dir, "f.ini", "k 1\n[include H \"./e.ini\"]\n");
    cr_assert_eq(rb_ini_load(top, &ini, &err), RB_ECONFIG);
    snprintf(want, sizeof want, "%s:2: include cycle: %s/./e.ini includes itself", f, dir);
    cr_assert_str_eq(err.msg, want);
    free(f);
    free(top);

    /* a chain of 10 files: the 9th include is one too many */
    for (int i = 0; i < 10; i++) {
        char name[32], text[64];
        snprintf(name, sizeof name, "n%d.ini", i);
        snprintf(text, sizeof text, "k 1\n[include G \"n%d.ini\"]\n", i + 1);
        free(write_in(dir, name, text));
    }
    free(write_in(dir, "n10.ini", "k 1\n"));
    char path[600];
    snprintf(path, sizeof path, "%s/n0.ini", dir);
    cr_assert_eq(rb_ini_load(path, &ini, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "n8.ini:2: include 'n9.ini': includes nested deeper than 8 files"), "%s", err.msg);

    snprintf(path, sizeof path, "%s/absent.ini", dir);
    cr_assert_eq(rb_ini_load(path, &ini, &err), RB_ENOTFOUND);
    cr_assert_null(ini);
    test_remove_tree(dir);
}

/* The shipped configurations read as the public estimator reads them (values as written in the files). */
Test(rde_ini, shipped_configurations)
{
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg");
    test_need_shared("models/rde_configs/four_joints_two_sensors");
    rb_ini *ini = NULL;
    rb_err err;
    cr_assert_eq(rb_ini_load(RDE_CONFIGS "/ergoCubSN000_r_leg/config.ini", &ini, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(ini->n_files, 5);
    const rb_ini_group *model = rb_ini_group_find(&ini->root, "MODEL");
    expect_strings(
        model, "joint_list",
        (const char *const[]){"r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"}, 6);
    /* the commented-out alternatives are not taken */
    expect_strings(rb_ini_group_find(model, "EXTERNAL_CONTACT"), "frames",
                   (const char *const[]){"r_foot_front", "r_foot_rear"}, 2);
    expect_strings(rb_ini_group_find(model, "ACCELEROMETER"), "names",
                   (const char *const[]){"r_leg_ft_acc", "r_foot_front_ft_acc", "r_foot_rear_ft_acc"}, 3);
    const rb_ini_group *ukf = rb_ini_group_find(&ini->root, "UKF");
    const rb_ini_group *meas = rb_ini_group_find(ukf, "UKF_MEASUREMENT");
    const char *const *list;
    size_t n;
    cr_assert_eq(rb_ini_get_strings(meas, "dynamics_list", true, &list, &n, &err), RB_OK);
    cr_assert_eq(n, 10, "the list spans four lines");
    cr_assert_str_eq(list[9], "RIGHT_FOOT_REAR_GYRO");
    double gear[6];
    cr_assert_eq(rb_ini_get_numbers(rb_ini_group_find(meas, "MOTOR_CURRENT"), "gear_ratio", true, gear, 6, &err),
                 RB_OK);
    cr_assert_eq(gear[1], -160.0);
    const rb_ini_group *state = rb_ini_group_find(ukf, "UKF_STATE");
    cr_assert_eq(rb_ini_get_strings(state, "dynamics_list", true, &list, &n, &err), RB_OK);
    cr_assert_eq(n, 7, "the active list, not the commented ones above it");
    double k0[6];
    cr_assert_eq(rb_ini_get_numbers(rb_ini_group_find(state, "FRICTION_TORQUE"), "friction_k0", true, k0, 6, &err),
                 RB_OK);
    cr_assert_eq(k0[0], 4.9);
    cr_assert_eq(k0[5], 1.3);
    rb_ini_free(ini);

    cr_assert_eq(rb_ini_load(RDE_CONFIGS "/four_joints_two_sensors/config.ini", &ini, &err), RB_OK, "%s", err.msg);
    model = rb_ini_group_find(&ini->root, "MODEL");
    expect_strings(rb_ini_group_find(model, "ACCELEROMETER"), "names", NULL, 0);
    state = rb_ini_group_find(rb_ini_group_find(&ini->root, "UKF"), "UKF_STATE");
    cr_assert_eq(state->n_groups, 15, "every [SECTION], listed or not");
    cr_assert_eq(rb_ini_get_strings(state, "dynamics_list", true, &list, &n, &err), RB_OK);
    cr_assert_eq(n, 8);
    rb_ini_free(ini);
}

Test(rde_ini, out_of_memory_at_every_allocation)
{
    const char *text = "a 1\n[G]\nlist (\"x\", y, 3)\ns \"q\"\n[H]\nk 2\n";
    for (long fail = 0;; fail++) {
        rb_ini *ini = (rb_ini *)1;
        rb_err err;
        rb_alloc_fail_after(fail);
        int rc = rb_ini_load_text(text, strlen(text), "t.ini", &ini, &err);
        long made = rb_alloc_fail_after(-1);
        if (rc == RB_OK) {
            cr_assert_leq(made, fail, "allocation %ld failed without an error", fail);
            cr_assert_eq(ini->root.n_groups, 2);
            rb_ini_free(ini);
            break;
        }
        cr_assert_eq(rc, RB_ENOMEM, "allocation %ld: %s", fail, err.msg);
        cr_assert_null(ini);
    }
}

/* Seeded mutations of a real file (bytes changed, deleted, or the syntax characters inserted): never a crash
 * (the ASan build runs this too), always RB_OK or one line "t.ini:<line>: ..." naming a line of the text. */
Test(rde_ini, mutated_files_fail_cleanly)
{
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg");
    size_t len = 0;
    char *orig = test_slurp(RDE_CONFIGS "/ergoCubSN000_r_leg/ukf/ukf_measurement.ini", &len);
    cr_assert_not_null(orig);
    static const char syntax[] = "()[],\";#\n\\ \r\t\0a1";
    rb_rng rng;
    rb_rng_seed(&rng, 20240711);
    char *buf = malloc(len + 8);
    size_t n_errors = 0;
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(buf, orig, len);
        size_t n = len;
        for (int k = 0; k < 1 + trial % 4; k++) {
            size_t at = (size_t)(rb_rng_uniform(&rng) * (double)n);
            char c = syntax[(size_t)(rb_rng_uniform(&rng) * (sizeof syntax - 1))];
            double u = rb_rng_uniform(&rng);
            if (u < 0.4) {
                buf[at] = c;
            } else if (u < 0.7 && n > 1) {
                memmove(buf + at, buf + at + 1, n - at - 1);
                n--;
            } else if (n < len + 4) {
                memmove(buf + at + 1, buf + at, n - at);
                buf[at] = c;
                n++;
            }
        }
        size_t lines = 1;
        for (size_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
        rb_ini *ini = NULL;
        rb_err err;
        int rc = rb_ini_load_text(buf, n, "t.ini", &ini, &err);
        if (rc == RB_OK) {
            rb_ini_free(ini);
            continue;
        }
        n_errors++;
        cr_assert_eq(rc, RB_ECONFIG, "trial %d: %s", trial, err.msg);
        cr_assert_null(ini);
        size_t line = 0;
        cr_assert_eq(sscanf(err.msg, "t.ini:%zu: ", &line), 1, "trial %d: %s", trial, err.msg);
        cr_assert(line >= 1 && line <= lines, "trial %d: line %zu of %zu: %s", trial, line, lines, err.msg);
        cr_assert_null(strchr(err.msg, '\n'));
    }
    cr_assert_gt(n_errors, 1000, "the mutations break the syntax often (%zu of 3000)", n_errors);
    free(buf);
    free(orig);
}
