#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time on a corpus seeded from the shipped configs and the
# test fixtures (written by independent writers at test time). A crash fails the run and leaves the
# reproducer in BUILD/fuzz-artifacts/.
# Usage: scripts/fuzz-smoke.sh BUILD_DIR SECONDS
set -euo pipefail
build=$1
seconds=$2
mkdir -p "$build/corpus/config" "$build/corpus/log" "$build/corpus/h5" "$build/corpus/urdf" "$build/fuzz-artifacts"
cp configs/*.json "$build/corpus/config/" 2>/dev/null || true
find "$build/fixtures" -maxdepth 1 -type f -size -256k -exec cp {} "$build/corpus/log/" \;
cp datasets/*.mat "$build/corpus/log/" 2>/dev/null || true
# the HDF5 seeds: v7.3 .mat and .h5 files (their signature at byte 0 or 512)
for f in "$build"/corpus/log/*; do
  if [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' ')" = 894844460d0a1a0a ] ||
     [ "$(tail -c +513 "$f" | head -c 8 | od -An -tx1 | tr -d ' ')" = 894844460d0a1a0a ]; then
    cp "$f" "$build/corpus/h5/"
  fi
done
cp datasets/*.urdf ../shared/models/four_joints_*.urdf "$build/corpus/urdf/" 2>/dev/null || true
export ASAN_OPTIONS=detect_leaks=1
for target in config log_read h5_read urdf; do
  corpus="$build/corpus/${target%_read}"
  # h5_read: a child that loops in libhdf5 is stopped by its CPU time limit (10 s on these small files)
  timeout=10
  [ "$target" = h5_read ] && timeout=60
  echo "fuzzing $target for ${seconds}s on $(ls "$corpus" | wc -l) seeds"
  "$build/fuzz_$target" -max_total_time="$seconds" -timeout=$timeout -rss_limit_mb=4096 \
    -artifact_prefix="$build/fuzz-artifacts/$target-" -print_final_stats=1 "$corpus" 2>"$build/fuzz-$target.log" \
    || { tail -40 "$build/fuzz-$target.log"; exit 1; }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz-$target.log"
done
echo "fuzz-smoke: no crash"
