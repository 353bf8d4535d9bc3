#!/usr/bin/env bash
# Fails when a test log shows a sanitizer or valgrind report. Criterion runs each test in a worker
# process and counts it passed from its assertions, before LeakSanitizer or valgrind report at the
# worker's exit, so those reports must be caught in the output.
set -euo pipefail
log=$1
if grep -nE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|definitely lost: [1-9]|ERROR SUMMARY: [1-9]|Invalid (read|write)|uninitialised" "$log" | head -20; then
  echo "sanitizer or valgrind errors above (full log: $log)"
  exit 1
fi
