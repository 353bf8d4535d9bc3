#!/usr/bin/python3
"""Writes the joint-torque paper's variant pipelines into configs/paper/ (one file per variant and robot).

The pipelines differ only in their last stages, so they are generated from one description here; the
JSON files are committed and are what `roboest compare` reads. Run from anywhere:
    /usr/bin/python3 scripts/make-paper-configs.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "configs", "paper")

LEG = ["r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"]
# the scenarios' actuators (configs/scenarios/datasets/leg_pole_*.json)
K_T = [0.111]
R = [-100, 160, -100, 100, -100, 160]
J_M = [8.3e-6, 5.6e-6, 8.3e-6, 8.3e-6, 8.3e-6, 5.6e-6]
# kf_derivative noise: q from `roboest tune kf-derivative` on leg_pole_free (no reference), r the
# quantization variance of a 14-bit encoder, (2 pi / 2^14)^2 / 12 = 1.22e-8 rad^2; the motor encoder
# filter is the joint one scaled by R^2 (rotor angle = R joint angle).
KFD_Q = [0.503, 1.04, 3.26, 6.84, 7.72, 4.32]
KFD_R = [1.22e-8]
KFM_Q = [5030, 26600, 32600, 68400, 77200, 111000]
FTS = ["r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"]
CONTACTS = ["r_foot_front_contact", "r_foot_rear_contact"]
IMU = "r_foot_imu"
# FT offsets, calibrated beforehand (the values the scenarios configure: a calibration with the leg still and
# unloaded). The stages' own "first_sample" calibration cannot work on these logs: leg_pole_free starts
# with the leg accelerating (the knee at 20 rad/s^2 at t = 0, the torque loop starting from zero), and
# leg_pole_ground starts with the foot already loaded by an unmeasured ground reaction.
FT_OFFSET = [-2.2, 0.9, -4.8, -0.15, 0.08, -0.03,
             0.7, -1.3, 2.2, 0.03, 0.05, -0.02,
             -1.5, -0.4, -1.9, -0.02, -0.04, 0.01]

# scv fitted by `roboest train-friction configs/paper/leg_friction_spec.json --fit-analytic scv`
# on leg_pole_free (see scripts/train-paper-friction.sh)
SCV = json.load(open(os.path.join(OUT, "leg_friction_scv.json")))

UKF_COMMON = {
    "ft_sensors": FTS, "contacts": CONTACTS,
    "accelerometers": [IMU], "gyroscopes": [IMU],
    "k_t": K_T, "gear_ratio": R, "motor_inertia": J_M,
    # process noise per 1 ms step
    "q_dq": [1e-6], "q_tau_m": [1e-3], "q_tau_f": [1e-3],
    # FT wrenches per sensor (FTS order): the leg FT carries the whole leg, its moments move by up to
    # 0.05 N m per ms with the hip pitch's gravity load (about 25 N m/s RMS on leg_pole_free): 1e-2 on every
    # axis; with 1e-4 (0.01 N m per step) the filter lagged that moment and the hip pitch torque took the
    # error (RMSE 1.2 N m, the other joints 0.07-0.18). The feet's moments move little: 1e-4.
    "q_ft": [1e-2] * 6 + [1e-2, 1e-2, 1e-2, 1e-4, 1e-4, 1e-4] * 2, "q_contact": [1e-2],
    "p0_contact": [1.0], "p0_tau_f": [1.0],
    # measurement noise: the scenario sensors' noise (current 0.02 A, FT 0.5 on every axis,
    # accelerometer 0.02 m/s^2, gyroscope 0.005 rad/s); the IMUs log at 100 Hz and are resampled onto
    # the 1 kHz clock, so one reading is used ten times: variances x10; dq is the kf_derivative's output
    # (RMSE against the truth about 0.005 rad/s, correlated in time: 1e-4)
    "r_dq": [1e-4], "r_current": [4e-4], "r_ft": [0.25],
    "r_acc": [4e-3], "r_gyro": [2.5e-4],
    "ft_offset": "none",
}


def signals():
    return {
        "q": {"channel": "joints_state/positions", "elements": LEG},
        "qm": {"channel": "motors_state/positions", "elements": LEG},
        "current": {"channel": "motors_state/currents", "elements": LEG},
        "ft_raw": {"channel": ["FTs/" + f for f in FTS]},
        # optional: a log without IMUs binds them 0 wide and the stages run without them
        "acc": {"channel": "accelerometers/" + IMU, "optional": True},
        "gyro": {"channel": "gyros/" + IMU, "optional": True},
    }


def ftcal():
    return [{"id": "ftcal", "type": "difference", "in": {"a": "ft_raw"}, "out": {"y": "ft"},
             "params": {"offset": FT_OFFSET}}]


def kfd():
    return ftcal() + [{"id": "kfd", "type": "kf_derivative", "in": {"x": "q"}, "out": {"x_dot": "dq", "x_ddot": "ddq"},
             "params": {"q": KFD_Q, "r": KFD_R}}]


def kfm():
    return [{"id": "kfm", "type": "kf_derivative", "in": {"x": "qm"}, "out": {"x_dot": "wm"},
             "params": {"q": KFM_Q, "r": KFD_R}}]


def motor():
    return [{"id": "motor", "type": "motor_torque", "in": {"current": "current"}, "out": {"tau_m": "tau_m"},
             "params": {"k_t": K_T, "R": R}}]


def pinn(net):
    return [{"id": "pinn", "type": "friction_pinn", "in": {"motor_velocity": "wm", "joint_velocity": "dq"},
             "out": {"tau_F": "tau_f_pinn"}, "params": {"network": net, "history_fill": "model"}}]


def scv():
    return [{"id": "scv", "type": "friction_model", "in": {"velocity": "dq"}, "out": {"tau_F": "tau_f_scv"},
             "params": SCV}]


def ukf(friction, r_friction, correction=None):
    params = dict(UKF_COMMON)
    if correction:
        params["friction_correction"] = correction
    ins = {"q": "q", "dq": "dq", "current": "current", "ft": "ft", "acc": "acc", "gyro": "gyro"}
    if friction:
        ins["friction"] = friction
        params["r_friction"] = [r_friction]
    return [{"id": "ukf", "type": "ukf_torque", "in": ins, "out": {"tau_j": "tau_hat", "tau_f": "tau_f_hat"},
             "params": params}]


def pipeline(name, stages, estimate):
    return {"name": name,
            "model": {"urdf": "../../datasets/humanoid_lower_body.urdf", "joints": LEG, "base": "root_link"},
            "clock": {"rate": 1000}, "signals": signals(), "stages": stages,
            "outputs": [{"path": "torques.h5", "signals": [estimate]}]}


def leg_variants(net, prefix):
    rnea = [{"id": "rnea", "type": "rnea_torque", "in": {"q": "q", "dq": "dq", "ddq": "ddq", "ft": "ft"},
             "out": {"tau": "tau_hat"},
             "params": {"ft_sensors": FTS, "contacts": ["root_link"] + CONTACTS, "ft_offset": "none"}}]
    diff = [{"id": "diff", "type": "difference", "in": {"a": "tau_m", "b": "tau_f_pinn"}, "out": {"y": "tau_hat"}}]
    return {
        prefix + "current": pipeline("current", motor(), "tau_m"),
        prefix + "current_minus_pinn": pipeline("current_minus_pinn", kfd() + kfm() + motor() + pinn(net) + diff,
                                                "tau_hat"),
        prefix + "rnea": pipeline("rnea", kfd() + rnea, "tau_hat"),
        prefix + "ukf_nofric": pipeline("ukf_nofric", kfd() + ukf(None, 0), "tau_hat"),
        # r_friction: against the true friction on leg_pole_free (configs/paper/suite_friction.json) the
        # network's RMSE is 0.087 N m and the SCV fit's 0.079 N m: both measure it with variance 1e-2
        prefix + "ukf_pinn": pipeline("ukf_pinn", kfd() + kfm() + pinn(net) + ukf("tau_f_pinn", 1e-2), "tau_hat"),
        prefix + "ukf_scv": pipeline("ukf_scv", kfd() + scv() + ukf("tau_f_scv", 1e-2), "tau_hat"),
        # the network corrected online per joint (ukf_torque friction_correction, its default speeds; the terms and
        # why: configs/paper/README.md, "Online friction adaptation"): for a robot the network was not trained on
        prefix + "ukf_pinn_adaptive": pipeline("ukf_pinn_adaptive", kfd() + kfm() + pinn(net)
                                               + ukf("tau_f_pinn", 1e-2, ["coulomb", "viscous", "stribeck"]),
                                               "tau_hat"),
    }


# ---- the humanoid experiment: the right leg of the floating-base humanoid (humanoid_balance*.mat, 200 Hz) ----
# The same sensors, offsets (configs/scenarios/datasets/humanoid_*.json: the right leg's FT offsets, gear ratios,
# k_t and J_m are the leg's) and estimator structure as the leg; what changes:
# - the model is floating (root_link), the base IMU is the waist_imu on root_link (ukf_torque's base_imu; the
#   RNEA's imu_frame), the foot IMU r_foot_imu is measured too;
# - the clock is the logs' 200 Hz: the leg's friction network (sample period 1 ms) is rejected by friction_pinn,
#   so a second network is trained on humanoid_balance.mat's right leg (configs/paper/humanoid_friction_spec.json,
#   scripts/train-paper-friction.sh); the SCV fit is the leg's (a friction law has no sample period);
# - kf_derivative q from `roboest tune kf-derivative datasets/humanoid_balance_push.mat --channel
#   joints_state/positions --r 1.22e-8` (no reference: the prediction-error criterion; the quiet balance log gives
#   q 20-1000 times smaller and a filter that lags the pushes); motor filter scaled by R^2;
# - UKF process noise per 5 ms step: each random-walk block's variance is the variance of the true per-sample
#   increment of that quantity on a separate tuning log (configs/paper/tune_humanoid_push.json: a copy of the push
#   scenario with another seed and other push times and forces, simulated into build/; for the FT sensors a
#   noise-free copy of it), rounded up; the feet's two FT sensors get the same values (either plate may carry the
#   foot). Measured (per 5 ms): tau_m 1e-4..1.4e-2, tau_F 2e-5..0.13 (knee), r_leg_ft fx fy fz 0.34 0.41 5.7 N^2,
#   mx my mz 0.025 0.008 0.004 (N m)^2, r_foot_front_ft 0.38 0.51 7.2 / 0.046 0.015 0.004 (fz: the contact's
#   1 kHz chatter seen at 200 Hz). The leg's per-1 ms values times 5 (the first configs: tau_m, tau_F 5e-3, FT
#   5e-2 N^2 / 5e-4 (N m)^2) were 10-100 times below the FT rates: the FT states lagged the pushes by ~0.1 s and
#   dragged tau_m with them (DOCS-claims.md);
# - r_friction: the variance of the friction estimate's error against the true friction on the tuning logs
#   (tune_humanoid_push and tune_humanoid_object, pooled), per joint: the network is off by much more on the
#   pushes (out of its training motion) than the leg's 1e-2;
# - IMU variances x2 (100 Hz IMU readings held over two 200 Hz samples) instead of x10.
H_KFD_Q = [0.133, 1.11, 0.129, 2.56, 1.19, 0.923]
H_KFM_Q = [1330, 28400, 1290, 25600, 11900, 23600]
H_BASE_IMU = "waist_imu"
H_IMUS = [H_BASE_IMU, IMU]
H_CONTACTS = ["r_foot_front_contact", "r_foot_rear_contact"]
# where the pushes land (datasets/README.md): between the leg FT and the foot FTs
H_PUSH_CONTACT = "r_lower_leg"

H_UKF_COMMON = dict(UKF_COMMON)
H_UKF_COMMON.update({
    "contacts": H_CONTACTS, "accelerometers": H_IMUS, "gyroscopes": H_IMUS, "base_imu": H_BASE_IMU,
    "q_dq": [5e-6],
    # per joint (LEG order), the tuning log's increment variances 1.3e-3 3.7e-3 1e-4 1.4e-2 4.6e-3 5.7e-3 rounded up
    "q_tau_m": [2e-3, 5e-3, 2e-4, 2e-2, 5e-3, 1e-2],
    # 1.5e-2 6e-4 1.8e-3 0.134 2e-4 2e-5 rounded up (the knee's and hip pitch's friction flips with the velocity)
    "q_tau_f": [2e-2, 1e-3, 2e-3, 0.15, 5e-4, 1e-4],
    # per FTS entry: r_leg_ft_sensor, then both foot sensors alike
    "q_ft": [0.4, 0.4, 6.0, 0.03, 0.01, 0.005] + [0.5, 0.5, 7.0, 0.05, 0.015, 0.005] * 2, "q_contact": [5e-2],
    "r_acc": [8e-4], "r_gyro": [5e-5],
    # jump adaptation (ukf_torque adapt_*, DOCS-adapt.md): the controller's torque steps (the support change of the
    # object logs) are absorbed within a sample instead of ~0.3 s. Chosen on the tuning logs (tune_humanoid_object,
    # support change at 5.5 s, and tune_humanoid_push): ukf_pinn RMSE 0.351 -> 0.164 and 0.276 -> 0.276 with the
    # currents' gate at 0.9999 and the default blocks tau_m and ft (0.99..0.999999 and adapt_scale 0.3..3: 0.164-0.165
    # and 0.274-0.278; without "ft" 0.245, with "tau_f" as well no better)
    "adapt_probability": 0.9999,
})
# the friction measurements' error variances against the true friction on the tuning logs (pooled, rounded):
# the network 0.08 0.05 0.055 0.31 0.034 9e-4, the SCV fit 0.39 0.061 0.088 0.16 0.007 2e-4
H_R_PINN = [0.08, 0.05, 0.05, 0.3, 0.03, 1e-3]
H_R_SCV = [0.4, 0.06, 0.09, 0.2, 0.01, 1e-3]


def h_signals():
    s = signals()
    s["acc"] = {"channel": ["accelerometers/" + i for i in H_IMUS], "optional": True}
    s["gyro"] = {"channel": ["gyros/" + i for i in H_IMUS], "optional": True}
    s["base_acc"] = {"channel": "accelerometers/" + H_BASE_IMU, "optional": True}
    s["base_gyro"] = {"channel": "gyros/" + H_BASE_IMU, "optional": True}
    return s


def h_kfd():
    return ftcal() + [{"id": "kfd", "type": "kf_derivative", "in": {"x": "q"},
                       "out": {"x_dot": "dq", "x_ddot": "ddq"}, "params": {"q": H_KFD_Q, "r": KFD_R}}]


def h_kfm():
    return [{"id": "kfm", "type": "kf_derivative", "in": {"x": "qm"}, "out": {"x_dot": "wm"},
             "params": {"q": H_KFM_Q, "r": KFD_R}}]


def h_ukf(friction, r_friction, push_contact=False):
    stage = ukf(friction, r_friction)[0]
    params = dict(H_UKF_COMMON)
    if friction:
        params["r_friction"] = list(r_friction)
    if push_contact:
        # the push's wrench: 30-60 N rising within 0.125 s, about 2.4 N per 5 ms step
        params["contacts"] = H_CONTACTS + [H_PUSH_CONTACT]
        params["q_contact"] = [5e-2] * 12 + [5.0, 5.0, 5.0, 5e-2, 5e-2, 5e-2]
    stage["params"] = params
    return [stage]


def h_pipeline(name, stages, estimate):
    return {"name": name,
            "model": {"urdf": "../../datasets/humanoid_lower_body.urdf", "joints": LEG, "floating": True},
            "clock": {"rate": 200}, "signals": h_signals(), "stages": stages,
            "outputs": [{"path": "torques.h5", "signals": [estimate]}]}


def humanoid_variants(net, prefix):
    def rnea(contacts):
        return [{"id": "rnea", "type": "rnea_torque",
                 "in": {"q": "q", "dq": "dq", "ddq": "ddq", "ft": "ft", "acc": "base_acc", "gyro": "base_gyro"},
                 "out": {"tau": "tau_hat"},
                 "params": {"ft_sensors": FTS, "contacts": contacts, "imu_frame": H_BASE_IMU, "ft_offset": "none"}}]
    diff = [{"id": "diff", "type": "difference", "in": {"a": "tau_m", "b": "tau_f_pinn"}, "out": {"y": "tau_hat"}}]
    return {
        prefix + "current": h_pipeline("current", motor(), "tau_m"),
        prefix + "current_minus_pinn": h_pipeline("current_minus_pinn",
                                                  h_kfd() + h_kfm() + motor() + pinn(net) + diff, "tau_hat"),
        prefix + "rnea": h_pipeline("rnea", h_kfd() + rnea(H_CONTACTS), "tau_hat"),
        prefix + "ukf_nofric": h_pipeline("ukf_nofric", h_kfd() + h_ukf(None, 0), "tau_hat"),
        prefix + "ukf_pinn": h_pipeline("ukf_pinn", h_kfd() + h_kfm() + pinn(net) + h_ukf("tau_f_pinn", H_R_PINN),
                                        "tau_hat"),
        prefix + "ukf_scv": h_pipeline("ukf_scv", h_kfd() + scv() + h_ukf("tau_f_scv", H_R_SCV), "tau_hat"),
        # what knowing where the pushes land buys: an unknown contact at the shank in both model-based estimators
        prefix + "rnea_shank": h_pipeline("rnea_shank", h_kfd() + rnea(H_CONTACTS + [H_PUSH_CONTACT]), "tau_hat"),
        prefix + "ukf_pinn_shank": h_pipeline("ukf_pinn_shank", h_kfd() + h_kfm() + pinn(net)
                                              + h_ukf("tau_f_pinn", H_R_PINN, push_contact=True), "tau_hat"),
    }


def write(variants):
    for name, p in variants.items():
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(p, f, indent=1)
            f.write("\n")


def main():
    write(leg_variants("leg_friction_pinn.json", "leg_"))
    write(humanoid_variants("humanoid_friction_pinn.json", "humanoid_"))


if __name__ == "__main__":
    main()
