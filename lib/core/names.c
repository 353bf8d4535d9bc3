/* Names: sorted name lists (the first repeated name) and closest-name suggestions. */
#include <string.h>

#include "roboest/core.h"

int rb_name_ref_cmp(const void *a, const void *b)
{
    const rb_name_ref *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->index > y->index) - (x->index < y->index);
}

void rb_name_refs_first_repeat(const rb_name_ref *refs, size_t n, size_t *dup, size_t *first)
{
    *dup = *first = SIZE_MAX;
    for (size_t i = 1; i < n; i++) {
        /* within a group of equal names positions ascend: the second one is the group's first repeat */
        bool second_of_group =
            strcmp(refs[i].name, refs[i - 1].name) == 0 && (i < 2 || strcmp(refs[i - 1].name, refs[i - 2].name) != 0);
        if (second_of_group && refs[i].index < *dup) {
            *dup = refs[i].index;
            *first = refs[i - 1].index;
        }
    }
}

size_t rb_edit_distance(const char *a, const char *b)
{
    enum { MAXLEN = 63, W = MAXLEN + 1 };
    size_t la = strlen(a), lb = strlen(b);
    if (la == lb && memcmp(a, b, la) == 0)
        return 0;
    if (la > MAXLEN || lb > MAXLEN)
        return SIZE_MAX;
    size_t d[W * W]; /* small full table: keys are short */
    for (size_t i = 0; i <= la; i++)
        d[i * W] = i;
    for (size_t j = 0; j <= lb; j++)
        d[j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[(i - 1) * W + j] + 1;
            if (d[i * W + j - 1] + 1 < v)
                v = d[i * W + j - 1] + 1;
            if (d[(i - 1) * W + j - 1] + cost < v)
                v = d[(i - 1) * W + j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[(i - 2) * W + j - 2] + 1 < v)
                v = d[(i - 2) * W + j - 2] + 1;
            d[i * W + j] = v;
        }
    }
    return d[la * W + lb];
}

void rb_suggest_init(rb_suggest *s, const char *name)
{
    s->name = name;
    s->best = NULL;
    s->best_distance = SIZE_MAX;
}

void rb_suggest_consider(rb_suggest *s, const char *candidate)
{
    size_t d = rb_edit_distance(s->name, candidate);
    if (d < s->best_distance) {
        s->best_distance = d;
        s->best = candidate;
    }
}

const char *rb_suggest_best(const rb_suggest *s)
{
    if (!s->best)
        return NULL;
    /* About one typo per four characters (at least one, at most three); never a complete rewrite. */
    size_t len = strlen(s->name), limit = len / 4;
    limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
    if (s->best_distance > limit || s->best_distance >= strlen(s->best) || s->best_distance >= len)
        return NULL;
    return s->best;
}
