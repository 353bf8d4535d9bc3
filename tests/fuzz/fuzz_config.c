/* libFuzzer target: the pipeline config parser and validator on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rb_registry *reg;
    rb_err err;
    if (!reg && (rb_registry_new(&reg, &err) != RB_OK || rb_estimators_register(reg, &err) != RB_OK))
        abort();
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    rb_pipeline *p = NULL;
    if (rb_pipeline_load_text(text, size, "fuzz.json", "/tmp/fuzz.json", reg, &p, &err) == RB_OK) {
        char *resolved = rb_pipeline_resolved_json(p);
        rb_free(resolved);
        rb_pipeline_free(p);
    }
    free(text);
    return 0;
}
