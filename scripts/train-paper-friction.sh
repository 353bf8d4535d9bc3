#!/usr/bin/env bash
# Regenerates the joint-torque paper's friction models from datasets/leg_pole_free.mat (made by
# scripts/make-datasets.sh): the friction network configs/paper/leg_friction_pinn.json and the SCV
# parameters configs/paper/leg_friction_scv.json (a friction_model stage's params), both fitted by
# `roboest train-friction configs/paper/leg_friction_spec.json`. Seeded: the same log gives the same bytes
# (on the same machine and OpenBLAS build). Also the humanoid's 200 Hz network configs/paper/humanoid_friction_pinn.json
# from datasets/humanoid_balance.mat (configs/paper/humanoid_friction_spec.json). Then the variant pipelines are rewritten from
# scripts/make-paper-configs.py (they embed the SCV parameters).
#   scripts/train-paper-friction.sh      (ROBOEST=path/to/roboest, default build/roboest)
set -euo pipefail
export LC_ALL=C OPENBLAS_NUM_THREADS=1
cd "$(dirname "$0")/.."
roboest=${ROBOEST:-build/roboest}
spec=configs/paper/leg_friction_spec.json
"$roboest" train-friction "$spec" -o configs/paper/leg_friction_pinn.json --force -q
"$roboest" train-friction "$spec" --fit-analytic scv -q | sed -n 's/^ *"params": //p' > configs/paper/leg_friction_scv.json.tmp
test -s configs/paper/leg_friction_scv.json.tmp
mv configs/paper/leg_friction_scv.json.tmp configs/paper/leg_friction_scv.json
# the humanoid experiment runs at the humanoid logs' 200 Hz, which the 1 kHz network rejects (sample period): a
# second network, trained on datasets/humanoid_balance.mat's right leg (about 7 s)
"$roboest" train-friction configs/paper/humanoid_friction_spec.json -o configs/paper/humanoid_friction_pinn.json --force -q
/usr/bin/python3 scripts/make-paper-configs.py
