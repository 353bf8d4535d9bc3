/* The start-up a run's metrics skip by default: the largest settling time the stages' types declare. */
#include <math.h>

#include "pipeline_internal.h"

double rb_pipeline_settle(const rb_pipeline *p, double dt, long *stage)
{
    if (stage)
        *stage = -1;
    if (p->has_settle)
        return p->settle;
    double worst = 0.0;
    for (size_t s = 0; s < p->n_stages; s++) {
        const rb_config_stage *st = &p->stages[s];
        if (!st->type->settle || !(dt > 0) || !isfinite(dt))
            continue;
        rb_params params = {st->type, st->params};
        double t = st->type->settle(&params, dt);
        if (isfinite(t) && t > worst) {
            worst = t;
            if (stage)
                *stage = (long)s;
        }
    }
    return worst;
}

double rb_pipeline_period(const rb_pipeline *p, const rb_log *log)
{
    if (!p->clock_channel)
        return 1.0 / p->clock_rate;
    const rb_channel *ch = rb_log_find(log, p->clock_channel);
    rb_time_report rep;
    rb_err err;
    return ch && rb_channel_check_time(ch, p->gap_factor, &rep, &err) == RB_OK ? rep.median_dt : NAN;
}
