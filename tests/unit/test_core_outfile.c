/* rb_outfile: the targets it refuses (non-regular files, the process's own inputs) and the temporaries
 * rb_outfiles_unlink_all removes. Criterion runs each test in its own process, so the process-wide
 * guards start empty in each. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "roboest/core.h"
#include "support.h"

static char *in_dir(const char *dir, const char *name) { return rb_asprintf("%s/%s", dir, name); }

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(core_outfile, unlink_all_removes_live_temporaries_and_stops_new_ones)
{
    char *dir = test_temp_dir(), *a = in_dir(dir, "a.txt"), *b = in_dir(dir, "b.txt"), *c = in_dir(dir, "c.txt");
    rb_err err;
    rb_outfile fa, fb, fc;
    cr_assert_eq(rb_outfile_begin(&fa, a, false, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_outfile_begin(&fb, b, false, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_outfile_commit(&fb, &err), RB_OK, "%s", err.msg); /* b is done: not a temporary any more */
    cr_assert_eq(test_count_entries(dir), 2, "a's temporary and b");
    rb_outfiles_unlink_all();
    cr_expect_eq(test_count_entries(dir), 1, "only b is left");
    struct stat st;
    cr_expect_eq(stat(b, &st), 0, "a committed output stays");
    cr_expect_neq(stat(fa.tmp_path, &st), 0, "a's temporary is gone");
    cr_expect_eq(rb_outfile_begin(&fc, c, false, &err), RB_EIO, "no new output once the process is being stopped");
    cr_expect_eq(test_count_entries(dir), 1, "and no temporary left by the refused begin");
    char *taken = fa.tmp_path; /* the handler's now: it never frees (the process ends), so the test does */
    rb_outfile_abort(&fa);     /* after the handler: harmless */
    cr_expect_null(fa.tmp_path);
    rb_free(taken);
    rb_free(a), rb_free(b), rb_free(c);
    test_remove_tree(dir);
}

Test(core_outfile, non_regular_targets_are_refused_with_or_without_overwrite)
{
    char *dir = test_temp_dir(), *target = in_dir(dir, "target.txt"), *link = in_dir(dir, "link.txt");
    char *dangling = in_dir(dir, "dangling.txt"), *fifo = in_dir(dir, "fifo"), *sub = in_dir(dir, "sub");
    char *dev = in_dir(dir, "null");
    write_text(target, "keep me\n");
    cr_assert_eq(symlink("target.txt", link), 0);
    cr_assert_eq(symlink("nowhere.txt", dangling), 0);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    /* A device of our own (/dev/null's numbers; root only): a regression must never touch /dev. */
    bool have_dev = mknod(dev, S_IFCHR | 0600, makedev(1, 3)) == 0;
    struct {
        const char *path, *kind;
    } cases[] = {
        {link, "symbolic link"}, {dangling, "symbolic link"}, {fifo, "FIFO"}, {sub, "folder"}, {dev, "device"}};
    for (size_t i = 0; i < 4 + (size_t)have_dev; i++) {
        for (int overwrite = 0; overwrite < 2; overwrite++) {
            rb_err err;
            rb_outfile f;
            cr_expect_eq(rb_outfile_begin(&f, cases[i].path, overwrite, &err), RB_EIO, "%s overwrite=%d", cases[i].path,
                         overwrite);
            char want[128];
            snprintf(want, sizeof want, "is a %s, not a regular file", cases[i].kind);
            cr_expect(strstr(err.msg, want) && strstr(err.msg, cases[i].path), "%s", err.msg);
        }
    }
    struct stat st;
    cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
    cr_expect(!have_dev || (lstat(dev, &st) == 0 && S_ISCHR(st.st_mode)), "the device is still a device");
    size_t len;
    char *text = test_slurp(target, &len);
    cr_expect_str_eq(text, "keep me\n");
    free(text);
    cr_expect_eq(test_count_entries(dir), 5 + have_dev, "no temporary left");
    rmdir(sub);
    rb_free(target), rb_free(link), rb_free(dangling), rb_free(fifo), rb_free(sub), rb_free(dev);
    test_remove_tree(dir);
}

Test(core_outfile, noted_inputs_are_never_outputs)
{
    char *dir = test_temp_dir(), *in = in_dir(dir, "in.csv"), *hard = in_dir(dir, "hard.csv");
    char *soft = in_dir(dir, "soft.csv"), *dotted = rb_asprintf("%s/./in.csv", dir), *other = in_dir(dir, "out.csv");
    write_text(in, "time,x\n0,1\n");
    cr_assert_eq(link(in, hard), 0);
    cr_assert_eq(symlink(in, soft), 0);
    rb_err err;
    rb_outfile f;

    rb_input_note(in); /* guard off: nothing recorded */
    cr_expect_eq(rb_outfile_begin(&f, in, true, &err), RB_OK, "without the guard the library lets a caller overwrite");
    rb_outfile_abort(&f);

    rb_inputs_guard_enable();
    rb_input_note(in);
    const char *targets[] = {in, hard, dotted};
    for (size_t i = 0; i < 3; i++) {
        for (int overwrite = 0; overwrite < 2; overwrite++) {
            cr_expect_eq(rb_outfile_begin(&f, targets[i], overwrite, &err), RB_EIO, "%s overwrite=%d", targets[i],
                         overwrite);
            cr_expect(strstr(err.msg, "is an input of this command") && strstr(err.msg, in), "%s", err.msg);
        }
    }
    cr_expect_eq(rb_outfile_begin(&f, soft, true, &err), RB_EIO);
    cr_expect(strstr(err.msg, "is an input of this command"), "a link to an input names the input: %s", err.msg);
    cr_expect_eq(rb_outfile_begin(&f, other, false, &err), RB_OK, "%s", err.msg);
    rb_outfile_abort(&f);
    cr_expect_eq(test_count_entries(dir), 3, "no temporary left");

    rb_inputs_guard_clear();
    cr_expect_eq(rb_outfile_begin(&f, in, true, &err), RB_OK, "cleared: %s", err.msg);
    rb_outfile_abort(&f);
    rb_free(in), rb_free(hard), rb_free(soft), rb_free(dotted), rb_free(other);
    test_remove_tree(dir);
}
