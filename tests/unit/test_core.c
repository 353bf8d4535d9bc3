#include <criterion/criterion.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roboest/core.h"
#include "support.h"

Test(core, sha256_known_vectors)
{
    /* FIPS 180-4 examples. */
    rb_sha256 ctx;
    char hex[65];
    rb_sha256_init(&ctx);
    rb_sha256_update(&ctx, "abc", 3);
    rb_sha256_final(&ctx, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char *dup = rb_sha256_hexdup("abc", 3);
    cr_assert_str_eq(dup, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    rb_free(dup);

    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    rb_sha256_init(&ctx);
    for (const char *p = two_blocks; *p; p++) /* byte by byte exercises the partial-block path */
        rb_sha256_update(&ctx, p, 1);
    rb_sha256_final(&ctx, hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    rb_sha256_init(&ctx);
    rb_sha256_final(&ctx, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

Test(core, error_messages_are_one_line_and_prefixed)
{
    rb_err err;
    rb_err_clear(&err);
    cr_assert_eq(rb_err_set(&err, RB_ENOTFOUND, "channel %s\nmissing", "q"), RB_ENOTFOUND);
    cr_assert_eq(rb_err_prefix(&err, RB_ENOTFOUND, "%s: ", "log.mat"), RB_ENOTFOUND);
    cr_assert_str_eq(err.msg, "log.mat: channel q missing");
    cr_assert_str_eq(rb_status_name(RB_ENUMERIC), "RB_ENUMERIC");
    cr_assert_eq(rb_err_set(NULL, RB_EIO, "x"), RB_EIO);
    /* the code passed up is the caller's, never *err's: with err == NULL a failure stays a failure */
    cr_assert_eq(rb_err_prefix(NULL, RB_EINPUT, "%s: ", "log.mat"), RB_EINPUT);
    cr_assert_eq(rb_err_prefix(&err, RB_EINPUT, "%s: ", "dir"), RB_EINPUT);
    cr_assert_str_eq(err.msg, "dir: log.mat: channel q missing");
    cr_assert_eq(err.code, RB_ENOTFOUND, "the callee's code in *err is left alone");
}

Test(core, format_double_round_trips)
{
    const double xs[] = {0.1, 1.0 / 3.0, -2.5e-300, 6.02214076e23, 5e-324, 1.7976931348623157e308, 0.0};
    char buf[32];
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        cr_assert_eq(strtod(rb_format_double(xs[i], buf), NULL), xs[i], "%s", buf);
    cr_assert_str_eq(rb_format_double(0.1, buf), "0.1");
    cr_assert_str_eq(rb_format_double(NAN, buf), "nan");
    cr_assert_str_eq(rb_format_double(-INFINITY, buf), "-inf");
}

static const char *format_half(char probe[16])
{
    snprintf(probe, 16, "%.1f", 0.5);
    return probe;
}

/* Under a decimal-comma locale: rb_format_double still writes '.', and the C locale is held exactly
 * between push and pop, nested pushes included. */
Test(core, c_locale_scope_and_format_double_ignore_the_locale)
{
    char dir[] = "/tmp/rb_locale_XXXXXX", probe[16], buf[32];
    cr_assert(test_decimal_comma_locale(LC_ALL, dir), "a decimal-comma locale (localedef, Debian's locales)");
    cr_assert_str_eq(format_half(probe), "0,5", "the locale really uses a decimal comma");
    cr_assert_str_eq(rb_format_double(0.1, buf), "0.1");
    cr_assert_str_eq(rb_format_double(1.0 / 3.0, buf), "0.3333333333333333");
    cr_assert_str_eq(rb_format_double(-2.5e-300, buf), "-2.5e-300");
    cr_assert_str_eq(format_half(probe), "0,5", "rb_format_double restored the locale");

    rb_locale_scope outer, inner;
    rb_err err;
    cr_assert_eq(rb_c_locale_push(&outer, &err), RB_OK);
    cr_assert_str_eq(format_half(probe), "0.5");
    cr_assert_eq(rb_c_locale_push(&inner, &err), RB_OK);
    cr_assert_str_eq(format_half(probe), "0.5");
    rb_c_locale_pop(&inner);
    cr_assert_str_eq(format_half(probe), "0.5", "the outer scope still holds the C locale");
    rb_c_locale_pop(&outer);
    cr_assert_str_eq(format_half(probe), "0,5", "the program's locale is back");
    test_locale_restore(LC_ALL, dir);
}

Test(core, allocation_failure_injection)
{
    rb_alloc_fail_after(1);
    void *a = rb_malloc(8);
    void *b = rb_malloc(8);
    void *c = rb_malloc(8);
    rb_alloc_fail_after(-1);
    cr_assert_not_null(a);
    cr_assert_null(b);
    cr_assert_not_null(c);
    rb_free(a);
    rb_free(c);
    rb_mat m;
    rb_err err;
    cr_assert_eq(rb_mat_alloc(&m, SIZE_MAX / 4, 8, &err), RB_ENOMEM);
    cr_assert_eq(rb_mat_alloc(&m, 3, 4, &err), RB_OK);
    cr_assert_eq(*rb_mat_at(&m, 2, 3), 0.0);
    rb_mat_free(&m);
}

Test(core, outfile_appears_only_on_commit)
{
    char dir[] = "/tmp/rb_core_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *path = rb_asprintf("%s/out.txt", dir);
    rb_outfile out;
    rb_err err;
    cr_assert_eq(rb_outfile_begin(&out, path, false, &err), RB_OK);
    FILE *f = fopen(out.tmp_path, "w");
    fputs("x", f);
    fclose(f);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "nothing at the target before commit");
    cr_assert_eq(rb_outfile_commit(&out, &err), RB_OK);
    cr_assert_eq(stat(path, &st), 0);

    cr_assert_eq(rb_outfile_begin(&out, path, false, &err), RB_EEXISTS);
    cr_assert(strstr(err.msg, "--force"));
    cr_assert_eq(rb_outfile_begin(&out, path, true, &err), RB_OK);
    char *tmp = rb_strdup(out.tmp_path);
    rb_outfile_abort(&out);
    cr_assert_neq(stat(tmp, &st), 0, "abort removes the temporary");
    rb_free(tmp);

    char *missing = rb_asprintf("%s/no/such/dir/out.txt", dir);
    cr_assert_eq(rb_outfile_begin(&out, missing, false, &err), RB_EIO);
    cr_assert(strstr(err.msg, "does not exist"), "%s", err.msg);
    unlink(path);
    rmdir(dir);
    rb_free(path);
    rb_free(missing);
}

Test(core, paths_resolve_against_the_config_folder)
{
    char *p = rb_path_relative_to("configs/demo.json", "../datasets/x.mat");
    cr_assert_str_eq(p, "configs/../datasets/x.mat");
    rb_free(p);
    p = rb_path_relative_to("demo.json", "x.mat");
    cr_assert_str_eq(p, "x.mat");
    rb_free(p);
    p = rb_path_relative_to("configs/demo.json", "/abs/x.mat");
    cr_assert_str_eq(p, "/abs/x.mat");
    rb_free(p);
}

Test(core, rng_is_reproducible_and_well_distributed)
{
    /* Known answers for seed 42, from an independent Python transcription of splitmix64 seeding and
     * xoshiro256**; then: one seed, one sequence; another seed, another. */
    rb_rng a, b, c;
    rb_rng_seed(&a, 42);
    cr_assert_eq(rb_rng_next(&a), 0x15780b2e0c2ec716ull);
    cr_assert_eq(rb_rng_next(&a), 0x6104d9866d113a7eull);
    cr_assert_eq(rb_rng_next(&a), 0xae17533239e499a1ull);
    rb_rng_seed(&a, 42);
    rb_rng_seed(&b, 42);
    rb_rng_seed(&c, 43);
    bool differs = false;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rb_rng_next(&a);
        cr_assert_eq(x, rb_rng_next(&b));
        differs |= x != rb_rng_next(&c);
    }
    cr_assert(differs);
    /* Moments of 200000 normal and uniform draws (standard errors about 0.002-0.003). */
    double sum = 0, sum2 = 0, usum = 0;
    const int N = 200000;
    for (int i = 0; i < N; i++) {
        double z = rb_rng_normal(&a), u = rb_rng_uniform(&a);
        cr_assert(u >= 0 && u < 1);
        sum += z, sum2 += z * z, usum += u;
    }
    cr_assert(fabs(sum / N) < 0.01, "normal mean %g", sum / N);
    cr_assert(fabs(sum2 / N - 1) < 0.02, "normal variance %g", sum2 / N);
    cr_assert(fabs(usum / N - 0.5) < 0.005, "uniform mean %g", usum / N);
}

Test(core, provenance_version_first_then_pairs_in_order)
{
    rb_err err;
    rb_provenance pv;
    cr_assert_eq(rb_provenance_init(&pv, &err), RB_OK);
    cr_assert_eq(rb_provenance_add(&pv, "config", "run.json", &err), RB_OK);
    cr_assert_eq(rb_provenance_add(&pv, "model", NULL, &err), RB_OK); /* absent: left out */
    cr_assert_eq(rb_provenance_addf(&pv, "a.json", &err, "variant %s: pipeline", "ukf"), RB_OK);
    cr_assert_eq(pv.n, 3);
    cr_assert_str_eq(pv.keys[0], "roboest_version");
    cr_assert_str_eq(pv.values[0], RB_VERSION);
    cr_assert_str_eq(pv.keys[1], "config");
    cr_assert_str_eq(pv.keys[2], "variant ukf: pipeline");
    cr_assert_str_eq(pv.values[2], "a.json");
    rb_provenance_free(&pv);
    cr_assert_eq(pv.n, 0);
    cr_assert_null(pv.keys);
    rb_provenance_free(&pv); /* twice is fine */
}

static int record_pair(void *target, const char *key, const char *value, rb_err *err)
{
    char *buf = target;
    if (strcmp(key, "stop") == 0)
        return rb_err_set(err, RB_EIO, "refused %s", key);
    strcat(buf, key);
    strcat(buf, "=");
    strcat(buf, value);
    strcat(buf, ";");
    return RB_OK;
}

Test(core, provenance_each_walks_in_order_and_stops_at_a_failure)
{
    rb_err err;
    rb_provenance pv;
    cr_assert_eq(rb_provenance_init(&pv, &err), RB_OK);
    cr_assert_eq(rb_provenance_add(&pv, "a", "1", &err), RB_OK);
    char buf[256] = "";
    cr_assert_eq(rb_provenance_each(&pv, record_pair, buf, &err), RB_OK);
    cr_assert_str_eq(buf, "roboest_version=" RB_VERSION ";a=1;");
    cr_assert_eq(rb_provenance_add(&pv, "stop", "x", &err), RB_OK);
    cr_assert_eq(rb_provenance_add(&pv, "b", "2", &err), RB_OK);
    buf[0] = '\0';
    cr_assert_eq(rb_provenance_each(&pv, record_pair, buf, &err), RB_EIO);
    cr_assert_str_eq(err.msg, "refused stop");
    cr_assert_str_eq(buf, "roboest_version=" RB_VERSION ";a=1;");
    rb_provenance_free(&pv);
}

Test(core, provenance_allocation_failures_leave_it_freeable)
{
    rb_err err;
    for (long n = 0; n < 16; n++) {
        rb_provenance pv = {0, NULL, NULL};
        rb_alloc_fail_after(n);
        int rc = rb_provenance_init(&pv, &err);
        if (!rc)
            rc = rb_provenance_addf(&pv, "v", &err, "key %d", 7);
        rb_alloc_fail_after(-1);
        cr_assert(rc == RB_OK || rc == RB_ENOMEM);
        cr_assert(rc == RB_OK || strcmp(err.msg, "out of memory") == 0);
        cr_assert_leq(pv.n, 2);
        rb_provenance_free(&pv);
    }
}
