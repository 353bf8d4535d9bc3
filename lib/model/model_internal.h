/* Private to lib/model. */
#ifndef ROBOEST_MODEL_INTERNAL_H
#define ROBOEST_MODEL_INTERNAL_H

#include "roboest/model.h"

/* True if X is finite with a proper rotation (orthonormal to 1e-9, determinant +1). */
bool rb_model_xform_is_valid(const rb_xform *X);

#endif
