/* An HDF5 file driver for files written on disk a block at a time (write_stream.c): POSIX reads and writes like
 * HDF5's default one (sec2), except that a failing write or truncate (a full disk, a file size limit) is kept for the
 * caller, not returned to HDF5, and every later write is dropped. HDF5 1.10 cannot close a file whose writes failed:
 * the flush inside H5Fclose fails again, leaves a freed file behind a live id, and the library's exit handler then
 * crashes (write_h5.c). With this driver the library never sees the failure and closes the file; the caller says it
 * and removes the file. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_internal.h"

typedef struct soft {
    H5FD_t pub; /* first: HDF5 sees this part */
    int fd;
    dev_t dev;
    ino_t ino;
    haddr_t eoa, eof;
    int failed;  /* errno of the first failed write or truncate; 0: none */
    int *report; /* the caller's copy of failed (rb_io_h5_soft_watch), kept past the close; NULL: none */
} soft;

static void fail(soft *f, int e)
{
    f->failed = e;
    if (f->report)
        *f->report = e;
}

static H5FD_t *soft_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)fapl, (void)maxaddr;
    int o = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
    o |= (flags & H5F_ACC_CREAT ? O_CREAT : 0) | (flags & H5F_ACC_TRUNC ? O_TRUNC : 0) |
         (flags & H5F_ACC_EXCL ? O_EXCL : 0);
    int fd = open(name, o | O_CLOEXEC, 0666);
    struct stat st;
    if (fd < 0)
        return NULL;
    soft *f = fstat(fd, &st) == 0 ? rb_calloc(1, sizeof *f) : NULL;
    if (!f) {
        close(fd);
        return NULL;
    }
    f->fd = fd, f->dev = st.st_dev, f->ino = st.st_ino, f->eof = (haddr_t)st.st_size;
    return &f->pub;
}

static herr_t soft_close(H5FD_t *file)
{
    soft *f = (soft *)file;
    close(f->fd);
    rb_free(f);
    return 0;
}

static int soft_cmp(const H5FD_t *a, const H5FD_t *b)
{
    const soft *x = (const soft *)a, *y = (const soft *)b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static herr_t soft_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file; /* as sec2's: metadata and small raw data aggregated, a sieve buffer */
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
    return 0;
}

static haddr_t soft_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const soft *)file)->eoa;
}

static herr_t soft_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    ((soft *)file)->eoa = addr;
    return 0;
}

static haddr_t soft_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const soft *)file)->eof;
}

static herr_t soft_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = file;
    return 0;
}

static herr_t soft_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    (void)type, (void)dxpl;
    soft *f = (soft *)file;
    unsigned char *p = buf;
    while (size > 0) {
        ssize_t n = pread(f->fd, p, size, (off_t)addr);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) { /* past the end of the file: zeros, as sec2 reads them */
            memset(p, 0, size);
            break;
        }
        p += n, addr += (haddr_t)n, size -= (size_t)n;
    }
    return 0;
}

static herr_t soft_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    (void)type, (void)dxpl;
    soft *f = (soft *)file;
    if (addr + size > f->eof)
        f->eof = addr + size;
    const unsigned char *p = buf;
    while (!f->failed && size > 0) {
        ssize_t n = pwrite(f->fd, p, size, (off_t)addr);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail(f, n < 0 ? errno : EIO);
        else
            p += n, addr += (haddr_t)n, size -= (size_t)n;
    }
    return 0;
}

static herr_t soft_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)dxpl, (void)closing;
    soft *f = (soft *)file;
    if (f->eoa != f->eof && !f->failed && ftruncate(f->fd, (off_t)f->eoa) != 0)
        fail(f, errno);
    f->eof = f->eoa;
    return 0;
}

static const H5FD_class_t SOFT = {
    .name = "roboest_soft",
    .maxaddr = (haddr_t)INT64_MAX,
    .fc_degree = H5F_CLOSE_WEAK,
    .open = soft_open,
    .close = soft_close,
    .cmp = soft_cmp,
    .query = soft_query,
    .get_eoa = soft_get_eoa,
    .set_eoa = soft_set_eoa,
    .get_eof = soft_get_eof,
    .get_handle = soft_get_handle,
    .read = soft_read,
    .write = soft_write,
    .truncate = soft_truncate,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

static hid_t soft_id = -1;
static pthread_once_t soft_once = PTHREAD_ONCE_INIT;

static void soft_register(void) { soft_id = H5FDregister(&SOFT); }

int rb_io_h5_soft_fapl(int64_t fapl)
{
    pthread_once(&soft_once, soft_register);
    return soft_id < 0 || H5Pset_driver(fapl, soft_id, NULL) < 0 ? -1 : 0;
}

int rb_io_h5_soft_watch(int64_t file, int *failed)
{
    void *handle = NULL;
    if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle)
        return -1;
    soft *f = handle;
    f->report = failed;
    *failed = f->failed;
    return 0;
}
