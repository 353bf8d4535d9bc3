#!/usr/bin/env bash
# make bench-mpi: roboest compare on 1 and 2 MPI ranks (Open MPI's mpirun), side by side.
#
#   scripts/bench-mpi.sh BUILD [LOGS] [SECONDS] [REPEATS]
#
# Generates LOGS (8) humanoid balancing logs of SECONDS (60) each with `roboest simulate` into a temporary
# folder (never into datasets/), then times `mpirun -np 1` and `-np 2` of one suite (the humanoid UKF without
# friction on every log), alternating, REPEATS (2) times each, best kept; checks that both reports have the
# same bytes; prints the efficiency T1 / (2 T2), the per-run cost, the coordination overhead per run and a
# projection for 1,000 logs on 64 nodes from those measured figures. Threads in a rank: `mpirun --bind-to none -np 1
# --threads 2` (Open MPI binds a rank to one core by default) is timed beside them (one rank running two runs at once), its efficiency T1 / (2 T) printed too. Timing on a
# shared machine is noisy: the load average is printed with the figures.
set -euo pipefail
BUILD=${1:-build}
LOGS=${2:-8}
SECONDS_PER_LOG=${3:-60}
REPEATS=${4:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROBOEST=$(cd "$BUILD" && pwd)/roboest
command -v mpirun >/dev/null || { echo "bench-mpi: mpirun not found (make deps installs openmpi-bin)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/roboest_bench_mpi_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

echo "bench-mpi: simulating $LOGS humanoid logs of $SECONDS_PER_LOG s into $TMP"
for i in $(seq 1 "$LOGS"); do
  python3 - "$ROOT" "$TMP/scenario_$i.json" "$SECONDS_PER_LOG" "$i" <<'EOF'
import json, sys
root, out, secs, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
s = json.load(open(root + '/configs/scenarios/humanoid_balance.json'))
s['model']['urdf'] = root + '/datasets/humanoid_lower_body.urdf'
s['duration'] = secs
s['seed'] = seed
json.dump(s, open(out, 'w'))
EOF
  "$ROBOEST" simulate "$TMP/scenario_$i.json" -o "$TMP/log_$i.h5" -q
done
LOG_LIST=$(for i in $(seq 1 "$LOGS"); do printf '"log_%d.h5",' "$i"; done)
cat > "$TMP/suite.json" <<EOF
{"name": "bench-mpi",
 "variants": [{"name": "ukf_nofric", "pipeline": "$ROOT/configs/paper/humanoid_ukf_nofric.json", "estimate": "tau_hat"}],
 "logs": [${LOG_LIST%,}],
 "reference": "truth/joints/torques",
 "joints": ["r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"]}
EOF
cat > "$TMP/one.json" <<EOF
{"name": "bench-mpi-startup",
 "variants": [{"name": "ukf_nofric", "pipeline": "$ROOT/configs/paper/humanoid_ukf_nofric.json", "estimate": "tau_hat"}],
 "logs": ["log_1.h5"], "window": [1, 1.5],
 "reference": "truth/joints/torques", "joints": ["r_knee"]}
EOF

# wall and CPU seconds (user + sys of every process it started: mpirun's ranks are its children) of a command
timed() {
  python3 -c '
import os, resource, subprocess, sys, time
t0 = time.monotonic(); c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.monotonic() - t0, (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime))' "$@"
}
best() { python3 -c "import sys; a = sys.argv[1].split(); b = sys.argv[2].split(); print(*(a if float(a[0]) <= float(b[0]) else b))" "$1" "$2"; }
bestp="1e9 0" best1="1e9 0" best2="1e9 0" bests="1e9 0" best1t="1e9 0"
for r in $(seq 1 "$REPEATS"); do
  bestp=$(best "$bestp" "$(timed "$ROBOEST" compare "$TMP/suite.json" -o "$TMP/plain" -q --force --threads 1)")
  for n in 1 2; do
    rm -rf "$TMP/np$n"
    t=$(timed "${MPIRUN[@]}" -np $n "$ROBOEST" compare "$TMP/suite.json" -o "$TMP/np$n" -q)
    if [ $n = 1 ]; then best1=$(best "$best1" "$t"); else best2=$(best "$best2" "$t"); fi
  done
  rm -rf "$TMP/np1t2"
  best1t=$(best "$best1t" "$(timed "${MPIRUN[@]}" --bind-to none -np 1 "$ROBOEST" compare "$TMP/suite.json" -o "$TMP/np1t2" -q --threads 2)")
  rm -rf "$TMP/s"
  bests=$(best "$bests" "$(timed "${MPIRUN[@]}" -np 2 "$ROBOEST" compare "$TMP/one.json" -o "$TMP/s" -q)")
done
for f in report.md report.json report.csv rmse_box.svg magnitude_box.svg; do
  cmp -s "$TMP/np1/$f" "$TMP/np2/$f" && cmp -s "$TMP/plain/$f" "$TMP/np2/$f" && cmp -s "$TMP/plain/$f" "$TMP/np1t2/$f" ||
    { echo "bench-mpi: $f differs between the plain run and the ranks" >&2; exit 1; }
done

python3 - "$LOGS" "$SECONDS_PER_LOG" $bestp $best1 $best2 $bests $best1t "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
import sys
n, secs = int(sys.argv[1]), float(sys.argv[2])
tp, cp, t1, c1, t2, c2, ts, cs, t1t, c1t = map(float, sys.argv[3:13])
load = sys.argv[13]
eff = t1 / (2 * t2)
cost = cp / n                  # CPU seconds of one run, one thread, no MPI (wall time is shared with other users)
overhead = (c2 - c1) / n       # CPU seconds per run that a second rank adds: messages, polling, its MPI start-up
print(f"bench-mpi: {n} runs (humanoid UKF, {secs:g} s logs at 1 kHz), best of the repeats; load average {load}")
print(f"  plain (no MPI, 1 thread)  wall {tp:7.2f} s  CPU {cp:7.2f} s   per run {cost:.3f} CPU s "
      f"({cost / secs * 1000:.1f} ms per s of log)")
print(f"  mpirun -np 1              wall {t1:7.2f} s  CPU {c1:7.2f} s")
print(f"  mpirun -np 2              wall {t2:7.2f} s  CPU {c2:7.2f} s   speed-up {t1 / t2:.2f}, "
      f"efficiency T1/(2 T2) = {eff:.2f}")
print(f"  -np 1 --threads 2 (unbound) wall {t1t:7.2f} s  CPU {c1t:7.2f} s   speed-up {t1 / t1t:.2f}, "
      f"efficiency T1/(2 T) = {t1 / (2 * t1t):.2f} (threads in a rank)")
print(f"  mpirun -np 2, tiny suite  wall {ts:7.2f} s  CPU {cs:7.2f} s   (MPI start-up and finalize, once per job)")
print(f"  coordination overhead     {overhead:+.3f} CPU s per run ((CPU(np 2) - CPU(np 1)) / runs, the second "
      f"rank's start-up included)")
print("  reports: same bytes for the plain run, 1 and 2 ranks, 1 rank x 2 threads")
logs, nodes, cores = 1000, 64, 32
ranks = nodes * cores
for hours in (secs / 3600, 1.0):
    per_run = cost * hours * 3600 / secs
    runs_per_rank = -(-logs // ranks)
    t = runs_per_rank * (per_run + max(overhead, 0.0)) + ts
    serial = logs * per_run
    print(f"projection: {logs} logs of {hours * 60:g} min, one variant, {nodes} nodes x {cores} ranks: "
          f"{runs_per_rank} run(s) per rank -> about {t:.1f} s (one core: {serial / 3600:.1f} h); "
          f"rank 0 receives {logs} results of a few kB each")
EOF
