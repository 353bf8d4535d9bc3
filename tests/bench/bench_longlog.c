/* make bench-longlog: a log longer than memory through `roboest run --memory-limit`.
 *
 *   bench_longlog ROBOEST CONFIG TEMPLATE DIR [BIG_MB [SMALL_MB [LIMIT_MB]]]
 *
 * Generates in DIR a robot-logger MATLAB v7.3 log of about BIG_MB MB of samples (default 4096) at 1 kHz with the
 * channels of TEMPLATE (a shipped humanoid log: its 42 channels resampled at 1 kHz and tiled, timestamps running
 * on), written through HDF5 a block at a time (the file's names, units and MATLAB attributes come from roboest's
 * own v7.3 writer on one tile; its data and timestamps datasets are then replaced by chunked ones of the full
 * length). Then, each a child process whose peak resident memory (getrusage ru_maxrss) and CPU time are read, for
 * CONFIG as it is and for a copy whose first .h5 output is a .mat (v7.3) one instead (written next to CONFIG, so
 * that its relative paths hold, and deleted at the end), each output written window by window:
 *   - the config on the big log with --memory-limit LIMIT_MB (default 300): peak memory and time;
 *   - the config on the 8 s TEMPLATE: the memory of the model, the network and the program alone;
 *   - the config on a log of SMALL_MB (default 256) that fits, whole and with --memory-limit, alternating 3 times:
 *     the ratio of the median CPU times (windows / whole).
 * The generated logs are deleted at the end. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "roboest/io.h"

static void die(const char *what, const rb_err *err)
{
    fprintf(stderr, "bench_longlog: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    exit(1);
}

static void set_class(hid_t obj, const char *cls)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR);
    H5Tset_size(type, strlen(cls));
    hid_t a = H5Acreate2(obj, "MATLAB_class", type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, cls);
    H5Aclose(a), H5Sclose(space), H5Tclose(type);
}

/* One chunked dataset of dims (rank 2 or 3), replacing `name` in grp. */
static hid_t replace_dataset(hid_t grp, const char *name, int rank, const hsize_t *dims, const hsize_t *chunk)
{
    if (H5Lexists(grp, name, H5P_DEFAULT) > 0 && H5Ldelete(grp, name, H5P_DEFAULT) < 0)
        die("cannot delete a template dataset", NULL);
    hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, chunk);
    hid_t d = H5Dcreate2(grp, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0)
        die("cannot create a dataset", NULL);
    set_class(d, "double");
    H5Pclose(dcpl), H5Sclose(space);
    return d;
}

static void write_rows(hid_t d, int rank, int axis, hsize_t first, hsize_t count, hsize_t n, const double *v)
{
    hid_t fs = H5Dget_space(d);
    hsize_t start[3] = {0, 0, 0}, cnt[3] = {1, 1, 1};
    start[axis] = first, cnt[axis] = count;
    if (rank == 3)
        cnt[2] = n;
    hsize_t total = count * n;
    hid_t ms = H5Screate_simple(1, &total, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
    if (H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v) < 0)
        die("cannot write samples", NULL);
    H5Sclose(ms), H5Sclose(fs);
}

/* The log at path: T samples at 1 kHz of every channel of tile (all on one 1 kHz clock of tile->T samples). */
static void generate(const rb_log *tile, const char *path, size_t T)
{
    rb_err err;
    rb_write_opts o = {RB_OUT_MAT73, true, "robot_logger_device"};
    if (rb_log_write(tile, path, &o, &err))
        die("writing the template tile", &err);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        die("cannot reopen the tile", NULL);
    size_t L = tile->channels[0].n_samples;
    double *ts = malloc(L * sizeof *ts);
    for (size_t c = 0; c < tile->n_channels; c++) {
        const rb_channel *ch = &tile->channels[c];
        char grp_path[1024];
        snprintf(grp_path, sizeof grp_path, "/robot_logger_device/%s", ch->name);
        hid_t g = H5Gopen2(f, grp_path, H5P_DEFAULT);
        if (g < 0)
            die(grp_path, NULL);
        hsize_t n = ch->n_elements, ddims[3] = {T, 1, n}, dchunk[3] = {4096, 1, n}, tdims[2] = {1, T},
                tchunk[2] = {1, 4096};
        hid_t d = replace_dataset(g, "data", 3, ddims, dchunk), t = replace_dataset(g, "timestamps", 2, tdims, tchunk);
        for (size_t k0 = 0; k0 < T; k0 += L) { /* tiles, the time running on */
            size_t cnt = T - k0 < L ? T - k0 : L;
            for (size_t k = 0; k < cnt; k++)
                ts[k] = ch->time[0] + (double)(k0 + k) / 1000.0;
            write_rows(d, 3, 0, k0, cnt, n, ch->data);
            write_rows(t, 2, 1, k0, cnt, 1, ts);
        }
        H5Dclose(d), H5Dclose(t), H5Gclose(g);
    }
    free(ts);
    H5Fclose(f);
}

typedef struct child {
    long maxrss_kb;
    double cpu, wall;
    int status;
} child;

static child run(const char *roboest, const char *config, const char *log, const char *out, const char *limit)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid = fork();
    if (pid == 0) {
        const char *args[] = {roboest, "run", config, log, "-o", out, "-q", "--force", NULL, NULL, NULL};
        if (limit)
            args[8] = "--memory-limit", args[9] = limit;
        execv(roboest, (char *const *)args);
        _exit(127);
    }
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    clock_gettime(CLOCK_MONOTONIC, &b);
    child c = {ru.ru_maxrss,
               (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                   1e-6 * (double)ru.ru_stime.tv_usec,
               (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec),
               WIFEXITED(status) ? WEXITSTATUS(status) : 128};
    if (c.status)
        fprintf(stderr, "bench_longlog: roboest run %s %s%s%s exited %d\n", config, log,
                limit ? " --memory-limit " : "", limit ? limit : "", c.status);
    return c;
}

/* A copy of config next to it (path: its name) whose first `.h5"` after "outputs" is `.mat"`; 0 if it has none. */
static int mat_config(const char *config, char *path, size_t size)
{
    FILE *f = fopen(config, "rb");
    if (!f)
        return 0;
    static char text[1 << 20], out[(1 << 20) + 8];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *outputs = strstr(text, "\"outputs\""), *h5 = outputs ? strstr(outputs, ".h5\"") : NULL;
    if (!h5)
        return 0;
    snprintf(out, sizeof out, "%.*s.mat%s", (int)(h5 - text), text, h5 + 3);
    const char *slash = strrchr(config, '/');
    snprintf(path, size, "%.*s.bench_longlog_%ld.json", slash ? (int)(slash - config + 1) : 0, config, (long)getpid());
    f = fopen(path, "wb");
    if (!f || fputs(out, f) < 0 || fclose(f) != 0)
        die("cannot write the .mat copy of the config", NULL);
    return 1;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_longlog ROBOEST CONFIG TEMPLATE DIR [BIG_MB [SMALL_MB [LIMIT_MB]]]\n");
        return 2;
    }
    const char *roboest = argv[1], *config = argv[2], *template = argv[3], *dir = argv[4];
    double big_mb = argc > 5 ? atof(argv[5]) : 4096, small_mb = argc > 6 ? atof(argv[6]) : 256;
    const char *limit = argc > 7 ? argv[7] : "300";
    rb_err err;
    rb_log *in = NULL, *tile = NULL;
    if (rb_log_read(template, &in, &err) || rb_log_resample(in, 1000.0, &tile, &err))
        die(template, &err);
    for (size_t a = 0; a < in->n_attrs; a++)
        rb_log_set_attr(tile, in->attrs[a].key, in->attrs[a].value, &err);
    size_t per_sample = 0;
    for (size_t c = 0; c < tile->n_channels; c++)
        per_sample += (tile->channels[c].n_elements + 1) * sizeof(double);
    char big[1024], small[1024], out[1024];
    snprintf(big, sizeof big, "%s/longlog_big.mat", dir);
    snprintf(small, sizeof small, "%s/longlog_small.mat", dir);
    snprintf(out, sizeof out, "%s/longlog_out", dir);
    size_t T_big = (size_t)(big_mb * 1048576.0 / (double)per_sample),
           T_small = (size_t)(small_mb * 1048576.0 / (double)per_sample);
    printf("bench-longlog: %zu channels, %zu bytes per 1 kHz sample (%s at 1 kHz, tiled)\n", tile->n_channels,
           per_sample, template);

    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    generate(tile, big, T_big);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("generated %s: %zu samples (%.1f min at 1 kHz), %.0f MB of samples, in %.1f s\n", big, T_big,
           (double)T_big / 60000.0, (double)T_big * (double)per_sample / 1048576.0,
           (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
    fflush(stdout);
    char mat_cfg[1100];
    const char *configs[2] = {config, mat_config(config, mat_cfg, sizeof mat_cfg) ? mat_cfg : NULL};
    const char *kinds[2] = {"as it is", "its .h5 output a .mat (v7.3) one"};
    int status = 0;
    for (int i = 0; i < 2 && configs[i]; i++) {
        child base = run(roboest, configs[i], template, out, NULL);
        child w = run(roboest, configs[i], big, out, limit);
        printf("%s (%s) on the %.0f MB log, --memory-limit %s: peak RSS %.1f MB, CPU %.1f s, wall %.1f s (exit %d)\n",
               config, kinds[i], (double)T_big * (double)per_sample / 1048576.0, limit, (double)w.maxrss_kb / 1024.0,
               w.cpu, w.wall, w.status);
        printf("  the same on the 8 s template (model, network, program): peak RSS %.1f MB\n",
               (double)base.maxrss_kb / 1024.0);
        printf("  peak RSS above that baseline: %.1f MB (target <= 300 MB)\n",
               (double)(w.maxrss_kb - base.maxrss_kb) / 1024.0);
        fflush(stdout);
        status = status ? status : w.status;
    }
    remove(big);

    generate(tile, small, T_small);
    for (int c = 0; c < 2 && configs[c]; c++) {
        double whole[3], windows[3];
        long rss_whole = 0, rss_win = 0;
        for (int i = 0; i < 3; i++) { /* alternating, so that the machine's load falls on both alike */
            child x = run(roboest, configs[c], small, out, NULL), y = run(roboest, configs[c], small, out, limit);
            whole[i] = x.cpu, windows[i] = y.cpu;
            rss_whole = x.maxrss_kb, rss_win = y.maxrss_kb;
        }
        qsort(whole, 3, sizeof *whole, cmp);
        qsort(windows, 3, sizeof *windows, cmp);
        printf("%s (%s) on a %.0f MB log that fits (%zu samples): CPU median whole %.2f s, windows %.2f s: ratio %.3f "
               "(target <= 1.2); peak RSS whole %.1f MB, windows %.1f MB\n",
               config, kinds[c], (double)T_small * (double)per_sample / 1048576.0, T_small, whole[1], windows[1],
               windows[1] / whole[1], (double)rss_whole / 1024.0, (double)rss_win / 1024.0);
        fflush(stdout);
    }
    remove(small);
    if (configs[1])
        remove(mat_cfg);
    rb_log_free(in);
    rb_log_free(tile);
    return status;
}
