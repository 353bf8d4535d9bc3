#!/usr/bin/env python3
"""Baseline for the reader benchmark: read every channel's data and timestamps of a robot-logger v7.3
file into memory with h5py. Prints 'seconds peak_rss_bytes data_bytes'."""
import resource
import sys
import time

import h5py


def main():
    t0 = time.perf_counter()
    arrays = []
    with h5py.File(sys.argv[1], "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name.split("/")[-1] in ("data", "timestamps") \
                    and not name.startswith("#refs#"):
                arrays.append(obj[()])
        f["robot_logger_device"].visititems(visit)
    seconds = time.perf_counter() - t0
    nbytes = sum(a.nbytes for a in arrays)
    print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, nbytes)


if __name__ == "__main__":
    main()
