/* roboest on a corrupt HDF5 file that crashes libhdf5 1.10.8 (the HDF5 reads run in a child process,
 * lib/io/h5isolate.c): one line on stderr naming the file, exit 3, nothing on stdout. The mutant is the
 * fixture roboest.h5 with the global heap object holding the element name "torso_pitch" claiming 0x350b
 * bytes instead of 11 (test_io_h5_hostile.c makes more). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "harness.h"

static char *write_heap_size_mutant(const char *dir)
{
    size_t n;
    char *b = test_read_file(RB_FIXTURES "/roboest.h5", &n), *at = NULL;
    for (size_t i = 0; i + 11 <= n && !at; i++)
        if (memcmp(b + i, "torso_pitch", 11) == 0)
            at = b + i;
    cr_assert(at && at - b >= 7, "no element name torso_pitch in the fixture (make fixtures)");
    at[-7] = 0x35; /* the object's 8-byte size, 11 -> 0x350b */
    char *path = test_path(dir, "corrupt.h5");
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
    free(b);
    return path;
}

Test(cli_h5_hostile, info_on_a_file_that_crashes_libhdf5)
{
    test_deadline(60);
    if (RUNNING_ON_VALGRIND) /* make test-valgrind: the child's reads past libhdf5's buffers are reported */
        cr_skip_test(
            "valgrind reports libhdf5's reads past its buffers in the reading child, which this test provokes");
    char *dir = test_tmpdir(), *path = write_heap_size_mutant(dir);
    cli_result r = cli_run(NULL, (const char *[]){"info", path, NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "status %d, stderr: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    char want[4096];
    snprintf(want, sizeof want, "roboest: %s: corrupt HDF5 file (the HDF5 library failed reading it: ", path);
    cr_assert(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
    cr_assert_str_eq(r.out, "");
    cli_result_free(&r);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}
