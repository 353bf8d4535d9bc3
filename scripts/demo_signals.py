#!/usr/bin/env python3
"""Writes the demo robot log as CSV on stdout: a 3-joint arm tracking sinusoids for 20 s.

Channels follow the robot-logger names: joints_state/positions (encoder noise), joints_state/velocities
(the exact derivative: the reference the demo's velocity estimators are scored against),
motors_state/positions (rotor side, signed gear ratios) and FTs/l_arm_ft (a wrench). Timestamps are
YARP-style epoch seconds at 100 Hz with +/-0.5 ms jitter, as a real logger records them.
Deterministic: Python's Mersenne Twister with a fixed seed, floats printed with repr (round-trip).
"""
import math
import random

SEED = 20261121
RATE = 100.0
DURATION = 20.0
T0 = 1763726400.0
JOINTS = ["shoulder_pitch", "elbow", "wrist_pitch"]
AMPLITUDE = [0.6, 0.9, 0.4]  # rad
FREQUENCY = [0.25, 0.4, 0.7]  # Hz
PHASE = [0.0, 1.0, 2.0]  # rad
GEAR_RATIO = [100.0, -160.0, 100.0]
ENCODER_NOISE = 2e-4  # rad, standard deviation
FT_NAMES = ["fx", "fy", "fz", "mx", "my", "mz"]


def main():
    rng = random.Random(SEED)
    header = ["time"]
    header += ["joints_state/positions:%s [rad]" % j for j in JOINTS]
    header += ["joints_state/velocities:%s [rad/s]" % j for j in JOINTS]
    header += ["motors_state/positions:%s [rad]" % j for j in JOINTS]
    header += ["FTs/l_arm_ft:%s [%s]" % (n, "N" if n[0] == "f" else "N m") for n in FT_NAMES]
    print("# generator: scripts/demo_signals.py seed %d" % SEED)
    print(",".join(header))
    samples = int(round(DURATION * RATE)) + 1
    for k in range(samples):
        t_rel = k / RATE + rng.uniform(-0.0005, 0.0005)
        q = [a * math.sin(2 * math.pi * f * t_rel + p) for a, f, p in zip(AMPLITUDE, FREQUENCY, PHASE)]
        qd = [a * 2 * math.pi * f * math.cos(2 * math.pi * f * t_rel + p)
              for a, f, p in zip(AMPLITUDE, FREQUENCY, PHASE)]
        q_meas = [x + rng.gauss(0.0, ENCODER_NOISE) for x in q]
        motor = [r * x + rng.gauss(0.0, ENCODER_NOISE) for r, x in zip(GEAR_RATIO, q)]
        wrench = [10 * math.sin(q[0]), 2 * math.cos(q[1]), -25 + 3 * q[2], 0.5 * q[1], -1.2 * q[0], 0.1 * q[2]]
        row = [T0 + t_rel] + q_meas + qd + motor + wrench
        print(",".join(repr(v) for v in row))


if __name__ == "__main__":
    main()
