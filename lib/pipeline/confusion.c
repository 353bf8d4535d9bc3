/* A pipeline metric's confusion keys ("labels", "reference_labels", "where"; roboest/pipeline.h). */
#include <stdint.h>
#include <string.h>

#include "pipeline_internal.h"

int rb_confusion_labels_parse(rb_cfg *c, const cJSON *v, const char *key, bool required, char ***out, size_t *n)
{
    int rc = rb_cfg_member_strings(c, v, key, required, false, out, n);
    if (rc || !*out)
        return rc;
    rb_cfg_push_key(c, key, 0);
    if (*n > RB_CONFUSION_MAX)
        rc = rb_cfg_error(c, "%zu classes: at most %d", *n, RB_CONFUSION_MAX);
    size_t dup, first;
    if (!rc && !(rc = rb_cfg_find_duplicate(c, (const char *const *)*out, *n, &dup, &first)) && dup != SIZE_MAX)
        rc = rb_cfg_error(c, "label '%s' is listed twice (entries %zu and %zu)", (*out)[dup], first, dup);
    for (size_t i = 0; !rc && i < *n; i++)
        if (!rb_cfg_valid_name((*out)[i]))
            rc = rb_cfg_error(c, "label '%s': use letters, digits, '_' and '-', starting with a letter or '_'",
                              (*out)[i]);
    rb_cfg_pop(c);
    return rc;
}

int rb_pipeline_parse_confusion(rb_cfg *c, const cJSON *v, rb_config_metric *m)
{
    int rc = rb_confusion_labels_parse(c, v, "labels", false, &m->labels, &m->n_labels);
    if (!rc)
        rc = rb_confusion_labels_parse(c, v, "reference_labels", false, &m->reference_labels, &m->n_reference_labels);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "where", false, &m->where);
    if (rc)
        return rc;
    m->confusion = m->labels != NULL;
    if (!m->confusion && (m->reference_labels || m->where))
        return rb_cfg_error(c, "\"reference_labels\" and \"where\" belong to a confusion metric: add \"labels\"");
    if (m->confusion && !m->reference_labels) {
        m->reference_labels = rb_calloc(m->n_labels, sizeof *m->reference_labels);
        if (!m->reference_labels)
            return rb_cfg_nomem(c);
        for (size_t i = 0; i < m->n_labels; i++) {
            m->n_reference_labels = i + 1;
            if (!(m->reference_labels[i] = rb_strdup(m->labels[i])))
                return rb_cfg_nomem(c);
        }
    }
    return RB_OK;
}
