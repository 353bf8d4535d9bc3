/* Real-time factor of the ukf_torque stage at 1 kHz on one core (OpenBLAS single-threaded, as the roboest
 * command runs it). Never a timed test: it prints a table.
 *   - the ergoCub right leg on a pole (the public configuration rde_configs/ergoCubSN000_r_leg: 6 joints, base
 *     root_link, the two foot FTs, contacts r_foot_front / r_foot_rear, accelerometers and gyroscopes at the leg
 *     and foot FT frames): state 42, 42 measurements; target >= 5x real time (<= 200 us per sample);
 *   - the floating-base humanoid lower body (datasets/humanoid_lower_body.urdf: 12 leg joints, six FTs, four foot
 *     contacts, waist and foot IMUs, base_imu waist_imu): state 102, 78 measurements; target >= real time.
 * Each also with the friction input wired (n more measurements), and with the online friction correction
 * (friction_correction ["coulomb", "viscous", "stribeck"]: 3 n more states); the correction's overhead from a second
 * run of the structured filter with and without it alternating batch by batch. Inputs are smooth synthetic signals (the cost
 * does not depend on their values); one step = the stage's step (predict, matrices at q, update, outputs).
 * Each case runs the dense filter (sigma_points "dense": every sigma point), the structured one (the default: the
 * same estimates to rounding) and the structured one with velocity_terms "mean" (an approximation: one dynamics pass
 * per phase) side by side, alternating batches. Timing: 300 warm-up samples, then the median
 * of 15 batches of 1000 samples. Then the exact filter's least update at each case's sizes (the dense calls every
 * update makes whatever the model), and how much of the correction's added time they alone take.
 * Usage: bench_ukf [source folder] [shared folder] (defaults RB_SOURCE / RB_SHARED or "." / "../shared"). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "bench_timing.h"

typedef struct bench_case {
    const char *label, *text[4]; /* pipelines whose stage 0 is the ukf_torque to time: each form */
    bool friction;
} bench_case;

/* Synthetic smooth inputs of sample k at 1 kHz. */
static void inputs(const rb_port *in, size_t k, double **buf)
{
    double t = 1e-3 * (double)k;
    for (size_t p = 0; p < 7; p++)
        for (size_t i = 0; i < in[p].width; i++) {
            double ph = 0.7 * (double)i + (double)p, s = sin(2 * M_PI * 0.5 * t + ph);
            switch (p) {
            case 0: buf[p][i] = 0.3 * s; break;                                   /* q */
            case 1: buf[p][i] = 0.3 * M_PI * cos(2 * M_PI * 0.5 * t + ph); break; /* dq */
            case 2: buf[p][i] = 0.5 * s; break;                                   /* current */
            case 3: buf[p][i] = (i % 6 == 2 ? 50.0 : 2.0) + 3.0 * s; break;       /* ft */
            case 4: buf[p][i] = (i % 3 == 2 ? 9.81 : 0.0) + 0.3 * s; break;       /* acc */
            case 5: buf[p][i] = 0.1 * s; break;                                   /* gyro */
            default: buf[p][i] = 0.2 * s; break;                                  /* friction */
            }
        }
}

/* One ukf_torque stage made from a pipeline text, its buffers, and the sample it is at. */
typedef struct runner {
    rb_pipeline *p;
    const rb_stage_type *ty;
    void *state;
    rb_port in[7], out[16];
    double *inb[7], *outb[16];
    size_t N, M, k;
} runner;

static void runner_free(runner *r)
{
    for (size_t i = 0; i < 7; i++)
        free(r->inb[i]);
    for (size_t j = 0; r->ty && j < r->ty->n_outputs; j++)
        free(r->outb[j]);
    if (r->state)
        r->ty->destroy(r->state);
    rb_pipeline_free(r->p);
}

static int runner_make(const char *label, const char *text, bool friction, const rb_registry *reg, runner *r)
{
    rb_err err;
    memset(r, 0, sizeof *r);
    if (rb_pipeline_load_text(text, strlen(text), label, NULL, reg, &r->p, &err) < 0) {
        fprintf(stderr, "%s: %s\n", label, err.msg);
        return 1;
    }
    const rb_config_stage *cs = &r->p->stages[0];
    const rb_model *m = r->p->model;
    r->ty = cs->type;
    static rb_params params[2];
    static int which;
    rb_params *pp = &params[which++ % 2];
    *pp = (rb_params){r->ty, cs->params};
    const rb_param_value *fts = rb_params_get(pp, "ft_sensors"), *acc = rb_params_get(pp, "accelerometers"),
                         *gyr = rb_params_get(pp, "gyroscopes");
    size_t w[7] = {
        m->n_dofs, m->n_dofs, m->n_dofs, 6 * fts->count, 3 * acc->count, 3 * gyr->count, friction ? m->n_dofs : 0};
    for (size_t i = 0; i < 7; i++)
        r->in[i] = (rb_port){w[i], NULL, NULL};
    static double times[1] = {0};
    rb_stage_setup setup = {"ukf", pp, r->in, r->out, 1e-3, 1, times, m, "."};
    if (r->ty->create(&setup, &r->state, &err) < 0) {
        fprintf(stderr, "%s: %s\n", label, err.msg);
        rb_pipeline_free(r->p);
        memset(r, 0, sizeof *r);
        return 1;
    }
    for (size_t i = 0; i < 7; i++)
        r->inb[i] = calloc(r->in[i].width + 1, sizeof(double));
    for (size_t j = 0; j < r->ty->n_outputs; j++) {
        r->outb[j] = calloc(r->out[j].width + 1, sizeof(double));
        if (strcmp(r->ty->outputs[j], "var") == 0) /* the widths of the state and the measurements */
            r->N = r->out[j].width;
        if (strcmp(r->ty->outputs[j], "innovation") == 0)
            r->M = r->out[j].width;
    }
    return 0;
}

/* count samples; returns the thread CPU seconds they took, or -1 on an error. */
static double runner_steps(runner *r, size_t count, const char *label)
{
    rb_err err;
    double c0 = thread_seconds();
    for (size_t s = 0; s < count; s++, r->k++) {
        inputs(r->in, r->k, r->inb);
        if (r->ty->step(r->state, r->k, 1e-3 * (double)r->k, (const double *const *)r->inb, r->outb, &err) < 0) {
            fprintf(stderr, "%s: sample %zu: %s\n", label, r->k, err.msg);
            return -1.0;
        }
    }
    return thread_seconds() - c0;
}

enum {
    FORMS = 4
}; /* dense, structured, structured with the velocity terms at the mean, structured refreshed every
                      * REFRESH samples */

/* The exact filter's least update: the three dense calls every update of N states on M measurements makes whatever
 * the model (the innovation covariance's Cholesky factor, dpotrf M; the gain's triangular solve, dtrsm N x M; the
 * covariance's rank-M downdate, dsyrk N x M), alone on made-up matrices: us per call triple, median of 15 batches
 * of 1000. No faster filter computes the same estimates without them (P is dense after the first updates). */
static double update_floor_us(size_t N, size_t M)
{
    enum { REPS = 1000, BATCHES = 15 };
    double *S0 = calloc(M * M, sizeof *S0), *S = calloc(M * M, sizeof *S), *W0 = calloc(N * M, sizeof *W0);
    double *W = calloc(N * M, sizeof *W), *P = calloc(N * N, sizeof *P), cpu[BATCHES];
    for (size_t j = 0; j < M; j++)
        for (size_t i = 0; i < M; i++)
            S0[i + j * M] = (i == j ? (double)M : 0.0) + 0.01 * (double)((i + j) % 7);
    for (size_t i = 0; i < N * M; i++)
        W0[i] = sin(0.37 * (double)i);
    for (size_t i = 0; i < N; i++)
        P[i + i * N] = 1.0;
    for (int b = -1; b < BATCHES; b++) {
        double t0 = thread_seconds();
        for (int r = 0; r < REPS; r++) {
            memcpy(S, S0, M * M * sizeof *S);
            memcpy(W, W0, N * M * sizeof *W);
            LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (int)M, S, (int)M);
            cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, (int)N, (int)M, 1.0, S, (int)M,
                        W, (int)N);
            cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)N, (int)M, -1e-12, W, (int)N, 1.0, P, (int)N);
        }
        if (b >= 0)
            cpu[b] = (thread_seconds() - t0) / REPS;
    }
    qsort(cpu, BATCHES, sizeof cpu[0], cmp_double);
    free(S0), free(S), free(W0), free(W), free(P);
    return 1e6 * cpu[BATCHES / 2];
}

/* The forms of one case, alternating batches; CPU us per sample of each into us[FORMS]. */
static int run(const bench_case *bc, const rb_registry *reg, double us[FORMS], size_t dims[2])
{
    enum { WARM = 300, BATCH = 1000, BATCHES = 15 };
    runner r[FORMS];
    int rc = 0, made = 0;
    int forms = bc->text[FORMS - 1] ? FORMS : FORMS - 1; /* refresh_every is not with the friction correction */
    for (; made < forms && !rc; made += !rc)
        rc = runner_make(bc->label, bc->text[made], bc->friction, reg, &r[made]);
    double cpu[FORMS][BATCHES];
    for (int v = 0; v < forms && !rc; v++)
        rc = runner_steps(&r[v], WARM, bc->label) < 0;
    for (int b = 0; b < BATCHES && !rc; b++)
        for (int v = 0; v < forms && !rc; v++)
            rc = (cpu[v][b] = runner_steps(&r[v], BATCH, bc->label) / BATCH) < 0;
    if (!rc) {
        us[FORMS - 1] = NAN;
        for (int v = 0; v < forms; v++) {
            qsort(cpu[v], BATCHES, sizeof cpu[v][0], cmp_double);
            us[v] = 1e6 * cpu[v][BATCHES / 2];
        }
        dims[0] = r[1].N, dims[1] = r[1].M;
        char refresh[64] = "- | -"; /* not with the friction correction */
        if (forms == FORMS)
            snprintf(refresh, sizeof refresh, "%.1f | %.1f", us[3], 1000.0 / us[3]);
        printf("| %s | %zu | %zu | %zu | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %s |\n", bc->label,
               r[1].p->model->n_dofs, r[1].N, r[1].M, us[0], 1000.0 / us[0], us[1], 1000.0 / us[1], us[0] / us[1],
               us[2], 1000.0 / us[2], refresh);
    }
    for (int v = 0; v < made; v++)
        runner_free(&r[v]);
    return rc ? 1 : 0;
}

/* The structured filter with the friction input, without and with the correction, alternating batch by batch in one
 * run: the correction's added time per sample as the median of the per-batch ratios. */
static int run_pair(const char *label, const char *off, const char *on, const rb_registry *reg)
{
    enum { WARM = 300, BATCH = 1000, BATCHES = 21 };
    runner r[2];
    int rc = runner_make(label, off, true, reg, &r[0]);
    if (rc)
        return 1;
    if ((rc = runner_make(label, on, true, reg, &r[1]))) {
        runner_free(&r[0]);
        return 1;
    }
    double cpu[2][BATCHES], ratio[BATCHES];
    for (int v = 0; v < 2 && !rc; v++)
        rc = runner_steps(&r[v], WARM, label) < 0;
    for (int b = 0; b < BATCHES && !rc; b++) {
        for (int v = 0; v < 2 && !rc; v++)
            rc = (cpu[v][b] = runner_steps(&r[(b + v) % 2 ? 1 : 0], BATCH, label) / BATCH) < 0;
        if (b % 2) { /* odd batches ran "on" first */
            double t = cpu[0][b];
            cpu[0][b] = cpu[1][b], cpu[1][b] = t;
        }
        ratio[b] = cpu[1][b] / cpu[0][b];
    }
    if (!rc) {
        qsort(cpu[0], BATCHES, sizeof cpu[0][0], cmp_double);
        qsort(cpu[1], BATCHES, sizeof cpu[1][0], cmp_double);
        qsort(ratio, BATCHES, sizeof ratio[0], cmp_double);
        double base_us = 1e6 * cpu[0][BATCHES / 2],
               floor_added = update_floor_us(r[1].N, r[1].M) - update_floor_us(r[0].N, r[0].M);
        printf("| %s | %zu | %zu | %.1f | %.1f | %+.1f %% | %+.1f %% |\n", label, r[0].N, r[1].N, base_us,
               1e6 * cpu[1][BATCHES / 2], 100.0 * (ratio[BATCHES / 2] - 1.0), 100.0 * floor_added / base_us);
    }
    runner_free(&r[0]);
    runner_free(&r[1]);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
#ifdef RB_SOURCE
    const char *src = argc > 1 ? argv[1] : RB_SOURCE;
#else
    const char *src = argc > 1 ? argv[1] : ".";
#endif
#ifdef RB_SHARED
    const char *shared = argc > 2 ? argv[2] : RB_SHARED;
#else
    const char *shared = argc > 2 ? argv[2] : "../shared";
#endif
    openblas_set_num_threads(1);
    rb_registry *reg = NULL;
    rb_err err;
    if (rb_registry_new(&reg, &err) < 0 || rb_estimators_register(reg, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    static const char leg_fmt[] =
        "{\"model\": {\"urdf\": \"%s/models/ergoCubSN000.urdf\", \"base\": \"root_link\", \"joints\": "
        "[\"r_hip_pitch\", "
        "\"r_hip_roll\", \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", \"r_ankle_roll\"]},"
        " \"clock\": {\"rate\": 1000}, \"signals\": {\"s\": {\"channel\": \"x\"}},"
        " \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\", \"in\": {\"q\": \"s\", \"dq\": \"s\", \"current\": "
        "\"s\","
        " \"ft\": \"s\", \"acc\": \"s\", \"gyro\": \"s\"%s}, \"out\": {\"tau_j\": \"tau\"}, \"params\": {"
        " \"ft_sensors\": [\"r_foot_front_ft_sensor\", \"r_foot_rear_ft_sensor\"], \"contacts\": [\"r_foot_front\", "
        "\"r_foot_rear\"], \"accelerometers\": [\"r_leg_ft_sensor\", \"r_foot_front_ft_sensor\", "
        "\"r_foot_rear_ft_sensor\"], \"gyroscopes\": [\"r_leg_ft_sensor\", \"r_foot_front_ft_sensor\", "
        "\"r_foot_rear_ft_sensor\"], \"k_t\": [0.111, 0.047, 0.047, 0.111, 0.111, 0.025], "
        "\"gear_ratio\": [100, -160, 100, 100, 100, 160]%s}}]}";
    static const char hum_fmt[] =
        "{\"model\": {\"urdf\": \"%s/datasets/humanoid_lower_body.urdf\", \"floating\": true, \"joints\": ["
        "\"l_hip_pitch\", \"l_hip_roll\", \"l_hip_yaw\", \"l_knee\", \"l_ankle_pitch\", \"l_ankle_roll\", "
        "\"r_hip_pitch\", \"r_hip_roll\", \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", \"r_ankle_roll\"]},"
        " \"clock\": {\"rate\": 1000}, \"signals\": {\"s\": {\"channel\": \"x\"}},"
        " \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\", \"in\": {\"q\": \"s\", \"dq\": \"s\", \"current\": "
        "\"s\","
        " \"ft\": \"s\", \"acc\": \"s\", \"gyro\": \"s\"%s}, \"out\": {\"tau_j\": \"tau\"}, \"params\": {"
        " \"ft_sensors\": [\"l_leg_ft_sensor\", \"l_foot_front_ft_sensor\", \"l_foot_rear_ft_sensor\", "
        "\"r_leg_ft_sensor\", \"r_foot_front_ft_sensor\", \"r_foot_rear_ft_sensor\"], \"contacts\": "
        "[\"l_foot_front_contact\", \"l_foot_rear_contact\", \"r_foot_front_contact\", \"r_foot_rear_contact\"], "
        "\"accelerometers\": [\"waist_imu\", \"l_foot_imu\", \"r_foot_imu\"], \"gyroscopes\": [\"waist_imu\", "
        "\"l_foot_imu\", \"r_foot_imu\"], \"base_imu\": \"waist_imu\", \"k_t\": [0.1], \"gear_ratio\": [100]%s}}]}";
    static char text[6 * FORMS][4096];
    static const char fric[] = ", \"friction\": \"s\"";
    static const char *const form[FORMS] = {", \"sigma_points\": \"dense\"", "", ", \"velocity_terms\": \"mean\"",
                                            ", \"refresh_every\": 8"};
    static const char adapt[] = ", \"friction_correction\": [\"coulomb\", \"viscous\", \"stribeck\"]";
    static char adapt_form[FORMS][256];
    bench_case cases[6] = {{"ergoCub right leg on a pole", {0}, false},
                           {"ergoCub right leg, friction input", {0}, true},
                           {"ergoCub right leg, friction input + correction", {0}, true},
                           {"humanoid lower body, floating", {0}, false},
                           {"humanoid lower body, friction input", {0}, true},
                           {"humanoid lower body, friction input + correction", {0}, true}};
    for (int d = 0; d < FORMS; d++) {
        char(*t)[4096] = text + 6 * d;
        snprintf(adapt_form[d], sizeof adapt_form[d], "%s%s", adapt, form[d]);
        snprintf(t[0], sizeof t[0], leg_fmt, shared, "", form[d]);
        snprintf(t[1], sizeof t[1], leg_fmt, shared, fric, form[d]);
        snprintf(t[2], sizeof t[2], leg_fmt, shared, fric, adapt_form[d]);
        snprintf(t[3], sizeof t[3], hum_fmt, src, "", form[d]);
        snprintf(t[4], sizeof t[4], hum_fmt, src, fric, form[d]);
        snprintf(t[5], sizeof t[5], hum_fmt, src, fric, adapt_form[d]);
        for (int c = 0; c < 6; c++)
            cases[c].text[d] = d == FORMS - 1 && (c == 2 || c == 5) ? NULL : t[c]; /* not with the correction */
    }
    printf("ukf_torque at 1 kHz, one core (OpenBLAS %s, 1 thread); thread CPU time, median of 15 batches of 1000 "
           "samples; the dense filter (sigma_points \"dense\"), the structured one (the default: the same estimates) "
           "and the structured one with velocity_terms \"mean\" and with refresh_every 8 (approximations), alternating "
           "batch by batch\n\n",
           openblas_get_config());
    printf("| case | joints | state | measurements | dense us / sample | x real time | structured us / sample | x "
           "real time | speed-up | mean terms us / sample | x real time | refresh_every 8 us / sample | x real time |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int fails = 0;
    double cus[6][FORMS] = {{0}}; /* us per sample of each case and form */
    size_t dims[6][2];            /* state and measurements of each case */
    for (int i = 0; i < 6; i++)
        fails += run(&cases[i], reg, cus[i], dims[i]);
    printf("\nThe exact filter's least update at each case's sizes: dpotrf (measurements) + dtrsm and dsyrk (state x "
           "measurements) alone, the calls every update makes whatever the model (us, median of 15 batches of 1000; "
           "share: of the structured filter's step)\n\n"
           "| case | state | measurements | update floor us | share | left for the rest of a step at 50x (leg) / 10x "
           "(humanoid) "
           "us |\n|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < 6; i++) {
        double fl = update_floor_us(dims[i][0], dims[i][1]), budget = i < 3 ? 20.0 : 100.0;
        printf("| %s | %zu | %zu | %.1f | %.0f %% | %.1f |\n", cases[i].label, dims[i][0], dims[i][1], fl,
               100.0 * fl / cus[i][1], budget - fl);
    }
    printf("\nOnline friction correction (friction_correction [\"coulomb\", \"viscous\", \"stribeck\"]), structured "
           "filter with the friction input, without and with the correction alternating batch by batch (21 batches of "
           "1000 samples; added: the median of the per-batch ratios; target at most +15 %%), CPU us per sample:\n\n"
           "| model | state | with correction | friction input | + correction | added | of which the update floor "
           "(above) alone |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n");
    fails += run_pair("ergoCub right leg (6 joints)", cases[1].text[1], cases[2].text[1], reg);
    fails += run_pair("humanoid lower body (12)", cases[4].text[1], cases[5].text[1], reg);
    rb_registry_free(reg);
    return fails ? 1 : 0;
}
