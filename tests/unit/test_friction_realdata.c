/* Friction identification on data shaped like real robot logs: the tanh6 fit against the Coulomb-viscous
 * model it contains (g1 = 0, g4 = F_c, g5 = 1 / v_eps, g6 = F_v; with the exact sign, g5 large enough that
 * tanh(g5 v) rounds to sgn(v) on every sample), and the optional constant offset of the analytic fits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roboest/filters.h"
#include "roboest/friction.h"
#include "roboest/training.h"
#include "support.h"

enum { NS = 20000 }; /* 20 s at 1 kHz */

static double v[NS], tau[NS];

/* A joint that swings, dwells near rest and swings again; the logged velocity carries encoder-like noise
 * (sd_v), so near rest it flips sign while the friction does not follow it. */
static void make_cv_data(double F_c, double F_v, double sd_v, double sd_tau, double offset, uint64_t seed)
{
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    for (int k = 0; k < NS; k++) {
        double t = 1e-3 * k, vt = 0.4 * sin(2 * M_PI * 0.2 * t) * (k % 5000 < 3500 ? 1.0 : 0.02);
        v[k] = vt + sd_v * rb_rng_normal(&rng);
        tau[k] = F_c * (vt > 0 ? 1 : vt < 0 ? -1 : 0) + F_v * vt + offset + sd_tau * rb_rng_normal(&rng);
    }
}

static double rmse_of(const rb_friction_model *m, double c)
{
    double s = 0;
    for (int k = 0; k < NS; k++) {
        double r = tau[k] - rb_friction_eval(m, v[k]) - c;
        s += r * r;
    }
    return sqrt(s / NS);
}

/* tanh6 is never worse than the Coulomb-viscous fit on the same samples: on clean Coulomb-viscous data with
 * noise (exact sign and a smooth sign) and on data with a noisy velocity near rest, where the grid-only start
 * (scales bounded by 1e3 / max|v|) ended above it. */
Test(friction_realdata, tanh6_never_worse_than_coulomb_viscous)
{
    test_deadline(60);
    const struct {
        double sd_v, sd_tau, v_eps;
    } cases[] = {{0, 0.02, 0}, {0, 0.02, 0.01}, {0.002, 0.02, 0}, {0.01, 0.05, 0}, {0.0005, 0.001, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        make_cv_data(0.3, 0.6, cases[c].sd_v, cases[c].sd_tau, 0, 21 + c);
        rb_friction_fit_opts o = {.v_eps = cases[c].v_eps};
        rb_friction_model cv, t6;
        double r_cv, r_t6;
        rb_err err;
        cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, v, tau, NS, &o, &cv, &r_cv, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_friction_fit(RB_FRICTION_TANH6, v, tau, NS, &o, &t6, &r_t6, &err), RB_OK, "%s", err.msg);
        cr_log_info("case %zu: coulomb_viscous %.6g, tanh6 %.6g", c, r_cv, r_t6);
        cr_assert_eq(rb_friction_validate(&t6, &err), RB_OK, "%s", err.msg);
        cr_assert(fabs(r_t6 - rmse_of(&t6, 0)) <= 1e-12 * r_t6);
        cr_assert(r_t6 <= r_cv, "case %zu: tanh6 RMSE %.9g above coulomb_viscous %.9g", c, r_t6, r_cv);
    }
}

/* The early-stopping note: which epoch of how many, and the warning (return true) only for the first of
 * several. */
Test(friction_realdata, early_stopping_note)
{
    char buf[256];
    rb_friction_net_train_result r = {.epochs_run = 16, .best_epoch = 1};
    cr_assert(rb_friction_net_early_stopping(&r, buf, sizeof buf));
    cr_assert_str_eq(buf, "kept epoch 1 of 16: the validation loss never improved after the first epoch (check the "
                          "learning rate or the data)");
    r.best_epoch = 12, r.epochs_run = 32;
    cr_assert(!rb_friction_net_early_stopping(&r, buf, sizeof buf));
    cr_assert_str_eq(buf, "kept epoch 12 of 32 (stopped 20 epochs after it)");
    r.best_epoch = 1, r.epochs_run = 1;
    cr_assert(!rb_friction_net_early_stopping(&r, buf, sizeof buf), "one epoch asked, one kept: no warning");
    cr_assert_str_eq(buf, "kept epoch 1 of 1");
}

/* Every sample goes into the analytic fits, the first H - 1 of each log too (the network's rows need a history
 * of H; the analytic models do not): on two logs of 300 samples with H 50, the fits see 600 samples and their
 * RMSE is that of the returned model over all 600. The logs have no motor velocity channel (analytic only). */
Test(friction_realdata, analytic_fits_use_every_sample)
{
    char dir[] = "/tmp/roboest_fric_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    enum { TS = 300 };
    static double vs[2 * TS], fs[2 * TS];
    rb_rng rng;
    rb_rng_seed(&rng, 5);
    for (int l = 0; l < 2; l++) {
        char path[64];
        snprintf(path, sizeof path, "%s/log%d.csv", dir, l);
        FILE *fp = fopen(path, "w");
        cr_assert_not_null(fp);
        fprintf(fp, "time,joints_state/velocities:j1,friction:j1\n");
        for (int k = 0; k < TS; k++) {
            /* the first 49 samples of a log move the other way: a fit without them would miss it */
            double vk = k < 49 ? -0.3 - 0.001 * k : 0.05 + 0.002 * k, f = 0.3 * (vk > 0 ? 1 : -1) + 0.7 * vk;
            vs[l * TS + k] = vk;
            fs[l * TS + k] = f + 0.01 * rb_rng_normal(&rng);
            fprintf(fp, "%.17g,%.17g,%.17g\n", 1e-3 * k, vs[l * TS + k], fs[l * TS + k]);
        }
        fclose(fp);
    }
    char base[64];
    snprintf(base, sizeof base, "%s/spec.json", dir);
    const char *text = "{\"logs\": [\"log0.csv\", \"log1.csv\"], \"joints\": [\"j1\"],\n"
                       " \"friction\": {\"channel\": \"friction\"}, \"network\": {\"H\": 50},\n"
                       " \"analytic\": [\"coulomb_viscous\", \"scv\"]}";
    rb_friction_spec *spec = NULL;
    rb_friction_train_result *res = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_spec_load_text(text, strlen(text), "spec.json", base, &spec, &err), RB_OK, "%s", err.msg);
    rb_friction_train_opts o = {.network = false};
    cr_assert_eq(rb_friction_train(spec, &o, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->n_samples, 2 * TS);
    cr_assert_eq(res->n_rows[0], 2 * (TS - 49), "the network's rows still start at a full history");
    for (size_t a = 0; a < 2; a++) {
        double s = 0;
        for (int k = 0; k < 2 * TS; k++) {
            double e = fs[k] - rb_friction_eval(&res->analytic[a], vs[k]);
            s += e * e;
        }
        double want = sqrt(s / (2 * TS));
        cr_assert(fabs(res->analytic_rmse[a] - want) <= 1e-12 * want, "model %zu: RMSE %.15g over all samples %.15g", a,
                  res->analytic_rmse[a], want);
    }
    cr_assert(fabs(res->analytic[0].cv.F_c - 0.3) < 0.01, "F_c %g", res->analytic[0].cv.F_c);
    rb_friction_train_result_free(res);
    rb_friction_spec_free(spec);
    for (int l = 0; l < 2; l++) {
        char path[64];
        snprintf(path, sizeof path, "%s/log%d.csv", dir, l);
        remove(path);
    }
    rmdir(dir);
}

/* The constant term: on Coulomb-viscous data with a bias of 0.15 N m (noise 0.02), every fitted model finds the
 * bias within 0.005 and its RMSE (of model + c) is the noise's within 5 %, while the fits without the term are
 * far worse; offset NULL is rb_friction_fit exactly. */
Test(friction_realdata, offset_term_is_recovered)
{
    test_deadline(60);
    make_cv_data(0.3, 0.6, 0, 0.02, 0.15, 3);
    const rb_friction_kind kinds[] = {RB_FRICTION_CV, RB_FRICTION_SCV, RB_FRICTION_TANH6};
    for (size_t i = 0; i < 3; i++) {
        rb_friction_model m, plain, same;
        double c = NAN, r, r_plain, r_same;
        rb_err err;
        cr_assert_eq(rb_friction_fit_offset(kinds[i], v, tau, NS, NULL, &m, &c, &r, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_friction_fit(kinds[i], v, tau, NS, NULL, &plain, &r_plain, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_friction_fit_offset(kinds[i], v, tau, NS, NULL, &same, NULL, &r_same, &err), RB_OK);
        cr_log_info("%s: offset %.5g, RMSE %.5g (without the term %.5g)", rb_friction_kind_name(kinds[i]), c, r,
                    r_plain);
        cr_assert(fabs(c - 0.15) < 0.005, "%s: offset %g", rb_friction_kind_name(kinds[i]), c);
        cr_assert(fabs(r - rmse_of(&m, c)) <= 1e-12 * r);
        cr_assert(r < 1.05 * 0.02 && r > 0.95 * 0.02, "%s: RMSE %g", rb_friction_kind_name(kinds[i]), r);
        cr_assert(r_plain > 2 * r, "%s: without the term %g", rb_friction_kind_name(kinds[i]), r_plain);
        cr_assert_eq(memcmp(&same, &plain, sizeof same), 0);
        cr_assert_eq(r_same, r_plain);
    }
}

/* "friction" replaces the torque residual: its keys beside it are an error naming the key (not silently
 * unused); without them the spec needs no torque, current, k_t or R. */
Test(friction_realdata, friction_key_excludes_the_residual_keys)
{
    const char *ok = "{\"joints\": [\"j1\"], \"friction\": {\"channel\": \"tau_f\", \"elements\": [\"0\"]}}";
    rb_friction_spec *s = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_spec_load_text(ok, strlen(ok), "spec.json", "spec.json", &s, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(s->friction.channel, "tau_f");
    cr_assert_str_eq(s->friction.elements[0], "0");
    cr_assert_null(s->k_t);
    cr_assert(!s->analytic_offset);
    rb_friction_spec_free(s);
    const char *bad[] = {"torque", "k_t", "current"};
    const char *texts[] = {
        "{\"joints\": [\"j1\"], \"friction\": {\"channel\": \"f\"}, \"torque\": {\"channel\": \"t\"}}",
        "{\"joints\": [\"j1\"], \"friction\": {\"channel\": \"f\"}, \"k_t\": [0.1]}",
        "{\"joints\": [\"j1\"], \"friction\": {\"channel\": \"f\"}, \"current\": {\"channel\": \"c\"}}"};
    for (int i = 0; i < 3; i++) {
        s = NULL;
        cr_assert_eq(rb_friction_spec_load_text(texts[i], strlen(texts[i]), "spec.json", "spec.json", &s, &err),
                     RB_ECONFIG);
        cr_assert_null(s);
        cr_assert_not_null(strstr(err.msg, bad[i]), "%s", err.msg);
        cr_assert_not_null(strstr(err.msg, "not used with 'friction'"), "%s", err.msg);
    }
    const char *flag = "{\"joints\": [\"j1\"], \"friction\": {\"channel\": \"f\"}, \"analytic_offset\": 1}";
    cr_assert_eq(rb_friction_spec_load_text(flag, strlen(flag), "spec.json", "spec.json", &s, &err), RB_ECONFIG);
    cr_assert_not_null(strstr(err.msg, "analytic_offset"), "%s", err.msg);
}
