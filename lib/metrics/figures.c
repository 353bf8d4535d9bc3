/* Hand-written SVG figures: box plots of a statistic per variant, and estimate-vs-reference time traces
 * with shaded intervals. Coordinates are printed with 2 decimals under the C locale: the same inputs give
 * the same bytes. */
#include <math.h>
#include <string.h>

#include "metrics_internal.h"

static const char *const PALETTE[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"};
enum { N_PALETTE = sizeof PALETTE / sizeof PALETTE[0], MAX_TICKS = 32 };

static double nice_step(double raw)
{
    double mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

size_t rb_nice_ticks(double lo, double hi, size_t target, double *ticks, size_t max)
{
    if (!isfinite(lo) || !isfinite(hi) || max < 2)
        return 0;
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi - lo <= 1e-12 * fmax(fabs(lo), fabs(hi))) {
        double pad = lo != 0 ? 0.1 * fabs(lo) : 1;
        lo -= pad;
        hi += pad;
    }
    if (target < 2)
        target = 2;
    double step = nice_step((hi - lo) / (double)(target - 1));
    double k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
    while (k1 - k0 + 1 > (double)max) { /* too many for the caller's array: coarser */
        step = nice_step(step * 1.5);
        k0 = floor(lo / step + 1e-9);
        k1 = ceil(hi / step - 1e-9);
    }
    size_t n = 0;
    for (double k = k0; k <= k1; k++) {
        double t = k * step;
        ticks[n++] = t == 0 ? 0 : t; /* no "-0" labels */
    }
    return n;
}

/* A tick label with as many decimals as the step needs. */
static void tick_label(sbuf *b, double x, double step)
{
    int decimals = step > 0 ? (int)ceil(-log10(step) - 1e-9) : 0;
    if (fabs(x) >= 1e6 || (x != 0 && fabs(x) < 1e-4) || decimals > 8)
        rb_sb_printf(b, "%.3g", x);
    else
        rb_sb_printf(b, "%.*f", decimals > 0 ? decimals : 0, x);
}

typedef struct frame {
    double x0, y0, w, h; /* plot area, px (y0 = top) */
    double lo, hi;       /* y range */
    double t0, t1;       /* x range (traces) */
} frame;

static double ypx(const frame *f, double y) { return f->y0 + f->h * (1 - (y - f->lo) / (f->hi - f->lo)); }
static double xpx(const frame *f, double t) { return f->x0 + f->w * (t - f->t0) / (f->t1 - f->t0); }

static void svg_open(sbuf *b, double width, double height, const char *title)
{
    rb_sb_printf(b,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n<title>",
                 width, height, width, height);
    rb_sb_put_xml(b, title);
    rb_sb_printf(b,
                 "</title>\n<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
                 "fill=\"white\"/>\n<text class=\"title\" x=\"%.2f\" y=\"22\" text-anchor=\"middle\" "
                 "font-size=\"15\">",
                 width, height, width / 2);
    rb_sb_put_xml(b, title);
    rb_sb_puts(b, "</text>\n");
}

/* Every figure's plot area is 320 px high, 80 px from the left (room for the y axis' labels), 40 from the top (the
 * title) and 60 from the bottom (the x axis' labels); a figure of lines has it 720 px wide with 190 px right of it
 * for the legend. */
enum { LEFT = 80, TOP = 40, PLOT_H = 320, BOTTOM = 60, LINES_W = 720, LEGEND_W = 190 };

/* A figure being written: its text, the locale it is written under, its plot area. */
typedef struct figure {
    sbuf b;
    rb_locale_scope loc;
    frame f;
} figure;

/* Start a figure `width` px wide whose plot area is w px wide, x from x0 to x1: the C locale (figure_close restores
 * it), the SVG's head with the title. rb_c_locale_push's errors (nothing to close then). */
static int figure_open(figure *g, double width, double w, double x0, double x1, const char *title, rb_err *err)
{
    *g = (figure){.f = {LEFT, TOP, w, PLOT_H, 0, 1, x0, x1}};
    int rc = rb_c_locale_push(&g->loc, err);
    if (!rc)
        svg_open(&g->b, width, TOP + PLOT_H + BOTTOM, title);
    return rc;
}

/* End it: the SVG closed, the locale restored, the text into *svg. RB_ENOMEM. */
static int figure_close(figure *g, char **svg, rb_err *err)
{
    rb_sb_puts(&g->b, "</svg>\n");
    rb_c_locale_pop(&g->loc);
    return rb_sb_finish(&g->b, svg, err);
}

/* The y axis with grid lines, tick labels and its title; sets f->lo, f->hi from the ticks. */
static void y_axis(sbuf *b, frame *f, double lo, double hi, const char *label)
{
    double ticks[MAX_TICKS];
    size_t n = rb_nice_ticks(lo, hi, 6, ticks, MAX_TICKS);
    f->lo = ticks[0];
    f->hi = ticks[n - 1];
    double step = n > 1 ? ticks[1] - ticks[0] : 1;
    rb_sb_puts(b, "<g class=\"y-axis\" stroke=\"#000\">\n");
    for (size_t i = 0; i < n; i++) {
        double y = ypx(f, ticks[i]);
        rb_sb_printf(b,
                     "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>\n"
                     "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n"
                     "<text class=\"tick-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" stroke=\"none\">",
                     f->x0, y, f->x0 + f->w, y, f->x0 - 5, y, f->x0, y, f->x0 - 8, y + 4);
        tick_label(b, ticks[i], step);
        rb_sb_puts(b, "</text>\n");
    }
    rb_sb_printf(b, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n</g>\n", f->x0, f->y0,
                 f->x0, f->y0 + f->h);
    rb_sb_printf(b, "<text class=\"y-label\" transform=\"translate(%.2f %.2f) rotate(-90)\" text-anchor=\"middle\">",
                 f->x0 - 58, f->y0 + f->h / 2);
    rb_sb_put_xml(b, label);
    rb_sb_puts(b, "</text>\n");
}

/* ---- box plots ---------------------------------------------------------------------------------------------- */
static void one_box(sbuf *b, const frame *f, const rb_box_series *s, const rb_box *box, double cx, double half,
                    const char *color)
{
    double top = ypx(f, box->q3), bottom = ypx(f, box->q1);
    rb_sb_puts(b, "<g class=\"box\">\n<title>");
    rb_sb_put_xml(b, s->label);
    rb_sb_printf(b, ": median %.4g, quartiles %.4g to %.4g, %zu values</title>\n", box->median, box->q1, box->q3,
                 box->n);
    rb_sb_printf(b,
                 "<line class=\"whisker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n"
                 "<line class=\"whisker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n"
                 "<line class=\"cap\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n"
                 "<line class=\"cap\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n",
                 cx, top, cx, ypx(f, box->whisker_hi), cx, bottom, cx, ypx(f, box->whisker_lo), cx - half / 2,
                 ypx(f, box->whisker_hi), cx + half / 2, ypx(f, box->whisker_hi), cx - half / 2,
                 ypx(f, box->whisker_lo), cx + half / 2, ypx(f, box->whisker_lo));
    rb_sb_printf(b,
                 "<rect class=\"iqr\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                 "fill-opacity=\"0.35\" stroke=\"%s\"/>\n"
                 "<line class=\"median\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\" "
                 "stroke-width=\"2\"/>\n",
                 cx - half, top, 2 * half, bottom - top, color, color, cx - half, ypx(f, box->median), cx + half,
                 ypx(f, box->median));
    double reach = 1.5 * (box->q3 - box->q1);
    for (size_t i = 0; i < s->n; i++)
        if (s->values[i] < box->q1 - reach || s->values[i] > box->q3 + reach)
            rb_sb_printf(b, "<circle class=\"outlier\" cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"none\" stroke=\"%s\"/>\n",
                         cx, ypx(f, s->values[i]), color);
    rb_sb_printf(b, "<text class=\"x-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", cx, f->y0 + f->h + 18);
    rb_sb_put_xml(b, s->label);
    rb_sb_puts(b, "</text>\n</g>\n");
}

static int check_series(const rb_box_series *series, size_t n_series, size_t *most, rb_err *err)
{
    if (!series || n_series == 0)
        return rb_err_set(err, RB_EINVAL, "box plot: no series");
    *most = 0;
    for (size_t s = 0; s < n_series; s++) {
        if (series[s].n == 0 || !series[s].values)
            return rb_err_set(err, RB_EINVAL, "box plot: series %s has no values", series[s].label);
        for (size_t i = 0; i < series[s].n; i++)
            if (!isfinite(series[s].values[i]))
                return rb_err_set(err, RB_ENUMERIC, "box plot: series %s: value %zu is not finite", series[s].label, i);
        if (series[s].n > *most)
            *most = series[s].n;
    }
    return RB_OK;
}

int rb_svg_boxplot(const char *title, const char *y_label, const rb_box_series *series, size_t n_series, char **svg,
                   rb_err *err)
{
    *svg = NULL;
    size_t most = 0;
    int rc = check_series(series, n_series, &most, err);
    if (rc)
        return rc;
    rb_box *boxes = rb_calloc(n_series, sizeof *boxes);
    double *scratch = rb_malloc(most * sizeof *scratch);
    if (!boxes || !scratch) {
        rb_free(boxes);
        rb_free(scratch);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < n_series; s++) {
        rb_box_stats(series[s].values, series[s].n, scratch, &boxes[s]);
        lo = fmin(lo, scratch[0]);
        hi = fmax(hi, scratch[series[s].n - 1]);
    }
    double slot = 110, width = LEFT + slot * (double)n_series + 30; /* 30 px right of the boxes */
    width = fmax(width, 8.0 * (double)strlen(title) + 40);          /* room for the title (about 8 px a character) */
    figure g;
    if ((rc = figure_open(&g, width, slot * (double)n_series, 0, 1, title, err)) == RB_OK) {
        y_axis(&g.b, &g.f, lo, hi, y_label);
        for (size_t s = 0; s < n_series; s++)
            one_box(&g.b, &g.f, &series[s], &boxes[s], g.f.x0 + slot * ((double)s + 0.5), slot * 0.3,
                    PALETTE[s % N_PALETTE]);
        rc = figure_close(&g, svg, err);
    }
    rb_free(boxes);
    rb_free(scratch);
    return rc;
}

/* ---- time traces ---------------------------------------------------------------------------------------------- */
static void point(sbuf *b, const frame *f, double t, double y, bool *first)
{
    rb_sb_printf(b, "%s%.2f,%.2f", *first ? "" : " ", xpx(f, t), ypx(f, y));
    *first = false;
}

/* The samples in [t0, t1], each pixel column's lowest and highest value in time order. */
static void polyline(sbuf *b, const frame *f, const rb_trace_line *line, const char *color, bool dashed)
{
    rb_sb_printf(b, "<polyline class=\"trace\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\"%s points=\"", color,
                 dashed ? " stroke-dasharray=\"5 3\"" : "");
    bool first = true;
    long column = -1;
    size_t i_min = SIZE_MAX, i_max = SIZE_MAX;
    for (size_t i = 0; i <= line->n; i++) {
        bool usable = i < line->n && line->t[i] >= f->t0 && line->t[i] <= f->t1 && isfinite(line->y[i]);
        long col = usable ? (long)floor(xpx(f, line->t[i]) - f->x0) : -2;
        if ((i == line->n || (usable && col != column)) && i_min != SIZE_MAX) {
            size_t a = i_min < i_max ? i_min : i_max, z = i_min < i_max ? i_max : i_min;
            point(b, f, line->t[a], line->y[a], &first);
            if (z != a)
                point(b, f, line->t[z], line->y[z], &first);
            i_min = i_max = SIZE_MAX;
        }
        if (!usable)
            continue;
        column = col;
        if (i_min == SIZE_MAX || line->y[i] < line->y[i_min])
            i_min = i;
        if (i_max == SIZE_MAX || line->y[i] > line->y[i_max])
            i_max = i;
    }
    rb_sb_puts(b, "\"/>\n");
}

static void y_range(const rb_trace_line *lines, size_t n_lines, double t0, double t1, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t k = 0; k < n_lines; k++)
        for (size_t i = 0; i < lines[k].n; i++)
            if (lines[k].t[i] >= t0 && lines[k].t[i] <= t1 && isfinite(lines[k].y[i])) {
                *lo = fmin(*lo, lines[k].y[i]);
                *hi = fmax(*hi, lines[k].y[i]);
            }
    if (*lo > *hi)
        *lo = *hi = 0;
}

/* The x axis; x_label NULL: time since t0. */
static void x_axis(sbuf *b, const frame *f, const char *x_label)
{
    double ticks[MAX_TICKS];
    size_t n = rb_nice_ticks(0, f->t1 - f->t0, 8, ticks, MAX_TICKS);
    double step = n > 1 ? ticks[1] - ticks[0] : 1, bottom = f->y0 + f->h;
    rb_sb_puts(b, "<g class=\"x-axis\" stroke=\"#000\">\n");
    for (size_t i = 0; i < n; i++) {
        if (ticks[i] > f->t1 - f->t0 + 1e-9 * step)
            break;
        double x = xpx(f, f->t0 + ticks[i]);
        rb_sb_printf(b,
                     "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n"
                     "<text class=\"tick-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" stroke=\"none\">",
                     x, bottom, x, bottom + 5, x, bottom + 18);
        tick_label(b, ticks[i], step);
        rb_sb_puts(b, "</text>\n");
    }
    rb_sb_printf(b, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n</g>\n", f->x0, bottom,
                 f->x0 + f->w, bottom);
    rb_sb_printf(b, "<text class=\"x-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", f->x0 + f->w / 2,
                 bottom + 38);
    if (x_label) {
        rb_sb_put_xml(b, x_label);
        rb_sb_puts(b, "</text>\n");
        return;
    }
    rb_sb_puts(b, "time since ");
    rb_sb_put_double(b, f->t0);
    rb_sb_puts(b, " s (s)</text>\n");
}

static void legend(sbuf *b, const frame *f, const rb_trace_line *lines, size_t n_lines, bool shaded)
{
    double x = f->x0 + f->w + 15, y = f->y0 + 10;
    rb_sb_puts(b, "<g class=\"legend\">\n");
    for (size_t k = 0; k < n_lines; k++, y += 18) {
        rb_sb_printf(b,
                     "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n"
                     "<text x=\"%.2f\" y=\"%.2f\">",
                     x, y, x + 22, y, k == 0 ? "#000" : PALETTE[(k - 1) % N_PALETTE],
                     k == 0 ? " stroke-dasharray=\"5 3\"" : "", x + 28, y + 4);
        rb_sb_put_xml(b, lines[k].label);
        rb_sb_puts(b, "</text>\n");
    }
    if (shaded)
        rb_sb_printf(b,
                     "<rect class=\"shade-key\" x=\"%.2f\" y=\"%.2f\" width=\"22\" height=\"10\" fill=\"#f4a582\" "
                     "fill-opacity=\"0.45\"/>\n<text x=\"%.2f\" y=\"%.2f\">unmeasured contact</text>\n",
                     x, y - 5, x + 28, y + 4);
    rb_sb_puts(b, "</g>\n");
}

/* Start a figure of lines over x from x0 to x1 (traces, x-y). */
static int lines_open(figure *g, double x0, double x1, const char *title, rb_err *err)
{
    return figure_open(g, LEFT + LINES_W + LEGEND_W, LINES_W, x0, x1, title, err);
}

/* Its axes: y over the lines' values in the x range, x (x_label NULL: time since x0). */
static void lines_axes(figure *g, const rb_trace_line *lines, size_t n_lines, const char *y_label, const char *x_label)
{
    double lo, hi;
    y_range(lines, n_lines, g->f.t0, g->f.t1, &lo, &hi);
    y_axis(&g->b, &g->f, lo, hi, y_label);
    x_axis(&g->b, &g->f, x_label);
}

int rb_svg_traces(const char *title, const char *y_label, const rb_trace_line *lines, size_t n_lines,
                  const rb_interval *shaded, size_t n_shaded, double t0, double t1, char **svg, rb_err *err)
{
    *svg = NULL;
    if (!(t1 > t0) || !isfinite(t0) || !isfinite(t1))
        return rb_err_set(err, RB_EINVAL, "traces: the time span [%g, %g] s is empty", t0, t1);
    figure g;
    int rc = lines_open(&g, t0, t1, title, err);
    if (rc)
        return rc;
    bool any_shade = false;
    for (size_t i = 0; i < n_shaded; i++) {
        double a = fmax(shaded[i].t0, t0), z = fmin(shaded[i].t1, t1);
        if (z < a)
            continue;
        any_shade = true;
        double xa = xpx(&g.f, a), w = fmax(xpx(&g.f, z) - xa, 1.0);
        rb_sb_printf(&g.b,
                     "<rect class=\"shade\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#f4a582\" "
                     "fill-opacity=\"0.45\"/>\n",
                     xa, g.f.y0, w, g.f.h);
    }
    lines_axes(&g, lines, n_lines, y_label, NULL);
    for (size_t k = 1; k <= n_lines; k++) /* the reference last: on top */
        polyline(&g.b, &g.f, &lines[k % n_lines], k == n_lines ? "#000" : PALETTE[(k - 1) % N_PALETTE], k == n_lines);
    legend(&g.b, &g.f, lines, n_lines, any_shade);
    return figure_close(&g, svg, err);
}

/* ---- lines over x ---------------------------------------------------------------------------------------------- */
int rb_svg_xy(const char *title, const char *x_label, const char *y_label, const rb_trace_line *lines, size_t n_lines,
              char **svg, rb_err *err)
{
    *svg = NULL;
    double x0 = INFINITY, x1 = -INFINITY;
    for (size_t k = 0; k < n_lines; k++)
        for (size_t i = 0; i < lines[k].n; i++)
            if (isfinite(lines[k].t[i]))
                x0 = fmin(x0, lines[k].t[i]), x1 = fmax(x1, lines[k].t[i]);
    if (!(x1 > x0))
        return rb_err_set(err, RB_EINVAL, "xy figure: the x span [%g, %g] is empty", x0, x1);
    figure g;
    int rc = lines_open(&g, x0, x1, title, err);
    if (rc)
        return rc;
    lines_axes(&g, lines, n_lines, y_label, x_label);
    for (size_t k = 0; k < n_lines; k++) {
        const char *color = k == 0 ? "#000" : PALETTE[(k - 1) % N_PALETTE];
        polyline(&g.b, &g.f, &lines[k], color, k == 0);
        for (size_t i = 0; i < lines[k].n; i++)
            if (isfinite(lines[k].y[i]))
                rb_sb_printf(&g.b, "<circle class=\"point\" cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n",
                             xpx(&g.f, lines[k].t[i]), ypx(&g.f, lines[k].y[i]), color);
    }
    legend(&g.b, &g.f, lines, n_lines, false);
    return figure_close(&g, svg, err);
}
