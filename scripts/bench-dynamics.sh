#!/usr/bin/env bash
# Dynamics benchmark: roboest (BUILD/bench_dynamics, tests/bench/bench_dynamics.c) on ergoCub beside Orocos KDL 1.5
# (BUILD/bench_kdl, tests/bench/bench_kdl.cpp) and, when BASE_BIN is given, beside the same benchmark source built
# against an older roboest library (make bench-dynamics BASELINE=dir: commit a661b3c's build in dir). The programs
# alternate for ROUNDS rounds; each figure is the median over rounds of the programs' own per-call medians, and
# "speed-up" is before / now from those medians. Prints one Markdown table of live figures; the Pinocchio
# comparison is a separate, recorded reference (not measured by this run). Builds nothing: make the programs
# first. The chain-only URDF of the right leg (tests/kdl/chain_urdf.py) is written to BUILD/bench/ as data.
# Usage: scripts/bench-dynamics.sh BUILD_DIR [ROUNDS] [BATCHES] [BASE_BIN]   (defaults: build 3 31, no baseline)
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
batches=${3:-31}
base_bin=${4:-}
here=$(cd "$(dirname "$0")/.." && pwd)
urdf=${RB_ERGOCUB:-$here/../shared/models/ergoCubSN000.urdf}
[ -f "$urdf" ] || { echo "bench-dynamics.sh: no model $urdf (set RB_ERGOCUB)" >&2; exit 1; }
mkdir -p "$build/bench"
chain="$build/bench/ergocub_right_leg_chain.urdf"
/usr/bin/python3 "$here/tests/kdl/chain_urdf.py" "$urdf" root_link r_sole "$chain"
out="$build/bench/dynamics.txt"
: > "$out"
have_rb=0 have_kdl=0 have_base=0
[ -x "$build/bench_dynamics" ] && have_rb=1 || echo "bench-dynamics.sh: $build/bench_dynamics not built: roboest column empty" >&2
[ -x "$build/bench_kdl" ] && have_kdl=1 || echo "bench-dynamics.sh: $build/bench_kdl not built: KDL columns empty" >&2
if [ -n "$base_bin" ]; then
  [ -x "$base_bin" ] && have_base=1 || { echo "bench-dynamics.sh: no baseline program $base_bin" >&2; exit 1; }
fi
[ $have_rb = 1 ] || [ $have_kdl = 1 ] || exit 1
for r in $(seq "$rounds"); do
  echo "round $r/$rounds ..." >&2
  if [ $have_rb = 1 ]; then "$build/bench_dynamics" "$urdf" "$chain" "$batches" >> "$out"; fi
  # the baseline's lines: variant roboest -> before, roboest_chain -> before_chain
  if [ $have_base = 1 ]; then
    "$base_bin" "$urdf" "$chain" "$batches" | awk '$1 == "#" { print "# baseline:", substr($0, 3); next }
      { sub(/^roboest/, "before", $3); print }' >> "$out"
  fi
  if [ $have_kdl = 1 ]; then "$build/bench_kdl" "$urdf" "$batches" 2>/dev/null >> "$out"; fi
done
/usr/bin/python3 - "$out" "$rounds" "$have_base" <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
notes = []
for line in open(sys.argv[1]):
    w = line.split()
    if not w:
        continue
    if w[0] == "#":
        if line.rstrip() not in notes:
            notes.append(line.rstrip())
        continue
    runs[(w[0], w[1], w[2])].append(float(w[3]))
med = {k: statistics.median(v) for k, v in runs.items()}
have_base = sys.argv[3] == "1"

def get(case, alg, variant):
    return med.get((case, alg, variant))

def fmt(x, digits=2):
    return "-" if x is None else ("%.*f" % (digits, x))

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

cases = [("leg6", "roboest_chain", "right leg 6 DoF, chain (chain-only URDF)"),
         ("leg6", "roboest", "right leg 6 DoF (whole URDF, joint list)"),
         ("fixed32", "roboest", "32 DoF fixed base"),
         ("float38", "roboest", "38 DoF floating base"),
         ("float62", "roboest", "62 DoF floating base (all joints)")]
algs = [("rnea", "RNEA"), ("mass", "mass matrix"), ("aba", "ABA"), ("fd", "FD: mass matrix + Cholesky")]
print("dynamics benchmark: ergoCub, microseconds per call, median of %s rounds (each a median of batches)" % sys.argv[2])
if have_base:
    print("before: the same benchmark built against the baseline library (lines '# baseline' below); speed-up = before / now")
print()
print("| case | algorithm | before us | now us | speed-up | KDL us | KDL/now | KDL merged us | KDL merged/now | goal |")
print("|------|-----------|----------:|-------:|---------:|-------:|--------:|--------------:|---------------:|------|")
missed = checked = 0
for case, variant, label in cases:
    if get(case, "rnea", variant) is None:
        continue
    before_variant = variant.replace("roboest", "before")
    for alg, alg_label in algs:
        rb = get(case, alg, variant)
        before = get(case, alg, before_variant)
        kalg = "mass_by_rnea" if (alg == "mass" and case != "leg6") else alg
        kdl = None if alg in ("aba", "fd") else get(case, kalg, "kdl")
        kdlm = None if alg in ("aba", "fd") else get(case, kalg, "kdl_merged")
        if alg == "mass" and case != "leg6" and kdl is not None:
            alg_label = "mass matrix (KDL: n RNEA calls)"
        goals = []
        if alg in ("rnea", "mass") and rb is not None and kdl is not None:
            need = 1.0 if case == "leg6" else 4.0
            ok = ratio(kdl, rb) >= need
            goals.append("%s KDL/now >= %g" % ("ok" if ok else "MISSED", need))
            missed += not ok
            checked += 1
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, alg_label, fmt(before), fmt(rb), fmt(ratio(before, rb)), fmt(kdl), fmt(ratio(kdl, rb), 1),
            fmt(kdlm), fmt(ratio(kdlm, rb), 1), "; ".join(goals) or "-"))
print()
print("KDL: Orocos KDL 1.5 (Debian) on the tree kdl_parser builds from the URDF (one segment per link, fixed")
print("frames and locked joints included); KDL merged: the same system with fixed segments folded into their")
print("parents (one segment per body). Chain: ChainIdSolver_RNE, ChainDynParam::JntToMass; trees:")
print("TreeIdSolver_RNE, and the mass matrix by n RNE calls (KDL 1.5 has no tree mass-matrix solver).")
print("KDL has no free joint: its 38-DoF floating base is 3 prismatic + 3 revolute virtual joints at the root.")
print("No ABA or FD in KDL's comparison, no 62-DoF case. 32 DoF: legs 12, torso_roll torso_yaw (torso_pitch is")
print("fixed in this URDF), arms 2 x 7, neck 3, camera_tilt; hands locked.")
for n in notes:
    print(n)
print("goals missed: %d of %d checked" % (missed, checked))
print()
print("Recorded reference, NOT measured by this run: Pinocchio 3.7.0 is not built here. Issue 19 records")
print("roboest/Pinocchio time ratios (below 1: roboest faster) measured side by side, thread CPU time, roboest at")
print("commit a661b3c (2026-11-21) with its -O2 flags against Pinocchio 3.7.0 built -O3, on this project's 2-core")
print("machine kind; divide by the speed-up above for an estimate of today's ratio, not a measurement:")
print("  RNEA 0.93 / 0.61 / 0.59 / 0.56, ABA 1.03 / 0.83 / 0.80 / 0.77, mass matrix 1.56 / 1.36 / 1.30 / 1.34,")
print("  FD by mass matrix + Cholesky 1.16 / 1.10 / 1.22 / 1.33   (leg 6 / fixed 32 / floating 38 / floating 62)")
PY
