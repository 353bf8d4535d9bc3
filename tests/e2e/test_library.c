/* The library's shape. What libroboest.so exports is the public API and nothing else: every defined dynamic
 * symbol is an rb_ name a public header declares, and every function or object a public header declares is
 * exported (the declarations come from the compiler itself, -aux-info, not from parsing). Each public header
 * compiles alone. Modules depend downwards only and no two files of a folder call each other round a circle
 * (scripts/check-layers.py, on the objects of this build). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MAX_NAMES 4096

typedef struct names {
    size_t n;
    char *name[MAX_NAMES];
} names;

static void add(names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return;
    cr_assert_lt(s->n, MAX_NAMES);
    s->name[s->n++] = strdup(name);
}

static bool has(const names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return true;
    return false;
}

static void clear(names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->name[i]);
    s->n = 0;
}

/* The public headers, sorted. */
static size_t public_headers(char out[][64], size_t max)
{
    DIR *d = opendir(RB_SOURCE "/lib/include/roboest");
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 2 && strcmp(e->d_name + len - 2, ".h") == 0) {
            cr_assert(len < 64 && n < max, "header %s: name too long or too many headers", e->d_name);
            memcpy(out[n++], e->d_name, len + 1);
        }
    }
    closedir(d);
    qsort(out, n, 64, (int (*)(const void *, const void *))strcmp);
    return n;
}

static int sh(const char *cmd) { return system(cmd); }

Test(library, every_public_header_compiles_alone)
{
    char headers[64][64];
    size_t n = public_headers(headers, 64);
    cr_assert_geq(n, 10);
    char *dir = test_tmpdir();
    for (size_t i = 0; i < n; i++) {
        char *src = test_path(dir, "alone.c"), cmd[1024];
        char text[128];
        snprintf(text, sizeof text, "#include \"roboest/%s\"\n", headers[i]);
        test_write_file(src, text);
        snprintf(cmd, sizeof cmd,
                 "cc -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Werror -D_POSIX_C_SOURCE=200809L -I%s/lib/include "
                 "-fsyntax-only %s",
                 RB_SOURCE, src);
        cr_expect_eq(sh(cmd), 0, "roboest/%s does not compile alone (%s)", headers[i], cmd);
        free(src);
    }
    free(dir);
}

Test(library, exports_exactly_the_public_api)
{
    char headers[64][64];
    size_t n = public_headers(headers, 64);
    char *dir = test_tmpdir(), *src = test_path(dir, "all.c"), *aux = test_path(dir, "aux.txt");
    char text[4096] = "", cmd[8192];
    for (size_t i = 0; i < n; i++) {
        strcat(text, "#include \"roboest/");
        strcat(text, headers[i]);
        strcat(text, "\"\n");
    }
    test_write_file(src, text);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -D_POSIX_C_SOURCE=200809L -I%s/lib/include -fsyntax-only -aux-info %s %s",
             RB_SOURCE, aux, src);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);

    /* declared: every non-static function of a public header (aux-info: one prototype a line, with its file),
     * and the objects they declare extern; but roboest/suite_mpi.h's, which build/libroboest_mpi.a defines (the
     * library itself never needs MPI) */
    names declared = {0};
    FILE *f = fopen(aux, "r");
    cr_assert_not_null(f);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, "lib/include/roboest/") || strstr(line, " static ") || strstr(line, "roboest/suite_mpi.h"))
            continue;
        char *paren = strstr(line, " (");
        cr_assert_not_null(paren, "%s", line);
        char *end = paren, *start = paren;
        while (start > line && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                                (start[-1] >= 'A' && start[-1] <= 'Z') || (start[-1] >= '0' && start[-1] <= '9')))
            start--;
        *end = '\0';
        add(&declared, start);
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "grep -h '^extern ' %s/lib/include/roboest/*.h | sed 's/.* \\([a-z_0-9]*\\);$/\\1/'",
             RB_SOURCE);
    FILE *p = popen(cmd, "r");
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        add(&declared, line);
    }
    pclose(p);
    cr_assert_gt(declared.n, 300, "only %zu declarations found", declared.n);

    /* exported: the defined dynamic symbols (compiler-made ones start with '_') */
    names exported = {0};
    snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/libroboest.so", RB_BUILD);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (fgets(line, sizeof line, p)) {
        char addr[64], type[8], name[512];
        if (sscanf(line, "%63s %7s %511s", addr, type, name) == 3 && name[0] != '_')
            add(&exported, name);
    }
    cr_assert_eq(pclose(p), 0, "%s failed", cmd);

    for (size_t i = 0; i < exported.n; i++) {
        cr_expect(strncmp(exported.name[i], "rb_", 3) == 0, "exported without the rb_ prefix: %s", exported.name[i]);
        cr_expect(has(&declared, exported.name[i]), "exported but in no public header: %s", exported.name[i]);
    }
    for (size_t i = 0; i < declared.n; i++)
        cr_expect(has(&exported, declared.name[i]), "declared in a public header but not exported: %s",
                  declared.name[i]);
    clear(&declared);
    clear(&exported);
    free(src);
    free(aux);
    free(dir);
}

Test(library, layers_without_circles)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/scripts/check-layers.py %s 2>&1", RB_SOURCE, RB_BUILD);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char out[16384] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_assert_eq(status, 0, "%s:\n%s", cmd, out);
    cr_assert(strstr(out, "no circle"), "%s", out);
}
