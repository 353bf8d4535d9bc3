#include "roboest/core.h"

int rb_mat_alloc(rb_mat *m, size_t rows, size_t cols, rb_err *err)
{
    size_t n;
    if (!rb_size_mul(rows, cols, &n) || !rb_size_mul(n, sizeof(double), &n))
        return rb_err_set(err, RB_ENOMEM, "matrix %zu x %zu is too large", rows, cols);
    double *data = rb_calloc(n ? n / sizeof(double) : 1, sizeof(double));
    if (!data)
        return rb_err_set(err, RB_ENOMEM, "out of memory allocating a %zu x %zu matrix", rows, cols);
    *m = rb_mat_view(data, rows, cols, cols);
    return RB_OK;
}

void rb_mat_free(rb_mat *m)
{
    if (!m)
        return;
    rb_free(m->data);
    m->data = NULL;
    m->rows = m->cols = m->stride = 0;
}
