/* The pipeline_run suite's registry and fixtures (test_pipeline_run.c), shared with test_pipeline_write.c. */
#ifndef ROBOEST_TEST_PIPELINE_SUPPORT_H
#define ROBOEST_TEST_PIPELINE_SUPPORT_H

#include <stddef.h>

#include "roboest/pipeline.h"

/* The suite's registry (set up by its .init): the estimators and the test stages failing, late, multi, opt. */
extern rb_registry *reg;

/* joints/q: hip = 2t, knee = 1 - t (rad); joints/qd: 2.5 and -1 (the hip reference is off by 0.5);
 * imu/acc: 3 elements at half the rate over a shorter span. Times k * dt from t0. */
rb_log *make_log(size_t T, double dt, double t0);

/* Finite differences and a low-pass of joints/q at 100 Hz, an .h5 output, a metric against joints/qd, two
 * reports. */
extern const char *run_config;
/* The config `text` loaded as "run.json" with reg (asserts success). */
rb_pipeline *load(const char *text);
/* The run config with `from` replaced by `to` (once). */
rb_pipeline *load_edited(const char *from, const char *to);
/* rb_pipeline_run_log of p on log with err cleared first. */
int run(const rb_pipeline *p, const rb_log *log, rb_run_result **res, rb_err *err);
/* A progress callback counting its calls: calls[0] the count, calls[1] and calls[2] the last done and total. */
int count_calls(void *user, size_t done, size_t total);

#endif
