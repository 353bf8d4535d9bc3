/* rb_path_between: an absolute path as seen from an absolute folder (import-rde and tune write pipelines whose paths
 * must survive moving the folder). */
#include <criterion/criterion.h>
#include <string.h>

#include "roboest/core.h"

static void expect(const char *dir, const char *path, const char *want)
{
    char *got = rb_path_between(dir, path);
    cr_assert_not_null(got, "%s from %s", path, dir);
    cr_expect_str_eq(got, want, "%s from %s", path, dir);
    rb_free(got);
}

Test(core_path_between, up_and_down_from_the_common_folder)
{
    expect("/a/b/out", "/a/b/model.urdf", "../model.urdf");
    expect("/a/b", "/a/b/configs/net.json", "configs/net.json");
    expect("/x/y/z", "/a/m.urdf", "../../../a/m.urdf");
    expect("/a/./b/../c", "/a/c/d/e.json", "d/e.json"); /* "." and ".." resolved lexically */
    expect("/", "/m.urdf", "m.urdf");
}

Test(core_path_between, relative_paths_are_refused)
{
    cr_assert_null(rb_path_between("a/b", "/a/b/m.urdf"));
    cr_assert_null(rb_path_between("/a/b", "m.urdf"));
    cr_assert_null(rb_path_between(NULL, "/m.urdf"));
}
