/* Per-thread C locale for data text (core.h). locale_t is a pointer in every libc we build on
 * (glibc, musl, the BSDs), so it is kept in the header's void * fields. */
#include "roboest/core.h"

#include <locale.h>

int rb_c_locale_push(rb_locale_scope *scope, rb_err *err)
{
    scope->previous = NULL;
    /* glibc hands out its static C locale here: no allocation, cheap enough to push per number. */
    locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    scope->c_locale = (void *)c_locale;
    if (c_locale == (locale_t)0)
        return rb_err_set(err, RB_ENOMEM, "out of memory (C locale)");
    scope->previous = (void *)uselocale(c_locale);
    return RB_OK;
}

void rb_c_locale_pop(rb_locale_scope *scope)
{
    if (!scope->c_locale)
        return;
    uselocale((locale_t)scope->previous);
    freelocale((locale_t)scope->c_locale);
    scope->c_locale = scope->previous = NULL;
}
