#!/usr/bin/python3
"""Writes the closed-loop experiment's data into configs/closed_loop/ (the joint-torque paper's Tables I and II:
a balancing humanoid whose low-level torque PI runs at 1 kHz on an estimated joint torque, with PINN friction
compensation; `roboest closed-loop configs/closed_loop/closed_loop.json`).

Everything is generated from the one description below, deterministically (same bytes on every run):
    /usr/bin/python3 scripts/make-closed-loop-configs.py
  humanoid_balance_push.json   the evaluation scenario (torque control, 1 kHz sensors, pushes after 4 s)
  humanoid_balance_train.json  the friction network's training scenario (other seed, motion and pushes)
  friction_spec.json           `roboest train-friction` spec (scripts/train-closed-loop-friction.sh trains
                               friction_pinn.json from it)
  pinn.json, rnea_pinn.json, ukf_pinn.json   the estimator pipelines the loop steps (1 kHz, 12 leg joints)
  suite_offline.json, suite_friction.json    offline checks of those pipelines on a simulated log
  closed_loop.json             the six configurations of the paper
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "configs", "closed_loop")
URDF_FROM_CONFIGS = "../../datasets/humanoid_lower_body.urdf"

SIDES = ["l", "r"]
LEG_JOINTS = ["hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll"]
TORSO = ["torso_pitch", "torso_roll", "torso_yaw"]
LEGS = [s + "_" + j for s in SIDES for j in LEG_JOINTS]  # the 12 estimated joints, left leg first

# ---- the robot: the actuators and friction of the humanoid datasets (configs/scenarios/datasets/humanoid_*.json)
K_T = 0.111
GEAR = {"torso_pitch": 100, "torso_roll": -100, "torso_yaw": 100,
        "l_hip_pitch": 100, "l_hip_roll": -160, "l_hip_yaw": 100, "l_knee": -100, "l_ankle_pitch": 100,
        "l_ankle_roll": -160,
        "r_hip_pitch": -100, "r_hip_roll": 160, "r_hip_yaw": -100, "r_knee": 100, "r_ankle_pitch": -100,
        "r_ankle_roll": 160}
J_M = {j: (5.6e-6 if abs(r) == 160 else 8.3e-6) for j, r in GEAR.items()}
FRICTION = {
    "torso_pitch": {"model": "scv", "params": [0.25, 0.45, 0.5, 0.01]},
    "torso_roll": {"model": "scv", "params": [0.25, 0.45, 0.5, 0.01]},
    "torso_yaw": {"model": "scv", "params": [0.2, 0.35, 0.4, 0.01]},
}
PRESETS = {"hip_pitch": "suralp_leg_1", "hip_roll": "suralp_leg_2", "hip_yaw": "suralp_leg_3",
           "knee": "ergocub_r_knee", "ankle_pitch": "suralp_leg_5", "ankle_roll": "suralp_leg_6"}
for _s in SIDES:
    for _j in LEG_JOINTS:
        FRICTION[_s + "_" + _j] = {"preset": PRESETS[_j]}
# the right knee's friction grows by 15 % over 10 s (the datasets' drift): the network sees the start of it
FRICTION["r_knee"]["drift"] = {"s0": 1.0, "s1": 1.15, "t0": 0.0, "t1": 10.0}

# ---- the torque controller (sim.h RB_CTRL_TORQUE): tau_des = contact-consistent gravity compensation + M_ss
# (r_ddot + kp e + kd e_dot), then the PI on the torque error. kp, kd are accelerations (1/s^2, 1/s) scaled by the
# joint's diagonal of M_ss (the floating-base mass matrix's joint block, base free, at q0) plus the rotor's R^2 J_m,
# which the controller adds. That inertia is tiny at the ankles (0.09 kg m^2: the foot plates and the rotor) and
# large at the hips (2.8), while the feet's contacts make every leg joint move the whole body: one kp for all would
# leave the ankles nearly limp. So each joint gets kp = K / I, kd = D / I for a stiffness K (N m/rad) and damping
# D (N m s/rad) about 1.5-2 times the PD dataset's (configs/scenarios/datasets/humanoid_balance_push.json: without
# torque feedback the friction is not rejected and the position loop has to hold the CoM).
# kp_tau 0.5 (configs/README.md: near 1 chatters on loaded joints at 1 ms), ki_tau 20 1/s: the leg_pole gains.
# I: diag(M_ss) at q0 (rb_dyn_mass_matrix, datasets/humanoid_lower_body.urdf floating) + R^2 J_m, kg m^2
INERTIA = {"torso_pitch": 1.70 + 0.083, "torso_roll": 1.33 + 0.083, "torso_yaw": 0.164 + 0.083,
           "hip_pitch": 2.72 + 0.083, "hip_roll": 2.29 + 0.143, "hip_yaw": 0.0597 + 0.083, "knee": 0.316 + 0.083,
           "ankle_pitch": 0.0105 + 0.083, "ankle_roll": 0.0056 + 0.143}
STIFFNESS = {"torso_pitch": (800, 20), "torso_roll": (800, 20), "torso_yaw": (400, 10),
             "hip_pitch": (1500, 37.5), "hip_roll": (1500, 37.5), "hip_yaw": (600, 15), "knee": (1500, 37.5),
             "ankle_pitch": (1200, 30), "ankle_roll": (1200, 30)}
KP_TAU, KI_TAU = 0.5, 20.0


def gains(kp_tau=KP_TAU, ki_tau=KI_TAU):
    out = {}
    for j in TORSO + [s + "_" + x for s in SIDES for x in LEG_JOINTS]:
        kind = j if j in TORSO else j.split("_", 1)[1]
        k, d = STIFFNESS[kind]
        out[j] = {"kp": float("%.3g" % (k / INERTIA[kind])), "kd": float("%.3g" % (d / INERTIA[kind])),
                  "kp_tau": kp_tau, "ki_tau": ki_tau}
    return out


# ---- sensors: the datasets' presets and FT start-up offsets, every one at 1 kHz
FT_OFFSETS = {
    "l_leg_ft_sensor": [3.1, -1.4, 6.2, 0.21, -0.12, 0.05],
    "r_leg_ft_sensor": [-2.2, 0.9, -4.8, -0.15, 0.08, -0.03],
    "l_foot_front_ft_sensor": [1.2, 0.6, -2.5, 0.04, -0.06, 0.01],
    "l_foot_rear_ft_sensor": [-0.8, 1.1, 3.0, -0.05, 0.02, 0.02],
    "r_foot_front_ft_sensor": [0.7, -1.3, 2.2, 0.03, 0.05, -0.02],
    "r_foot_rear_ft_sensor": [-1.5, -0.4, -1.9, -0.02, -0.04, 0.01],
}
FTS = [s + "_" + f for s in SIDES for f in ["leg_ft_sensor", "foot_front_ft_sensor", "foot_rear_ft_sensor"]]
BASE_IMU = "waist_imu"
IMUS = [BASE_IMU, "l_foot_imu", "r_foot_imu"]
RATE = 1000


def sensors():
    out = [{"kind": "joint_encoder", "rate": RATE}, {"kind": "motor_encoder", "rate": RATE},
           {"kind": "motor_current", "rate": RATE}]
    out += [{"kind": "ft", "ft": f, "offset": FT_OFFSETS[f], "rate": RATE} for f in FTS]
    for imu in IMUS:
        out += [{"kind": "accelerometer", "frame": imu, "rate": RATE}, {"kind": "gyroscope", "frame": imu, "rate": RATE}]
    out.append({"kind": "orientation", "frame": BASE_IMU, "rate": RATE})
    return out


# ---- the pushes of the evaluation (unmeasured: no estimator models them): shanks and thighs, 30-60 N, half
# sines of 0.25 s, horizontal, after a disturbance-free stretch (Table I scores 0.5 s .. the first push)
PUSHES = [  # frame, start (s), horizontal force (N) in world x, y
    ("r_lower_leg", 4.5, [40.0, 15.0]),
    ("l_lower_leg", 5.6, [-30.0, 25.0]),
    ("r_upper_leg", 6.7, [0.0, -55.0]),
    ("l_upper_leg", 7.8, [50.0, 0.0]),
    ("r_lower_leg", 8.9, [-35.0, -35.0]),
]
PUSH_DURATION = 0.25
# The training log's pushes: other times, frames and forces (20-70 N), so that the network sees the velocities
# pushes cause (trained on the quiet balancing alone it extrapolates wildly on them and its compensation drives
# the robot unstable in the loop).
TRAIN_PUSHES = [
    ("l_lower_leg", 1.3, [25.0, -30.0]),
    ("r_upper_leg", 2.6, [-45.0, 20.0]),
    ("r_lower_leg", 3.9, [0.0, 60.0]),
    ("l_upper_leg", 5.2, [-20.0, -20.0]),
    ("r_lower_leg", 6.5, [65.0, 0.0]),
    ("l_lower_leg", 7.8, [-30.0, 45.0]),
    ("r_upper_leg", 9.1, [35.0, 35.0]),
    ("l_upper_leg", 10.4, [0.0, -70.0]),
]


# The "second robot" (the paper's scalability test, section IV-C3: the same design, friction changed by wear and
# manufacturing): every leg joint's friction scaled by a constant factor, per joint kind, both legs alike (the
# factors of the leg-on-a-pole second robot's drift; the knee's drift there grows 1.4 -> 1.6)
SECOND_ROBOT_SCALE = {"hip_pitch": 1.3, "hip_roll": 0.8, "hip_yaw": 1.5, "knee": 1.4, "ankle_pitch": 0.7,
                      "ankle_roll": 1.2}


def second_robot_friction():
    out = {j: dict(FRICTION[j]) for j in TORSO + LEGS}
    for j in LEGS:
        k = SECOND_ROBOT_SCALE[j.split("_", 1)[1]]
        out[j]["drift"] = {"s0": k, "s1": k}
    return out


def scenario(name, seed, duration, amplitude, freq, pushes, friction=None):
    sc = {
        "name": name,
        "model": {"urdf": "../../datasets/humanoid_lower_body.urdf", "floating": True},
        "duration": duration, "dt": 0.001, "method": "euler", "log_rate": RATE, "seed": seed,
        "base_pose": {"position": [-0.0298, 0.0, 0.83585], "rpy": [0.0, 0.0, 0.0]},
        "q0": {s + "_" + j: v for s in SIDES for j, v in [("hip_pitch", -0.2), ("knee", 0.4), ("ankle_pitch", -0.2)]},
        "contacts": [{"frame": s + "_foot_front_contact", "dim": 6, "baumgarte_T": 0.02} for s in SIDES],
        "balance": {"amplitude": amplitude, "freq": freq, "ik_T": 0.02},
        "controller": {"kind": "torque", "gains": gains()},
        "actuators": {j: {"k_t": K_T, "R": GEAR[j], "J_m": J_M[j], "i_max": 12} for j in TORSO + LEGS},
        "friction": friction or {j: FRICTION[j] for j in TORSO + LEGS},
        "sensors": sensors(),
    }
    if pushes:
        sc["pushes"] = [{"frame": f, "shape": "half_sine", "start": t, "duration": PUSH_DURATION,
                         "wrench": [fx, fy, 0.0, 0.0, 0.0, 0.0]} for f, t, (fx, fy) in pushes]
    return sc


# ---- the estimators (pipelines at 1 kHz on the 12 leg joints, both legs in one model)
# kf_derivative: q per joint kind (both legs alike) from `roboest tune kf-derivative
# build/closed_loop/humanoid_balance_train.mat --channel joints_state/positions --r 1.22e-8 --reference
# truth/joints/velocities` on the TRAINING log (the velocity RMSE against its truth; left/right optima 6.5/6.42,
# 1.63/1.41, 0.454/0.37, 5.18/5.69, 0.305/0.528, 0.703/0.719, rounded), never on the evaluation log; r the 14-bit
# encoder's quantization variance (2 pi / 2^14)^2 / 12 = 1.22e-8 rad^2; the motor filter is the joint one scaled by
# R^2 (rotor angle = R joint angle). Without the reference (the prediction-error criterion) the optimum is flat at
# this noise floor and lands anywhere from 0.3 to 1.6e5.
KFD_Q = {"hip_pitch": 6.5, "hip_roll": 1.5, "hip_yaw": 0.4, "knee": 5.4, "ankle_pitch": 0.4, "ankle_roll": 0.7}
KFD_R = [1.22e-8]


def kfd_q():
    return [KFD_Q[j.split("_", 1)[1]] for j in LEGS]


def kfm_q():
    return [float("%.3g" % (KFD_Q[j.split("_", 1)[1]] * GEAR[j] ** 2)) for j in LEGS]


CONTACTS = [s + "_foot_" + p + "_contact" for s in SIDES for p in ["front", "rear"]]
NET = "friction_pinn.json"

# The UKF at 1 kHz: the humanoid's (configs/paper, 200 Hz) per-step variances divided by 5 (the leg's per-1 ms
# values, configs/paper's UKF_COMMON), the IMUs now logged at 1 kHz (no holding: the sensor's own variances).
UKF = {
    "ft_sensors": FTS, "contacts": CONTACTS, "accelerometers": IMUS, "gyroscopes": IMUS, "base_imu": BASE_IMU,
    "k_t": [K_T], "gear_ratio": [GEAR[j] for j in LEGS], "motor_inertia": [J_M[j] for j in LEGS],
    "q_dq": [1e-6], "q_tau_m": [1e-3], "q_tau_f": [1e-3],
    "q_ft": ([1e-2] * 6 + [1e-2, 1e-2, 1e-2, 1e-4, 1e-4, 1e-4] * 2) * 2,  # per leg: leg FT, foot front, foot rear
    "q_contact": [1e-2], "p0_contact": [1.0], "p0_tau_f": [1.0],
    "r_dq": [1e-4], "r_current": [4e-4], "r_ft": [0.25], "r_acc": [4e-4], "r_gyro": [2.5e-5],
    "r_friction": [1e-2],
    "ft_offset": "none",
}


def signals():
    return {
        "q": {"channel": "joints_state/positions", "elements": LEGS},
        "qm": {"channel": "motors_state/positions", "elements": LEGS},
        "current": {"channel": "motors_state/currents", "elements": LEGS},
        "ft_raw": {"channel": ["FTs/" + f for f in FTS]},
        # optional, as the paper pipelines' (a log without IMUs binds them 0 wide)
        "acc": {"channel": ["accelerometers/" + i for i in IMUS], "optional": True},
        "gyro": {"channel": ["gyros/" + i for i in IMUS], "optional": True},
        "base_acc": {"channel": "accelerometers/" + BASE_IMU, "optional": True},
        "base_gyro": {"channel": "gyros/" + BASE_IMU, "optional": True},
    }


def stages_pinn():
    return [
        {"id": "kfd", "type": "kf_derivative", "in": {"x": "q"}, "out": {"x_dot": "dq", "x_ddot": "ddq"},
         "params": {"q": kfd_q(), "r": KFD_R}},
        {"id": "kfm", "type": "kf_derivative", "in": {"x": "qm"}, "out": {"x_dot": "wm"},
         "params": {"q": kfm_q(), "r": KFD_R}},
        {"id": "pinn", "type": "friction_pinn", "in": {"motor_velocity": "wm", "joint_velocity": "dq"},
         "out": {"tau_F": "tau_f_pinn"}, "params": {"network": NET, "history_fill": "model"}},
    ]


def stage_ftcal():
    # the FT start-up offsets are known (the scenario's) and subtracted: the loop does not start at rest
    return {"id": "ftcal", "type": "difference", "in": {"a": "ft_raw"}, "out": {"y": "ft"},
            "params": {"offset": [v for f in FTS for v in FT_OFFSETS[f]]}}


def stage_rnea():
    return {"id": "rnea", "type": "rnea_torque",
            "in": {"q": "q", "dq": "dq", "ddq": "ddq", "ft": "ft", "acc": "base_acc", "gyro": "base_gyro"},
            "out": {"tau": "tau_rnea"},
            "params": {"ft_sensors": FTS, "contacts": CONTACTS, "imu_frame": BASE_IMU, "ft_offset": "none"}}


def stage_ukf():
    return {"id": "ukf", "type": "ukf_torque",
            "in": {"q": "q", "dq": "dq", "current": "current", "ft": "ft", "acc": "acc", "gyro": "gyro",
                   "friction": "tau_f_pinn"},
            "out": {"tau_j": "tau_ukf"}, "params": UKF}


def pipeline(name, extra, outputs):
    used = {"q", "qm"}
    if extra:
        used |= {"ft_raw", "base_acc", "base_gyro"} if extra[-1]["id"] == "rnea" else {"current", "ft_raw", "acc",
                                                                                        "gyro"}
    sig = {k: v for k, v in signals().items() if k in used}
    stages = stages_pinn() + ([stage_ftcal()] if extra else []) + extra
    return {"name": name,
            "model": {"urdf": URDF_FROM_CONFIGS, "joints": LEGS, "floating": True},
            "clock": {"rate": RATE}, "signals": sig, "stages": stages,
            "outputs": [{"path": "estimates.h5", "signals": outputs}]}


def friction_spec():
    return {
        "logs": ["../../build/closed_loop/humanoid_balance_train.mat"],
        "joints": LEGS,
        "joint_velocity": {"channel": "joints_state/positions", "kf_derivative": {"q": kfd_q(), "r": KFD_R}},
        "motor_velocity": {"channel": "motors_state/positions", "kf_derivative": {"q": kfm_q(), "r": KFD_R}},
        "current": {"channel": "motors_state/currents"},
        "torque": {"channel": "truth/joints/torques"},
        "k_t": [K_T], "R": [GEAR[j] for j in LEGS], "motor_inertia": [J_M[j] for j in LEGS],
        "clock": {"rate": RATE},
        "window": [0.5, 1e9],
        "network": {"H": 20, "hidden": [233, 229], "dropout": 0.1, "lambda": 0.12, "learning_rate": 0.001,
                    "epochs": 60, "batch_size": 256, "patience": 10, "seed": 0, "split_block": 500},
        "analytic": ["scv"],
    }


EVAL_LOG = "../../build/closed_loop/humanoid_balance_push.mat"
SETTLE = 0.5


def suites():
    common = {"logs": [EVAL_LOG], "joints": LEGS, "window": [SETTLE, 1e9], "bootstrap": {"samples": 200},
              "statistics": ["mse", "rmse", "mae", "max_abs"]}
    torque = dict(common, name="closed-loop estimators offline: joint torques (evaluation log)",
                  variants=[{"name": "rnea", "pipeline": "rnea_pinn.json", "estimate": "tau_rnea"},
                            {"name": "ukf_pinn", "pipeline": "ukf_pinn.json", "estimate": "tau_ukf"}],
                  reference={"channel": "truth/joints/torques"},
                  figures={"traces": [{"joint": "r_knee", "log": 0}, {"joint": "l_hip_roll", "log": 0}],
                           "contact": {"channel": "truth/pushes", "threshold": 1.0}})
    fric = dict(common, name="closed-loop estimators offline: friction torques (evaluation log)",
                variants=[{"name": "pinn", "pipeline": "pinn.json", "estimate": "tau_f_pinn"}],
                reference={"channel": "truth/joints/friction_torques"})
    return torque, fric


def closed_loop():
    return {
        "name": "closed loop: humanoid balancing with unmeasured pushes (paper Tables I and II)",
        "scenario": "humanoid_balance_push.json",
        "joints": LEGS,
        "settle": SETTLE,
        "disturbances_from": min(t for _, t, _ in PUSHES),
        # the scenario's seed and two more: other sensor noise (the pushes are the same); the tables give mean and
        # spread over them
        "seeds": [601, 611, 621],
        "configurations": [
            {"name": "feedforward", "label": "Feedforward"},
            {"name": "rnea", "label": "RNEA No Compensation", "pipeline": "rnea_pinn.json", "feedback": "tau_rnea"},
            {"name": "ukf", "label": "UKF No Compensation", "pipeline": "ukf_pinn.json", "feedback": "tau_ukf"},
            {"name": "feedforward_pinn", "label": "Feedforward PINN", "pipeline": "pinn.json",
             "compensation": "tau_f_pinn"},
            {"name": "rnea_pinn", "label": "RNEA-PINN", "pipeline": "rnea_pinn.json", "feedback": "tau_rnea",
             "compensation": "tau_f_pinn"},
            {"name": "ukf_pinn", "label": "UKF-PINN", "pipeline": "ukf_pinn.json", "feedback": "tau_ukf",
             "compensation": "tau_f_pinn"},
        ],
    }


def closed_loop_second_robot():
    cl = closed_loop()
    cl["name"] = "closed loop on the second robot: other friction, the first robot's network and tuning"
    cl["scenario"] = "humanoid_balance_push_second_robot.json"
    cl["seeds"] = [601]
    return cl


def write(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    write("humanoid_balance_push.json", scenario("humanoid_balance_push", 601, 10.0, 0.025, 0.25, PUSHES))
    write("humanoid_balance_train.json", scenario("humanoid_balance_train", 602, 12.0, 0.035, 0.35, TRAIN_PUSHES))
    write("friction_spec.json", friction_spec())
    write("pinn.json", pipeline("pinn", [], ["tau_f_pinn"]))
    write("rnea_pinn.json", pipeline("rnea_pinn", [stage_rnea()], ["tau_rnea", "tau_f_pinn"]))
    write("ukf_pinn.json", pipeline("ukf_pinn", [stage_ukf()], ["tau_ukf", "tau_f_pinn"]))
    torque, fric = suites()
    write("suite_offline.json", torque)
    write("suite_friction.json", fric)
    write("closed_loop.json", closed_loop())
    write("humanoid_balance_push_second_robot.json",
          scenario("humanoid_balance_push_second_robot", 601, 10.0, 0.025, 0.25, PUSHES, second_robot_friction()))
    write("closed_loop_second_robot.json", closed_loop_second_robot())


if __name__ == "__main__":
    main()
