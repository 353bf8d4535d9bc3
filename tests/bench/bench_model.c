/* URDF loading time against the model's size. Never a timed test: it prints a Markdown table.
 *
 * The model: a serial chain of N links (link_0 the root), each with an <inertial>; joint_k joins link_k-1 to
 * link_k, revolute about z, except every fifth joint, which is fixed (its child link is merged into its parent's
 * body and stays a frame); an accelerometer on the last link. Every look-up by name of the loader (a joint's
 * parent and child link, a sensor's parent, the frames, the dof order, the uniqueness checks) sees N names.
 *
 * Usage: bench_model [N ...]           load chains of N links (default 10000 and 50000), best of 3 each
 *        bench_model --write N FILE   write the N-link chain to FILE (to time `roboest model info FILE`) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roboest/core.h"
#include "roboest/model.h"

static int write_chain(const char *path, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "<?xml version=\"1.0\"?>\n<robot name=\"chain_%zu\">\n", n);
    for (size_t k = 0; k < n; k++) {
        fprintf(f,
                "  <link name=\"link_%zu\"><inertial><origin xyz=\"0 0 0.05\"/><mass value=\"1\"/>"
                "<inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n",
                k);
        if (k == 0)
            continue;
        fprintf(f,
                "  <joint name=\"joint_%zu\" type=\"%s\"><parent link=\"link_%zu\"/><child link=\"link_%zu\"/>"
                "<origin xyz=\"0 0 0.1\"/><axis xyz=\"0 0 1\"/></joint>\n",
                k, k % 5 == 0 ? "fixed" : "revolute", k - 1, k);
    }
    fprintf(f,
            "  <sensor name=\"tip_acc\" type=\"accelerometer\"><parent link=\"link_%zu\"/>"
            "<origin xyz=\"0 0 0.1\"/></sensor>\n</robot>\n",
            n - 1);
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--write") == 0) {
        long n = strtol(argv[2], NULL, 10);
        if (n < 1 || write_chain(argv[3], (size_t)n) != 0) {
            fprintf(stderr, "bench_model: cannot write %s\n", argv[3]);
            return 1;
        }
        return 0;
    }
    static const char *const defaults[] = {"10000", "50000"};
    const char *const *sizes = argc > 1 ? (const char *const *)argv + 1 : defaults;
    size_t n_sizes = argc > 1 ? (size_t)argc - 1 : 2;
    char path[] = "/tmp/bench_model_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("bench_model: mkstemp");
        return 1;
    }
    printf("| links | bodies | dofs | frames | load (s, best of 3) |\n|---:|---:|---:|---:|---:|\n");
    int status = 0;
    for (size_t i = 0; i < n_sizes && !status; i++) {
        long n = strtol(sizes[i], NULL, 10);
        if (n < 1 || write_chain(path, (size_t)n) != 0) {
            fprintf(stderr, "bench_model: bad size %s or cannot write %s\n", sizes[i], path);
            status = 1;
            break;
        }
        double best = -1;
        size_t bodies = 0, dofs = 0, frames = 0;
        for (int rep = 0; rep < 3; rep++) {
            rb_model *m = NULL;
            rb_err err;
            double t0 = rb_monotonic_seconds();
            int rc = rb_model_load_urdf(path, NULL, &m, &err);
            double t = rb_monotonic_seconds() - t0;
            if (rc != RB_OK) {
                fprintf(stderr, "bench_model: %s\n", err.msg);
                status = 1;
                break;
            }
            bodies = m->n_bodies, dofs = m->n_dofs, frames = m->n_frames;
            rb_model_free(m);
            if (best < 0 || t < best)
                best = t;
        }
        if (!status)
            printf("| %ld | %zu | %zu | %zu | %.3f |\n", n, bodies, dofs, frames, best);
        fflush(stdout);
    }
    close(fd);
    unlink(path);
    return status;
}
