/*
 * libFuzzer target: the HDF5-based readers (MATLAB v7.3, .h5: layout detection, logs, named arrays) as the
 * roboest command runs them, with rb_io_set_hdf5_isolation on. libhdf5 1.10.8 itself crashes or loops on
 * some mutated files (inside H5HG, H5O, H5G, H5T, below our calls): those reads end in the child and must
 * come back as RB_EINPUT naming the file on one line; no input may crash or hang this process, and every
 * other outcome must be a log, a bad input or too big. Inputs without an HDF5 signature are skipped
 * (fuzz_log_read covers those readers in-process). The child's code is not seen by the coverage; the
 * checks it runs before trusting the file (h5read.c) are exercised in-process by the unit tests.
 * Seeds: the HDF5 fixtures, as for fuzz_log_read.
 */
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "roboest/io.h"

/* A reading child that ASan stops must not make libFuzzer (whose death callback it inherited) write the
 * input as a crash of this process: it is the expected, contained outcome. */
static void child_quiet(void) { __sanitizer_set_death_callback(NULL); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rb_io_set_hdf5_isolation(true);
    pthread_atfork(NULL, NULL, child_quiet);
    return 0;
}

static void check(int rc, bool got, const rb_err *err)
{
    if ((rc == RB_OK) != got)
        abort(); /* a result exactly when the read succeeds */
    if (rc != RB_OK && rc != RB_EINPUT && rc != RB_ENOMEM)
        abort(); /* bytes can only be a log, a bad input, or too big */
    if (rc != RB_OK && (strncmp(err->msg, tmp_path, strlen(tmp_path)) != 0 || strchr(err->msg, '\n')))
        abort(); /* one line naming the file */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!has_hdf5_signature(data, size))
        return 0;
    write_input(data, size);
    rb_err err;
    rb_log_format fmt;
    int rc = rb_log_detect(tmp_path, &fmt, &err);
    check(rc, rc == RB_OK, &err);
    rb_log *log = NULL;
    rc = rb_log_read(tmp_path, &log, &err);
    check(rc, log != NULL, &err);
    rb_log_free(log);
    rb_arrays *arrays = NULL;
    rc = rb_arrays_read(tmp_path, &arrays, &err);
    check(rc, arrays != NULL, &err);
    rb_arrays_free(arrays);
    return 0;
}
