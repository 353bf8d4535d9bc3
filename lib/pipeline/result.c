/* A run's result (run.c): its warnings while it runs, freeing it, its recorded signals by name. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "run_internal.h"

int rb_run_nomem(runner *r) { return rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->label); }

int rb_run_warn(runner *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    rb_run_result *res = r->res;
    char **grown = rb_realloc(res->warnings, (res->n_warnings + 1) * sizeof *grown);
    if (!grown)
        return rb_run_nomem(r);
    res->warnings = grown;
    if (!(res->warnings[res->n_warnings] = rb_asprintf("%s: %s", r->label, line)))
        return rb_run_nomem(r);
    res->n_warnings++;
    return RB_OK;
}

void rb_run_result_free(rb_run_result *res)
{
    if (!res)
        return;
    rb_free(res->run_name);
    rb_free(res->input);
    rb_free(res->input_sha256);
    rb_clock_free(&res->clock);
    for (size_t i = 0; res->recorded && i < res->n_recorded; i++) {
        rb_run_signal *s = &res->recorded[i];
        rb_free(s->name);
        rb_strings_free(s->names, s->width);
        rb_strings_free(s->units, s->width);
        rb_free(s->data);
    }
    rb_free(res->recorded);
    rb_free(res->n_held);
    rb_report_free(res->report);
    rb_run_faults_free(res);
    rb_strings_free(res->warnings, res->n_warnings);
    rb_out_streams_free(res->streams);
    rb_free(res);
}

const rb_run_signal *rb_run_result_signal(const rb_run_result *res, const char *name)
{
    for (size_t i = 0; i < res->n_recorded; i++)
        if (strcmp(res->recorded[i].name, name) == 0)
            return &res->recorded[i];
    return NULL;
}
