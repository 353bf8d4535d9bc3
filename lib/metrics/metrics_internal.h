/*
 * lib/metrics internals shared between its files: not installed, not part of the API.
 *   sbuf.c  a growing string for the renderers (reports, comparison tables, SVG figures, JUnit XML)
 */
#ifndef ROBOEST_METRICS_INTERNAL_H
#define ROBOEST_METRICS_INTERNAL_H

#include "roboest/metrics.h"

/* A growing string; a failed allocation is remembered so renderers check once at the end. */
typedef struct sbuf {
    char *data;
    size_t len, cap;
    bool failed;
} sbuf;

bool rb_sb_reserve(sbuf *b, size_t extra);
void rb_sb_putc(sbuf *b, char c);
void rb_sb_puts(sbuf *b, const char *s);
void rb_sb_printf(sbuf *b, const char *fmt, ...) RB_PRINTF(2, 3);
/* Text for comment lines and list items: one line whatever the caller passed. */
void rb_sb_put_line_text(sbuf *b, const char *s);
/* A round-trip number (rb_format_double). */
void rb_sb_put_double(sbuf *b, double x);
/* XML character data / attribute value: & < > " ' escaped, control characters other than tab and
 * newline dropped (XML 1.0 cannot hold them). */
void rb_sb_put_xml(sbuf *b, const char *s);
/* A JSON string literal (quotes included). */
void rb_sb_put_json_string(sbuf *b, const char *s);
/* An RFC 4180 CSV field, quoted when it holds , " CR LF, starts with '#' or has edge spaces. */
void rb_sb_put_csv(sbuf *b, const char *s);
/* Hand over the text: *text = b->data, or RB_ENOMEM (and the buffer freed) when an append failed. */
int rb_sb_finish(sbuf *b, char **text, rb_err *err);

/* confusion.c: the confusion sections of run reports (render.c) and comparison tables (compare.c). */
void rb_report_confusions_free(rb_report *rep);
void rb_report_md_confusions(const rb_report *rep, sbuf *b);
/* The "confusions" array as JSON text (caller frees with rb_free); NULL when out of memory. */
char *rb_report_json_confusions(const rb_report *rep);
void rb_report_csv_confusions(const rb_report *rep, sbuf *b);
void rb_comparison_confusion_free(rb_comparison *c);
void rb_comparison_md_confusion(const rb_comparison *c, sbuf *b);
void rb_comparison_json_confusion(const rb_comparison *c, sbuf *b);

#endif
