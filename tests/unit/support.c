#include "support.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
