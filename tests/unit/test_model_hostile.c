/* lib/model against hostile input: files that are no regular files or too large are refused before they are
 * read; names that cannot be printed (control characters, invalid UTF-8) or that repeat are refused with a
 * message naming the file and line; models of many thousand names look every name up right. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roboest/model.h"
#include "support.h"

#define INERTIAL                                                                                                       \
    "<inertial><mass value='1'/><inertia ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'/></inertial>"

static char *temp_path(const char *text, size_t len)
{
    char *path = strdup("/tmp/rb_hostile_urdf_XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static void expect_refused(const char *path, int code, const char *needle)
{
    rb_model *m = NULL;
    rb_err err;
    int rc = rb_model_load_urdf(path, NULL, &m, &err);
    cr_expect_eq(rc, code, "%s: %s (%d)", path, err.msg, rc);
    cr_expect_null(m);
    cr_expect(strncmp(err.msg, path, strlen(path)) == 0, "the message names the file: %s", err.msg);
    cr_expect(strstr(err.msg, needle), "'%s' in: %s", needle, err.msg);
    rb_model_free(m);
}

/* A device or a folder is no URDF: refused before reading (/dev/zero used to be read until memory ran out). */
Test(model_hostile, devices_and_folders_are_refused)
{
    test_deadline(20);
    expect_refused("/dev/zero", RB_EINPUT, "not a regular file");
    expect_refused("/dev/urandom", RB_EINPUT, "not a regular file");
    expect_refused("/tmp", RB_EINPUT, "not a regular file");
}

/* A FIFO without a writer used to block the open for ever. */
Test(model_hostile, fifo_is_refused_without_waiting)
{
    test_deadline(10);
    char dir[] = "/tmp/rb_hostile_fifo_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/robot.urdf", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    expect_refused(path, RB_EINPUT, "not a regular file");
    unlink(path);
    rmdir(dir);
}

/* A file over the size limit is refused from its size, without reading it (a sparse file: no disk used). */
Test(model_hostile, oversized_file_is_refused_before_reading)
{
    char *path = temp_path("", 0);
    cr_assert_eq(truncate(path, ((off_t)64 << 20) + 1), 0);
    expect_refused(path, RB_EINPUT, "larger than 64 MiB");
    unlink(path);
    free(path);
}

typedef struct name_case {
    const char *xml, *needle1, *needle2;
} name_case;

/* Control characters would break the one-line messages, the text output and the headers of result files. */
Test(model_hostile, names_with_control_characters_are_refused)
{
    static const name_case cases[] = {
        {"<robot name='r'>\n<link name='a&#10;b'>" INERTIAL "</link>\n</robot>", ":2: link", "\\x0a"},
        {"<robot name='r'>\n<link name='a'>" INERTIAL "</link>\n<link name='b'>" INERTIAL "</link>\n"
         "<joint name='j&#9;1' type='revolute'><parent link='a'/><child link='b'/></joint>\n</robot>",
         ":4: joint", "\"j\\x091\""},
        {"<robot name='r&#13;'>\n<link name='a'>" INERTIAL "</link>\n</robot>", ":1: robot", "\\x0d"},
        {"<robot name='r'>\n<link name='a'>" INERTIAL "</link>\n"
         "<sensor name='acc&#x7f;' type='accelerometer'><parent link='a'/></sensor>\n</robot>",
         ":3: sensor", "\\x7f"},
        {"<robot name='r'>\n<link name='a'>" INERTIAL "</link>\n<gazebo reference='a'>\n"
         "<sensor name='imu&#x85;' type='imu'/></gazebo>\n</robot>",
         ":4: sensor", "\\xc2\\x85"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_model *m = NULL;
        rb_err err;
        int rc = rb_model_load_urdf_text(cases[i].xml, strlen(cases[i].xml), "names.urdf", NULL, &m, &err);
        cr_expect_eq(rc, RB_EINPUT, "case %zu: %d %s", i, rc, m ? m->bodies[0].name : err.msg);
        cr_expect(strstr(err.msg, "names.urdf") && strstr(err.msg, cases[i].needle1) &&
                      strstr(err.msg, cases[i].needle2) && strstr(err.msg, "control character"),
                  "case %zu: %s", i, err.msg);
        rb_model_free(m);
    }
}

/* Invalid UTF-8 and repeated names are refused with the file and line (libxml2 checks the encoding). */
Test(model_hostile, invalid_utf8_and_repeated_names_are_refused)
{
    static const name_case cases[] = {
        {"<robot name='r'>\n<link name='a\xff\xfe'/>\n</robot>", "names.urdf:2:", "UTF-8"},
        {"<robot name='r'>\n<link name='a\xc0\x80'/>\n</robot>", "names.urdf:2:", "UTF-8"},
        {"<robot name='r'>\n<link name='a\xed\xa0\x80'/>\n</robot>", "names.urdf:2:", "not XML"},
        {"<robot name='r'>\n<link name='a&#xD800;'/>\n</robot>", "names.urdf:2:", "not XML"},
        {"<robot name='r'>\n<link name='a'/>\n<link name='b'/>\n<link name='a'/>\n</robot>", "names.urdf:4: link a",
         "duplicate link name"},
        {"<robot name='r'>\n<link name='a'>" INERTIAL "</link>\n<link name='b'>" INERTIAL
         "</link>\n<link name='c'>" INERTIAL
         "</link>\n<joint name='j' type='revolute'><parent link='a'/><child link='b'/></joint>\n"
         "<joint name='j' type='revolute'><parent link='b'/><child link='c'/></joint>\n</robot>",
         "names.urdf:6: joint j", "duplicate joint name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_model *m = NULL;
        rb_err err;
        int rc = rb_model_load_urdf_text(cases[i].xml, strlen(cases[i].xml), "names.urdf", NULL, &m, &err);
        cr_expect_eq(rc, RB_EINPUT, "case %zu: %d", i, rc);
        cr_expect(strstr(err.msg, cases[i].needle1) && strstr(err.msg, cases[i].needle2), "case %zu: %s", i, err.msg);
        cr_expect(!strchr(err.msg, '\n'), "one line: %s", err.msg);
        rb_model_free(m);
    }
}

/* A chain of n links as URDF text (caller frees): joint_k joins link_k-1 to link_k, every third one fixed; an
 * accelerometer on the last link. */
static char *chain_urdf(size_t n, size_t *len)
{
    size_t cap = 400 * n + 400, at = 0;
    char *s = malloc(cap);
    at += (size_t)snprintf(s + at, cap - at, "<robot name='chain'>");
    for (size_t k = 0; k < n; k++) {
        at += (size_t)snprintf(s + at, cap - at, "<link name='link_%zu'>" INERTIAL "</link>", k);
        if (k)
            at += (size_t)snprintf(s + at, cap - at,
                                   "<joint name='joint_%zu' type='%s'><parent link='link_%zu'/>"
                                   "<child link='link_%zu'/><origin xyz='0 0 0.1'/></joint>",
                                   k, k % 3 ? "revolute" : "fixed", k - 1, k);
    }
    at += (size_t)snprintf(s + at, cap - at,
                           "<sensor name='tip_acc' type='accelerometer'><parent link='link_%zu'/></sensor></robot>",
                           n - 1);
    *len = at;
    return s;
}

/* Every name of a large model is found where a scan of the arrays finds it; absent names are not found. */
Test(model_hostile, look_ups_in_a_large_model)
{
    size_t n = 3000, len;
    char *xml = chain_urdf(n, &len);
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf_text(xml, len, "chain.urdf", NULL, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m->n_frames, n + 1);
    cr_assert_eq(m->n_dofs, 2000);
    for (size_t i = 0; i < m->n_bodies; i++)
        cr_assert_eq(rb_model_body_index(m, m->bodies[i].name), (long)i);
    for (size_t i = 0; i < m->n_frames; i++)
        cr_assert_eq(rb_model_frame_index(m, m->frames[i].name), (long)i);
    for (size_t i = 0; i < m->n_dofs; i++)
        cr_assert_eq(rb_model_dof_index(m, m->dof_names[i]), (long)i);
    cr_expect_eq(m->imu[0].frame, (int)n, "the sensor frame follows the link frames");
    cr_expect_eq(m->frames[n].body, m->frames[n - 1].body);
    cr_expect_eq(rb_model_frame_index(m, "link_3000"), -1);
    cr_expect_eq(rb_model_frame_index(m, "link_"), -1);
    cr_expect_eq(rb_model_frame_index(m, ""), -1);
    cr_expect_eq(rb_model_body_index(m, "link_3"), -1, "link_3 is merged into link_2's body");
    cr_expect_eq(rb_model_dof_index(m, "joint_3"), -1, "joint_3 is fixed");
    cr_expect_eq(rb_model_ft_index(m, "tip_acc"), -1);

    /* The joint list orders the dofs: reversed, every joint is found at its new place. */
    const char **order = calloc(m->n_dofs, sizeof *order);
    for (size_t i = 0; i < m->n_dofs; i++)
        order[i] = m->dof_names[m->n_dofs - 1 - i];
    rb_model_opts o = {.joints = order, .n_joints = m->n_dofs};
    rb_model *r = NULL;
    cr_assert_eq(rb_model_load_urdf_text(xml, len, "chain.urdf", &o, &r, &err), RB_OK, "%s", err.msg);
    for (size_t i = 0; i < r->n_dofs; i++) {
        cr_assert_str_eq(r->dof_names[i], order[i]);
        cr_assert_eq(rb_model_dof_index(r, order[i]), (long)i);
    }
    order[1] = order[0];
    rb_model *d = NULL;
    cr_expect_eq(rb_model_load_urdf_text(xml, len, "chain.urdf", &o, &d, &err), RB_EINVAL);
    cr_expect(strstr(err.msg, "joint_2999") && strstr(err.msg, "listed twice"), "%s", err.msg);
    rb_model_free(d);
    rb_model_free(r);
    free(order);
    rb_model_free(m);
    free(xml);
}

/* A builder call after rb_model_end leaves the look-ups right, and rb_model_end names the first repeated
 * name in the arrays' order. */
Test(model_hostile, builder_after_end_and_repeated_names)
{
    static const double pi[10] = {1, 0, 0, 0, 0.1, 0, 0, 0.1, 0, 0.1};
    static const double z[3] = {0, 0, 1};
    rb_xform I;
    rb_xform_identity(&I);
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_begin(&m, "r", "base", pi, false, &err), RB_OK);
    cr_assert_eq(rb_model_add_body(m, "b1", 0, RB_JOINT_REVOLUTE, "j1", &I, z, pi, &err), RB_OK);
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_model_frame_index(m, "b1"), 1);
    cr_assert_eq(rb_model_add_frame(m, "tool", 1, &I, RB_FRAME_USER, &err), RB_OK);
    cr_expect_eq(rb_model_frame_index(m, "tool"), 2, "a frame added after rb_model_end is found");
    cr_assert_eq(rb_model_add_body(m, "b2", 1, RB_JOINT_REVOLUTE, "j2", &I, z, pi, &err), RB_OK);
    cr_expect_eq(rb_model_body_index(m, "b2"), 2);
    cr_expect_eq(rb_model_dof_index(m, "j2"), 1);
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    cr_expect_eq(rb_model_frame_index(m, "b2"), 3);
    cr_expect_eq(rb_model_frame_index(m, "tool"), 2);
    rb_model_free(m);

    /* frames y, x, y, x: x is the later pair in name order, y the first position that repeats */
    cr_assert_eq(rb_model_begin(&m, "r", "base", pi, false, &err), RB_OK);
    const char *frames[] = {"y", "x", "y", "x"};
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(rb_model_add_frame(m, frames[i], 0, &I, RB_FRAME_USER, &err), RB_OK);
    cr_expect_eq(rb_model_end(m, &err), RB_EINPUT);
    cr_expect_str_eq(err.msg, "duplicate frame name y");
    rb_model_free(m);
}
