/*
 * roboest suite_mpi: a comparison suite's (variant, log) runs spread over MPI ranks (`roboest compare` under mpirun or
 * srun). Rank 0 hands the runs out one at a time, largest expected cost first (the log's bytes times the pipeline's
 * stages + 1), and runs them too; every rank reads its own logs and runs up to T runs at once on a pool of threads
 * (T: rb_suite_opts.threads, else the suite's "threads", else 1: under MPI the ranks are the parallelism); a run's
 * result travels to rank 0 in its byte form (rb_suite_pair_encode). Only the thread that started MPI calls it
 * (MPI_THREAD_FUNNELED). The memory limit (rb_suite_opts.memory_limit) is each rank's: its T threads' runners get a
 * T-th of it each.
 *
 * Built into an archive of its own (build/libroboest_mpi.a, Open MPI's flags): libroboest never needs MPI. Built
 * without Open MPI, starting under a launcher fails saying so, and nothing else starts MPI.
 */
#ifndef ROBOEST_SUITE_MPI_H
#define ROBOEST_SUITE_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"
#include "roboest/experiments.h"

RB_API_BEGIN

/* The runs a rank holds at once, at most (threads beyond it are not started). */
#define RB_SUITE_MPI_SLOTS 1024

/* Start MPI when a launcher started this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK or PMI_RANK in the
 * environment): *active, *rank (0 and false without a launcher: nothing started). MPI is asked for
 * MPI_THREAD_FUNNELED; a library that provides less is RB_EINVAL (MPI finalized again). RB_EINVAL too when built
 * without MPI or MPI_Init_thread fails. */
int rb_suite_mpi_start(bool *active, int *rank, rb_err *err);
/* Rank 0: the runs items[0..n) over every rank, into runs[k] (as rb_suite_runner_run; finished (may be NULL) called
 * for each, in this process, from rank 0's run threads or from the thread that called this). The lowest failing item
 * decides the error (the runner's message, which names the variant and the log). Returns once every rank has been
 * told to stop. */
int rb_suite_mpi_compute(const rb_suite *s, const rb_suite_opts *opts, rb_suite_finished_fn finished, void *user,
                         const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err);
/* Ranks > 0: run what rank 0 hands out until it says stop. s NULL (the suite did not load here): every run handed
 * out fails with load_err's code and message, so rank 0 names it. */
int rb_suite_mpi_serve(const rb_suite *s, const rb_suite_opts *opts, const rb_err *load_err, rb_err *err);
/* Rank 0 releases ranks still waiting for work (when it stopped before rb_suite_mpi_compute); MPI finalized. */
void rb_suite_mpi_end(void);
/* For a signal handler (async-signal-safe): slot's run on this rank, "variant V, log L" (*len bytes), NULL when the
 * slot is idle; *mine: the calling thread runs it. slot < RB_SUITE_MPI_SLOTS. */
const char *rb_suite_mpi_running(size_t slot, size_t *len, bool *mine);

RB_API_END

#endif
