/* The import's notes (what was read but not mapped) and its errors at an .ini line, for every file of lib/rde. */
#include <stdarg.h>
#include <stdio.h>

#include "rde_internal.h"

int rde_note(rde *r, const char *fmt, ...)
{
    char line[RB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char **grown = rb_realloc(r->notes, (r->n_notes + 1) * sizeof *grown);
    if (grown)
        r->notes = grown;
    char *copy = grown ? rb_strdup(line) : NULL;
    if (!copy)
        return rb_err_set(r->err, RB_ENOMEM, "out of memory");
    r->notes[r->n_notes++] = copy;
    return RB_OK;
}

int rde_fail_at(rde *r, int code, const rb_ini_entry *e, const char *fmt, ...)
{
    char what[RB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rb_err_set(r->err, code, "%s:%zu: %s", e->file, e->line, what);
}
