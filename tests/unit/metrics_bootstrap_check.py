"""Independent numpy computation of the bootstrap interval and the box-plot figures for
test_metrics_compare.c. Input file: line 1 "n B level", line 2 the n values, then B lines of n indices
(the C side's resampling plan). Prints: lo hi q1 median q3 whisker_lo whisker_hi n_outliers."""
import sys

import numpy as np

with open(sys.argv[1]) as f:
    n, B, level = f.readline().split()
    n, B, level = int(n), int(B), float(level)
    x = np.array([float(v) for v in f.readline().split()])
    idx = np.array([[int(v) for v in f.readline().split()] for _ in range(B)])
assert x.shape == (n,) and idx.shape == (B, n)
reps = x[idx].mean(axis=1)
lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])  # numpy's default: linear (type 7)
q1, med, q3 = np.percentile(x, [25, 50, 75])
iqr = q3 - q1
inside = x[(x >= q1 - 1.5 * iqr) & (x <= q3 + 1.5 * iqr)]
outliers = n - inside.size
print("%.17g %.17g %.17g %.17g %.17g %.17g %.17g %d" % (lo, hi, q1, med, q3, inside.min(), inside.max(), outliers))
