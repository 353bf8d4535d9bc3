#!/usr/bin/env bash
# Fails when a test log shows a sanitizer or valgrind report. Criterion runs each test in a worker
# process and counts it passed from its assertions, before LeakSanitizer or valgrind report at the
# worker's exit, so those reports must be caught in the output.
# Then prints how many tests were skipped and which: Criterion 2.4's synthesis line leaves them out; each
# is in the log as "[SKIP] suite::test: reason" (tests/unit/support.c). With RB_TEST_NO_SKIPS=1 (.ci/run,
# where ../shared is present) a skipped test fails the check.
set -euo pipefail
log=$1
if grep -nE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|definitely lost: [1-9]|ERROR SUMMARY: [1-9]|Invalid (read|write)|uninitialised" "$log" | head -20; then
  echo "sanitizer or valgrind errors above (full log: $log)"
  exit 1
fi
# Criterion prints the same line itself under --verbose (coloured on a terminal): one name per test. Its
# "Test is disabled" lines there are the tests --filter left out, which never ran: not counted.
skipped=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | { grep -v ': Test is disabled$' || true; } |
  sed -nE 's/^\[SKIP\] ([^ :]+::[^ :]+): .*/\1/p' | sort -u)
n=$(grep -c . <<<"$skipped" || true)
echo "$n tests skipped${skipped:+: $(paste -sd' ' <<<"$skipped")}"
if [ "$n" -gt 0 ] && [ "${RB_TEST_NO_SKIPS:-0}" = 1 ]; then
  echo "RB_TEST_NO_SKIPS=1: no test may be skipped here (reasons: the [SKIP] lines of $log)"
  exit 1
fi
