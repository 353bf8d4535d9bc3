/* A channel's rate from the span of its samples (rb_time_report.rate), not from one rounded interval: at epoch
 * times (~1.7e9 s) doubles are 2.4e-7 s apart, every 1 ms interval is 4194 or 4195 of those steps, and
 * 1 / the median interval reads 999.8 or 1000.07 Hz for a 1 kHz log. */
#include <criterion/criterion.h>
#include <math.h>

#include "roboest/io.h"

static rb_channel *epoch_channel(rb_log **log, size_t T, double gap_at, double gap)
{
    rb_err err;
    cr_assert_eq(rb_log_new(log, &err), RB_OK);
    rb_channel *ch;
    cr_assert_eq(rb_log_add_channel(*log, "enc", T, 1, &ch, &err), RB_OK);
    for (size_t k = 0; k < T; k++) {
        ch->time[k] = 1.7e9 + (double)k * 1e-3 + ((double)k >= gap_at ? gap : 0);
        ch->data[k] = 0;
    }
    return ch;
}

Test(io_time_rate, epoch_1khz_reads_1000_hz)
{
    rb_log *log;
    rb_channel *ch = epoch_channel(&log, 20001, INFINITY, 0);
    rb_time_report rep;
    rb_err err;
    cr_assert_eq(rb_channel_check_time(ch, 3.0, &rep, &err), RB_OK, "%s", err.msg);
    cr_assert(fabs(rep.rate - 1000) < 1e-3, "rate %.9g Hz (1 / median interval: %.9g)", rep.rate, 1 / rep.median_dt);
    cr_assert_eq(rep.n_gaps, 0, "the jitter is no gap");
    rb_log_free(log);
}

/* Gaps are left out of the span: a 1 kHz log with a 2 s hole is still 1 kHz. */
Test(io_time_rate, gaps_left_out)
{
    rb_log *log;
    rb_channel *ch = epoch_channel(&log, 5001, 2500, 2.0);
    rb_time_report rep;
    rb_err err;
    cr_assert_eq(rb_channel_check_time(ch, 3.0, &rep, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rep.n_gaps, 1);
    cr_assert(fabs(rep.rate - 1000) < 1e-3, "rate %.9g Hz", rep.rate);
    rb_log_free(log);
}
