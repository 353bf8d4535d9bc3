/* Provenance: the pairs every output records, the tool version first (roboest/core.h). */
#include <stdarg.h>
#include <stdio.h>

#include "roboest/core.h"

void rb_provenance_free(rb_provenance *pv)
{
    if (!pv)
        return;
    rb_strings_free(pv->keys, pv->n);
    rb_strings_free(pv->values, pv->n);
    pv->n = 0;
    pv->keys = pv->values = NULL;
}

int rb_provenance_add(rb_provenance *pv, const char *key, const char *value, rb_err *err)
{
    if (!value)
        return RB_OK;
    char **keys = rb_realloc(pv->keys, (pv->n + 1) * sizeof *keys);
    if (keys)
        pv->keys = keys;
    char **values = keys ? rb_realloc(pv->values, (pv->n + 1) * sizeof *values) : NULL;
    if (values)
        pv->values = values;
    char *k = values ? rb_strdup(key) : NULL, *v = k ? rb_strdup(value) : NULL;
    if (!v) {
        rb_free(k);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    pv->keys[pv->n] = k;
    pv->values[pv->n++] = v;
    return RB_OK;
}

int rb_provenance_addf(rb_provenance *pv, const char *value, rb_err *err, const char *key_fmt, ...)
{
    char key[256];
    va_list ap;
    va_start(ap, key_fmt);
    vsnprintf(key, sizeof key, key_fmt, ap);
    va_end(ap);
    return rb_provenance_add(pv, key, value, err);
}

int rb_provenance_init(rb_provenance *pv, rb_err *err)
{
    *pv = (rb_provenance){0, NULL, NULL};
    return rb_provenance_add(pv, "roboest_version", RB_VERSION, err);
}

int rb_provenance_each(const rb_provenance *pv,
                       int (*set)(void *target, const char *key, const char *value, rb_err *err), void *target,
                       rb_err *err)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < pv->n; i++)
        rc = set(target, pv->keys[i], pv->values[i], err);
    return rc;
}
