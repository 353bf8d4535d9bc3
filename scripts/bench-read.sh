#!/usr/bin/env bash
# Reader benchmark: roboest's rb_log_read against h5py on the same robot-logger v7.3 file, side by side
# in one run (alternating, after one warm-up read each so both see a warm page cache).
# Usage: scripts/bench-read.sh BUILD_DIR [MEGABYTES] [ROUNDS]
set -euo pipefail
build=${1:-build}
mb=${2:-500}
rounds=${3:-5}
log="$build/bench/logger_${mb}mb.mat"
mkdir -p "$build/bench"
if [ ! -f "$log" ]; then
  echo "generating $log with h5py ..." >&2
  /usr/bin/python3 scripts/bench_make_log.py "$log" "$mb" >/dev/null
fi
"$build/bench_read" "$log" >/dev/null
/usr/bin/python3 scripts/bench_read_h5py.py "$log" >/dev/null
: > "$build/bench/read.txt"
for _ in $(seq "$rounds"); do
  echo "roboest $("$build/bench_read" "$log")" >> "$build/bench/read.txt"
  echo "h5py $(/usr/bin/python3 scripts/bench_read_h5py.py "$log")" >> "$build/bench/read.txt"
done
/usr/bin/python3 - "$build/bench/read.txt" "$log" <<'PY'
import os, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(tool, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == tool)
t_rb, t_py = med("roboest", 1), med("h5py", 1)
m_rb, m_py = med("roboest", 2), med("h5py", 2)
data = med("roboest", 3)
print("reader benchmark: %s (%.0f MB on disk, %.0f MB of samples), median of %d rounds"
      % (sys.argv[2], os.path.getsize(sys.argv[2]) / 1e6, data / 1e6, len(rows) // 2))
print("| reader  | time [s] | peak RSS [MB] | time / h5py | peak RSS / data |")
print("|---------|---------:|--------------:|------------:|----------------:|")
print("| roboest | %8.3f | %13.0f | %11.2f | %15.2f |" % (t_rb, m_rb / 1e6, t_rb / t_py, m_rb / data))
print("| h5py    | %8.3f | %13.0f | %11.2f | %15.2f |" % (t_py, m_py / 1e6, 1.0, m_py / data))
print("targets: time / h5py <= 1.3, roboest peak RSS / data <= 1.3")
PY
