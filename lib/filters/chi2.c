/* Regularized incomplete gamma function and the chi-square distribution's CDF and quantile, for
 * innovation gates and consistency bounds. Series / Lentz continued fraction for the gamma function
 * (the classical split at x = a + 1), Wilson-Hilferty start and safeguarded Newton for the quantile. */
#include <float.h>
#include <math.h>

#include "roboest/filters.h"

/* P(a, x) and Q(a, x) = 1 - P, the smaller of the two computed directly. */
static void gamma_pq(double a, double x, double *P, double *Q)
{
    if (x <= 0.0) {
        *P = 0.0;
        *Q = 1.0;
        return;
    }
    double lpre = a * log(x) - x - lgamma(a);
    if (x < a + 1.0) {
        double ap = a, del = 1.0 / a, sum = del;
        for (int i = 0; i < 100000; i++) {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if (fabs(del) < fabs(sum) * 1e-17)
                break;
        }
        double p = sum * exp(lpre);
        *P = p;
        *Q = 1.0 - p;
        return;
    }
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -(double)i * ((double)i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < tiny)
            d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16)
            break;
    }
    double q = exp(lpre) * h;
    *Q = q;
    *P = 1.0 - q;
}

double rb_gamma_p(double a, double x)
{
    if (!(a > 0.0) || !(x >= 0.0) || isinf(a))
        return NAN;
    if (isinf(x))
        return 1.0;
    double P, Q;
    gamma_pq(a, x, &P, &Q);
    return P;
}

double rb_chi2_cdf(double x, double k)
{
    if (!(k > 0.0) || isnan(x))
        return NAN;
    if (x <= 0.0)
        return 0.0;
    return rb_gamma_p(0.5 * k, 0.5 * x);
}

/* Standard normal quantile, P. J. Acklam's rational approximation (relative error < 1.2e-9):
 * only a starting value here. */
static double normal_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    const double plow = 0.02425;
    if (p < plow) {
        double q = sqrt(-2.0 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    if (p > 1.0 - plow) {
        double q = sqrt(-2.0 * log(1.0 - p));
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

int rb_chi2_quantile(double p, double k, double *q, rb_err *err)
{
    if (!q)
        return rb_err_set(err, RB_EINVAL, "chi2 quantile: NULL output");
    if (!(p > 0.0 && p < 1.0) || !(k > 0.0) || isinf(k))
        return rb_err_set(err, RB_EINVAL, "chi2 quantile: need 0 < p < 1 and k > 0 (p %g, k %g)", p, k);
    double a = 0.5 * k;
    double z = normal_quantile(p), h = 2.0 / (9.0 * k);
    double t = 1.0 - h + z * sqrt(h);
    double x = k * t * t * t;
    /* Wilson-Hilferty fails in the far lower tail of small k: use F(x) ~ (x/2)^a / Gamma(a + 1). */
    double x_small = 2.0 * exp((log(p) + lgamma(a + 1.0)) / a);
    if (!(x > 0.0) || (t < 0.5 && x_small < x))
        x = x_small;
    bool upper = p > 0.5;
    double target = upper ? 1.0 - p : p;
    double lo = 0.0, hi = INFINITY;
    double lnorm = a * log(2.0) + lgamma(a);
    for (int it = 0; it < 300; it++) {
        double P, Q;
        gamma_pq(a, 0.5 * x, &P, &Q);
        double g = upper ? target - Q : P - target; /* increasing in x */
        if (g == 0.0)
            break;
        if (g < 0.0)
            lo = x;
        else
            hi = x;
        double pdf = exp((a - 1.0) * log(x) - 0.5 * x - lnorm);
        double xn = x - g / pdf;
        if (!isfinite(xn) || !(xn > lo) || !(xn < hi))
            xn = isinf(hi) ? 2.0 * fmax(x, lo) : 0.5 * (lo + hi);
        if (fabs(xn - x) <= 4.0 * DBL_EPSILON * xn) {
            x = xn;
            break;
        }
        x = xn;
    }
    *q = x;
    return RB_OK;
}
