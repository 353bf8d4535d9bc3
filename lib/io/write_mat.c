/*
 * Robot-logger .mat writer, the layout robometry writes through libmatio (named arrays: see the
 * last section):
 *
 *   <root> (struct, default robot_logger_device)
 *     description_list    n x 1 cell of char   from attribute description_list (split at ','), if set
 *     yarp_robot_name     char                 from attribute yarp_robot_name, if set
 *     <a>.<b>...          nested structs following each channel's slash path; a channel's struct has
 *       data              n x 1 x T double     (sample-major storage is MATLAB's column-major order)
 *       dimensions        3 x 1 double         [n; 1; T] (a column, as the logger's vectors)
 *       elements_names    n x 1 cell of char
 *       units_of_measure  n x 1 cell of char
 *       name              char                 the channel name with '::' separators
 *       timestamps        T x 1 double
 *     roboest_provenance  struct, one char field per other attribute, if any: the field name is the
 *                         key made a MATLAB identifier (characters other than [A-Za-z0-9_] become
 *                         '_', an 'x' is prepended unless it starts with a letter, cut to 63
 *                         characters, "_2", "_3"... appended on a clash); keys that are already
 *                         identifiers (roboest_version, config_sha256, ...) are kept as they are.
 *   Root fields are in this order: description_list, yarp_robot_name, roboest_provenance (those
 *   present), then the channel tree in the order channels first appear in the log.
 *
 * Zero-sample channels are written as the logger writes them: a struct without fields (readers
 * skip those). Text is MATLAB char, 1 x (number of UTF-16 code units): in v5 ASCII text is stored
 * as miUTF8 (as the logger's libmatio writes it) and other text as miUTF16; in v7.3 all text is
 * uint16 UTF-16 code units, as MATLAB and libmatio write it.
 *
 * v5 (MAT_FT_MAT5, zlib) goes through libmatio, whose bytes are deterministic given a fixed header.
 * v7.3 is written here with HDF5 directly in libmatio's v7.3 layout (MATLAB_class attributes,
 * MATLAB_fields, cells as object references into /#refs#, char as uint16 with MATLAB_int_decode 2,
 * empty arrays as MATLAB_empty), because libmatio 1.5 creates its HDF5 datasets with creation
 * property lists that record modification times, so the same log would give different bytes every
 * second; here every object is created with H5Pset_obj_track_times(.., 0).
 */
#include <hdf5.h>
#include <matio.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "io_internal.h"

#define DEFAULT_ROOT "robot_logger_device"
#define MATLAB_NAME_MAX 63

/* ---- channel tree ------------------------------------------------------------------------------ */

typedef struct tnode {
    char *name;
    const rb_channel *ch; /* the channel ending here, or NULL */
    struct tnode *kids;
    size_t n_kids, cap_kids;
} tnode;

static void tree_free(tnode *nd)
{
    for (size_t k = 0; k < nd->n_kids; k++)
        tree_free(&nd->kids[k]);
    rb_free(nd->kids);
    rb_free(nd->name);
}

/* Index of the child called name[0..len) of nd, added if missing. */
static int tree_child(tnode *nd, const char *name, size_t len, size_t *idx, rb_err *err)
{
    for (size_t k = 0; k < nd->n_kids; k++)
        if (strlen(nd->kids[k].name) == len && memcmp(nd->kids[k].name, name, len) == 0) {
            *idx = k;
            return RB_OK;
        }
    if (nd->n_kids == nd->cap_kids) {
        size_t cap = nd->cap_kids ? 2 * nd->cap_kids : 4;
        tnode *kids = rb_realloc(nd->kids, cap * sizeof *kids);
        if (!kids)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        nd->kids = kids;
        nd->cap_kids = cap;
    }
    tnode kid = {.name = rb_strndup(name, len)};
    if (!kid.name)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    nd->kids[nd->n_kids] = kid;
    *idx = nd->n_kids++;
    return RB_OK;
}

static int tree_add(tnode *root, const rb_channel *ch, const char *shown, rb_err *err)
{
    tnode *nd = root;
    for (const char *p = ch->name;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return rb_err_set(err, RB_EINPUT, "%s: channel '%s': invalid name (empty, '.' or '..' path component)",
                              shown, ch->name);
        size_t k = 0;
        int rc = tree_child(nd, p, len, &k, err);
        if (rc)
            return rc;
        nd = &nd->kids[k];
        if (!slash)
            break;
        p = slash + 1;
    }
    nd->ch = ch;
    return RB_OK;
}

/* ---- matio variables --------------------------------------------------------------------------- */

static const char *const LEAF_FIELDS[] = {"data", "dimensions", "elements_names", "units_of_measure",
                                          "name", "timestamps"};
enum { N_LEAF_FIELDS = 6 };

static int oom(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory building the .mat variables"); }

/* 1 x (UTF-16 length) char from the UTF-8 bytes s[0..len) (checked to be UTF-8 before). ASCII
 * text stays UTF-8 (MAT_T_UTF8, as the logger writes it); other text is stored as UTF-16
 * (MAT_T_UTF16) because libmatio 1.5 sizes a v5 miUTF8 element by its character count, not its
 * byte count, which corrupts everything after it for libmatio readers. */
static matvar_t *mv_char(const char *s, size_t len)
{
    char *copy = rb_strndup(s, len);
    size_t units = 0;
    if (!copy || !rb_io_utf8_to_utf16(copy, NULL, &units)) {
        rb_free(copy);
        return NULL;
    }
    void *data = copy;
    size_t nbytes = len;
    enum matio_types type = MAT_T_UTF8;
    if (units < len) {
        uint16_t *u16 = rb_malloc(units * sizeof *u16);
        if (!u16) {
            rb_free(copy);
            return NULL;
        }
        rb_io_utf8_to_utf16(copy, u16, &units);
        rb_free(copy);
        data = u16;
        nbytes = units * sizeof *u16;
        type = MAT_T_UTF16;
    }
    size_t dims[2] = {1, units};
    matvar_t *v = Mat_VarCreate(NULL, MAT_C_CHAR, type, 2, dims, NULL, 0);
    if (!v) {
        rb_free(data);
        return NULL;
    }
    /* rb_malloc is malloc underneath, so Mat_VarFree may free() it. */
    v->data = data;
    v->nbytes = nbytes;
    v->mem_conserve = 0;
    return v;
}

/* n x 1 cell of char from n strings, each given as (start, length). */
static matvar_t *mv_cellstr(size_t n, const char *const *s, const size_t *len)
{
    size_t dims[2] = {n, 1};
    matvar_t *cell = Mat_VarCreate(NULL, MAT_C_CELL, MAT_T_CELL, 2, dims, NULL, 0);
    if (!cell || (n > 0 && !cell->data)) {
        Mat_VarFree(cell);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        matvar_t *str = mv_char(s[i], len[i]);
        if (!str) {
            Mat_VarFree(cell);
            return NULL;
        }
        Mat_VarSetCell(cell, (int)i, str);
    }
    return cell;
}

static matvar_t *mv_strings(char *const *strs, size_t n)
{
    const char **s = rb_calloc(n, sizeof *s);
    size_t *len = rb_calloc(n, sizeof *len);
    matvar_t *cell = NULL;
    if (s && len) {
        for (size_t i = 0; i < n; i++) {
            s[i] = strs[i];
            len[i] = strlen(strs[i]);
        }
        cell = mv_cellstr(n, s, len);
    }
    rb_free(s);
    rb_free(len);
    return cell;
}

/* description_list: the attribute split at ','. */
static matvar_t *mv_split(const char *list)
{
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    if (!list[0])
        n = 0;
    const char **s = rb_calloc(n, sizeof *s);
    size_t *len = rb_calloc(n, sizeof *len);
    matvar_t *cell = NULL;
    if (s && len) {
        const char *p = list;
        for (size_t i = 0; i < n; i++) {
            const char *comma = strchr(p, ',');
            s[i] = p;
            len[i] = comma ? (size_t)(comma - p) : strlen(p);
            p += len[i] + 1;
        }
        cell = mv_cellstr(n, s, len);
    }
    rb_free(s);
    rb_free(len);
    return cell;
}

/* Double array over borrowed data (matio neither copies nor frees it); copy for small locals. */
static matvar_t *mv_double(int rank, size_t *dims, const double *data, bool copy)
{
    return Mat_VarCreate(NULL, MAT_C_DOUBLE, MAT_T_DOUBLE, rank, dims, (void *)data, copy ? 0 : MAT_F_DONT_COPY_DATA);
}

static matvar_t *mv_struct(const char *name, const char **fields, size_t n)
{
    size_t dims[2] = {1, 1};
    return Mat_VarCreateStruct(name, 2, dims, fields, (unsigned)n);
}

static matvar_t *mv_leaf_field(const rb_channel *ch, int k)
{
    size_t n = ch->n_elements, T = ch->n_samples;
    switch (k) {
    case 0: {
        size_t dims[3] = {n, 1, T};
        return mv_double(3, dims, ch->data, false);
    }
    case 1: {
        size_t dims[2] = {3, 1};
        double d[3] = {(double)n, 1, (double)T};
        return mv_double(2, dims, d, true);
    }
    case 2: return mv_strings(ch->element_names, n);
    case 3: return mv_strings(ch->units, n);
    case 4: {
        /* "a/b" -> "a::b", the logger's separator */
        size_t slashes = 0, len = strlen(ch->name);
        for (const char *p = ch->name; *p; p++)
            slashes += *p == '/';
        char *s = rb_malloc(len + slashes + 1), *q = s;
        if (!s)
            return NULL;
        for (const char *p = ch->name; *p; p++) {
            if (*p == '/') {
                *q++ = ':';
                *q++ = ':';
            } else {
                *q++ = *p;
            }
        }
        *q = '\0';
        matvar_t *v = mv_char(s, (size_t)(q - s));
        rb_free(s);
        return v;
    }
    default: {
        size_t dims[2] = {T, 1};
        return mv_double(2, dims, ch->time, false);
    }
    }
}

static int node_to_matvar(const tnode *nd, const char *shown, matvar_t **out, rb_err *err);

/* Struct with `n_own` fields produced by `own(ctx, k)` followed by the node's children. */
typedef matvar_t *(*field_fn)(const void *ctx, int k);

static matvar_t *leaf_field_fn(const void *ctx, int k) { return mv_leaf_field(ctx, k); }

static int build_struct(const char *name, const char *const *own_names, size_t n_own, field_fn own, const void *ctx,
                        const tnode *nd, const char *shown, matvar_t **out, rb_err *err)
{
    int rc = RB_OK;
    size_t n = n_own + nd->n_kids;
    matvar_t *sv = NULL;
    const char **names = rb_calloc(n, sizeof *names);
    if (!names)
        return oom(err);
    for (size_t k = 0; k < n_own; k++)
        names[k] = own_names[k];
    for (size_t k = 0; k < nd->n_kids; k++) {
        names[n_own + k] = nd->kids[k].name;
        for (size_t j = 0; j < n_own; j++)
            if (strcmp(own_names[j], nd->kids[k].name) == 0) {
                rc = rb_err_set(err, RB_EINPUT,
                                "%s: channel path component '%s'%s%s%s clashes with the .mat field of "
                                "that name",
                                shown, nd->kids[k].name, nd->name ? " (under '" : "", nd->name ? nd->name : "",
                                nd->name ? "')" : "");
                goto done;
            }
    }
    sv = mv_struct(name, names, n);
    if (!sv) {
        rc = oom(err);
        goto done;
    }
    for (size_t k = 0; k < n_own && rc == RB_OK; k++) {
        matvar_t *f = own(ctx, (int)k);
        if (!f)
            rc = oom(err);
        else
            Mat_VarSetStructFieldByIndex(sv, k, 0, f);
    }
    for (size_t k = 0; k < nd->n_kids && rc == RB_OK; k++) {
        matvar_t *f = NULL;
        rc = node_to_matvar(&nd->kids[k], shown, &f, err);
        if (rc == RB_OK)
            Mat_VarSetStructFieldByIndex(sv, n_own + k, 0, f);
    }
done:
    rb_free(names);
    if (rc) {
        Mat_VarFree(sv);
        sv = NULL;
    }
    *out = sv;
    return rc;
}

static int node_to_matvar(const tnode *nd, const char *shown, matvar_t **out, rb_err *err)
{
    /* A channel without samples: a struct without its fields, as the logger writes it. */
    bool leaf = nd->ch && nd->ch->n_samples > 0;
    return build_struct(nd->name, LEAF_FIELDS, leaf ? N_LEAF_FIELDS : 0, leaf_field_fn, nd->ch, nd, shown, out, err);
}

/* ---- root struct ------------------------------------------------------------------------------- */

static bool is_reserved_key(const char *key)
{
    return strcmp(key, "yarp_robot_name") == 0 || strcmp(key, "description_list") == 0;
}

/* Attribute key as a MATLAB identifier (see the top comment), unique among names[0..n). */
static char *identifier_for(const char *key, char *const *names, size_t n)
{
    char base[MATLAB_NAME_MAX + 1], *out = rb_malloc(MATLAB_NAME_MAX + 1);
    if (!out)
        return NULL;
    size_t len = 0;
    bool letter = (key[0] >= 'A' && key[0] <= 'Z') || (key[0] >= 'a' && key[0] <= 'z');
    if (!letter)
        base[len++] = 'x';
    for (const char *p = key; *p && len < MATLAB_NAME_MAX; p++) {
        char c = *p;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        base[len++] = ok ? c : '_';
    }
    base[len] = '\0';
    snprintf(out, MATLAB_NAME_MAX + 1, "%s", base);
    for (unsigned suffix = 2;; suffix++) {
        bool clash = false;
        for (size_t k = 0; k < n && !clash; k++)
            clash = strcmp(names[k], out) == 0;
        if (!clash)
            return out;
        char tail[16];
        int tl = snprintf(tail, sizeof tail, "_%u", suffix);
        snprintf(out, MATLAB_NAME_MAX + 1, "%.*s%s", (int)(MATLAB_NAME_MAX - tl), base, tail);
    }
}

typedef struct prov_ctx {
    const rb_attr *attrs;
    const size_t *attr_of; /* field k holds attribute attr_of[k] */
} prov_ctx;

static matvar_t *prov_field_fn(const void *ctx, int k)
{
    const prov_ctx *p = ctx;
    const char *v = p->attrs[p->attr_of[k]].value;
    return mv_char(v, strlen(v));
}

/* The struct RB_MAT_PROVENANCE_FIELD of the attributes (but yarp_robot_name and description_list when
 * `skip_reserved`); *out NULL when there is none. */
static int provenance_matvar(const rb_attr *attrs, size_t n_attrs, bool skip_reserved, matvar_t **out, rb_err *err)
{
    *out = NULL;
    int rc = RB_OK;
    size_t n = 0;
    char **names = rb_calloc(n_attrs, sizeof *names);
    size_t *attr_of = rb_calloc(n_attrs, sizeof *attr_of);
    if (!names || !attr_of) {
        rc = oom(err);
        goto done;
    }
    for (size_t a = 0; a < n_attrs; a++) {
        if (skip_reserved && is_reserved_key(attrs[a].key))
            continue;
        names[n] = identifier_for(attrs[a].key, names, n);
        if (!names[n]) {
            rc = oom(err);
            goto done;
        }
        attr_of[n++] = a;
    }
    if (n > 0) {
        tnode none = {0};
        prov_ctx ctx = {attrs, attr_of};
        rc = build_struct(RB_MAT_PROVENANCE_FIELD, (const char *const *)names, n, prov_field_fn, &ctx, &none, "", out,
                          err);
    }
done:
    for (size_t k = 0; names && k < n; k++)
        rb_free(names[k]);
    rb_free(names);
    rb_free(attr_of);
    return rc;
}

typedef struct root_ctx {
    const rb_log *log;
    const char *kinds[3]; /* which root field k is */
    matvar_t **prov;      /* built beforehand, handed over once */
} root_ctx;

static matvar_t *root_field_fn(const void *ctx, int k)
{
    const root_ctx *r = ctx;
    const char *kind = r->kinds[k];
    if (strcmp(kind, "description_list") == 0)
        return mv_split(rb_log_get_attr(r->log, kind));
    if (strcmp(kind, "yarp_robot_name") == 0) {
        const char *v = rb_log_get_attr(r->log, kind);
        return mv_char(v, strlen(v));
    }
    matvar_t *p = *r->prov;
    *r->prov = NULL;
    return p;
}

/* The root struct: its own fields (see the top comment), then the channel tree. */
static int root_matvar(const rb_log *log, const char *root_name, const tnode *tree, const char *shown, matvar_t **out,
                       rb_err *err)
{
    matvar_t *prov = NULL;
    root_ctx ctx = {.log = log, .prov = &prov};
    size_t n = 0;
    if (rb_log_get_attr(log, "description_list"))
        ctx.kinds[n++] = "description_list";
    if (rb_log_get_attr(log, "yarp_robot_name"))
        ctx.kinds[n++] = "yarp_robot_name";
    int rc = provenance_matvar(log->attrs, log->n_attrs, true, &prov, err);
    if (rc)
        return rc;
    if (prov)
        ctx.kinds[n++] = RB_MAT_PROVENANCE_FIELD;
    rc = build_struct(root_name, ctx.kinds, n, root_field_fn, &ctx, tree, shown, out, err);
    Mat_VarFree(prov); /* still ours if build_struct failed before taking it */
    return rc;
}

/* ---- v7.3 through HDF5 ------------------------------------------------------------------------- */

typedef struct m73 {
    const char *shown;
    hid_t file, refs, fcpl, fapl, gcpl, lcpl;
    unsigned long n_refs;
} m73;

static int write_var(m73 *w, hid_t parent, const char *name, matvar_t *v, rb_err *err);

/* RB_EIO naming the HDF5 object parent/name that could not be made. */
static int object_fail(const m73 *w, hid_t parent, const char *name, rb_err *err)
{
    char where[512] = "";
    hid_t stack = H5Eget_current_stack(); /* H5Iget_name would clear the error being reported */
    if (H5Iget_name(parent, where, sizeof where) < 0)
        where[0] = '\0';
    if (stack >= 0)
        H5Eset_current_stack(stack);
    return rb_io_h5_fail(w->shown, err, "cannot write %s/%s", strcmp(where, "/") == 0 ? "" : where, name);
}

/* Contiguous, or chunked, shuffled and deflated when large (HDF5's standard filters, which MATLAB reads;
 * the byte shuffle roughly halves smooth sensor data); never with object times. A row vector written window by
 * window (deferred: a channel's timestamps, 1 x T in HDF5's order) is chunked along its row, about 64 KiB a chunk:
 * one chunk of it all would be read back, inflated and deflated again at every window. */
static hid_t make_dcpl(int rank, const hsize_t *dims, size_t elem_size, bool deferred)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0)
        goto fail;
    hsize_t inner = 1, chunk[8];
    for (int d = 1; d < rank; d++)
        inner *= dims[d];
    if (rank > 8 || dims[0] * inner * elem_size < 16 * 1024)
        return dcpl;
    hsize_t rows = 64 * 1024 / (inner * elem_size);
    chunk[0] = rows < 1 ? 1 : rows > dims[0] ? dims[0] : rows;
    for (int d = 1; d < rank; d++)
        chunk[d] = dims[d];
    if (deferred && rank == 2 && dims[0] == 1) {
        hsize_t along = 64 * 1024 / elem_size;
        chunk[1] = dims[1] < along ? dims[1] : along;
    }
    if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0)
        goto fail;
    return dcpl;
fail:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return -1;
}

static int attr_write(const m73 *w, hid_t obj, const char *name, hid_t type, hid_t space, const void *value,
                      rb_err *err)
{
    hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = attr < 0 || H5Awrite(attr, type, value) < 0
                 ? rb_io_h5_fail(w->shown, err, "cannot write attribute %s", name)
                 : RB_OK;
    if (attr >= 0)
        H5Aclose(attr);
    return rc;
}

static int attr_scalar(const m73 *w, hid_t obj, const char *name, hid_t type, const void *value, rb_err *err)
{
    hid_t space = H5Screate(H5S_SCALAR);
    int rc = space < 0 ? rb_io_h5_fail(w->shown, err, "cannot make a dataspace")
                       : attr_write(w, obj, name, type, space, value, err);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* MATLAB_class: a fixed-length, NUL-terminated ASCII string, as libmatio and MATLAB write it. */
static int attr_class(const m73 *w, hid_t obj, const char *cls, rb_err *err)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    int rc = type < 0 || H5Tset_size(type, strlen(cls)) < 0 ? rb_io_h5_fail(w->shown, err, "cannot make a string type")
                                                            : attr_scalar(w, obj, "MATLAB_class", type, cls, err);
    if (type >= 0)
        H5Tclose(type);
    return rc;
}

/* MATLAB_fields: field names as variable-length arrays of 1-byte strings. */
static int attr_fields(const m73 *w, hid_t obj, matvar_t *v, rb_err *err)
{
    hsize_t n = Mat_VarGetNumberOfFields(v);
    char *const *names = Mat_VarGetStructFieldnames(v);
    hvl_t *vl = rb_calloc(n, sizeof *vl);
    hid_t chr = H5Tcopy(H5T_C_S1), type = -1, space = -1;
    int rc = RB_OK;
    if (!vl)
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    else if (chr < 0 || H5Tset_size(chr, 1) < 0 || (type = H5Tvlen_create(chr)) < 0 ||
             (space = H5Screate_simple(1, &n, NULL)) < 0)
        rc = rb_io_h5_fail(w->shown, err, "cannot make the MATLAB_fields type");
    for (hsize_t k = 0; rc == RB_OK && k < n; k++) {
        vl[k].len = strlen(names[k]);
        vl[k].p = names[k];
    }
    if (rc == RB_OK)
        rc = attr_write(w, obj, "MATLAB_fields", type, space, vl, err);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (chr >= 0)
        H5Tclose(chr);
    rb_free(vl);
    return rc;
}

/* Dataset parent/name of HDF5 dimensions `dims` holding `data` (NULL: made, not written: deferred), with its
 * MATLAB_class. *dset is left open for the caller's further attributes (the caller closes it when it is >= 0). */
static int create_dataset(const m73 *w, hid_t parent, const char *name, int rank, const hsize_t *dims, const char *cls,
                          hid_t file_type, hid_t mem_type, size_t elem_size, const void *data, hid_t *dset, rb_err *err)
{
    int rc;
    hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = -1;
    *dset = -1;
    if (space < 0 || (dcpl = make_dcpl(rank, dims, elem_size, !data)) < 0 ||
        (*dset = H5Dcreate2(parent, name, file_type, space, w->lcpl, dcpl, H5P_DEFAULT)) < 0 ||
        (data && H5Dwrite(*dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
        rc = object_fail(w, parent, name, err);
    else
        rc = attr_class(w, *dset, cls, err);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* One dataset with MATLAB_class (and MATLAB_int_decode for char); dims are MATLAB's, reversed. */
static int write_dataset(const m73 *w, hid_t parent, const char *name, const matvar_t *v, const char *cls,
                         hid_t file_type, hid_t mem_type, size_t elem_size, const void *data, rb_err *err)
{
    hsize_t dims[8];
    if (v->rank < 1 || v->rank > 8)
        return rb_err_set(err, RB_EINVAL, "%s: %s: rank %d not supported", w->shown, name, v->rank);
    for (int d = 0; d < v->rank; d++)
        dims[d] = v->dims[v->rank - 1 - d];
    hid_t dset;
    int rc = create_dataset(w, parent, name, v->rank, dims, cls, file_type, mem_type, elem_size, data, &dset, err);
    if (rc == RB_OK && strcmp(cls, "char") == 0) {
        int decode = 2; /* MATLAB: UTF-16 code units */
        rc = attr_scalar(w, dset, "MATLAB_int_decode", H5T_NATIVE_INT, &decode, err);
    }
    if (dset >= 0)
        H5Dclose(dset);
    return rc;
}

/* Empty arrays: a uint64 dataset holding the MATLAB dimensions, marked MATLAB_empty. */
static int write_empty(const m73 *w, hid_t parent, const char *name, const matvar_t *v, const char *cls, rb_err *err)
{
    uint64_t dims[8];
    hsize_t rank = (hsize_t)v->rank;
    if (rank < 1 || rank > 8)
        return rb_err_set(err, RB_EINVAL, "%s: %s: rank %d not supported", w->shown, name, v->rank);
    for (hsize_t d = 0; d < rank; d++)
        dims[d] = v->dims[d];
    hid_t dset;
    int rc = create_dataset(w, parent, name, 1, &rank, cls, H5T_STD_U64LE, H5T_NATIVE_UINT64, sizeof dims[0], dims,
                            &dset, err);
    unsigned empty = 1;
    if (rc == RB_OK)
        rc = attr_scalar(w, dset, "MATLAB_empty", H5T_NATIVE_UINT, &empty, err);
    if (dset >= 0)
        H5Dclose(dset);
    return rc;
}

/* Char data is UTF-16 already or ASCII held as UTF-8 (see mv_char). */
static int write_char(const m73 *w, hid_t parent, const char *name, const matvar_t *v, rb_err *err)
{
    if (v->data_type == MAT_T_UTF16)
        return write_dataset(w, parent, name, v, "char", H5T_STD_U16LE, H5T_NATIVE_UINT16, 2, v->data, err);
    size_t n;
    if (!rb_io_utf8_to_utf16(v->data, NULL, &n))
        return rb_err_set(err, RB_EINPUT, "%s: %s: text is not valid UTF-8", w->shown, name);
    uint16_t *u16 = rb_malloc(n * sizeof *u16);
    if (!u16)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_io_utf8_to_utf16(v->data, u16, &n);
    int rc = write_dataset(w, parent, name, v, "char", H5T_STD_U16LE, H5T_NATIVE_UINT16, 2, u16, err);
    rb_free(u16);
    return rc;
}

static int open_refs(m73 *w, rb_err *err)
{
    if (w->refs >= 0)
        return RB_OK;
    w->refs = H5Gcreate2(w->file, "/#refs#", w->lcpl, w->gcpl, H5P_DEFAULT);
    return w->refs >= 0 ? RB_OK : rb_io_h5_fail(w->shown, err, "cannot create /#refs#");
}

/* Cells: each element is written below /#refs# (named 0, 1, ... as libmatio does) and the cell
 * dataset holds object references to them. */
static int write_cell(m73 *w, hid_t parent, const char *name, matvar_t *v, size_t n, rb_err *err)
{
    hobj_ref_t *refs = rb_calloc(n, sizeof *refs);
    if (!refs)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = open_refs(w, err);
    for (size_t i = 0; rc == RB_OK && i < n; i++) {
        char ref_name[32], ref_path[48];
        snprintf(ref_name, sizeof ref_name, "%lu", w->n_refs++);
        snprintf(ref_path, sizeof ref_path, "/#refs#/%s", ref_name);
        rc = write_var(w, w->refs, ref_name, Mat_VarGetCell(v, (int)i), err);
        if (rc == RB_OK && H5Rcreate(&refs[i], w->file, ref_path, H5R_OBJECT, -1) < 0)
            rc = rb_io_h5_fail(w->shown, err, "cannot reference %s", ref_path);
    }
    if (rc == RB_OK)
        rc = write_dataset(w, parent, name, v, "cell", H5T_STD_REF_OBJ, H5T_STD_REF_OBJ, sizeof *refs, refs, err);
    rb_free(refs);
    return rc;
}

static int write_struct(m73 *w, hid_t parent, const char *name, matvar_t *v, rb_err *err)
{
    hid_t grp = H5Gcreate2(parent, name, w->lcpl, w->gcpl, H5P_DEFAULT);
    if (grp < 0)
        return object_fail(w, parent, name, err);
    unsigned n = Mat_VarGetNumberOfFields(v);
    char *const *names = Mat_VarGetStructFieldnames(v);
    int rc = attr_class(w, grp, "struct", err);
    if (rc == RB_OK && n > 0)
        rc = attr_fields(w, grp, v, err);
    for (unsigned k = 0; rc == RB_OK && k < n; k++)
        rc = write_var(w, grp, names[k], Mat_VarGetStructFieldByIndex(v, k, 0), err);
    H5Gclose(grp);
    return rc;
}

static int write_var(m73 *w, hid_t parent, const char *name, matvar_t *v, rb_err *err)
{
    size_t n = 1;
    for (int d = 0; d < v->rank; d++)
        n *= v->dims[d];
    switch (v->class_type) {
    case MAT_C_STRUCT: return write_struct(w, parent, name, v, err); /* always 1 x 1 here */
    case MAT_C_CELL: return n ? write_cell(w, parent, name, v, n, err) : write_empty(w, parent, name, v, "cell", err);
    case MAT_C_CHAR: return n ? write_char(w, parent, name, v, err) : write_empty(w, parent, name, v, "char", err);
    case MAT_C_DOUBLE:
        return n ? write_dataset(w, parent, name, v, "double", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double),
                                 v->data, err)
                 : write_empty(w, parent, name, v, "double", err);
    default: return rb_err_set(err, RB_EINVAL, "%s: %s: unexpected variable class %d", w->shown, name, v->class_type);
    }
}

/* The 128-byte MATLAB header in the 512-byte user block: text padded with spaces, subsystem offset
 * (spaces, as libmatio writes), version 0x0200 and the endian mark "IM" (little-endian bytes). */
void rb_io_mat73_header(unsigned char h[128])
{
    memset(h, ' ', 128);
    int len = snprintf((char *)h, 117,
                       "MATLAB 7.3 MAT-file, Platform: roboest, Created by: roboest %s HDF5 schema 1.00 .", RB_VERSION);
    h[len < 116 ? len : 116] = ' ';
    h[124] = 0x00;
    h[125] = 0x02;
    h[126] = 'I';
    h[127] = 'M';
}

/* The file for the writer *w: in memory (image) or, image NULL, on disk (a file written window by window, h5soft.c). */
static int create73(m73 *w, rb_io_h5_image *image, const char *file, rb_err *err)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    w->fcpl = H5Pcreate(H5P_FILE_CREATE);
    w->fapl = H5Pcreate(H5P_FILE_ACCESS);
    w->gcpl = H5Pcreate(H5P_GROUP_CREATE);
    w->lcpl = H5Pcreate(H5P_LINK_CREATE);
    /* libmatio's file settings (MATLAB reads at most the v1.8 format), minus object times. */
    if (w->fcpl < 0 || w->fapl < 0 || w->gcpl < 0 || w->lcpl < 0 || H5Pset_userblock(w->fcpl, 512) < 0 ||
        H5Pset_obj_track_times(w->fcpl, 0) < 0 || H5Pset_obj_track_times(w->gcpl, 0) < 0 ||
        H5Pset_libver_bounds(w->fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_V18) < 0 ||
        H5Pset_fclose_degree(w->fapl, H5F_CLOSE_STRONG) < 0 ||
        (image ? rb_io_h5_memory_fapl(w->fapl, image) : rb_io_h5_soft_fapl(w->fapl)) < 0 ||
        H5Pset_char_encoding(w->lcpl, H5T_CSET_UTF8) < 0 ||
        (w->file = H5Fcreate(file, H5F_ACC_TRUNC, w->fcpl, w->fapl)) < 0)
        return rb_io_h5_fail(w->shown, err, "cannot create the file");
    return RB_OK;
}

static void close_plists73(m73 *w)
{
    if (w->refs >= 0)
        H5Gclose(w->refs);
    w->refs = -1;
    hid_t plists[] = {w->fcpl, w->fapl, w->gcpl, w->lcpl};
    for (size_t k = 0; k < 4; k++)
        if (plists[k] >= 0)
            H5Pclose(plists[k]);
}

/* The top-level variables vars[0..n) (each named by its matvar_t). Built in memory, as the .h5 writer
 * does (write_h5.c says why). */
static int write_v73(matvar_t *const *vars, size_t n, const char *file, const char *shown, rb_err *err)
{
    m73 w = {.shown = shown, .file = -1, .refs = -1, .fcpl = -1, .fapl = -1, .gcpl = -1, .lcpl = -1};
    rb_io_h5_image image = {NULL, 0};
    int rc = create73(&w, &image, file, err);
    for (size_t k = 0; rc == RB_OK && k < n; k++)
        rc = write_var(&w, w.file, vars[k]->name, vars[k], err);
    close_plists73(&w);
    unsigned char head[128];
    rb_io_mat73_header(head);
    return rb_io_h5_finish(w.file, &image, rc, file, shown, head, sizeof head, err);
}

/* ---- v5 through libmatio ----------------------------------------------------------------------- */

static void silent_log(int level, char *message)
{
    (void)level;
    (void)message;
}

/* Whether the file holds exactly n whole top-level elements after its 128-byte header, the last ending
 * at the end of the file. Each element is an 8-byte tag (type, byte count; in the writer's byte order,
 * ours) and its bytes, padded to 8 unless compressed (miCOMPRESSED, 15). */
static bool v5_whole(const char *file, size_t n)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return false;
    bool ok = fseeko(f, 0, SEEK_END) == 0;
    off_t size = ok ? ftello(f) : -1, at = 128;
    size_t count = 0;
    while (ok && at < size) {
        uint32_t tag[2];
        ok = fseeko(f, at, SEEK_SET) == 0 && fread(tag, sizeof tag, 1, f) == 1;
        uint64_t bytes = tag[0] == 15 ? tag[1] : ((uint64_t)tag[1] + 7) / 8 * 8;
        at += 8 + (off_t)bytes;
        count++;
    }
    fclose(f);
    return ok && at == size && count == n;
}

/* The top-level variables vars[0..n) (each named by its matvar_t). */
static int write_v5(matvar_t *const *vars, size_t n, const char *file, const char *shown, rb_err *err)
{
    Mat_LogInitFunc("roboest", silent_log); /* the library never prints */
    mat_t *mat =
        Mat_CreateVer(file, "MATLAB 5.0 MAT-file, Platform: roboest, Created by: roboest " RB_VERSION, MAT_FT_MAT5);
    if (!mat)
        return rb_err_set(err, RB_EIO, "%s: cannot create the file", shown);
    int rc = RB_OK;
    for (size_t k = 0; rc == RB_OK && k < n; k++)
        if (Mat_VarWrite(mat, vars[k], MAT_COMPRESSION_ZLIB) != 0)
            rc = rb_err_set(err, RB_EIO, "%s: libmatio failed to write %s", shown, vars[k]->name);
    if (Mat_Close(mat) != 0 && rc == RB_OK)
        rc = rb_err_set(err, RB_EIO, "%s: cannot close the file", shown);
    /* libmatio ignores failed writes (a full disk or a file size limit gives a truncated file and success). */
    if (rc == RB_OK && !v5_whole(file, n))
        rc = rb_err_set(err, RB_EIO, "%s: the file written is cut short (disk full or file too large?)", shown);
    return rc;
}

/* The log's root struct (root_name NULL: DEFAULT_ROOT) over its channel tree; on failure *root is NULL. The caller
 * frees both (Mat_VarFree, tree_free), after a failure too. */
static int log_matvar(const rb_log *log, const char *root_name, const char *shown, tnode *tree, matvar_t **root,
                      rb_err *err)
{
    *root = NULL;
    if (!root_name)
        root_name = DEFAULT_ROOT;
    if (!rb_io_is_matlab_identifier(root_name))
        return rb_err_set(err, RB_EINVAL, "%s: root struct name '%s' is not a MATLAB identifier", shown, root_name);
    int rc = rb_io_check_utf8(log, shown, err);
    for (size_t c = 0; rc == RB_OK && c < log->n_channels; c++)
        rc = tree_add(tree, &log->channels[c], shown, err);
    if (rc == RB_OK)
        rc = root_matvar(log, root_name, tree, shown, root, err);
    return rc;
}

int rb_io_write_mat(const rb_log *log, const char *file, const char *shown, bool v73, const char *root_name,
                    rb_err *err)
{
    tnode tree = {0};
    matvar_t *root = NULL;
    int rc = log_matvar(log, root_name, shown, &tree, &root, err);
    if (rc == RB_OK)
        rc = v73 ? write_v73(&root, 1, file, shown, err) : write_v5(&root, 1, file, shown, err);
    Mat_VarFree(root);
    tree_free(&tree);
    return rc;
}

int rb_io_mat73_create_deferred(const rb_log *log, const char *file, const char *shown, const char *root_name,
                                int64_t *out, rb_err *err)
{
    *out = -1;
    tnode tree = {0};
    matvar_t *root = NULL;
    m73 w = {.shown = shown, .file = -1, .refs = -1, .fcpl = -1, .fapl = -1, .gcpl = -1, .lcpl = -1};
    int rc = log_matvar(log, root_name, shown, &tree, &root, err);
    if (rc == RB_OK && (rc = create73(&w, NULL, file, err)) == RB_OK)
        rc = write_var(&w, w.file, root->name, root, err);
    close_plists73(&w);
    Mat_VarFree(root);
    tree_free(&tree);
    if (rc == RB_OK)
        *out = w.file;
    else if (w.file >= 0) /* its writes may have failed: the driver keeps that from HDF5 (h5soft.c) */
        H5Fclose(w.file);
    return rc;
}

/* ---- named arrays ------------------------------------------------------------------------------
 * One double variable per array, MATLAB size N x 1 (1-D), N x a or N x a x b, data in MATLAB's
 * column-major order; the attributes, if any, as the struct RB_MAT_PROVENANCE_FIELD (one char field
 * per key, keys made identifiers as above). Names were checked by rb_arrays_write. */

/* A variable over a column-major copy of arr's data (a 1-D array is its own copy: borrowed). */
static int array_matvar(const rb_array *arr, matvar_t **out, double **copy, rb_err *err)
{
    size_t mdims[3], count = arr->dims[0] * arr->dims[1] * arr->dims[2]; /* checked by rb_arrays_add */
    int rank = rb_io_array_matlab_dims(arr, mdims);
    const double *data = arr->data;
    *copy = NULL;
    if (arr->ndim > 1 && count > 0) {
        if (!(*copy = rb_malloc(count * sizeof(double))))
            return oom(err);
        rb_io_reverse_axes(*copy, arr->data, arr->ndim, arr->dims);
        data = *copy;
    }
    *out = Mat_VarCreate(arr->name, MAT_C_DOUBLE, MAT_T_DOUBLE, rank, mdims, count ? (void *)data : NULL,
                         MAT_F_DONT_COPY_DATA);
    return *out ? RB_OK : oom(err);
}

int rb_io_write_arrays_mat(const rb_arrays *a, const char *file, const char *shown, bool v73, rb_err *err)
{
    matvar_t **vars = rb_calloc(a->n + 1, sizeof *vars);
    double **copies = rb_calloc(a->n + 1, sizeof *copies);
    size_t n = 0;
    int rc = vars && copies ? RB_OK : oom(err);
    for (size_t k = 0; rc == RB_OK && k < a->n; k++)
        if ((rc = array_matvar(&a->items[k], &vars[n], &copies[k], err)) == RB_OK)
            n++;
    if (rc == RB_OK && (rc = provenance_matvar(a->attrs, a->n_attrs, false, &vars[n], err)) == RB_OK && vars[n])
        n++;
    if (rc == RB_OK)
        rc = v73 ? write_v73(vars, n, file, shown, err) : write_v5(vars, n, file, shown, err);
    for (size_t k = 0; vars && k < n; k++)
        Mat_VarFree(vars[k]);
    for (size_t k = 0; copies && k < a->n; k++)
        rb_free(copies[k]);
    rb_free(vars);
    rb_free(copies);
    return rc;
}
