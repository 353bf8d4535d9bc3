#!/usr/bin/env bash
# Runs every user-facing job of roboest on the shipped data (the demo, the paper suites, the closed
# loop, simulation, friction training, the importer, model evaluation, tuning, conversion) into
# build/output-hashes/ and prints the SHA-256 of every file written and of every command's stdout,
# sorted by path. Two builds (or two checkouts) that print the same list write the same bytes: the
# check a refactoring must pass. Output paths are relative to the repository (some outputs record them).
#   scripts/output-hashes.sh [ROBOEST] > list.txt     (ROBOEST default build/roboest)
# About 1 min on two cores. Needs ../shared/models beside the repository for the importer's inputs.
set -euo pipefail
export LC_ALL=C OPENBLAS_NUM_THREADS=1
root=$(cd "$(dirname "$0")/.." && pwd)
rb=$(realpath "${1:-$root/build/roboest}")
cd "$root"
out=build/output-hashes
rm -rf "$out"
mkdir -p "$out"/{demo,paper,sim,friction,rde,model,tune,convert,stdout}
so=$out/stdout

# every command's stdout is an output too (tables, PASS lines, config snippets)
r() {
    local name=$1
    shift
    "$rb" "$@" > "$so/$name.txt"
}

# make demo
r demo_run run configs/demo.json -o "$out/demo/run" -q
r demo_compare compare configs/compare/demo_suite.json -o "$out/demo/compare" -q
r demo_check check "$out/demo/compare/report.json" configs/compare/demo_rules.txt
r demo_paper compare configs/paper/suite_leg_pole.json -o "$out/demo/paper" -q
r demo_paper_check check "$out/demo/paper/report.json" configs/paper/rules_leg_pole.txt
r closed_loop closed-loop configs/closed_loop/closed_loop.json -o "$out/demo/closed_loop" -q
r closed_loop_second closed-loop configs/closed_loop/closed_loop_second_robot.json \
    -o "$out/demo/closed_loop_second_robot" -q

# the paper suites
for s in second_robot friction humanoid humanoid_push; do
    r "paper_$s" compare "configs/paper/suite_$s.json" -o "$out/paper/$s" -q
done
r paper_humanoid_check check "$out/paper/humanoid/report.json" configs/paper/rules_humanoid.txt \
    --junit "$out/paper/humanoid_junit.xml"

# simulation: every scenario shipped
for f in configs/scenarios/*.json configs/scenarios/datasets/*.json configs/paper/tune_*.json \
    configs/closed_loop/humanoid_balance_*.json; do
    n=$(basename "$(dirname "$f")")_$(basename "$f" .json)
    r "sim_$n" simulate "$f" -o "$out/sim/$n.mat" -q
done
r sim_arm_pole_h5 simulate configs/scenarios/arm_pole.json -o "$out/sim/arm_pole.h5" -q

# friction training and the pipelines on the simulated arm
r friction_train train-friction configs/friction/arm_pole_spec.json "$out/sim/scenarios_arm_pole.mat" \
    -o "$out/friction/arm_pole_friction.json" -q --fit-analytic coulomb_viscous,scv,tanh6
r paper_fit train-friction configs/paper/leg_friction_spec.json --fit-analytic scv -q
r torque_arm_pole run configs/torque_arm_pole.json "$out/sim/arm_pole.h5" -o "$out/friction/torque" -q

# the public estimator's configurations
for d in ../shared/models/rde_configs/*/; do
    n=$(basename "$d")
    r "rde_$n" import-rde "$d" -o "$out/rde/$n.json"
done

# model: info and every eval operation on the arm
r model_info model info datasets/arm_2ft.urdf
r model_info_json model info datasets/humanoid_lower_body.urdf --floating --json
r demo_info info datasets/demo_arm.mat --json
r convert_h5 convert datasets/demo_arm.mat -o "$out/convert/demo_arm.h5"
r convert_mat5 convert datasets/demo_arm.mat -o "$out/convert/demo_arm_v5.mat" --format mat5
r convert_csv convert datasets/demo_arm.mat -o "$out/convert/demo_arm.csv" --rate 100
/usr/bin/python3 - "$out/model/states.csv" << 'EOF'
import math, sys
with open(sys.argv[1], "w") as f:
    cols = [f"{k}:{j}" for k in ("q", "dq", "ddq", "tau") for j in range(4)]
    f.write("time," + ",".join(cols) + "\n")
    for t in range(5):
        row = [math.sin(0.7 * t + 0.3 * i + k) for k in range(4) for i in range(4)]
        f.write(f"{t}," + ",".join(f"{v:.17g}" for v in row) + "\n")
EOF
for op in mass-matrix generalised-forces gravity rnea forward-dynamics com centroidal-momentum regressor \
    forward-kinematics; do
    r "model_$op" model eval datasets/arm_2ft.urdf --op "$op" --states "$out/model/states.csv" \
        -o "$out/model/$op.h5"
done
frame=$("$rb" model info datasets/arm_2ft.urdf --json | /usr/bin/python3 -c \
    'import json,sys; print(json.load(sys.stdin)["frames"][-1])')
for op in jacobian djdq; do
    r "model_$op" model eval datasets/arm_2ft.urdf --op "$op" --frame "$frame" \
        --states "$out/model/states.csv" -o "$out/model/$op.h5"
done
r tune tune kf-derivative datasets/demo_arm.mat --channel joints_state/positions
r stages stages

cd "$out"
find . -type f ! -name states.csv -print0 | sort -z | xargs -0 sha256sum
