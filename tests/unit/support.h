/* Helpers shared by unit tests. */
#ifndef ROBOEST_TEST_SUPPORT_H
#define ROBOEST_TEST_SUPPORT_H

#include <stdbool.h>

/* Switch the process to a German locale (decimal comma) for `category` (LC_ALL, LC_NUMERIC): the
 * installed one, or one compiled with localedef into the fresh folder made from `dir` (a mkdtemp
 * template, e.g. "/tmp/rb_locale_XXXXXX"). False if neither works. Undo with
 * test_locale_restore(category, dir). */
bool test_decimal_comma_locale(int category, char dir[]);
void test_locale_restore(int category, const char *dir);

#endif
