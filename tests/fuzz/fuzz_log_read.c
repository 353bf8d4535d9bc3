/*
 * libFuzzer target: the log readers (detection, MATLAB v7.3 / v5 / HDF5 / CSV) and the named-array
 * reader on arbitrary bytes.
 * The readers take a path, so each input is written to one temporary file per process.
 * Seeds: the reader fixtures, copied to $(BUILD)/fixtures/corpus_log/ by tests/fixtures/gen_fixtures.py.
 *
 * Debian's libhdf5 1.10.8 itself overflows heap buffers and allocates sizes taken from corrupt
 * metadata on some mutated files (inside H5O/H5C, below our calls). Build with
 * -DRB_FUZZ_NO_HDF5 to skip inputs carrying an HDF5 signature and fuzz the CSV and MATLAB v5 paths
 * (and detection) alone; otherwise run with ASAN_OPTIONS=allocator_may_return_null=1 and
 * -malloc_limit_mb large, and expect findings inside libhdf5.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "roboest/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef RB_FUZZ_NO_HDF5
    if (has_hdf5_signature(data, size))
        return 0;
#endif
    write_input(data, size);
    rb_log *log = NULL;
    rb_err err;
    int rc = rb_log_read(tmp_path, &log, &err);
    if ((rc == RB_OK) != (log != NULL))
        abort(); /* a log exactly when the read succeeds */
    if (rc != RB_OK && rc != RB_EINPUT && rc != RB_ENOMEM)
        abort(); /* bytes can only be a log, a bad input, or too big */
    rb_log_free(log);
    /* the same bytes as a states / results file of named arrays */
    rb_arrays *arrays = NULL;
    rc = rb_arrays_read(tmp_path, &arrays, &err);
    if ((rc == RB_OK) != (arrays != NULL))
        abort();
    if (rc != RB_OK && rc != RB_EINPUT && rc != RB_ENOMEM)
        abort();
    rb_arrays_free(arrays);
    return 0;
}
