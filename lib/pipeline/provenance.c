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
    if (!rc)
        rc = rb_pipeline_files_provenance(p, "", pv, err);
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

int rb_pipeline_stage_files(const rb_pipeline *p, rb_stage_file_fn fn, void *ctx, rb_err *err)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < p->n_stages; i++) {
        const rb_config_stage *st = &p->stages[i];
        for (size_t k = 0; !rc && k < st->type->n_params; k++) {
            const char *value = st->params[k].string;
            if (!st->type->params[k].file || !value)
                continue;
            char *path = rb_stage_file_path(p->config_dir, value);
            rc = path ? fn(ctx, st, st->type->params[k].name, path, err)
                      : rb_err_set(err, RB_ENOMEM, "out of memory naming a stage's file");
            rb_free(path);
        }
    }
    return rc;
}

typedef struct {
    rb_provenance *pv;
    const char *prefix;
} files_ctx;

static int add_file_sha(void *ctx, const rb_config_stage *st, const char *param, const char *path, rb_err *err)
{
    files_ctx *x = ctx;
    char sha[65];
    int rc = rb_sha256_file(path, sha, err);
    return rc ? rc : rb_provenance_addf(x->pv, sha, err, "%sstages.%s.%s_sha256", x->prefix, st->id, param);
}

int rb_pipeline_files_provenance(const rb_pipeline *p, const char *key_prefix, rb_provenance *pv, rb_err *err)
{
    int rc = RB_OK;
    if (p->model_urdf) {
        char sha[65];
        rc = rb_sha256_file(p->model_urdf, sha, err);
        if (!rc)
            rc = rb_provenance_addf(pv, sha, err, "%smodel_sha256", key_prefix);
    }
    files_ctx x = {pv, key_prefix};
    return rc ? rc : rb_pipeline_stage_files(p, add_file_sha, &x, err);
}
