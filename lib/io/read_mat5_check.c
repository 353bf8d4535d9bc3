/* MATLAB v5/v7 files: the element-structure check read_mat5.c runs before libmatio sees a file. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "io_internal.h"

/* ---- structure check before libmatio sees the file ---------------------------------------------
 * Walks every data element (inflating compressed variables as a stream, never whole): each element
 * must fit in its parent, arrays must hold as many bytes as their dimensions need, cells and structs
 * as many sub-elements as they declare. A file that passes cannot make libmatio read past an element
 * or allocate more than the file describes. */

enum {
    MI_INT8 = 1,
    MI_UINT8,
    MI_INT16,
    MI_UINT16,
    MI_INT32,
    MI_UINT32,
    MI_SINGLE,
    MI_DOUBLE = 9,
    MI_INT64 = 12,
    MI_UINT64,
    MI_MATRIX,
    MI_COMPRESSED,
    MI_UTF8,
    MI_UTF16,
    MI_UTF32
};
enum { MX_CELL = 1, MX_STRUCT, MX_OBJECT, MX_CHAR, MX_SPARSE, MX_DOUBLE, MX_UINT64 = 15 };

typedef struct stream {
    FILE *f;
    bool swap;          /* file written big-endian ("MI") */
    uint64_t file_left; /* bytes of the current top-level element not yet taken from the file */
    z_stream *z;        /* inflating a compressed variable, else NULL */
    unsigned char in[16384], out[16384];
    size_t out_pos, out_len;
    bool z_end;
} stream;

static bool file_take(stream *s, void *buf, size_t n)
{
    if (n > s->file_left || fread(buf, 1, n, s->f) != n)
        return false;
    s->file_left -= n;
    return true;
}

static bool refill(stream *s)
{
    if (s->z_end)
        return false;
    s->z->next_out = s->out;
    s->z->avail_out = sizeof s->out;
    while (s->z->avail_out == sizeof s->out) {
        if (s->z->avail_in == 0) {
            size_t n = s->file_left < sizeof s->in ? (size_t)s->file_left : sizeof s->in;
            if (n == 0 || !file_take(s, s->in, n))
                return false;
            s->z->next_in = s->in;
            s->z->avail_in = (uInt)n;
        }
        int zr = inflate(s->z, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) {
            s->z_end = true;
            break;
        }
        if (zr != Z_OK)
            return false;
    }
    s->out_pos = 0;
    s->out_len = sizeof s->out - s->z->avail_out;
    return s->out_len > 0;
}

/* Exactly n bytes of the element stream (buf NULL: skip them). */
static bool take(stream *s, void *buf, uint64_t n)
{
    unsigned char *p = buf;
    if (!s->z) {
        while (n > 0) {
            unsigned char tmp[4096];
            size_t k = n < sizeof tmp ? (size_t)n : sizeof tmp;
            if (!file_take(s, p ? p : tmp, k))
                return false;
            if (p)
                p += k;
            n -= k;
        }
        return true;
    }
    while (n > 0) {
        if (s->out_pos == s->out_len && !refill(s))
            return false;
        size_t k = s->out_len - s->out_pos;
        if (k > n)
            k = (size_t)n;
        if (p) {
            memcpy(p, s->out + s->out_pos, k);
            p += k;
        }
        s->out_pos += k;
        n -= k;
    }
    return true;
}

static uint32_t u32(const stream *s, const unsigned char *b)
{
    return s->swap ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
                   : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

typedef struct tag {
    uint32_t type, bytes;
    bool small; /* small data element: the bytes sit in the tag itself */
    unsigned char data[4];
} tag;

/* A tag, within *budget bytes of the parent (consumed, with the data and its padding when skip). */
static bool read_tag(stream *s, uint64_t *budget, tag *t)
{
    unsigned char b[8];
    if (*budget < 8 || !take(s, b, 8))
        return false;
    *budget -= 8;
    uint32_t first = u32(s, b);
    t->small = (first >> 16) != 0;
    if (t->small) {
        t->type = first & 0xFFFF;
        t->bytes = first >> 16;
        memcpy(t->data, b + 4, 4);
        return t->bytes <= 4;
    }
    t->type = first;
    t->bytes = u32(s, b + 4);
    return true;
}

static uint64_t padded(uint32_t bytes) { return ((uint64_t)bytes + 7) & ~(uint64_t)7; }

/* The data of a (non-small) tag, kept when buf is not NULL, plus padding to 8 bytes. */
static bool take_data(stream *s, uint64_t *budget, const tag *t, void *buf)
{
    if (t->small)
        return true;
    uint64_t n = padded(t->bytes);
    if (n > *budget || !take(s, buf, t->bytes) || !take(s, NULL, n - t->bytes))
        return false;
    *budget -= n;
    return true;
}

static size_t type_size(uint32_t type)
{
    switch (type) {
    case MI_INT8:
    case MI_UINT8:
    case MI_UTF8: return 1;
    case MI_INT16:
    case MI_UINT16:
    case MI_UTF16: return 2;
    case MI_INT32:
    case MI_UINT32:
    case MI_SINGLE:
    case MI_UTF32: return 4;
    case MI_DOUBLE:
    case MI_INT64:
    case MI_UINT64: return 8;
    default: return 0;
    }
}

static bool check_matrix(stream *s, uint64_t bytes, int depth);

/* `count` sub-arrays, each a miMATRIX element inside the parent's budget. */
static bool check_children(stream *s, uint64_t *budget, uint64_t count, int depth)
{
    if (count > *budget / 8)
        return false;
    for (uint64_t k = 0; k < count; k++) {
        tag t;
        if (!read_tag(s, budget, &t) || t.small || t.type != MI_MATRIX || t.bytes > *budget)
            return false;
        *budget -= t.bytes;
        if (!check_matrix(s, t.bytes, depth + 1))
            return false;
    }
    return true;
}

/* Real (and imaginary) parts of a numeric or char array of `count` elements. */
static bool check_parts(stream *s, uint64_t *budget, uint64_t count, bool complex)
{
    for (int part = 0; part < (complex ? 2 : 1); part++) {
        tag t;
        size_t size;
        if (!read_tag(s, budget, &t) || (size = type_size(t.type)) == 0)
            return false;
        /* UTF-8 text may take more bytes than characters, never fewer; other types exactly size each. */
        uint64_t need = t.type == MI_UTF8 ? count : count * size;
        if (count > UINT64_MAX / 8 || t.bytes < need || !take_data(s, budget, &t, NULL))
            return false;
    }
    return true;
}

static bool check_matrix(stream *s, uint64_t bytes, int depth)
{
    uint64_t budget = bytes;
    tag t;
    unsigned char buf[8 * 32];
    if (bytes == 0) /* an empty array */
        return true;
    if (depth > 64 || !read_tag(s, &budget, &t) || t.type != MI_UINT32 || t.bytes != 8 || t.small ||
        !take_data(s, &budget, &t, buf))
        return false;
    uint32_t flags = u32(s, buf), cls = flags & 0xFF;
    bool complex = (flags & 0x800) != 0;
    if (!read_tag(s, &budget, &t) || t.type != MI_INT32 || t.bytes < 8 || t.bytes > sizeof buf || t.bytes % 4)
        return false;
    if (t.small)
        memcpy(buf, t.data, 4);
    else if (!take_data(s, &budget, &t, buf))
        return false;
    uint64_t count = 1;
    for (uint32_t d = 0; d < t.bytes / 4; d++) {
        uint32_t dim = u32(s, buf + 4 * d);
        if (dim > INT32_MAX || (dim && count > UINT64_MAX / dim))
            return false;
        count *= dim;
    }
    if (!read_tag(s, &budget, &t) || (t.type != MI_INT8 && t.type != MI_UINT8) || !take_data(s, &budget, &t, NULL))
        return false;
    bool ok = true;
    if (cls == MX_CHAR || (cls >= MX_DOUBLE && cls <= MX_UINT64)) {
        ok = check_parts(s, &budget, count, complex);
    } else if (cls == MX_CELL) {
        ok = check_children(s, &budget, count, depth);
    } else if (cls == MX_STRUCT) {
        tag len, names;
        int32_t name_len = 0;
        ok = read_tag(s, &budget, &len) && len.small && len.type == MI_INT32 && len.bytes == 4;
        if (ok) {
            name_len = (int32_t)u32(s, len.data);
            ok = name_len > 0 && read_tag(s, &budget, &names) && names.type == MI_INT8 &&
                 names.bytes % (uint32_t)name_len == 0 && take_data(s, &budget, &names, NULL);
        }
        if (ok) {
            uint64_t n_fields = names.bytes / (uint32_t)name_len;
            ok = (n_fields == 0 || count <= UINT64_MAX / n_fields) &&
                 check_children(s, &budget, count * n_fields, depth);
        }
    }
    /* Sparse arrays, objects, function handles: never read as channels, just bounded. */
    return ok && take(s, NULL, budget);
}

int rb_io_validate_mat5(const char *path, rb_err *err)
{
    stream *s = rb_calloc(1, sizeof *s);
    z_stream z;
    int rc = RB_OK;
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "%s: out of memory", path);
    s->f = fopen(path, "rb");
    unsigned char header[128];
    struct stat st;
    if (!s->f || fstat(fileno(s->f), &st) != 0 || fread(header, 1, 128, s->f) != 128) {
        rc = rb_err_set(err, RB_EINPUT, "%s: cannot read the MATLAB header", path);
        goto done;
    }
    s->swap = header[126] == 'M';
    uint64_t offset = 128, size = (uint64_t)st.st_size;
    while (rc == RB_OK && offset + 8 <= size) {
        unsigned char b[8];
        s->file_left = 8;
        s->z = NULL;
        if (!file_take(s, b, 8))
            break;
        uint32_t type = u32(s, b), bytes = u32(s, b + 4);
        if ((type != MI_MATRIX && type != MI_COMPRESSED) || bytes > size - offset - 8) {
            rc = rb_err_set(err, RB_EINPUT,
                            "%s: truncated or corrupt: the element at byte %llu (type %u, %u bytes) "
                            "does not fit in the file's %llu bytes",
                            path, (unsigned long long)offset, type, bytes, (unsigned long long)size);
            break;
        }
        s->file_left = bytes;
        bool ok;
        if (type == MI_MATRIX) {
            ok = check_matrix(s, bytes, 0);
        } else {
            memset(&z, 0, sizeof z);
            s->z = &z;
            s->out_pos = s->out_len = 0;
            s->z_end = false;
            ok = inflateInit(&z) == Z_OK;
            uint64_t budget = UINT64_MAX;
            tag t;
            if (ok) {
                ok = read_tag(s, &budget, &t) && !t.small && t.type == MI_MATRIX && check_matrix(s, t.bytes, 0);
                inflateEnd(&z);
            }
        }
        if (!ok)
            rc = rb_err_set(err, RB_EINPUT, "%s: corrupt variable at byte %llu (its elements do not add up)", path,
                            (unsigned long long)offset);
        offset += 8 + (uint64_t)bytes;
        if (rc == RB_OK && fseeko(s->f, (off_t)offset, SEEK_SET) != 0)
            rc = rb_err_set(err, RB_EINPUT, "%s: cannot seek to byte %llu", path, (unsigned long long)offset);
    }
done:
    if (s->f)
        fclose(s->f);
    rb_free(s);
    return rc;
}
