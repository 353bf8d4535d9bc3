#!/usr/bin/env python3
"""Writes the FT calibration scenarios (seed 002): three data sets on datasets/arm_2ft.urdf, each 40 random static
poses of the arm (ramp references: 1 s moves, 1.5 s holds; the shoulder yaw, which does not turn gravity in
the hand, stays at 0 under soft gains: the arm straight up leaves it almost no inertia for stiff ones) with a known mass added to the hand (a payload), the
wrist FT sensor's raw counts (sensor kind "ft_raw": a true C with cross-talk, an offset, counts per unit, noise,
1-count quantization), the hand accelerometer and gyroscope.

    scripts/make-ftcal-scenarios.py OUT_DIR MODEL_PATH [--noise-scale K] [--prefix NAME]

MODEL_PATH is written as is (relative to OUT_DIR, or absolute). The poses come from a fixed seed per data set, so
the files are the same on every run; --noise-scale multiplies the raw FT's and the accelerometer's noise.
Run by hand to regenerate configs/scenarios/datasets/ft_calibration_{a,b,c}.json, and by make paper-002-calibration
for the 10x-noise run."""
import json
import math
import random
import sys

SETS = [  # name, added mass (kg), its centre of mass in the hand frame (m): three loads off one line
    ("a", 0.5, [0.04, 0.0, 0.08]),
    ("b", 1.0, [0.0, 0.05, 0.06]),
    ("c", 1.5, [-0.03, -0.03, 0.1]),
]
JOINTS = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist_roll"]
RANGES = {"shoulder_yaw": (0.0, 0.0), "shoulder_pitch": (-1.3, 1.3), "elbow": (0.1, 2.3),
          "wrist_roll": (-math.pi, math.pi)}
POSES, MOVE, HOLD, START = 40, 1.0, 1.5, 1.0


def scenario(name, mass, com, index, model, noise_scale):
    rng = random.Random(1000 + index)
    times = [0.0, START]
    values = {j: [0.0, 0.0] for j in JOINTS}
    t = START
    for _ in range(POSES):
        pose = {j: round(rng.uniform(*RANGES[j]), 4) for j in JOINTS}
        for dt in (MOVE, HOLD):
            t = round(t + dt, 6)
            times.append(t)
            for j in JOINTS:
                values[j].append(pose[j])
    gains = {"shoulder_yaw": (30, 2), "shoulder_pitch": (400, 50), "elbow": (200, 25), "wrist_roll": (5, 0.3)}
    return {
        "name": name,
        "model": {"urdf": model},
        "duration": t,
        "dt": 0.001,
        "seed": 20 + index,
        "references": {j: {"kind": "ramp", "times": times, "values": values[j]} for j in JOINTS},
        "controller": {"kind": "pd", "gravity_comp": True,
                       "gains": {j: {"kp": kp, "kd": kd} for j, (kp, kd) in gains.items()}},
        "payload": {"link": "hand", "kind": "steps", "t0": 0, "added": {"mass": mass, "com": com}},
        "sensors": [
            {"kind": "ft_raw", "ft": "wrist_ft_sensor", "rate": 500,
             "counts_per_unit": [100, 100, 100, 2000, 2000, 2000], "cross_talk": 0.05, "cross_talk_seed": 2,
             "offset": [1200, -800, 450, -300, 950, -1500], "noise": 2 * noise_scale, "resolution": 1},
            {"kind": "accelerometer", "frame": "hand_acc", "noise": 0.02 * noise_scale},
            {"kind": "gyroscope", "frame": "hand_gyro"},
        ],
        "log_channels": ["FTs_raw/", "accelerometers/", "gyros/"],
    }


def main():
    args = sys.argv[1:]
    noise, prefix = 1.0, "ft_calibration"
    if "--noise-scale" in args:
        i = args.index("--noise-scale")
        noise = float(args[i + 1])
        del args[i:i + 2]
    if "--prefix" in args:
        i = args.index("--prefix")
        prefix = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        raise SystemExit(__doc__)
    out, model = args
    for index, (tag, mass, com) in enumerate(SETS):
        name = f"{prefix}_{tag}"
        with open(f"{out}/{name}.json", "w") as f:
            json.dump(scenario(name, mass, com, index, model, noise), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
