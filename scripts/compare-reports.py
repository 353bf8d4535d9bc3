#!/usr/bin/env python3
"""Compares the JSON reports two builds wrote (a speed change must leave outputs alone, or change them only below a
relative tolerance): every number of every *.json under DIR_A that DIR_B also has, matched by path and key.
Prints, per file, how many numbers differ (by more than --atol, default 1e-12: the standard deviation of numbers
that are all 0 is 0 or 1e-18) and the largest relative difference with its key; exits 1 when one exceeds --tol
(default 1e-9). Keys that measure time (ending in 'seconds') are skipped.

    scripts/compare-reports.py OLD_BUILD NEW_BUILD [--tol 1e-9] [--atol 1e-12] [SUBDIR...]
e.g. after the same `make demo paper-...` in a worktree of the old commit and in this one:
    scripts/compare-reports.py /tmp/base/build build demo paper paper-001 paper-002 paper-003 paper-004
"""
import argparse
import json
import os
import sys


def walk(a, b, path, out, atol):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k in b and not k.endswith("seconds"):
                walk(a[k], b[k], path + "." + k, out, atol)
    elif isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, "%s[%d]" % (path, i), out, atol)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if abs(a - b) > atol:
            out.append((abs(a - b) / max(abs(a), abs(b)), path, a, b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("subdirs", nargs="*", default=["."])
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--atol", type=float, default=1e-12, help="absolute differences up to this are not counted")
    args = ap.parse_args()
    worst, files = 0.0, 0
    for sub in args.subdirs:
        for root, _, names in os.walk(os.path.join(args.old, sub)):
            for name in sorted(names):
                if not name.endswith(".json"):
                    continue
                a = os.path.join(root, name)
                rel = os.path.relpath(a, args.old)
                b = os.path.join(args.new, rel)
                if not os.path.exists(b):
                    continue
                try:
                    ja, jb = json.load(open(a)), json.load(open(b))
                except ValueError as e:
                    sys.exit("compare-reports: %s: %s" % (rel, e))
                out = []
                walk(ja, jb, "", out, args.atol)
                files += 1
                if out:
                    d, key, x, y = max(out)
                    worst = max(worst, d)
                    print("%s: %d numbers differ, largest %.3g relative at %s (%r -> %r)" % (rel, len(out), d, key, x, y))
                else:
                    print("%s: the same" % rel)
    print("%d files compared; largest relative difference %.3g (tolerance %.3g)" % (files, worst, args.tol))
    sys.exit(1 if worst > args.tol else 0)


if __name__ == "__main__":
    main()
