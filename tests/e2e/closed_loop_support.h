/* A torque-controlled balance on the humanoid (configs/scenarios/humanoid_balance.json, `duration` s, stiff gains, a
 * push on the right shank at 0.8 s, the model read in place) for the closed-loop tests, with the realistic mismatch or
 * without. */
#ifndef CLOSED_LOOP_SUPPORT_H
#define CLOSED_LOOP_SUPPORT_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>

#include "harness.h"

static inline void write_balance_scenario(const char *path, double duration, bool mismatch)
{
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/humanoid_balance.json", NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(sc);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/humanoid_lower_body.urdf"));
    cJSON_ReplaceItemInObject(sc, "duration", cJSON_CreateNumber(duration));
    cJSON *ctrl = cJSON_GetObjectItem(sc, "controller");
    cJSON_ReplaceItemInObject(ctrl, "kind", cJSON_CreateString("torque"));
    cJSON_DeleteItemFromObject(ctrl, "gravity_comp");
    for (cJSON *g = cJSON_GetObjectItem(ctrl, "gains")->child; g; g = g->next) {
        cJSON_ReplaceItemInObject(g, "kp", cJSON_CreateNumber(400));
        cJSON_ReplaceItemInObject(g, "kd", cJSON_CreateNumber(40));
        cJSON_AddNumberToObject(g, "kp_tau", 0.5);
        cJSON_AddNumberToObject(g, "ki_tau", 20);
    }
    cJSON_AddItemToObject(sc, "pushes",
                          cJSON_Parse("[{\"frame\": \"r_lower_leg\", \"shape\": \"half_sine\", \"start\": 0.8, "
                                      "\"duration\": 0.2, \"wrench\": [0, 40, 0, 0, 0, 0]}]"));
    if (mismatch)
        cJSON_AddStringToObject(sc, "mismatch", "realistic");
    char *out = cJSON_Print(sc);
    test_write_file(path, out);
    free(out);
    cJSON_Delete(sc);
}

#endif
