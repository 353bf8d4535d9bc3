/* A suite's (variant, log) run as bytes: a round trip keeps every bit, and a file that is not that run's whole,
 * unaltered result (corrupt, truncated, another file, another version, another run) is refused with one line
 * naming the file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/experiments.h"
#include "support.h"

typedef struct fx {
    char *dir;
    rb_registry *reg;
    rb_suite *suite;
    rb_suite_pair *pair; /* variant 1 (a low-pass) on log a, with its trace */
} fx;

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static fx make(void)
{
    fx x = {test_temp_dir(), NULL, NULL, NULL};
    char path[512];
    snprintf(path, sizeof path, "%s/a.csv", x.dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "time,sensors/tau:j1,sensors/tau:j2,truth/tau:j1 [N m],truth/tau:j2 [N m]\n");
    for (int k = 0; k <= 300; k++) { /* irrational values: every bit of the doubles matters */
        double t = 1.0 + 0.01 * k;
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", t, sin(t) + 0.1 / 3, cos(t) + M_PI / 7, sin(t), cos(t));
    }
    fclose(f);
    put(x.dir, "raw.json",
        "{\"clock\": {\"rate\": 100}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    put(x.dir, "lp.json",
        "{\"clock\": {\"rate\": 100}, \"signals\": {\"m\": {\"channel\": \"sensors/tau\"}},\n"
        " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"m\"}, \"out\": {\"y\": \"tau_lp\"},\n"
        "              \"params\": {\"cutoff_hz\": 2}}]}\n");
    put(x.dir, "suite.json",
        "{\"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
        "              {\"name\": \"lp\", \"pipeline\": \"lp.json\", \"estimate\": \"tau_lp\"}],\n"
        " \"logs\": [\"a.csv\"], \"reference\": \"truth/tau\",\n"
        " \"figures\": {\"traces\": [{\"joint\": \"j2\", \"log\": \"a\"}]}}\n");
    rb_err err;
    cr_assert_eq(rb_registry_new(&x.reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(x.reg, &err), RB_OK);
    snprintf(path, sizeof path, "%s/suite.json", x.dir);
    cr_assert_eq(rb_suite_load(path, x.reg, &x.suite, &err), RB_OK, "%s", err.msg);
    rb_suite_runner *rn = NULL;
    cr_assert_eq(rb_suite_runner_new(x.suite, NULL, &rn, &err), RB_OK, "%s", err.msg);
    size_t item = 1;
    cr_assert_eq(rb_suite_runner_run(rn, &item, 1, &x.pair, &err), RB_OK, "%s", err.msg);
    rb_suite_runner_free(rn);
    return x;
}

static void drop(fx *x)
{
    rb_suite_pair_free(x->pair);
    rb_suite_free(x->suite);
    rb_registry_free(x->reg);
    test_remove_tree(x->dir);
}

static void encode(const rb_suite_pair *p, unsigned char **b, size_t *n)
{
    rb_err err;
    cr_assert_eq(rb_suite_pair_encode(p, b, n, &err), RB_OK, "%s", err.msg);
}

Test(suite_store, round_trip_keeps_every_bit_and_the_key)
{
    fx x = make();
    unsigned char *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    encode(x.pair, &b1, &n1);
    rb_suite_pair *back = NULL;
    rb_err err;
    cr_assert_eq(rb_suite_pair_decode(b1, n1, "mem", &back, &err), RB_OK, "%s", err.msg);
    encode(back, &b2, &n2);
    cr_expect_eq(n1, n2);
    cr_expect(n1 == n2 && memcmp(b1, b2, n1) == 0, "decoded then encoded again: the same bytes");
    cr_expect_str_eq(rb_suite_pair_key_of(back), rb_suite_pair_key_of(x.pair));
    cr_expect_eq(strlen(rb_suite_pair_key_of(back)), 64);

    /* the key is rb_suite_keys' for (variant 1, log 0) and differs from variant 0's */
    char keys[2][65];
    cr_assert_eq(rb_suite_keys(x.suite, keys, &err), RB_OK, "%s", err.msg);
    cr_expect_str_eq(keys[1], rb_suite_pair_key_of(x.pair));
    cr_expect_str_neq(keys[0], keys[1]);

    free(b1), free(b2);
    rb_suite_pair_free(back);
    drop(&x);
}

/* The store refuses bytes: the message is one line that names the file and says why. */
static void expect_refused(const fx *x, const unsigned char *b, size_t n, const char *why)
{
    char path[512];
    const char *key = rb_suite_pair_key_of(x->pair);
    snprintf(path, sizeof path, "%s/%s.rbres", x->dir, key);
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
    rb_suite_pair *got = NULL;
    rb_err err;
    int rc = rb_suite_store_load(x->dir, key, &got, &err);
    cr_expect_eq(rc, RB_EINPUT, "%s: %s", why, err.msg);
    cr_expect_null(got);
    cr_expect(strstr(err.msg, path) != NULL, "names the file: %s", err.msg);
    cr_expect(strstr(err.msg, why) != NULL, "says '%s': %s", why, err.msg);
    cr_expect_null(strchr(err.msg, '\n'), "one line: %s", err.msg);
}

Test(suite_store, corrupt_truncated_foreign_and_other_versions_are_refused)
{
    fx x = make();
    unsigned char *b = NULL;
    size_t n = 0;
    encode(x.pair, &b, &n);
    rb_err err;
    cr_assert_eq(rb_suite_store_save(x.dir, x.pair, &err), RB_OK, "%s", err.msg);
    rb_suite_pair *got = NULL;
    cr_assert_eq(rb_suite_store_load(x.dir, rb_suite_pair_key_of(x.pair), &got, &err), RB_OK, "%s", err.msg);
    rb_suite_pair_free(got);

    unsigned char *c = malloc(n);
    memcpy(c, b, n);
    c[n / 2] ^= 0x10; /* one bit of a double */
    expect_refused(&x, c, n, "checksum mismatch");
    expect_refused(&x, b, n - 9, "checksum mismatch"); /* truncated */
    expect_refused(&x, b, 10, "truncated");
    expect_refused(&x, (const unsigned char *)"time,a\n1,2\n", 11, "not a roboest suite run result");
    memcpy(c, b, n);
    c[8] = 2; /* version 2 */
    expect_refused(&x, c, n, "format version 2");
    /* another run's whole, valid result under this run's name */
    memcpy(c, b, n);
    rb_suite_pair *other = NULL;
    cr_assert_eq(rb_suite_pair_decode(b, n, "mem", &other, &err), RB_OK);
    free(c);
    char keys[2][65];
    cr_assert_eq(rb_suite_keys(x.suite, keys, &err), RB_OK);
    char path[512], dst[512];
    snprintf(path, sizeof path, "%s/%s.rbres", x.dir, keys[1]);
    snprintf(dst, sizeof dst, "%s/%s.rbres", x.dir, keys[0]);
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
    cr_assert_eq(rename(path, dst), 0);
    cr_expect_eq(rb_suite_store_load(x.dir, keys[0], &got, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, dst) && strstr(err.msg, "the result of another run"), "%s", err.msg);
    cr_expect_eq(rb_suite_store_load(x.dir, "0123", &got, &err), RB_ENOTFOUND, "%s", err.msg);
    rb_suite_pair_free(other);
    free(b);
    drop(&x);
}
