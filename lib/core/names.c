/* Sorted name lists: finding names by bisection and the first repeated name. */
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
        bool second_of_group = strcmp(refs[i].name, refs[i - 1].name) == 0 &&
                               (i < 2 || strcmp(refs[i - 1].name, refs[i - 2].name) != 0);
        if (second_of_group && refs[i].index < *dup) {
            *dup = refs[i].index;
            *first = refs[i - 1].index;
        }
    }
}
