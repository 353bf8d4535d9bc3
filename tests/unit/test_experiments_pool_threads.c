/* The pool counts its threads while they may run (rb_threads_running, roboest/core.h): what an isolated HDF5 read
 * asks before it forks under AddressSanitizer (lib/io/h5isolate.c), where a fork beside an allocating thread can
 * leave the child blocked forever. */
#include <criterion/criterion.h>
#include <stdatomic.h>

#include "roboest/core.h"
#include "../../lib/experiments/experiments_internal.h"

static atomic_long least = 1000, most = -1;

static int note_threads(void *ctx, size_t i, rb_err *err)
{
    (void)ctx, (void)i, (void)err;
    long n = rb_threads_running();
    for (long l = atomic_load(&least); n < l && !atomic_compare_exchange_weak(&least, &l, n);)
        ;
    for (long m = atomic_load(&most); n > m && !atomic_compare_exchange_weak(&most, &m, n);)
        ;
    return RB_OK;
}

Test(experiments_pool, its_threads_are_counted_while_they_run_and_only_then)
{
    cr_assert_eq(rb_threads_running(), 0);
    bool cancelled;
    rb_err err;
    rb_pool one = {NULL, note_threads, 8, 1, NULL, NULL}; /* the caller alone: no thread of the library's */
    cr_assert_eq(rb_pool_run(&one, &cancelled, &err), RB_OK);
    cr_assert_eq(atomic_load(&most), 0, "one thread counted %ld", atomic_load(&most));
    rb_pool three = {NULL, note_threads, 64, 3, NULL, NULL};
    cr_assert_eq(rb_pool_run(&three, &cancelled, &err), RB_OK);
    cr_assert_eq(atomic_load(&most), 2, "three threads: %ld besides the caller", atomic_load(&most));
    cr_assert_eq(atomic_load(&least), 0);
    cr_assert_eq(rb_threads_running(), 0, "%ld left counted after the join", rb_threads_running());
}
