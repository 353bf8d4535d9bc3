/* lib/model: malformed URDFs and bad options give one-line errors naming the file and the element; nothing
 * crashes or leaks (this file runs under ASan too); allocation failures surface as RB_ENOMEM. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roboest/model.h"

#define INERTIAL                                                                                                       \
    "<inertial><mass value='1'/><inertia ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'/></inertial>"
#define LINK(n) "<link name='" n "'>" INERTIAL "</link>"
#define JOINT(n, type, p, c) "<joint name='" n "' type='" type "'><parent link='" p "'/><child link='" c "'/></joint>"
#define ROBOT(body) "<robot name='r'>" body "</robot>"
#define INERTIA_LINK(mass, i) "<link name='a'><inertial><mass value='" mass "'/><inertia " i "/></inertial></link>"
#define FT(name, joint, frame, dir)                                                                                    \
    "<sensor name='" name "' type='force_torque'><parent joint='" joint "'/><force_torque><frame>" frame               \
    "</frame><measure_direction>" dir "</measure_direction></force_torque></sensor>"

typedef struct bad_case {
    const char *xml;
    int code;
    const char *needle1, *needle2; /* both must appear in the message */
} bad_case;

static const bad_case cases[] = {
    /* not a URDF at all */
    {"hello", RB_EINPUT, "not XML", NULL},
    {"", RB_EINPUT, "empty file", NULL},
    {" \n\t ", RB_EINPUT, "empty file", NULL},
    {"<robot name='r'><link name='a'>", RB_EINPUT, "not XML", NULL},
    {"<model name='r'>" LINK("a") "</model>", RB_EINPUT, "document", "not <robot>"},
    {ROBOT(""), RB_EINPUT, "robot", "no <link>"},
    /* links */
    {ROBOT("<link/>"), RB_EINPUT, "link", "without a name"},
    {ROBOT(LINK("a") LINK("b") LINK("a") JOINT("j", "fixed", "a", "b")), RB_EINPUT, "link a", "duplicate link"},
    {ROBOT(INERTIA_LINK("-1", "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'")), RB_EINPUT, "link a",
     "negative mass"},
    {ROBOT(INERTIA_LINK("1", "ixx='-0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'")), RB_EINPUT, "link a",
     "not physically consistent"},
    {ROBOT(INERTIA_LINK("1", "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.5'")), RB_EINPUT, "link a",
     "triangle"},
    {ROBOT(INERTIA_LINK("1", "ixx='0.1' ixy='0.2' ixz='0' iyy='0.1' iyz='0' izz='0.1'")), RB_EINPUT, "link a",
     "positive semi-definite"},
    {ROBOT(INERTIA_LINK("0", "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'")), RB_EINPUT, "link a",
     "zero mass"},
    {ROBOT(INERTIA_LINK("nan", "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'")), RB_EINPUT, "link a",
     "value=\"nan\" is not a finite number"},
    {ROBOT(INERTIA_LINK("1.0abc", "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'")), RB_EINPUT, "link a",
     "1.0abc"},
    {ROBOT(INERTIA_LINK("1", "ixx='0.1' ixy='0' ixz='0' iyy='' iyz='0' izz='0.1'")), RB_EINPUT, "link a", "iyy"},
    {ROBOT(INERTIA_LINK("1", "ixx='0.1' ixy='0' ixz='0' iyy='0.1' izz='0.1'")), RB_EINPUT, "link a",
     "needs attribute iyz"},
    {ROBOT(INERTIA_LINK("1e999", "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'")), RB_EINPUT, "link a",
     "finite"},
    {ROBOT("<link name='a'><inertial><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"),
     RB_EINPUT, "link a", "no <mass>"},
    {ROBOT("<link name='a'><inertial><mass value='1'/></inertial></link>"), RB_EINPUT, "link a", "no <inertia>"},
    {ROBOT("<link name='a'><inertial><origin xyz='0 0'/><mass value='1'/>"
           "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"),
     RB_EINPUT, "link a", "xyz=\"0 0\""},
    /* joints */
    {ROBOT(LINK("a") LINK("b") JOINT("j", "fixed", "a", "b") JOINT("j", "fixed", "b", "a")), RB_EINPUT, "joint j",
     "duplicate joint"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "hinge", "a", "b")), RB_EINPUT, "joint j1", "unknown joint type"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "floating", "a", "b")), RB_EINPUT, "joint j1", "floating is not supported"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "planar", "a", "b")), RB_EINPUT, "joint j1", "planar"},
    {ROBOT(LINK("a") LINK("b") "<joint name='j1'><parent link='a'/><child link='b'/></joint>"), RB_EINPUT, "joint j1",
     "no type"},
    {ROBOT(LINK("a") LINK("b") "<joint type='fixed'><parent link='a'/><child link='b'/></joint>"), RB_EINPUT, "joint",
     "without a name"},
    {ROBOT(LINK("a") LINK("b") "<joint name='j1' type='fixed'><child link='b'/></joint>"), RB_EINPUT, "joint j1",
     "no <parent"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "revolute", "a", "zz")), RB_EINPUT, "joint j1",
     "child link zz does not exist"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "revolute", "zz", "b")), RB_EINPUT, "joint j1",
     "parent link zz does not exist"},
    {ROBOT(LINK("a") LINK("b") LINK("c") JOINT("j1", "fixed", "a", "c") JOINT("j2", "fixed", "b", "c")), RB_EINPUT,
     "joint j2", "two parents"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "fixed", "a", "b") JOINT("j2", "fixed", "b", "a")), RB_EINPUT, "robot",
     "cycle"},
    {ROBOT(LINK("r") LINK("a") LINK("b") JOINT("j1", "fixed", "a", "b") JOINT("j2", "fixed", "b", "a")), RB_EINPUT,
     "link a", "cycle"},
    {ROBOT(LINK("a") JOINT("j1", "revolute", "a", "a")), RB_EINPUT, "joint j1", "own parent"},
    {ROBOT(LINK("a") LINK("b")), RB_EINPUT, "robot", "two root links (a and b)"},
    {ROBOT(LINK("a") "<link name='b'/>" JOINT("j1", "revolute", "a", "b")), RB_EINPUT, "joint j1", "moves no mass"},
    {ROBOT(LINK("a") "<link name='b'/><link name='c'/>" JOINT("j1", "revolute", "a", "b")
               JOINT("j2", "fixed", "b", "c")),
     RB_EINPUT, "joint j1", "<inertial>"},
    {ROBOT(LINK("a") LINK("b") "<joint name='j1' type='revolute'><parent link='a'/><child link='b'/>"
                               "<axis xyz='0 0 0'/></joint>"),
     RB_EINPUT, "joint j1", "zero joint axis"},
    {ROBOT(LINK("a") LINK("b") "<joint name='j1' type='revolute'><parent link='a'/><child link='b'/>"
                               "<axis xyz='nan 0 1'/></joint>"),
     RB_EINPUT, "joint j1", "<axis>"},
    {ROBOT(LINK("a") LINK("b") "<joint name='j1' type='revolute'><parent link='a'/><child link='b'/>"
                               "<limit lower='1' upper='-1' effort='1' velocity='1'/></joint>"),
     RB_EINPUT, "joint j1", "lower limit"},
    {ROBOT(LINK("a") LINK("b") "<joint name='j1' type='prismatic'><parent link='a'/><child link='b'/>"
                               "<limit lower='-1' upper='1' effort='-5' velocity='1'/></joint>"),
     RB_EINPUT, "joint j1", "negative effort"},
    {ROBOT(LINK("a") LINK("b") "<joint name='j1' type='fixed'><parent link='a'/><child link='b'/>"
                               "<origin rpy='0 inf 0'/></joint>"),
     RB_EINPUT, "joint j1", "rpy"},
    /* sensors */
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "fixed", "a", "b") FT("s", "zz", "child", "parent_to_child")), RB_EINPUT,
     "sensor s", "parent joint zz does not exist"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "revolute", "a", "b") FT("s", "j1", "child", "parent_to_child")), RB_EINPUT,
     "sensor s", "not a fixed joint"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "fixed", "a", "b") FT("s", "j1", "world", "parent_to_child")), RB_EINPUT,
     "sensor s", "<frame>"},
    {ROBOT(LINK("a") LINK("b") JOINT("j1", "fixed", "a", "b") FT("s", "j1", "child", "both")), RB_EINPUT, "sensor s",
     "<measure_direction>"},
    {ROBOT(LINK("a") LINK("b")
               JOINT("j1", "fixed", "a", "b") "<sensor name='s' type='force_torque'><parent joint='j1'/></sensor>"),
     RB_EINPUT, "sensor s", "needs <force_torque>"},
    {ROBOT(LINK("a") "<sensor name='imu' type='accelerometer'><parent link='zz'/></sensor>"), RB_EINPUT, "sensor imu",
     "parent link zz does not exist"},
    {ROBOT(LINK("a") "<sensor name='imu' type='gyroscope'/>"), RB_EINPUT, "sensor imu", "no <parent link"},
    {ROBOT(LINK("a") "<gazebo reference='zz'><sensor name='imu' type='imu'/></gazebo>"), RB_EINPUT, "sensor imu",
     "parent link zz does not exist"},
    {ROBOT(LINK("a") "<gazebo><sensor name='imu' type='imu'/></gazebo>"), RB_EINPUT, "sensor imu", "reference"},
    {ROBOT(LINK("a") "<gazebo reference='a'><sensor name='imu' type='imu'><pose>1 2 3 4 5</pose></sensor></gazebo>"),
     RB_EINPUT, "sensor imu", "<pose>"},
    {ROBOT(LINK("a") LINK("b")
               JOINT("j1", "fixed", "a",
                     "b") "<sensor name='b' type='accelerometer'><parent link='a'/><origin xyz='0 0 1'/></sensor>"),
     RB_EINPUT, "sensor b", "frame name is taken"},
    {ROBOT(LINK("a") "<sensor name='i' type='accelerometer'><parent link='a'/></sensor>"
                     "<sensor name='i' type='accelerometer'><parent link='a'/><origin xyz='1 0 0'/></sensor>"),
     RB_EINPUT, "sensor i", "frame name is taken"},
};

static void expect_one_line(const rb_err *err)
{
    cr_assert_null(strchr(err->msg, '\n'), "one line: %s", err->msg);
    cr_assert_gt(strlen(err->msg), 0);
}

Test(model_bad, malformed_urdfs)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case *c = &cases[i];
        rb_model *m = (rb_model *)&m; /* any non-NULL value: the loader must reset it */
        rb_err err;
        int rc = rb_model_load_urdf_text(c->xml, strlen(c->xml), "bad.urdf", NULL, &m, &err);
        cr_assert_eq(rc, c->code, "case %zu (%s): %s %s", i, c->needle2 ? c->needle2 : c->needle1, rb_status_name(rc),
                     err.msg);
        cr_assert_null(m, "case %zu", i);
        cr_assert_eq(err.code, c->code);
        expect_one_line(&err);
        cr_assert_eq(strncmp(err.msg, "bad.urdf:", 9), 0, "case %zu names the file: %s", i, err.msg);
        cr_assert(strstr(err.msg, c->needle1), "case %zu: '%s' not in: %s", i, c->needle1, err.msg);
        cr_assert(!c->needle2 || strstr(err.msg, c->needle2), "case %zu: '%s' not in: %s", i, c->needle2, err.msg);
    }
}

Test(model_bad, messages_carry_the_line)
{
    const char *xml = "<robot name='r'>\n" LINK("a") "\n" LINK(
        "b") "\n"
             "<joint name='knee' type='revolute'><parent link='a'/><child link='shank_x'/></joint>\n"
             "</robot>\n";
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf_text(xml, strlen(xml), "robot.urdf", NULL, &m, &err), RB_EINPUT);
    cr_assert_str_eq(err.msg, "robot.urdf:4: joint knee: child link shank_x does not exist");
    const char *broken = "<robot name='r'>\n\n<link name='a'>\n</robot>";
    cr_assert_eq(rb_model_load_urdf_text(broken, strlen(broken), "robot.urdf", NULL, &m, &err), RB_EINPUT);
    cr_assert(strncmp(err.msg, "robot.urdf:4: not XML: ", 23) == 0, "%s", err.msg);
}

static const char *ok_xml = ROBOT(LINK("a") LINK("b") LINK("c") JOINT("j1", "revolute", "a", "b")
                                      JOINT("j2", "fixed", "b", "c") FT("s", "j2", "child", "parent_to_child"));

static int load_opts(const rb_model_opts *o, rb_err *err)
{
    rb_model *m = (rb_model *)&m;
    int rc = rb_model_load_urdf_text(ok_xml, strlen(ok_xml), "ok.urdf", o, &m, err);
    if (rc == RB_OK)
        rb_model_free(m);
    else
        cr_assert_null(m);
    return rc;
}

Test(model_bad, options)
{
    rb_err err;
    cr_assert_eq(load_opts(NULL, &err), RB_OK, "%s", err.msg);
    const char *unknown[] = {"zz"}, *fixed[] = {"j2"}, *twice[] = {"j1", "j1"}, *j1[] = {"j1"};
    rb_model_opts o = {.joints = unknown, .n_joints = 1};
    cr_assert_eq(load_opts(&o, &err), RB_ENOTFOUND);
    cr_assert_str_eq(err.msg, "ok.urdf: joint list: no joint named zz");
    o.joints = fixed;
    cr_assert_eq(load_opts(&o, &err), RB_EINPUT);
    cr_assert_str_eq(err.msg, "ok.urdf: joint list: joint j2 is fixed");
    o = (rb_model_opts){.joints = twice, .n_joints = 2};
    cr_assert_eq(load_opts(&o, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "j1 listed twice"), "%s", err.msg);
    o = (rb_model_opts){.base = "zz"};
    cr_assert_eq(load_opts(&o, &err), RB_ENOTFOUND);
    cr_assert_str_eq(err.msg, "ok.urdf: base link zz does not exist");
    double at[] = {0.5, NAN};
    o = (rb_model_opts){.locked = unknown, .locked_at = at, .n_locked = 1};
    cr_assert_eq(load_opts(&o, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "locked joints: no joint named zz"), "%s", err.msg);
    o = (rb_model_opts){.joints = j1, .n_joints = 1, .locked = j1, .locked_at = at, .n_locked = 1};
    cr_assert_eq(load_opts(&o, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "both in the joint list and locked"), "%s", err.msg);
    o = (rb_model_opts){.locked = j1, .locked_at = at + 1, .n_locked = 1};
    cr_assert_eq(load_opts(&o, &err), RB_EINVAL);
    o = (rb_model_opts){.joints = NULL, .n_joints = 3};
    cr_assert_eq(load_opts(&o, &err), RB_EINVAL);
    /* an empty joint list is a list: every movable joint is locked */
    o = (rb_model_opts){.joints = j1, .n_joints = 0};
    rb_model *m = NULL;
    cr_assert_eq(rb_model_load_urdf_text(ok_xml, strlen(ok_xml), "ok.urdf", &o, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m->n_dofs, 0);
    cr_assert_eq(m->n_bodies, 2, "the FT joint is still a body");
    rb_model_free(m);
    /* a floating base needs some mass */
    const char *massless = ROBOT("<link name='a'/>");
    o = (rb_model_opts){.floating = true};
    cr_assert_eq(rb_model_load_urdf_text(massless, strlen(massless), "m.urdf", &o, &m, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "floating base"), "%s", err.msg);
    cr_assert_eq(rb_model_load_urdf_text(massless, strlen(massless), "m.urdf", NULL, &m, &err), RB_OK, "%s", err.msg);
    rb_model_free(m);
    cr_assert_eq(rb_model_load_urdf_text(NULL, 3, "x", NULL, &m, &err), RB_EINVAL);
    cr_assert_eq(rb_model_load_urdf(NULL, NULL, &m, &err), RB_EINVAL);
}

Test(model_bad, files)
{
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf("/nonexistent/robot.urdf", NULL, &m, &err), RB_ENOTFOUND);
    cr_assert(strncmp(err.msg, "/nonexistent/robot.urdf: no such file", 38) == 0, "%s", err.msg);
    cr_assert_eq(rb_model_load_urdf("/tmp", NULL, &m, &err), RB_EINPUT);
    cr_assert(strncmp(err.msg, "/tmp:", 5) == 0, "%s", err.msg);
    char path[] = "/tmp/rb_bad_urdf_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char *xml = ROBOT(LINK("a") LINK("b") JOINT("j1", "hinge", "a", "b"));
    cr_assert_eq(write(fd, xml, strlen(xml)), (ssize_t)strlen(xml));
    close(fd);
    cr_assert_eq(rb_model_load_urdf(path, NULL, &m, &err), RB_EINPUT);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, "joint j1: unknown joint type \"hinge\""),
              "%s", err.msg);
    unlink(path);
    cr_assert_null(m);
}

/* Every allocation of a load failing in turn: RB_ENOMEM each time, no leak (ASan), then success. */
static void allocation_loop(const char *path, const rb_model_opts *o)
{
    rb_err err;
    long n;
    for (n = 0; n < 100000; n++) {
        rb_model *m = NULL;
        rb_alloc_fail_after(n);
        int rc = rb_model_load_urdf(path, o, &m, &err);
        rb_alloc_fail_after(-1);
        if (rc == RB_OK) {
            cr_assert_not_null(m);
            rb_model_free(m);
            break;
        }
        cr_assert_eq(rc, RB_ENOMEM, "allocation %ld: %s", n, err.msg);
        cr_assert_null(m);
        cr_assert(strstr(err.msg, "out of memory"), "%s", err.msg);
    }
    cr_assert(n > 20 && n < 100000, "%ld allocations", n);
}

Test(model_bad, allocation_failures)
{
    allocation_loop(RB_SOURCE "/datasets/arm_2ft.urdf", NULL);
    const char *joints[] = {"elbow", "shoulder_yaw"}, *locked[] = {"wrist_roll"};
    double at[] = {0.3};
    rb_model_opts o = {
        .joints = joints, .n_joints = 2, .locked = locked, .locked_at = at, .n_locked = 1, .base = "tool_frame"};
    allocation_loop(RB_SOURCE "/datasets/arm_2ft.urdf", &o);
}
