#!/usr/bin/env python3
"""The closed loop's time per run with and without the plant-model mismatch, side by side.

Alternating runs, one thread, one seed, the six configurations of configs/closed_loop/closed_loop.json on the
scenario without (humanoid_balance_push.json) and with the realistic mismatch (humanoid_balance_mismatch.json);
the issue's budget is 1.3x. Usage: scripts/bench-closed-loop-mismatch.py BUILD_DIR [REPEATS]
"""
import json
import os
import subprocess
import sys
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 2
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
d = os.path.join(root, "configs", "closed_loop")
tmp = os.path.join(build, "bench_closed_loop_mismatch")
os.makedirs(tmp, exist_ok=True)
scenario = {"plain": "humanoid_balance_push.json", "mismatch": "humanoid_balance_mismatch.json"}
for v, sc in scenario.items():
    c = json.load(open(os.path.join(d, "closed_loop.json")))
    c["scenario"] = os.path.join(d, sc)
    c["seeds"] = [601]
    for cf in c["configurations"]:
        if "pipeline" in cf:
            cf["pipeline"] = os.path.join(d, cf["pipeline"])
    json.dump(c, open(os.path.join(tmp, v + ".json"), "w"), indent=1)
total = {"plain": 0.0, "mismatch": 0.0}
for _ in range(reps):
    for v in scenario:
        t0 = time.monotonic()
        subprocess.run([os.path.join(build, "roboest"), "closed-loop", os.path.join(tmp, v + ".json"), "-o",
                        os.path.join(tmp, "out_" + v), "--threads", "1", "--force", "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        dt = time.monotonic() - t0
        total[v] += dt
        print(f"  {v}: {dt:.2f} s (6 runs)")
runs = 6 * reps
print(f"closed loop, 6 configurations x 1 seed x 10 s, {reps} repeats alternating: without mismatch "
      f"{total['plain'] / runs:.2f} s per run, with the realistic mismatch {total['mismatch'] / runs:.2f} s per run, "
      f"ratio {total['mismatch'] / total['plain']:.3f} (budget 1.3)")
