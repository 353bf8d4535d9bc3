/* Process-wide guards of the output files (rb_outfile_begin): the temporaries being written, which a
 * signal handler may remove, and the files this process reads, which are never an output. */
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_internal.h"

/* ---- live temporaries ------------------------------------------------------------------------------- */
/* A fixed table of atomic pointers: the handler reads it without locks. Whoever swaps a slot to NULL owns
 * the string then: the handler (which never frees) or rb_outfile_untrack. */
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "the signal handler needs lock-free pointers");
enum { MAX_TEMPS = 1024 };
static char *_Atomic temps[MAX_TEMPS];
static atomic_bool dying;

int rb_outfile_track(char *tmp_path)
{
    for (size_t i = 0; i < MAX_TEMPS; i++) {
        char *expected = NULL;
        if (atomic_compare_exchange_strong(&temps[i], &expected, tmp_path)) {
            /* Set before the handler's scan, it sees the slot; set after, it sees `dying`. */
            return atomic_load(&dying) ? -1 : 0;
        }
    }
    return -1;
}

bool rb_outfile_untrack(char *tmp_path)
{
    for (size_t i = 0; i < MAX_TEMPS; i++) {
        char *expected = tmp_path;
        if (atomic_compare_exchange_strong(&temps[i], &expected, NULL))
            return true;
    }
    /* Not there: never tracked, or taken by the handler, which sets `dying` before it takes any. */
    return !atomic_load(&dying);
}

void rb_outfiles_unlink_all(void)
{
    atomic_store(&dying, true);
    for (size_t i = 0; i < MAX_TEMPS; i++) {
        char *p = atomic_exchange(&temps[i], NULL);
        if (p)
            unlink(p);
    }
}

/* ---- inputs ----------------------------------------------------------------------------------------- */
typedef struct input {
    dev_t dev;
    ino_t ino;
    char *shown; /* as the caller named it */
    char *real;  /* realpath, or NULL */
} input;

static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool inputs_on;
static input *inputs;
static size_t n_inputs, cap_inputs;

void rb_inputs_guard_enable(void) { atomic_store(&inputs_on, true); }

void rb_inputs_guard_clear(void)
{
    pthread_mutex_lock(&inputs_lock);
    atomic_store(&inputs_on, false);
    for (size_t i = 0; i < n_inputs; i++) {
        rb_free(inputs[i].shown);
        free(inputs[i].real); /* realpath's */
    }
    rb_free(inputs);
    inputs = NULL;
    n_inputs = cap_inputs = 0;
    pthread_mutex_unlock(&inputs_lock);
}

void rb_input_note(const char *path)
{
    struct stat st;
    if (!path || !atomic_load(&inputs_on) || stat(path, &st) != 0)
        return;
    pthread_mutex_lock(&inputs_lock);
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino)
            goto done;
    if (n_inputs == cap_inputs) {
        size_t cap = cap_inputs ? 2 * cap_inputs : 16;
        input *grown = rb_realloc(inputs, cap * sizeof *grown);
        if (!grown)
            goto done; /* out of memory: the guard is best effort, reading goes on */
        inputs = grown;
        cap_inputs = cap;
    }
    char *shown = rb_strdup(path);
    if (shown)
        inputs[n_inputs++] = (input){st.st_dev, st.st_ino, shown, realpath(path, NULL)};
done:
    pthread_mutex_unlock(&inputs_lock);
}

/* `path` resolved: realpath of the file, or of its folder plus its name when it does not exist (free()). */
static char *resolve(const char *path)
{
    char *real = realpath(path, NULL);
    if (real)
        return real;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char *dir = base == path ? strdup(".") : strndup(path, (size_t)(base - path));
    char *real_dir = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!real_dir)
        return NULL;
    size_t n = strlen(real_dir) + strlen(base) + 2;
    char *joined = malloc(n);
    if (joined)
        snprintf(joined, n, "%s/%s", real_dir, base);
    free(real_dir);
    return joined;
}

int rb_outfile_check_input(const char *path, rb_err *err)
{
    if (!atomic_load(&inputs_on))
        return RB_OK;
    struct stat st;
    bool exists = stat(path, &st) == 0;
    char *real = resolve(path);
    int rc = RB_OK;
    pthread_mutex_lock(&inputs_lock);
    for (size_t i = 0; !rc && i < n_inputs; i++) {
        const input *in = &inputs[i];
        if ((exists && in->dev == st.st_dev && in->ino == st.st_ino) || (real && in->real && !strcmp(real, in->real)))
            rc =
                rb_err_set(err, RB_EIO, "%s: is an input of this command (%s); choose another output", path, in->shown);
    }
    pthread_mutex_unlock(&inputs_lock);
    free(real);
    return rc;
}
