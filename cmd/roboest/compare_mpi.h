/* roboest compare under mpirun or srun (compare_mpi.c): the runs of a suite spread over the ranks. Without a
 * launcher's environment nothing here starts MPI, and every call is a no-op. */
#ifndef ROBOEST_COMPARE_MPI_H
#define ROBOEST_COMPARE_MPI_H

#include "roboest/experiments.h"

/* Start MPI when a launcher started this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, PMI_RANK in the
 * environment); *rank its rank (0 without MPI). An exit code: CLI_EXIT_OK, or CLI_EXIT_INTERNAL when MPI cannot
 * start (printed). */
int cli_mpi_start(int *rank);
bool cli_mpi_active(void);
/* Rank 0: the runs items[0..n) over every rank, largest expected cost first, into runs[k] (as
 * rb_suite_runner_run; finished (may be NULL) called for each, in this process). The lowest failing item decides the
 * error, prefixed with nothing more than the runner's message (which names the variant and the log). */
int cli_mpi_compute(const rb_suite *s, const rb_suite_opts *opts, rb_suite_finished_fn finished, void *user,
                    const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err);
/* Ranks > 0: run what rank 0 hands out until it says stop; s NULL (the suite did not load here): every run handed
 * out fails with err's message, so rank 0 names it. */
int cli_mpi_serve(const rb_suite *s, const rb_suite_opts *opts, rb_err *err);
/* Rank 0 releases ranks still waiting; MPI finalized. Returns code. */
int cli_mpi_end(int code);

#endif
