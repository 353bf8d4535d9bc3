/* libFuzzer target: the URDF reader on arbitrary bytes, with and without model options (a joint list, a
 * locked joint and a base link taken from names the small test models use, so that mutated models still
 * reach re-rooting and reduction). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/model.h"

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
    if (rb_model_load_urdf_text((const char *)data, size, "fuzz.urdf", NULL, &m, &err) == RB_OK)
        rb_model_free(m);
    else if (strchr(err.msg, '\n'))
        abort();
    if (size && (data[0] & 1) && rb_model_load_urdf_text((const char *)data, size, "fuzz.urdf", &o, &m, &err) == RB_OK)
        rb_model_free(m);
    return 0;
}
