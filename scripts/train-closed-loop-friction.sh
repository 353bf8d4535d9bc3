#!/usr/bin/env bash
# Regenerates the closed-loop experiment's friction network configs/closed_loop/friction_pinn.json (the 12 leg
# joints of the balancing humanoid, 1 kHz): writes the configs (scripts/make-closed-loop-configs.py), simulates the
# training scenario configs/closed_loop/humanoid_balance_train.json into build/closed_loop/ and trains the network
# with `roboest train-friction configs/closed_loop/friction_spec.json` (targets from the log's truth). Seeded: the
# same bytes on every run (on the same machine and OpenBLAS build). About 1-1.5 min on one core.
#   scripts/train-closed-loop-friction.sh      (ROBOEST=path/to/roboest, default build/roboest)
set -euo pipefail
export LC_ALL=C OPENBLAS_NUM_THREADS=1
cd "$(dirname "$0")/.."
roboest=${ROBOEST:-build/roboest}
/usr/bin/python3 scripts/make-closed-loop-configs.py
mkdir -p build/closed_loop
"$roboest" simulate configs/closed_loop/humanoid_balance_train.json -o build/closed_loop/humanoid_balance_train.mat \
    --force -q
"$roboest" train-friction configs/closed_loop/friction_spec.json -o configs/closed_loop/friction_pinn.json --force -q
