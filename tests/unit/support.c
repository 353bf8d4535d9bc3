#include "support.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/options.h>
#include <dirent.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roboest/core.h"

bool test_decimal_comma_locale(int category, char dir[])
{
    if (setlocale(category, "de_DE.UTF-8"))
        return true;
    const char *made = mkdtemp(dir);
    if (!made)
        return false;
    char cmd[4200];
    /* Its exit status is not trusted: under valgrind --trace-children it reports localedef's own
     * leaks. Whether the locale loads is what counts. */
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", made);
    (void)!system(cmd);
    setenv("LOCPATH", made, 1);
    return setlocale(category, "de_DE.UTF-8") != NULL;
}

void test_locale_restore(int category, const char *dir)
{
    setlocale(category, "C");
    if (strchr(dir, 'X'))
        return; /* the template was never used */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
}

char *test_temp_dir(void)
{
    char *dir = rb_strdup("/tmp/rb_test_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

int test_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

void test_remove_tree(char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = rb_asprintf("%s/%s", dir, e->d_name);
        unlink(p);
        rb_free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    rb_free(dir);
}

char *test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

const char *test_need_shared(const char *rel)
{
    static char *held[32]; /* the paths handed out, one per file (reachable, so never reported as leaks) */
    static size_t n_held;
    char *path = rb_asprintf("%s/%s", RB_SHARED, rel);
    if (access(path, R_OK) != 0) {
        rb_free(path);
        cr_skip_test("needs ../shared/%s (third-party models, not in this clone)", rel);
    }
    for (size_t i = 0; i < n_held; i++)
        if (strcmp(held[i], path) == 0) {
            rb_free(path);
            return held[i];
        }
    cr_assert_lt(n_held, sizeof held / sizeof held[0], "test_need_shared: more than 32 files in one test");
    held[n_held++] = path;
    return path;
}

/* Criterion 2.4 prints a skipped test only with --verbose, and its synthesis line leaves skipped tests out:
 * the runner lists each one here instead, in the format of Criterion's verbose line (which it then prints itself). */
ReportHook(POST_TEST)(struct criterion_test_stats *stats)
{
    if (stats->test_status != CR_STATUS_SKIPPED || criterion_options.logging_threshold <= CRITERION_INFO)
        return;
    fprintf(stderr, "[SKIP] %s::%s: %s\n", stats->test->category, stats->test->name,
            stats->message ? stats->message : "skipped");
}

void test_deadline(unsigned seconds) { alarm(seconds); }
