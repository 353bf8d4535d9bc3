#!/usr/bin/env python3
"""Writes a large robot-logger MATLAB v7.3 file with h5py, laid out as MATLAB (and the logger, through
libmatio) lays it out: 512-byte user block with the MATLAB header, root struct with MATLAB_class and
MATLAB_fields attributes, channel structs with data (HDF5 dims T x 1 x n), timestamps, elements_names as
references into #refs#. Usage: bench_make_log.py OUT.mat [MEGABYTES]. Deterministic (seeded)."""
import sys

import h5py
import numpy as np

REF_DTYPE = h5py.special_dtype(ref=h5py.Reference)


def set_class(obj, cls):
    obj.attrs.create("MATLAB_class", np.bytes_(cls), dtype=h5py.string_dtype("ascii", len(cls) + 1))


def set_fields(group, names):
    vlen = h5py.vlen_dtype(np.dtype("S1"))
    arr = np.empty(len(names), dtype=object)
    for i, n in enumerate(names):
        arr[i] = np.array([c.encode() for c in n], dtype="S1")
    group.attrs.create("MATLAB_fields", arr, dtype=vlen)


class Refs:
    def __init__(self, f):
        self.group = f.create_group("#refs#")
        self.count = 0

    def char(self, text):
        name = "r%d" % self.count
        self.count += 1
        codes = np.array([ord(c) for c in text], dtype=np.uint16).reshape(-1, 1)
        ds = self.group.create_dataset(name, data=codes)
        set_class(ds, "char")
        ds.attrs.create("MATLAB_int_decode", np.int32(2))
        return ds.ref


def cell_of_strings(group, name, refs, strings):
    data = np.empty((1, len(strings)), dtype=REF_DTYPE)  # MATLAB n x 1 seen reversed
    for i, s in enumerate(strings):
        data[0, i] = refs.char(s)
    ds = group.create_dataset(name, data=data)
    set_class(ds, "cell")


def channel(parent, name, refs, timestamps, values, elements):
    g = parent.create_group(name)
    set_class(g, "struct")
    set_fields(g, ["data", "elements_names", "timestamps"])
    n = values.shape[1]
    ds = g.create_dataset("data", data=values.reshape(values.shape[0], 1, n))  # MATLAB n x 1 x T
    set_class(ds, "double")
    ts = g.create_dataset("timestamps", data=timestamps.reshape(1, -1))  # MATLAB T x 1
    set_class(ts, "double")
    cell_of_strings(g, "elements_names", refs, elements)


def main():
    out = sys.argv[1]
    megabytes = float(sys.argv[2]) if len(sys.argv) > 2 else 500.0
    rng = np.random.default_rng(1)
    joints = ["joint_%02d" % i for i in range(32)]
    layout = [("joints_state", q, 32) for q in ("positions", "velocities", "accelerations", "torques")]
    layout += [("motors_state", q, 32) for q in ("positions", "velocities", "currents")]
    layout += [("FTs", "ft_%d" % i, 6) for i in range(6)]
    layout += [(kind, "imu_%d" % i, 3) for kind in ("accelerometers", "gyros", "orientations") for i in range(4)]
    per_sample = sum(n for _, _, n in layout) * 8 + 8 * len(layout)
    samples = int(megabytes * 1e6 / per_sample)
    with h5py.File(out, "w", userblock_size=512, libver="earliest") as f:
        refs = Refs(f)
        root = f.create_group("robot_logger_device")
        set_class(root, "struct")
        groups = {}
        for top, leaf, n in layout:
            if top not in groups:
                groups[top] = root.create_group(top)
                set_class(groups[top], "struct")
            t = 1763726400.0 + np.arange(samples) * 1e-3
            values = rng.standard_normal((samples, n))
            names = joints if n == 32 else ["e%d" % i for i in range(n)]
            channel(groups[top], leaf, refs, t, values, names)
        for top, g in groups.items():
            set_fields(g, sorted({leaf for t2, leaf, _ in layout if t2 == top}))
        set_fields(root, sorted(groups))
    header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Sat Nov 21 00:00:00 2026 HDF5 schema 1.00 ."
    header = header.ljust(116, b" ") + b"\0" * 8 + b"\x00\x02" + b"IM"
    with open(out, "r+b") as f:
        f.write(header)
    print(samples)


if __name__ == "__main__":
    main()
