/* The arm on a pole (configs/scenarios/arm_pole.json) with extra scenario keys, for the simulator's tests. */
#ifndef SIM_ARM_SUPPORT_H
#define SIM_ARM_SUPPORT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"
#include "support.h"

#define ARM_POLE RB_SOURCE "/configs/scenarios/arm_pole.json"

/* arm_pole.json with `extra` ("key": value, ...) added first; NULL: as it is. Returns the load status. */
static inline int load_arm(const char *extra, rb_scenario **s, rb_err *err)
{
    size_t len;
    char *base = test_slurp(ARM_POLE, &len), *brace = strchr(base, '{');
    cr_assert_not_null(brace, "%s", ARM_POLE);
    size_t n = strlen(base) + (extra ? strlen(extra) : 0) + 8;
    char *text = malloc(n);
    snprintf(text, n, "{%s%s%s", extra ? extra : "", extra ? ", " : "", brace + 1);
    *s = NULL;
    int rc = rb_scenario_load_text(text, strlen(text), "mismatch.json", ARM_POLE, s, err);
    free(text);
    free(base);
    return rc;
}

static inline rb_scenario *arm(const char *extra)
{
    rb_scenario *s;
    rb_err err;
    cr_assert_eq(load_arm(extra, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

#endif
