/* Reader benchmarks.
 *   bench_read LOG: reads every channel of a log with rb_log_read and prints "seconds peak_rss_bytes
 *     data_bytes" like scripts/bench_read_h5py.py (scripts/bench-read.sh).
 *   bench_read --channels DIR N...: writes a robot-logger v7.3 file of N small channels in one struct
 *     under DIR (once; kept) and prints a table of the seconds rb_log_read takes on each, best of 3
 *     (`make bench-read-channels`; target 5,000 channels at most 2 s). */
#include <hdf5.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "roboest/io.h"

static int read_one(const char *path)
{
    rb_err err;
    rb_log *log = NULL;
    double t0 = rb_monotonic_seconds();
    if (rb_log_read(path, &log, &err) != RB_OK) {
        fprintf(stderr, "bench_read: %s\n", err.msg);
        return 3;
    }
    double seconds = rb_monotonic_seconds() - t0;
    double bytes = 0;
    for (size_t c = 0; c < log->n_channels; c++)
        bytes += 8.0 * (double)log->channels[c].n_samples * (double)(log->channels[c].n_elements + 1);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%.6f %.0f %.0f\n", seconds, (double)ru.ru_maxrss * 1024.0, bytes);
    rb_log_free(log);
    return 0;
}

static bool set_class(hid_t obj, const char *cls)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Tset_size(type, strlen(cls) + 1) >= 0
                     ? H5Acreate2(obj, "MATLAB_class", type, space, H5P_DEFAULT, H5P_DEFAULT)
                     : -1;
    bool ok = attr >= 0 && H5Awrite(attr, type, cls) >= 0;
    if (attr >= 0)
        H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    return ok;
}

static bool put_doubles(hid_t grp, const char *name, int rank, const hsize_t *dims, const double *v)
{
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t dset = H5Dcreate2(grp, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bool ok = dset >= 0 && H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 &&
              set_class(dset, "double");
    if (dset >= 0)
        H5Dclose(dset);
    H5Sclose(space);
    return ok;
}

/* A robot-logger v7.3 file whose root struct holds n channel structs c<k> of 10 samples x 2 elements, its
 * links UTF-8 as rb_log_write makes them: new-style groups, whose links go to dense storage (a fractal
 * heap and a B-tree) past 8. rb_log_write itself cannot write it: the MATLAB_fields attribute of a struct
 * of 5,000 fields does not fit in an object header. */
static bool write_channels(const char *path, size_t n)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_userblock(fcpl, 512);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    if (file < 0)
        return false;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_char_encoding(lcpl, H5T_CSET_UTF8);
    hid_t root = H5Gcreate2(file, "robot_logger_device", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    bool ok = root >= 0 && set_class(root, "struct");
    double t[10], data[20];
    for (size_t k = 0; ok && k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "c%zu", k);
        for (int i = 0; i < 10; i++) {
            t[i] = 0.001 * i;
            data[2 * i] = (double)k;
            data[2 * i + 1] = i;
        }
        hsize_t tdims[2] = {10, 1}, ddims[3] = {10, 1, 2};
        hid_t grp = H5Gcreate2(root, name, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        ok = grp >= 0 && set_class(grp, "struct") && put_doubles(grp, "timestamps", 2, tdims, t) &&
             put_doubles(grp, "data", 3, ddims, data);
        if (grp >= 0)
            H5Gclose(grp);
    }
    if (root >= 0)
        H5Gclose(root);
    H5Pclose(lcpl);
    H5Fclose(file);
    char header[128];
    memset(header, ' ', sizeof header);
    memcpy(header, "MATLAB 7.3 MAT-file, Platform: bench", 36);
    header[124] = 0x00;
    header[125] = 0x02;
    header[126] = 'I';
    header[127] = 'M';
    FILE *f = ok ? fopen(path, "r+b") : NULL;
    ok = f && fwrite(header, 1, sizeof header, f) == sizeof header;
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

static int channels(const char *dir, int argc, char **argv)
{
    printf("| channels | read [s] (best of 3) | file [MB] |\n|---:|---:|---:|\n");
    for (int a = 0; a < argc; a++) {
        size_t n = (size_t)strtoul(argv[a], NULL, 10);
        char path[4096];
        snprintf(path, sizeof path, "%s/channels_%zu.mat", dir, n);
        rb_err err;
        FILE *f = fopen(path, "rb");
        if (f)
            fclose(f);
        else if (!write_channels(path, n)) {
            fprintf(stderr, "bench_read: cannot write %s\n", path);
            return 3;
        }
        double best = 1e300;
        size_t got = 0;
        for (int round = 0; round < 3; round++) {
            rb_log *log = NULL;
            double t0 = rb_monotonic_seconds();
            if (rb_log_read(path, &log, &err) != RB_OK) {
                fprintf(stderr, "bench_read: %s\n", err.msg);
                return 3;
            }
            double s = rb_monotonic_seconds() - t0;
            best = s < best ? s : best;
            got = log->n_channels;
            rb_log_free(log);
        }
        if (got != n) {
            fprintf(stderr, "bench_read: %s: read %zu channels of %zu\n", path, got, n);
            return 3;
        }
        long bytes = 0;
        if ((f = fopen(path, "rb")) && fseek(f, 0, SEEK_END) == 0)
            bytes = ftell(f);
        if (f)
            fclose(f);
        printf("| %zu | %.3f | %.1f |\n", n, best, (double)bytes / 1e6);
    }
    printf("target: 5000 channels at most 2 s\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "--channels") == 0)
        return channels(argv[2], argc - 3, argv + 3);
    if (argc != 2) {
        fprintf(stderr, "usage: bench_read LOG | bench_read --channels DIR N...\n");
        return 2;
    }
    return read_one(argv[1]);
}
