#!/usr/bin/env python3
"""Writes the "other robots" scenarios (issue 18): the leg on a pole of leg_pole_free.json (the first robot, whose
friction network and noise the paper pipelines were tuned on) rebuilt as robots of the same kind whose joints
differ the way two legs, two robots, or a robot after maintenance differ: friction scaled 0.5x to 2x per joint, the
Coulomb part up and the viscous part down, another Stribeck shape, a LuGre joint, unmeasured pushes on the shank,
another motion. Each keeps the first robot's actuators, sensors and FT offsets, has its own noise seed, lasts 10 s
and logs only the channels the paper pipelines and the scoring read.

    scripts/make-other-robots-scenarios.py [OUT_DIR]     (default configs/scenarios/datasets)

Deterministic: the same files on every run. Run by hand after changing it, then scripts/make-datasets.sh."""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
JOINTS = ["r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"]
# The first robot's friction, as leg_pole_free.json: tanh6 presets (thesis Table 4.1, roboest/friction.h) and the
# ergoCub knee's SCV; written out so a robot can change one part of a curve.
SURALP_G1 = [0.7, 0.6, 0.5, 0.4, 0.2, 0.05]
SURALP_G4 = [0.6, 0.5, 0.4, 0.3, 0.02, 0.01]
PRESET_INDEX = {"r_hip_pitch": 0, "r_hip_roll": 1, "r_hip_yaw": 2, "r_ankle_pitch": 4, "r_ankle_roll": 5}
KNEE_SCV = [0.306, 0.601, 0.673, 0.0094]
KNEE_DRIFT = {"s0": 1.0, "s1": 1.2, "t0": 0.0, "t1": 10.0}  # the first robot's knee warms up; every robot's does
LOG_CHANNELS = ["joints_state/", "motors_state/", "FTs/", "accelerometers/r_foot_imu", "gyros/r_foot_imu",
                "truth/joints/torques", "truth/joints/friction_torques"]


def tanh6(j, coulomb=1.0, viscous=1.0, stribeck=1.0):
    i = PRESET_INDEX[j]
    return {"model": "tanh6", "params": [SURALP_G1[i] * stribeck, 100, 10, SURALP_G4[i] * coulomb, 100,
                                         0.9 * viscous]}


def knee(coulomb=1.0, viscous=1.0, stribeck=1.0):
    f_c, f_s, f_v, v_s = KNEE_SCV
    return {"model": "scv", "params": [f_c * coulomb, f_c * coulomb + (f_s - f_c) * stribeck, f_v * viscous, v_s],
            "drift": dict(KNEE_DRIFT)}


def first_robot(j):
    return knee() if j == "r_knee" else tanh6(j)


def scaled(j, s):
    f = first_robot(j)
    if j == "r_knee":
        f["drift"] = {"s0": s, "s1": 1.2 * s, "t0": 0.0, "t1": 10.0}
    else:
        f["drift"] = {"s0": s, "s1": s}
    return f


def robots():
    scales = dict(zip(JOINTS, [0.5, 2.0, 0.7, 1.5, 1.8, 0.6]))
    yield "other_robot_scaled", 201, {j: scaled(j, scales[j]) for j in JOINTS}, None, None
    # the second robot: 40 % more Coulomb friction, 30 % less viscous friction on every joint
    yield "other_robot_coulomb", 202, {j: knee(1.4, 0.7) if j == "r_knee" else tanh6(j, 1.4, 0.7)
                                       for j in JOINTS}, None, None
    # another Stribeck shape: a static peak twice the Coulomb level decaying over a wider velocity range (SCV,
    # v_s 0.05 rad/s, where the first robot's tanh6 hump spans about 0.01-0.1)
    stribeck = {}
    for j in JOINTS:
        if j == "r_knee":
            stribeck[j] = knee(1.0, 1.0, 2.0)
            stribeck[j]["params"][3] = 0.05
        else:
            i = PRESET_INDEX[j]
            f_c = SURALP_G4[i]
            stribeck[j] = {"model": "scv", "params": [f_c, f_c + 2 * SURALP_G1[i], 0.9, 0.05]}
    yield "other_robot_stribeck", 203, stribeck, None, None
    # a LuGre knee (bristle stiffness and damping of a harmonic drive's order: presliding displacement ~1e-4 rad),
    # the other joints 1.2x
    lugre = {j: scaled(j, 1.2) for j in JOINTS}
    lugre["r_knee"] = {"model": "lugre", "params": [0.35, 0.65, 0.6, 0.01, 4000.0, 20.0]}
    yield "other_robot_lugre", 204, lugre, None, None
    # unmeasured pushes on the shank, friction 1.3x
    pushes = {"frame": "r_lower_leg", "shape": "half_sine", "rate": 0.5, "duration": 0.25, "force_min": 20,
              "force_max": 40}
    yield "other_robot_pushes", 205, {j: scaled(j, 1.3) for j in JOINTS}, pushes, None
    # another motion (frequencies and amplitudes), friction 0.7x
    yield "other_robot_motion", 206, {j: scaled(j, 0.7) for j in JOINTS}, None, {"freq": 1.3, "amplitude": 0.8}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "configs", "scenarios", "datasets")
    with open(os.path.join(HERE, "..", "configs", "scenarios", "datasets", "leg_pole_free.json")) as f:
        base = json.load(f)
    for name, seed, friction, pushes, motion in robots():
        s = copy.deepcopy(base)
        s["name"], s["seed"], s["duration"], s["friction"] = name, seed, 10.0, friction
        if pushes:
            s["random_pushes"] = pushes
        if motion:
            for ref in s["references"].values():
                ref["freq"] = round(ref["freq"] * motion["freq"], 6)
                # keep the start pose (offset + amplitude at phase pi/2) so the leg starts where it rests
                start = ref["offset"] + ref["amplitude"]
                ref["amplitude"] = round(ref["amplitude"] * motion["amplitude"], 6)
                ref["offset"] = round(start - ref["amplitude"], 6)
        s["sensors"] = [x for x in s["sensors"] if x.get("frame") != "waist_imu" and x["kind"] != "orientation"]
        s["log_channels"] = LOG_CHANNELS + (["truth/pushes"] if pushes else [])
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(s, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
