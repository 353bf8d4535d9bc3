/* The built-in stage types. */
#include "roboest/estimators.h"

int rb_estimators_register(rb_registry *reg, rb_err *err)
{
    static const rb_stage_type *const builtins[] = {
        &rb_stage_lowpass,        &rb_stage_finite_difference, &rb_stage_kf_derivative,   &rb_stage_motor_torque,
        &rb_stage_friction_model, &rb_stage_friction_pinn,     &rb_stage_rnea_torque,     &rb_stage_ukf_torque,
        &rb_stage_difference,     &rb_stage_inertial_ekf,      &rb_stage_legged_odometry, &rb_stage_thrust_ekf,
        &rb_stage_lipm_com,       &rb_stage_attitude,          &rb_stage_fbse_friction,   &rb_stage_slip_predictor,
        &rb_stage_map_dynamics};
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        int rc = rb_registry_add(reg, builtins[i], err);
        if (rc)
            return rc;
    }
    return RB_OK;
}
