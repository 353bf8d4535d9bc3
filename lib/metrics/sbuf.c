/* The growing string the renderers share, with the escapes of the formats they write. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "metrics_internal.h"

bool rb_sb_reserve(sbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *grown = rb_realloc(b->data, cap);
    if (!grown) {
        b->failed = true;
        return false;
    }
    b->data = grown;
    b->cap = cap;
    return true;
}

void rb_sb_putc(sbuf *b, char c)
{
    if (!rb_sb_reserve(b, 1))
        return;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void rb_sb_puts(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (!rb_sb_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void rb_sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !rb_sb_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void rb_sb_put_line_text(sbuf *b, const char *s)
{
    for (; *s; s++)
        rb_sb_putc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
}

void rb_sb_put_double(sbuf *b, double x)
{
    char buf[32];
    rb_sb_puts(b, rb_format_double(x, buf));
}

void rb_sb_put_xml(sbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': rb_sb_puts(b, "&amp;"); break;
        case '<': rb_sb_puts(b, "&lt;"); break;
        case '>': rb_sb_puts(b, "&gt;"); break;
        case '"': rb_sb_puts(b, "&quot;"); break;
        case '\'': rb_sb_puts(b, "&apos;"); break;
        default:
            if (c >= 0x20 || c == '\t' || c == '\n')
                rb_sb_putc(b, (char)c);
        }
    }
}

void rb_sb_put_json_string(sbuf *b, const char *s)
{
    rb_sb_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            rb_sb_putc(b, '\\');
            rb_sb_putc(b, (char)c);
        } else if (c == '\n') {
            rb_sb_puts(b, "\\n");
        } else if (c < 0x20) {
            rb_sb_printf(b, "\\u%04x", c);
        } else {
            rb_sb_putc(b, (char)c);
        }
    }
    rb_sb_putc(b, '"');
}

void rb_sb_put_csv(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    bool quote = strpbrk(s, ",\"\r\n") || s[0] == '#' || (n > 0 && (s[0] == ' ' || s[n - 1] == ' '));
    if (!quote) {
        rb_sb_puts(b, s);
        return;
    }
    rb_sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            rb_sb_putc(b, '"');
        rb_sb_putc(b, *s);
    }
    rb_sb_putc(b, '"');
}

int rb_sb_finish(sbuf *b, char **text, rb_err *err)
{
    if (b->failed || !b->data) {
        rb_free(b->data);
        *b = (sbuf){0};
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    *text = b->data;
    *b = (sbuf){0};
    return RB_OK;
}

int rb_text_write(const char *text, const char *path, bool overwrite, rb_err *err)
{
    rb_outfile of;
    int rc = rb_outfile_begin(&of, path, overwrite, err);
    if (rc)
        return rc;
    FILE *f = fopen(of.tmp_path, "wb");
    size_t n = strlen(text);
    bool ok = f && fwrite(text, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        rb_outfile_abort(&of);
        return rb_err_set(err, RB_EIO, "%s: cannot write", path);
    }
    return rb_outfile_commit(&of, err);
}
