/* What a pipeline's outputs and reports record about how they were made (roboest/pipeline.h). */
#include "pipeline_internal.h"

int rb_pipeline_provenance(const rb_pipeline *p, const char *input, const char *input_sha256, rb_provenance *pv,
                           rb_err *err)
{
    int rc = rb_provenance_init(pv, err);
    if (!rc)
        rc = rb_provenance_add(pv, "pipeline", p->name, err);
    if (!rc)
        rc = rb_provenance_add(pv, "config", rb_path_basename(p->config_path), err);
    if (!rc)
        rc = rb_provenance_add(pv, "config_sha256", p->config_sha256, err);
    if (!rc)
        rc = rb_provenance_add(pv, "input", input, err);
    if (!rc)
        rc = rb_provenance_add(pv, "input_sha256", input_sha256, err);
    if (!rc)
        rc = rb_provenance_add(pv, "model", p->model_urdf, err);
    /* A scaled binding's values are not the log's: say by how much, and in what unit they now are. */
    for (size_t i = 0; !rc && i < p->n_signals; i++) {
        const rb_config_signal *s = &p->signals[i];
        char num[32];
        if (s->scale != 1)
            rc = rb_provenance_addf(pv, rb_format_double(s->scale, num), err, "signals.%s.scale", s->name);
        if (!rc && s->scale != 1 && s->unit)
            rc = rb_provenance_addf(pv, s->unit, err, "signals.%s.unit", s->name);
    }
    return rc;
}

int rb_pipeline_output_provenance(const rb_pipeline *p, const rb_run_result *res, rb_log *log, rb_err *err)
{
    rb_provenance pv = {0, NULL, NULL};
    int rc = rb_pipeline_provenance(p, res->input, res->input_sha256, &pv, err);
    if (!rc && !(rc = rb_provenance_add(&pv, "run", res->run_name, err)))
        rc = rb_log_set_provenance(log, &pv, err);
    rb_provenance_free(&pv);
    return rc;
}
