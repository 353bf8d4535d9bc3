/* Writing the pipeline `roboest tune ukf-torque` tuned (roboest/training.h): relative paths moved to the output's
 * folder, write-then-rename. */
#include <cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/metrics.h"
#include "roboest/training.h"

/* The canonical folder holding `file` (which need not exist; its folder must). NULL: no such folder. */
static char *folder_of(const char *file)
{
    const char *slash = strrchr(file, '/');
    char *dir = slash ? rb_asprintf("%.*s", (int)(slash - file), file) : rb_strdup(".");
    if (dir && !dir[0]) {
        rb_free(dir);
        dir = rb_strdup("/");
    }
    char *real = dir ? realpath(dir, NULL) : NULL;
    rb_free(dir);
    return real; /* malloc'd by realpath: free() */
}

/* `rel` (relative to the canonical folder `from`) relative to the canonical folder `to`; NULL when out of memory. */
static char *move_path(const char *from, const char *to, const char *rel)
{
    char *b = rb_asprintf("%s/%s", from, rel);
    char *out = b ? rb_path_between(to, b) : NULL;
    rb_free(b);
    return out;
}

static bool move_string(cJSON *s, const char *from, const char *to)
{
    if (!cJSON_IsString(s) || !s->valuestring[0] || s->valuestring[0] == '/')
        return true;
    char *p = move_path(from, to, s->valuestring);
    bool ok = p && cJSON_SetValuestring(s, p) != NULL;
    rb_free(p);
    return ok;
}

/* Every relative path of a pipeline document: model.urdf, logs, and the stage params that name files. */
static bool move_paths(cJSON *doc, const char *from, const char *to)
{
    static const char *const file_params[][2] = {{"friction_pinn", "network"}, {"slip_predictor", "thresholds_file"}};
    bool ok =
        move_string(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "model"), "urdf"), from, to);
    cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(doc, "logs"))
    {
        cJSON *f;
        if (cJSON_IsArray(l))
            cJSON_ArrayForEach(f, l) ok = ok && move_string(f, from, to);
        else
            ok = ok && move_string(l, from, to);
    }
    cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(doc, "stages"))
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(s, "type");
        for (size_t i = 0; cJSON_IsString(type) && i < sizeof file_params / sizeof file_params[0]; i++)
            if (strcmp(type->valuestring, file_params[i][0]) == 0)
                ok = ok && move_string(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "params"),
                                                                        file_params[i][1]),
                                       from, to);
    }
    return ok;
}

int rb_ukft_tune_write(const rb_ukft_tune_result *r, const char *path, bool overwrite, rb_err *err)
{
    if (!r || !r->doc || !path)
        return rb_err_set(err, RB_EINVAL, "ukf_torque tuning: NULL argument");
    char *from = folder_of(r->pipeline_path), *to = folder_of(path), *text = NULL;
    cJSON *doc = cJSON_Duplicate(r->doc, true);
    int rc = RB_OK;
    if (!from)
        rc = rb_err_set(err, RB_ENOTFOUND, "%s: cannot resolve its folder", r->pipeline_path);
    else if (!to)
        rc = rb_err_set(err, RB_EIO, "%s: the output folder does not exist", path);
    else if (!doc || !move_paths(doc, from, to) || !(text = cJSON_Print(doc)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    char *nl = rc ? NULL : rb_asprintf("%s\n", text);
    if (rc == RB_OK)
        rc = nl ? rb_text_write(nl, path, overwrite, err) : rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_free(nl);
    cJSON_free(text);
    cJSON_Delete(doc);
    free(from);
    free(to);
    return rc;
}
