/* One recording session split over several files, read as one log (roboest/io.h). */
#include <string.h>

#include "roboest/io.h"

void rb_session_id_free(rb_session_id *id)
{
    if (!id)
        return;
    rb_free(id->names);
    rb_free(id->sha256);
    id->names = id->sha256 = NULL;
}

/* The files' names and SHA-256, each joined by ",". */
static int identify(const char *const *paths, size_t n, rb_session_id *id, rb_err *err)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(rb_path_basename(paths[i])) + 1;
    rb_session_id got = {rb_calloc(len, 1), rb_calloc(n * 65 + 1, 1)};
    int rc = got.names && got.sha256 ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        char hex[65];
        rc = rb_sha256_file(paths[i], hex, err);
        if (!rc) {
            strcat(got.names, i ? "," : "");
            strcat(got.names, rb_path_basename(paths[i]));
            strcat(got.sha256, i ? "," : "");
            strcat(got.sha256, hex);
        }
    }
    if (rc)
        rb_session_id_free(&got);
    else
        *id = got;
    return rc;
}

int rb_log_read_session(const char *const *paths, size_t n, rb_log **out, rb_session_id *id, rb_err *err)
{
    if (!paths || n == 0 || !out)
        return rb_err_set(err, RB_EINVAL, "rb_log_read_session: no file");
    rb_log *log = NULL, *next = NULL;
    int rc = rb_log_read(paths[0], &log, err);
    for (size_t i = 1; !rc && i < n; i++) {
        rc = rb_log_read(paths[i], &next, err);
        if (!rc && (rc = rb_log_append(log, next, err)) != RB_OK)
            rb_err_prefix(err, rc, "%s: appending %s: ", paths[0], paths[i]);
        rb_log_free(next);
        next = NULL;
    }
    if (!rc && id)
        rc = identify(paths, n, id, err);
    if (rc)
        rb_log_free(log);
    else
        *out = log;
    return rc;
}

int rb_session_provenance(const rb_session_id *id, rb_provenance *pv, rb_err *err)
{
    int rc = rb_provenance_init(pv, err);
    if (!rc)
        rc = rb_provenance_add(pv, "input", id->names, err);
    if (!rc)
        rc = rb_provenance_add(pv, "input_sha256", id->sha256, err);
    return rc;
}
