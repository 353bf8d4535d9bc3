#!/usr/bin/env bash
# Regenerates the simulated robot logs of datasets/ byte for byte: one `roboest simulate` run per
# scenario in configs/scenarios/datasets/ (datasets/<scenario name>.mat, robot-logger MATLAB v7.3 with
# the truth under truth/), then datasets/SHA256SUMS. A test runs this into a temporary folder and
# checks the files and their checksums against the shipped ones.
#   scripts/make-datasets.sh [OUT_DIR]     (default datasets; ROBOEST=path/to/roboest, default build/roboest)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out=${1:-datasets}
roboest=${ROBOEST:-build/roboest}
mkdir -p "$out"
names=()
for scenario in configs/scenarios/datasets/*.json; do
  name=$(basename "$scenario" .json)
  "$roboest" simulate "$scenario" -o "$out/$name.mat" --force -q
  names+=("$name.mat")
done
(cd "$out" && LC_ALL=C sha256sum "${names[@]}" > SHA256SUMS)
