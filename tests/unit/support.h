/* Helpers shared by unit tests. */
#ifndef ROBOEST_TEST_SUPPORT_H
#define ROBOEST_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

/* Switch the process to a German locale (decimal comma) for `category` (LC_ALL, LC_NUMERIC): the
 * installed one, or one compiled with localedef into the fresh folder made from `dir` (a mkdtemp
 * template, e.g. "/tmp/rb_locale_XXXXXX"). False if neither works. Undo with
 * test_locale_restore(category, dir). */
bool test_decimal_comma_locale(int category, char dir[]);
void test_locale_restore(int category, const char *dir);

/* A fresh folder under /tmp (free with test_remove_tree, which also deletes what it holds). */
char *test_temp_dir(void);
/* Entries of a folder (hidden temporaries included), "." and ".." excluded; -1 if it cannot be opened. */
int test_count_entries(const char *dir);
/* Delete a folder made by test_temp_dir and its files, and free the path. */
void test_remove_tree(char *dir);
/* A whole file, NUL-terminated (free with free()); *len its size. */
char *test_slurp(const char *path, size_t *len);

/* Third-party files (URDFs, the public estimator's rde_configs) are read in place from ../shared beside the
 * repository (RB_SHARED), which a clone does not have. The full path of RB_SHARED/<rel> (e.g.
 * "models/ergoCubSN000.urdf"; valid for the rest of the test's process) if it exists; otherwise the current test
 * ends as skipped (cr_skip_test, not passed) with the reason "needs ../shared/<rel> (...)". Call it first in a test
 * (or its .init), before anything that reads the file. Every skipped test is listed in the log as
 * "[SKIP] suite::test: reason" (a report hook in support.c) and counted by scripts/check-test-log.sh. */
const char *test_need_shared(const char *rel);

/* The current test's worker ends by SIGALRM (a crash in Criterion's report) if it runs longer than `seconds`:
 * a guard against a hang (a FIFO opened for reading waits forever). Instead of Criterion's .timeout, whose
 * entries its runner 2.4 leaks when tests run in parallel (LeakSanitizer reports them in make test-asan).
 * Call it first in a test or its suite's .init. */
void test_deadline(unsigned seconds);

#endif
