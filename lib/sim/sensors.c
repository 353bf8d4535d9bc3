/* Sensor measurement models: sampling, noise, bias, drift, quantization, saturation, offset. */
#include <math.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/sim.h"

#define SENSOR_PI 3.14159265358979323846
#define SENSOR_NARRAYS 9 /* noise_std bias drift_rw_std drift_rate resolution lo hi offset walk */

const char *rb_sensor_kind_name(rb_sensor_kind kind)
{
    switch (kind) {
    case RB_SENS_CUSTOM: return "custom";
    case RB_SENS_JOINT_ENCODER: return "joint_encoder";
    case RB_SENS_MOTOR_ENCODER: return "motor_encoder";
    case RB_SENS_MOTOR_CURRENT: return "motor_current";
    case RB_SENS_FT: return "ft";
    case RB_SENS_ACCELEROMETER: return "accelerometer";
    case RB_SENS_GYROSCOPE: return "gyroscope";
    case RB_SENS_ORIENTATION: return "orientation";
    case RB_SENS_FT_RAW: return "ft_raw";
    }
    return "unknown";
}

const char *rb_sensor_kind_unit(rb_sensor_kind kind, size_t i)
{
    switch (kind) {
    case RB_SENS_JOINT_ENCODER:
    case RB_SENS_MOTOR_ENCODER:
    case RB_SENS_ORIENTATION: return "rad";
    case RB_SENS_MOTOR_CURRENT: return "A";
    case RB_SENS_FT: return i < 3 ? "N" : "N m";
    case RB_SENS_ACCELEROMETER: return "m/s^2";
    case RB_SENS_GYROSCOPE: return "rad/s";
    case RB_SENS_FT_RAW: return "counts";
    case RB_SENS_CUSTOM: break;
    }
    return "n.d.";
}

static rb_sensor_vec vec_all(double v)
{
    rb_sensor_vec r = {v, NULL};
    return r;
}

rb_sensor_params rb_sensor_params_default(const char *name, size_t n)
{
    rb_sensor_params p;
    memset(&p, 0, sizeof p);
    p.name = name;
    p.kind = RB_SENS_CUSTOM;
    p.n = n;
    p.lo = vec_all(-INFINITY);
    p.hi = vec_all(INFINITY);
    return p;
}

double rb_sensor_encoder_resolution(uint64_t counts_per_rev)
{
    return counts_per_rev == 0 ? 0.0 : 2.0 * SENSOR_PI / (double)counts_per_rev;
}

rb_sensor_params rb_sensor_preset(rb_sensor_kind kind, const char *name, size_t n)
{
    rb_sensor_params p = rb_sensor_params_default(name, n);
    p.kind = kind;
    switch (kind) {
    case RB_SENS_CUSTOM: break;
    case RB_SENS_JOINT_ENCODER:
        p.rate_hz = 1000.0;
        p.resolution = vec_all(rb_sensor_encoder_resolution(UINT64_C(1) << 14));
        break;
    case RB_SENS_MOTOR_ENCODER:
        p.rate_hz = 1000.0;
        p.resolution = vec_all(rb_sensor_encoder_resolution(4 * 4096));
        break;
    case RB_SENS_MOTOR_CURRENT:
        p.rate_hz = 1000.0;
        p.noise_std = vec_all(0.02);
        p.resolution = vec_all(1e-3);
        p.lo = vec_all(-10.0);
        p.hi = vec_all(10.0);
        break;
    case RB_SENS_FT:
        p.n = 6;
        p.rate_hz = 1000.0;
        p.noise_std = vec_all(0.5);
        p.lo = vec_all(-1500.0);
        p.hi = vec_all(1500.0);
        break;
    case RB_SENS_ACCELEROMETER:
        p.n = 3;
        p.rate_hz = 100.0;
        p.noise_std = vec_all(0.02);
        p.drift_rw_std = vec_all(1e-3);
        p.lo = vec_all(-16.0 * 9.80665);
        p.hi = vec_all(16.0 * 9.80665);
        break;
    case RB_SENS_GYROSCOPE:
        p.n = 3;
        p.rate_hz = 100.0;
        p.noise_std = vec_all(0.005);
        p.drift_rw_std = vec_all(1e-4);
        p.lo = vec_all(-2000.0 * SENSOR_PI / 180.0);
        p.hi = vec_all(2000.0 * SENSOR_PI / 180.0);
        break;
    case RB_SENS_ORIENTATION:
        p.n = 3;
        p.rate_hz = 100.0;
        p.noise_std = vec_all(0.005);
        p.wrap_angles = true;
        break;
    case RB_SENS_FT_RAW:
        p.n = 6;
        p.rate_hz = 1000.0;
        p.noise_std = vec_all(2.0);
        p.resolution = vec_all(1.0);
        p.lo = vec_all(-32767.0);
        p.hi = vec_all(32767.0);
        break;
    }
    return p;
}

uint64_t rb_sensor_seed(uint64_t scenario_seed, const char *name)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (const unsigned char *c = (const unsigned char *)(name ? name : ""); *c; c++) {
        h ^= *c;
        h *= UINT64_C(0x100000001b3);
    }
    return h ^ scenario_seed;
}

/* Element check of one per-element parameter: finite, and >= 0 when nonneg. */
static int check_vec(const rb_sensor_params *p, const char *what, rb_sensor_vec v, bool nonneg, rb_err *err)
{
    for (size_t i = 0; i < p->n; i++) {
        double x = rb_sensor_vec_at(v, i);
        if (!isfinite(x))
            return rb_err_set(err, RB_ECONFIG, "sensor %s: %s[%zu] = %g must be finite", p->name, what, i, x);
        if (nonneg && x < 0)
            return rb_err_set(err, RB_ECONFIG, "sensor %s: %s[%zu] = %g must be >= 0", p->name, what, i, x);
    }
    return RB_OK;
}

int rb_sensor_params_validate(const rb_sensor_params *p, rb_err *err)
{
    if (!p)
        return rb_err_set(err, RB_EINVAL, "sensor: no parameters");
    if (!p->name || !p->name[0])
        return rb_err_set(err, RB_ECONFIG, "sensor (unnamed): name must be given");
    if (strlen(p->name) >= RB_SENSOR_NAME_MAX)
        return rb_err_set(err, RB_ECONFIG, "sensor %.40s...: name longer than %d bytes", p->name,
                          RB_SENSOR_NAME_MAX - 1);
    if (p->n == 0)
        return rb_err_set(err, RB_ECONFIG, "sensor %s: n = 0 elements", p->name);
    if ((int)p->kind < (int)RB_SENS_CUSTOM || (int)p->kind > (int)RB_SENS_FT_RAW)
        return rb_err_set(err, RB_ECONFIG, "sensor %s: kind = %d unknown", p->name, (int)p->kind);
    if (!(p->rate_hz > 0) || !isfinite(p->rate_hz))
        return rb_err_set(err, RB_ECONFIG, "sensor %s: rate_hz = %g must be > 0 and finite", p->name, p->rate_hz);
    if (!(p->jitter_s >= 0) || !(p->jitter_s < 0.5 / p->rate_hz))
        return rb_err_set(err, RB_ECONFIG, "sensor %s: jitter_s = %g must be in [0, %g) (half a period)", p->name,
                          p->jitter_s, 0.5 / p->rate_hz);
    int rc;
    if ((rc = check_vec(p, "noise_std", p->noise_std, true, err)) ||
        (rc = check_vec(p, "drift_rw_std", p->drift_rw_std, true, err)) ||
        (rc = check_vec(p, "resolution", p->resolution, true, err)) ||
        (rc = check_vec(p, "bias", p->bias, false, err)) ||
        (rc = check_vec(p, "drift_rate", p->drift_rate, false, err)) ||
        (rc = check_vec(p, "offset", p->offset, false, err)))
        return rc;
    for (size_t i = 0; p->gain && i < p->n * p->n; i++)
        if (!isfinite(p->gain[i]))
            return rb_err_set(err, RB_ECONFIG, "sensor %s: gain[%zu][%zu] = %g must be finite", p->name, i / p->n,
                              i % p->n, p->gain[i]);
    for (size_t i = 0; i < p->n; i++) {
        double lo = rb_sensor_vec_at(p->lo, i), hi = rb_sensor_vec_at(p->hi, i);
        if (isnan(lo) || isnan(hi) || lo > hi)
            return rb_err_set(err, RB_ECONFIG, "sensor %s: saturation lo[%zu] = %g, hi[%zu] = %g: need lo <= hi",
                              p->name, i, lo, i, hi);
    }
    return RB_OK;
}

int rb_sensor_init(rb_sensor *s, const rb_sensor_params *p, uint64_t scenario_seed, double t0, rb_err *err)
{
    if (!s)
        return rb_err_set(err, RB_EINVAL, "sensor: no state");
    memset(s, 0, sizeof *s);
    int rc = rb_sensor_params_validate(p, err);
    if (rc)
        return rc;
    if (!isfinite(t0))
        return rb_err_set(err, RB_EINVAL, "sensor %s: start time %g not finite", p->name, t0);
    size_t count, extra = 0;
    if (p->gain && (!rb_size_mul(p->n, p->n + 1, &extra) || extra > SIZE_MAX / 2))
        return rb_err_set(err, RB_ENOMEM, "sensor %s: out of memory (%zu elements)", p->name, p->n);
    if (!rb_size_mul(p->n, SENSOR_NARRAYS, &count) || count > SIZE_MAX / 2 - extra ||
        !rb_size_mul(count + extra, sizeof(double), &count))
        return rb_err_set(err, RB_ENOMEM, "sensor %s: out of memory (%zu elements)", p->name, p->n);
    s->buf = rb_malloc(count);
    if (!s->buf)
        return rb_err_set(err, RB_ENOMEM, "sensor %s: out of memory (%zu elements)", p->name, p->n);
    size_t n = p->n;
    double **arr[SENSOR_NARRAYS] = {&s->noise_std, &s->bias, &s->drift_rw_std, &s->drift_rate, &s->resolution,
                                    &s->lo,        &s->hi,   &s->offset,       &s->walk};
    for (size_t a = 0; a < SENSOR_NARRAYS; a++)
        *arr[a] = s->buf + a * n;
    for (size_t i = 0; i < n; i++) {
        s->noise_std[i] = rb_sensor_vec_at(p->noise_std, i);
        s->bias[i] = rb_sensor_vec_at(p->bias, i);
        s->drift_rw_std[i] = rb_sensor_vec_at(p->drift_rw_std, i);
        s->drift_rate[i] = rb_sensor_vec_at(p->drift_rate, i);
        s->resolution[i] = rb_sensor_vec_at(p->resolution, i);
        s->lo[i] = rb_sensor_vec_at(p->lo, i);
        s->hi[i] = rb_sensor_vec_at(p->hi, i);
        s->offset[i] = rb_sensor_vec_at(p->offset, i);
        s->walk[i] = 0.0;
    }
    s->gain = p->gain ? s->buf + SENSOR_NARRAYS * n : NULL;
    if (p->gain)
        memcpy(s->gain, p->gain, n * n * sizeof *s->gain);
    memcpy(s->name, p->name, strlen(p->name) + 1);
    s->kind = p->kind;
    s->n = n;
    s->rate_hz = p->rate_hz;
    s->jitter_s = p->jitter_s;
    s->period = 1.0 / p->rate_hz;
    s->wrap_angles = p->wrap_angles;
    s->t0 = t0;
    s->t_prev = t0;
    s->k_next = 0;
    s->samples = 0;
    rb_rng_seed(&s->rng, rb_sensor_seed(scenario_seed, p->name));
    return RB_OK;
}

void rb_sensor_free(rb_sensor *s)
{
    if (!s)
        return;
    rb_free(s->buf);
    s->buf = NULL;
    s->noise_std = s->bias = s->drift_rw_std = s->drift_rate = s->resolution = NULL;
    s->lo = s->hi = s->offset = s->walk = s->gain = NULL;
}

double rb_sensor_next_time(const rb_sensor *s) { return s->t0 + (double)s->k_next / s->rate_hz; }

static double wrap_pi(double x)
{
    double w = x - 2.0 * SENSOR_PI * floor((x + SENSOR_PI) / (2.0 * SENSOR_PI));
    return w >= SENSOR_PI ? w - 2.0 * SENSOR_PI : w; /* rounding can land on +pi */
}

bool rb_sensor_due(const rb_sensor *s, double t) { return t >= rb_sensor_next_time(s) - 1e-6 * s->period; }

bool rb_sensor_step(rb_sensor *s, double t, const double *truth, double *y, double *stamp)
{
    if (!rb_sensor_due(s, t))
        return false;
    /* Skip the nominal instants already passed (a sensor faster than the simulation). */
    double k_now = floor((t - s->t0) * s->rate_hz + 1e-6);
    s->k_next = (k_now >= 0 ? (uint64_t)k_now : 0) + 1;

    double ju = rb_rng_uniform(&s->rng);
    if (stamp)
        *stamp = s->jitter_s > 0 ? t + s->jitter_s * (2.0 * ju - 1.0) : t;
    double dt = t - s->t_prev;
    double sq = dt > 0 ? sqrt(dt) : 0.0;
    double elapsed = t - s->t0;
    if (s->gain) { /* u = gain * truth into the scratch after the matrix */
        double *u = s->gain + s->n * s->n;
        for (size_t i = 0; i < s->n; i++) {
            double acc = 0.0;
            for (size_t k = 0; k < s->n; k++)
                acc += s->gain[i * s->n + k] * truth[k];
            u[i] = acc;
        }
        truth = u;
    }
    for (size_t i = 0; i < s->n; i++) {
        double zw = rb_rng_normal(&s->rng);
        double zn = rb_rng_normal(&s->rng);
        s->walk[i] += s->drift_rw_std[i] * sq * zw;
        double drift = s->walk[i] + s->drift_rate[i] * elapsed;
        double v = truth[i] + s->offset[i] + s->bias[i] + drift + s->noise_std[i] * zn;
        if (s->resolution[i] > 0)
            v = s->resolution[i] * round(v / s->resolution[i]);
        if (v < s->lo[i])
            v = s->lo[i];
        else if (v > s->hi[i])
            v = s->hi[i];
        if (s->wrap_angles)
            v = wrap_pi(v);
        y[i] = v;
    }
    s->t_prev = t;
    s->samples++;
    return true;
}
