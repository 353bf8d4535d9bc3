/* lib/sim: joint references (sinusoid, chirp, step, cubic Hermite spline, piecewise-linear ramp). */
#include <math.h>

#include "roboest/sim.h"

static void spline_eval(const rb_sim_ref *r, double t, double out[3])
{
    const double *x = r->times, *y = r->values;
    size_t n = r->n_points;
    out[1] = out[2] = 0.0;
    if (t <= x[0]) {
        out[0] = y[0];
        return;
    }
    if (t >= x[n - 1]) {
        out[0] = y[n - 1];
        return;
    }
    size_t k = 0;
    while (k + 2 < n && t >= x[k + 1])
        k++;
    double h = x[k + 1] - x[k];
    /* Catmull-Rom slopes (centred differences over uneven spacing), one-sided at the ends. */
    double m0 = k == 0 ? (y[1] - y[0]) / (x[1] - x[0]) : (y[k + 1] - y[k - 1]) / (x[k + 1] - x[k - 1]);
    double m1 = k + 2 == n ? (y[n - 1] - y[n - 2]) / (x[n - 1] - x[n - 2]) : (y[k + 2] - y[k]) / (x[k + 2] - x[k]);
    double u = (t - x[k]) / h, u2 = u * u, u3 = u2 * u;
    double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
    double d00 = 6 * u2 - 6 * u, d10 = 3 * u2 - 4 * u + 1, d01 = -6 * u2 + 6 * u, d11 = 3 * u2 - 2 * u;
    double s00 = 12 * u - 6, s10 = 6 * u - 4, s01 = -12 * u + 6, s11 = 6 * u - 2;
    out[0] = h00 * y[k] + h10 * h * m0 + h01 * y[k + 1] + h11 * h * m1;
    out[1] = (d00 * y[k] + d10 * h * m0 + d01 * y[k + 1] + d11 * h * m1) / h;
    out[2] = (s00 * y[k] + s10 * h * m0 + s01 * y[k + 1] + s11 * h * m1) / (h * h);
}

/* Piecewise-linear through the points, held outside them. */
static void ramp_eval(const rb_sim_ref *r, double t, double out[3])
{
    const double *x = r->times, *y = r->values;
    size_t n = r->n_points;
    out[1] = out[2] = 0.0;
    if (t <= x[0] || t >= x[n - 1]) {
        out[0] = t <= x[0] ? y[0] : y[n - 1];
        return;
    }
    size_t k = 0;
    while (k + 2 < n && t >= x[k + 1])
        k++;
    double slope = (y[k + 1] - y[k]) / (x[k + 1] - x[k]);
    out[0] = y[k] + slope * (t - x[k]);
    out[1] = slope;
}

void rb_sim_ref_eval(const rb_sim_ref *r, double t, double out[3])
{
    out[0] = r->offset, out[1] = out[2] = 0.0;
    switch (r->kind) {
    case RB_REF_SINE: {
        double w = 2 * M_PI * r->freq, a = w * t + r->phase;
        out[0] += r->amplitude * sin(a);
        out[1] = r->amplitude * w * cos(a);
        out[2] = -r->amplitude * w * w * sin(a);
        break;
    }
    case RB_REF_CHIRP: {
        if (t < r->t0)
            break;
        double T = r->t1 - r->t0, tau = t - r->t0, k = T > 0 ? (r->freq_end - r->freq) / T : 0.0;
        double phi, f, fd;
        if (tau <= T) {
            phi = 2 * M_PI * (r->freq * tau + 0.5 * k * tau * tau);
            f = r->freq + k * tau, fd = k;
        } else {
            phi = 2 * M_PI * (r->freq * T + 0.5 * k * T * T + r->freq_end * (tau - T));
            f = r->freq_end, fd = 0.0;
        }
        phi += r->phase;
        double w = 2 * M_PI * f;
        out[0] += r->amplitude * sin(phi);
        out[1] = r->amplitude * w * cos(phi);
        out[2] = r->amplitude * (2 * M_PI * fd * cos(phi) - w * w * sin(phi));
        break;
    }
    case RB_REF_STEP:
        if (t >= r->t0)
            out[0] += r->amplitude;
        break;
    case RB_REF_SPLINE: {
        spline_eval(r, t, out);
        out[0] += r->offset;
        break;
    }
    case RB_REF_RAMP: {
        ramp_eval(r, t, out);
        out[0] += r->offset;
        break;
    }
    default: break;
    }
}
