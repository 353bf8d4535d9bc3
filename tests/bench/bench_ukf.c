/* Real-time factor of the ukf_torque stage at 1 kHz on one core (OpenBLAS single-threaded, as the roboest
 * command runs it). Never a timed test: it prints a table.
 *   - the ergoCub right leg on a pole (the public configuration rde_configs/ergoCubSN000_r_leg: 6 joints, base
 *     root_link, the two foot FTs, contacts r_foot_front / r_foot_rear, accelerometers and gyroscopes at the leg
 *     and foot FT frames): state 42, 42 measurements; target >= 5x real time (<= 200 us per sample);
 *   - the floating-base humanoid lower body (datasets/humanoid_lower_body.urdf: 12 leg joints, six FTs, four foot
 *     contacts, waist and foot IMUs, base_imu waist_imu): state 102, 78 measurements; target >= real time.
 * Each also with the friction input wired (n more measurements), and with the online friction correction
 * (friction_correction ["coulomb", "viscous", "stribeck"]: 3 n more states), printed side by side with its overhead. Inputs are smooth synthetic signals (the cost
 * does not depend on their values); one step = the stage's step (predict, matrices at q, update, outputs).
 * Timing: 300 warm-up samples, then the median of 15 batches of 1000 samples.
 * Usage: bench_ukf [source folder] [shared folder] (defaults RB_SOURCE / RB_SHARED or "." / "../shared"). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "bench_timing.h"

typedef struct bench_case {
    const char *label, *pipeline; /* a pipeline whose stage 0 is the ukf_torque to time */
    bool friction;
} bench_case;

/* CPU time of this thread (less sensitive than the wall clock to other processes on a shared machine). */
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

static int run(const bench_case *bc, const rb_registry *reg, double *cpu_us)
{
    rb_err err;
    rb_pipeline *p = NULL;
    if (rb_pipeline_load_text(bc->pipeline, strlen(bc->pipeline), bc->label, NULL, reg, &p, &err) < 0) {
        fprintf(stderr, "%s: %s\n", bc->label, err.msg);
        return 1;
    }
    const rb_config_stage *cs = &p->stages[0];
    const rb_stage_type *ty = cs->type;
    const rb_model *m = p->model;
    rb_params params = {ty, cs->params};
    const rb_param_value *fts = rb_params_get(&params, "ft_sensors"), *acc = rb_params_get(&params, "accelerometers"),
                         *gyr = rb_params_get(&params, "gyroscopes");
    rb_port in[7] = {{m->n_dofs, NULL, NULL},
                     {m->n_dofs, NULL, NULL},
                     {m->n_dofs, NULL, NULL},
                     {6 * fts->count, NULL, NULL},
                     {3 * acc->count, NULL, NULL},
                     {3 * gyr->count, NULL, NULL},
                     {bc->friction ? m->n_dofs : 0, NULL, NULL}};
    rb_port out[16];
    double times[1] = {0};
    rb_stage_setup setup = {"ukf", &params, in, out, 1e-3, 1, times, m, "."};
    void *state = NULL;
    if (ty->create(&setup, &state, &err) < 0) {
        fprintf(stderr, "%s: %s\n", bc->label, err.msg);
        rb_pipeline_free(p);
        return 1;
    }
    double *inb[7], *outb[16];
    const double *inc[7];
    for (size_t i = 0; i < 7; i++)
        inc[i] = inb[i] = calloc(in[i].width + 1, sizeof(double));
    for (size_t j = 0; j < ty->n_outputs; j++)
        outb[j] = calloc(out[j].width + 1, sizeof(double));
    size_t N = 0, M = 0; /* the widths of var (the state) and innovation (the measurements) */
    for (size_t j = 0; j < ty->n_outputs; j++) {
        if (strcmp(ty->outputs[j], "var") == 0)
            N = out[j].width;
        if (strcmp(ty->outputs[j], "innovation") == 0)
            M = out[j].width;
    }
    int rc = 0;
    size_t k = 0;
    enum { WARM = 300, BATCH = 1000, BATCHES = 15 };
    double per[BATCHES], cpu[BATCHES];
    for (; k < WARM && !rc; k++) {
        inputs(in, k, inb);
        rc = ty->step(state, k, 1e-3 * (double)k, inc, outb, &err);
    }
    for (int b = 0; b < BATCHES && !rc; b++) {
        double t0 = rb_monotonic_seconds(), c0 = thread_seconds();
        for (int s = 0; s < BATCH && !rc; s++, k++) {
            inputs(in, k, inb);
            rc = ty->step(state, k, 1e-3 * (double)k, inc, outb, &err);
        }
        per[b] = (rb_monotonic_seconds() - t0) / BATCH;
        cpu[b] = (thread_seconds() - c0) / BATCH;
    }
    if (rc)
        fprintf(stderr, "%s: sample %zu: %s\n", bc->label, k, err.msg);
    else {
        qsort(per, BATCHES, sizeof per[0], cmp_double);
        qsort(cpu, BATCHES, sizeof cpu[0], cmp_double);
        double us = 1e6 * per[BATCHES / 2], cus = 1e6 * cpu[BATCHES / 2];
        *cpu_us = cus;
        printf("| %s | %zu | %zu | %zu | %.1f | %.1f | %.1f | %.1f |\n", bc->label, m->n_dofs, N, M, us, 1000.0 / us,
               cus, 1000.0 / cus);
    }
    for (size_t i = 0; i < 7; i++)
        free(inb[i]);
    for (size_t j = 0; j < ty->n_outputs; j++)
        free(outb[j]);
    ty->destroy(state);
    rb_pipeline_free(p);
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
    static char text[6][4096];
    static const char fric[] = ", \"friction\": \"s\"";
    static const char adapt[] = ", \"friction_correction\": [\"coulomb\", \"viscous\", \"stribeck\"]";
    snprintf(text[0], sizeof text[0], leg_fmt, shared, "", "");
    snprintf(text[1], sizeof text[1], leg_fmt, shared, fric, "");
    snprintf(text[2], sizeof text[2], leg_fmt, shared, fric, adapt);
    snprintf(text[3], sizeof text[3], hum_fmt, src, "", "");
    snprintf(text[4], sizeof text[4], hum_fmt, src, fric, "");
    snprintf(text[5], sizeof text[5], hum_fmt, src, fric, adapt);
    bench_case cases[6] = {{"ergoCub right leg on a pole", text[0], false},
                           {"ergoCub right leg, friction input", text[1], true},
                           {"ergoCub right leg, friction input + correction", text[2], true},
                           {"humanoid lower body, floating", text[3], false},
                           {"humanoid lower body, friction input", text[4], true},
                           {"humanoid lower body, friction input + correction", text[5], true}};
    printf("ukf_torque at 1 kHz, one core (OpenBLAS %s, 1 thread); median of 15 batches of 1000 samples\n\n",
           openblas_get_config());
    printf(
        "| case | joints | state | measurements | wall us / sample | x real time | CPU us / sample | x real time (CPU) "
        "|\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    int fails = 0;
    double cus[6] = {0};
    for (int i = 0; i < 6; i++)
        fails += run(&cases[i], reg, &cus[i]);
    printf("\nOnline friction correction (friction_correction [\"coulomb\", \"viscous\", \"stribeck\"]), CPU us per "
           "sample:\n\n"
           "| model | friction input | + correction | added |\n|---|---:|---:|---:|\n");
    for (int i = 1; i < 6; i += 3)
        printf("| %s | %.1f | %.1f | %+.0f %% |\n",
               i == 1 ? "ergoCub right leg (6 joints)" : "humanoid lower body (12)", cus[i], cus[i + 1],
               100.0 * (cus[i + 1] / cus[i] - 1.0));
    rb_registry_free(reg);
    return fails ? 1 : 0;
}
