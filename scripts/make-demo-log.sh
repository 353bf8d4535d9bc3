#!/usr/bin/env bash
# Regenerates datasets/demo_arm.mat byte for byte: the demo signals as CSV, converted by roboest into
# the robot-logger MATLAB v7.3 layout (written through libmatio, as the real logger writes its files).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-datasets/demo_arm.mat}
roboest=${ROBOEST:-build/roboest}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 scripts/demo_signals.py > "$tmp/demo_arm.csv"
"$roboest" convert "$tmp/demo_arm.csv" -o "$out" --format mat --force
