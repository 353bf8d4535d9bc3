/* libFuzzer target: the URDF reader on arbitrary bytes, with and without model options (a joint list, a
 * locked joint and a base link taken from names the small test models use, so that mutated models still
 * reach re-rooting and reduction). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/model.h"

/* Every name of a loaded model is found where it is (the look-ups go through sorted indexes) and holds no
 * control character. */
static void check_names(const rb_model *m)
{
    for (size_t i = 0; i < m->n_frames; i++)
        if (rb_model_frame_index(m, m->frames[i].name) != (long)i || strpbrk(m->frames[i].name, "\n\r\t"))
            abort();
    for (size_t i = 0; i < m->n_bodies; i++)
        if (rb_model_body_index(m, m->bodies[i].name) != (long)i)
            abort();
    for (size_t i = 0; i < m->n_dofs; i++)
        if (rb_model_dof_index(m, m->dof_names[i]) != (long)i)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const joints[] = {"joint_1", "elbow", "r_knee"};
    static const char *const locked[] = {"joint_2"};
    static const double at[] = {0.5};
    rb_model_opts o = {
        .joints = joints, .n_joints = 1, .locked = locked, .locked_at = at, .n_locked = 1, .base = "link_3"};
    rb_err err;
    rb_model *m = NULL;
    /* the text loader takes a length: no terminator needed, and none is added so overreads show */
    if (rb_model_load_urdf_text((const char *)data, size, "fuzz.urdf", NULL, &m, &err) == RB_OK) {
        check_names(m);
        rb_model_free(m);
    } else if (strchr(err.msg, '\n'))
        abort();
    if (size && (data[0] & 1) && rb_model_load_urdf_text((const char *)data, size, "fuzz.urdf", &o, &m, &err) == RB_OK)
        rb_model_free(m);
    return 0;
}
