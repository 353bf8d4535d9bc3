#include "roboest/core.h"

#include <stdio.h>
#include <string.h>

const char *rb_status_name(int code)
{
    switch (code) {
    case RB_OK: return "RB_OK";
    case RB_ENOMEM: return "RB_ENOMEM";
    case RB_ENOTFOUND: return "RB_ENOTFOUND";
    case RB_EINPUT: return "RB_EINPUT";
    case RB_ECONFIG: return "RB_ECONFIG";
    case RB_EDIM: return "RB_EDIM";
    case RB_ENUMERIC: return "RB_ENUMERIC";
    case RB_EIO: return "RB_EIO";
    case RB_EEXISTS: return "RB_EEXISTS";
    case RB_EINVAL: return "RB_EINVAL";
    default: return "RB_EUNKNOWN";
    }
}

void rb_err_clear(rb_err *err)
{
    if (!err)
        return;
    err->code = RB_OK;
    err->msg[0] = '\0';
}

static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

int rb_err_set(rb_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    one_line(err->msg);
    err->code = code;
    return code;
}

int rb_err_prefix(rb_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    char prefix[RB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    one_line(prefix);
    char joined[2 * RB_ERR_MSG_MAX];
    snprintf(joined, sizeof joined, "%s%s", prefix, err->msg);
    snprintf(err->msg, sizeof err->msg, "%.*s", RB_ERR_MSG_MAX - 1, joined);
    return code;
}
