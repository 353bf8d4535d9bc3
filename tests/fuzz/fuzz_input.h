/* What the log-reader fuzz targets share: each input written to one temporary file per process (the readers
 * take a path), and where an HDF5 file carries its signature. Included by fuzz_log_read.c and fuzz_h5_read.c. */
#ifndef ROBOEST_FUZZ_INPUT_H
#define ROBOEST_FUZZ_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_path[] = "/tmp/rb_fuzz_log_XXXXXX";
static int tmp_fd = -1;

static void remove_tmp(void)
{
    if (tmp_fd >= 0)
        unlink(tmp_path);
}

/* The input into tmp_path (created on the first call, removed at exit). */
static void write_input(const uint8_t *data, size_t size)
{
    if (tmp_fd < 0) {
        tmp_fd = mkstemp(tmp_path);
        if (tmp_fd < 0)
            abort();
        atexit(remove_tmp);
    }
    if (ftruncate(tmp_fd, 0) != 0 || lseek(tmp_fd, 0, SEEK_SET) != 0)
        abort();
    for (size_t done = 0; done < size;) {
        ssize_t k = write(tmp_fd, data + done, size - done);
        if (k <= 0)
            abort();
        done += (size_t)k;
    }
}

/* The HDF5 signature at offset 0, 512, 1024, ... (a user block before it, as in MATLAB v7.3 files). */
static inline bool has_hdf5_signature(const uint8_t *data, size_t size)
{
    static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t off = 0; off + 8 <= size; off = off ? off * 2 : 512)
        if (memcmp(data + off, sig, 8) == 0)
            return true;
    return false;
}

#endif
