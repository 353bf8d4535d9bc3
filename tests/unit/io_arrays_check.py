"""Independent check of roboest's named-array writer (run by tests/unit/test_io_arrays.c).

    io_arrays_check.py h5|mat73|mat5|csv PATH [--csv-set]

Loads PATH with h5py (.h5; MATLAB v7.3 as MATLAB lays it out), scipy.io.loadmat (MATLAB v5) or the
csv module and compares it with the set the C test writes (the same formulas below, so values compare
bit for bit; --csv-set: the smaller set the CSV test writes, every array with the same rows).
Exits 0 when everything matches, prints the first mismatch and exits 1 otherwise.
"""
import csv
import math
import sys

import numpy as np

ATTRS = {"roboest_version": "0.1.0", "model": "arm.urdf", "note": "\u0394\u03b8 ok"}
SPECIAL = [[0.1, math.nan], [1.0 / 3.0, -math.inf], [-2.5e-300, 1e300], [-0.0, 5.0]]


def val(c, shape):
    """Element (i, j, k) = 1000 c + 100 i + 10 j + k + 0.5, as the C test fills it."""
    idx = np.indices(shape, dtype=float)
    v = 1000.0 * c + 100.0 * idx[0] + 0.5
    if len(shape) > 1:
        v = v + 10.0 * idx[1]
    if len(shape) > 2:
        v = v + idx[2]
    return v


def expected(csv_set):
    """name -> numpy array with the array's own dimensions (rows first)."""
    d = {"v": val(1, (4,)), "q": val(2, (4, 3)), "M": val(3, (4, 3, 2)), "c1": val(4, (4, 1)),
         "x": np.array(SPECIAL)}
    if not csv_set:
        d.update({"w": val(5, (2, 5)), "E": np.zeros((0, 3)), "T1": val(6, (4, 3, 1)), "one": val(7, (1, 3, 2)),
                  "r1": val(8, (1, 3))})
    return d


class Mismatch(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Mismatch(what)


def same_bits(got, want, what):
    got = np.asarray(got, dtype=np.float64)
    check(got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}")
    check(got.tobytes() == np.ascontiguousarray(want, dtype=np.float64).tobytes(), f"{what}: values {got!r}")


def matlab_shape(arr):
    return (arr.shape[0], 1) if arr.ndim == 1 else arr.shape


def as_str(x):
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


def check_h5(path, csv_set):
    import h5py
    want = expected(csv_set)
    with h5py.File(path, "r") as f:
        check(sorted(f.keys()) == sorted(want), f"datasets {sorted(f.keys())}")
        for name, arr in want.items():
            ds = f[name]
            check(ds.dtype == np.float64, f"{name}: dtype {ds.dtype}")
            same_bits(ds[()], arr, name)
        check({k: as_str(v) for k, v in f.attrs.items()} == ATTRS, f"attributes {dict(f.attrs)}")


def mat73_str(obj):
    check(as_str(obj.attrs["MATLAB_class"]) == "char", f"{obj.name}: not char")
    return obj[()].astype(np.uint16).ravel().tobytes().decode("utf-16-le")


def check_mat73(path, csv_set):
    import h5py
    with open(path, "rb") as raw:
        head = raw.read(128)
    check(head.startswith(b"MATLAB 7.3 MAT-file"), "MATLAB header text")
    check(head[124:128] == b"\x00\x02IM", "MATLAB header version/endian")
    want = expected(csv_set)
    with h5py.File(path, "r") as f:
        check(sorted(f.keys()) == sorted(list(want) + ["roboest_provenance"]), f"variables {sorted(f.keys())}")
        for name, arr in want.items():
            ds = f[name]
            check(as_str(ds.attrs["MATLAB_class"]) == "double", f"{name}: MATLAB_class")
            mshape = matlab_shape(arr)
            if arr.size == 0:
                check(int(ds.attrs["MATLAB_empty"]) == 1, f"{name}: MATLAB_empty")
                check(tuple(ds[()].tolist()) == mshape, f"{name}: empty dims {ds[()]}")
                continue
            check(ds.shape == mshape[::-1], f"{name}: HDF5 shape {ds.shape}, want MATLAB {mshape} reversed")
            same_bits(ds[()].T, arr.reshape(mshape), name)  # .T reverses every axis: MATLAB's order
        prov = f["roboest_provenance"]
        check(as_str(prov.attrs["MATLAB_class"]) == "struct", "roboest_provenance class")
        check({k: mat73_str(prov[k]) for k in prov} == ATTRS, "roboest_provenance fields")


def check_mat5(path, csv_set):
    import scipy.io
    with open(path, "rb") as raw:
        check(raw.read(19) == b"MATLAB 5.0 MAT-file", "MATLAB header text")
    m = scipy.io.loadmat(path)
    want = expected(csv_set)
    names = sorted(k for k in m if not k.startswith("__"))
    check(names == sorted(list(want) + ["roboest_provenance"]), f"variables {names}")
    for name, arr in want.items():
        same_bits(m[name], arr.reshape(matlab_shape(arr)), name)
    prov = m["roboest_provenance"][0, 0]
    check({k: str(prov[k].ravel()[0]) for k in prov.dtype.names} == ATTRS, "roboest_provenance fields")


def check_csv(path, csv_set):
    with open(path, newline="", encoding="utf-8") as f:
        lines = f.read().split("\n")
    comments = [l for l in lines if l.startswith("# ")]
    check(comments == [f"# {k}: {v}" for k, v in ATTRS.items()], f"comment lines {comments}")
    rows = list(csv.reader(lines[len(comments):-1]))
    want = expected(csv_set)
    header, columns = [], []
    for name, arr in want.items():
        flat = arr.reshape(arr.shape[0], -1)
        if arr.ndim == 1:
            header.append(name)
        elif arr.ndim == 2:
            header += [f"{name}:{j}" for j in range(arr.shape[1])]
        else:
            header += [f"{name}:{j}:{k}" for j in range(arr.shape[1]) for k in range(arr.shape[2])]
        columns.append(flat)
    check(rows[0] == header, f"header {rows[0]}")
    table = np.hstack(columns)
    check(len(rows) == 1 + table.shape[0], f"{len(rows) - 1} rows")
    same_bits(np.array([[float(s) for s in r] for r in rows[1:]]), table, "rows")


def main():
    mode, path = sys.argv[1], sys.argv[2]
    csv_set = "--csv-set" in sys.argv[3:]
    try:
        {"h5": check_h5, "mat73": check_mat73, "mat5": check_mat5, "csv": check_csv}[mode](path, csv_set)
    except Mismatch as e:
        print(f"{mode} {path}: {e}")
        return 1
    print(f"{mode} {path}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
