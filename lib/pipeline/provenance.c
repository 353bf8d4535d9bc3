/* What a pipeline's outputs and reports record about how they were made (roboest/pipeline.h). */
#include "roboest/pipeline.h"

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
    return rc;
}
