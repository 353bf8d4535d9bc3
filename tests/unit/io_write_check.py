"""Independent check of roboest's log writers (run by tests/unit/test_io_write.c).

    io_write_check.py h5|mat73|mat5|csv PATH [--with-empty]

Loads PATH with h5py (.h5, MATLAB v7.3), scipy.io.loadmat (MATLAB v5) or the csv module and
compares it with the log the C test builds (the same formulas below, so values compare exactly).
Exits 0 when everything matches, prints the first mismatch and exits 1 otherwise.
"""
import csv
import math
import sys

import numpy as np

TIME = [0.0, 0.01, 0.025, 0.5, 1.0]
POS_NAMES = ["r_hip_pitch", "\u0394\u03b8_knee", 'a,"b"']
POS_UNITS = ["rad", "", "N m"]
FT_NAMES = ["fx", "fy"]
FT_UNITS = ["N", "N"]
ATTRS = [
    ("yarp_robot_name", "ergoCubSN001"),
    ("description_list", "l_hip_pitch,l_knee,torso_yaw"),
    ("roboest_version", "0.1.0"),
    ("config_sha256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("input file", "log one.mat"),
]
PROVENANCE = {"roboest_version": "0.1.0",
              "config_sha256": ATTRS[3][1],
              "input_file": "log one.mat"}


def pos(t, i):
    special = {(0, 0): 0.1, (1, 2): 1.0 / 3.0, (4, 2): -2.5e-300, (2, 1): math.nan}
    return special.get((t, i), 100.0 * t + i + 0.125 * (i + 1))


def ft(t, i):
    return -(10.0 * t + i) - 0.5


CHANNELS = {
    "joints_state/positions": (POS_NAMES, POS_UNITS, pos),
    "FTs/l_arm_ft": (FT_NAMES, FT_UNITS, ft),
}


class Mismatch(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Mismatch(what)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def expect_matrix(got, fn, n, what):
    """got[t][i] (numpy T x n) against fn(t, i), bit for bit (NaN matches NaN)."""
    check(got.shape == (len(TIME), n), f"{what}: shape {got.shape}")
    for t in range(len(TIME)):
        for i in range(n):
            check(same(float(got[t, i]), fn(t, i)), f"{what}[{t},{i}] = {got[t, i]!r}, want {fn(t, i)!r}")


def expect_time(got, what):
    check(list(map(float, got)) == TIME, f"{what}: {list(got)}")


def as_str(x):
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


# ---- roboest .h5 ------------------------------------------------------------------------------
def check_h5(path, with_empty):
    import h5py
    with h5py.File(path, "r") as f:
        check(as_str(f.attrs["roboest_layout"]) == "channels/1", "roboest_layout")
        for k, v in ATTRS:
            check(as_str(f.attrs[k]) == v, f"attribute {k}")
        for name, (names, units, fn) in CHANNELS.items():
            g = f[name]
            expect_matrix(g["data"][()], fn, len(names), name + "/data")
            expect_time(g["timestamps"][()], name + "/timestamps")
            check([as_str(s) for s in g.attrs["elements_names"]] == names, name + " elements_names")
            check([as_str(s) for s in g.attrs["units_of_measure"]] == units, name + " units_of_measure")
            d = g["data"]
            check(d.chunks is not None and d.compression == "gzip" and d.compression_opts == 4 and d.shuffle,
                  name + ": data not chunked + shuffled + deflated (4)")
        check(list(f["joints_state"].keys()) == ["positions"], "nested groups")
        if with_empty:
            check(f["empty_channel/data"].shape == (0, 2), "empty channel shape")
            check(f["empty_channel/timestamps"].shape == (0,), "empty channel timestamps")


# ---- robot-logger .mat, v7.3 through h5py -----------------------------------------------------
def mat73_str(f, obj):
    check(as_str(obj.attrs["MATLAB_class"]) == "char", f"{obj.name}: not char")
    if "MATLAB_empty" in obj.attrs:
        return ""
    check(int(obj.attrs["MATLAB_int_decode"]) == 2, f"{obj.name}: MATLAB_int_decode")
    units = obj[()].astype(np.uint16).ravel()
    return units.tobytes().decode("utf-16-le")


def mat73_cellstr(f, obj):
    check(as_str(obj.attrs["MATLAB_class"]) == "cell", f"{obj.name}: not cell")
    refs = obj[()]
    check(refs.shape[0] == 1, f"{obj.name}: cell shape {refs.shape} (want n x 1 in MATLAB)")
    return [mat73_str(f, f[r]) for r in refs.ravel()]


def mat73_fields(obj):
    return [b"".join(x).decode() for x in obj.attrs["MATLAB_fields"]]


def check_mat73(path, with_empty):
    import h5py
    with open(path, "rb") as raw:
        head = raw.read(128)
    check(head.startswith(b"MATLAB 7.3 MAT-file"), "MATLAB header text")
    check(head[124:128] == b"\x00\x02IM", "MATLAB header version/endian")
    with h5py.File(path, "r") as f:
        root = f["robot_logger_device"]
        want = ["description_list", "yarp_robot_name", "roboest_provenance", "joints_state", "FTs"]
        if with_empty:
            want.append("empty_channel")
        check(mat73_fields(root) == want, f"root fields {mat73_fields(root)}")
        check(mat73_str(f, root["yarp_robot_name"]) == ATTRS[0][1], "yarp_robot_name")
        check(mat73_cellstr(f, root["description_list"]) == ATTRS[1][1].split(","), "description_list")
        prov = root["roboest_provenance"]
        check({k: mat73_str(f, prov[k]) for k in mat73_fields(prov)} == PROVENANCE, "roboest_provenance")
        for name, (names, units, fn) in CHANNELS.items():
            g = root[name]
            check(mat73_fields(g) == ["data", "dimensions", "elements_names", "units_of_measure", "name",
                                      "timestamps"], name + " fields")
            data = g["data"][()]  # HDF5 shows MATLAB's n x 1 x T reversed: T x 1 x n
            check(data.shape == (len(TIME), 1, len(names)), f"{name}/data shape {data.shape}")
            expect_matrix(data[:, 0, :], fn, len(names), name + "/data")
            ts = g["timestamps"][()]
            check(ts.shape == (1, len(TIME)), f"{name}/timestamps shape {ts.shape} (want T x 1 in MATLAB)")
            expect_time(ts.ravel(), name + "/timestamps")
            check(g["dimensions"][()].ravel().tolist() == [len(names), 1, len(TIME)], name + " dimensions")
            check(mat73_cellstr(f, g["elements_names"]) == names, name + " elements_names")
            check(mat73_cellstr(f, g["units_of_measure"]) == units, name + " units_of_measure")
            check(mat73_str(f, g["name"]) == name.replace("/", "::"), name + " name")
            check(as_str(g["data"].attrs["MATLAB_class"]) == "double", name + " data class")
        if with_empty:
            check(as_str(root["empty_channel"].attrs["MATLAB_class"]) == "struct", "empty channel class")
            check("MATLAB_fields" not in root["empty_channel"].attrs, "empty channel has no fields")


# ---- robot-logger .mat, v5 through scipy ------------------------------------------------------
def mat5_str(x):
    x = np.asarray(x)
    return "" if x.size == 0 else str(x.ravel()[0])


def mat5_cellstr(x):
    x = np.asarray(x)
    check(x.shape[1] == 1, f"cell shape {x.shape} (want n x 1)")
    return [mat5_str(c) for c in x.ravel()]


def check_mat5(path, with_empty):
    import scipy.io
    with open(path, "rb") as raw:
        check(raw.read(19) == b"MATLAB 5.0 MAT-file", "MATLAB header text")
    m = scipy.io.loadmat(path)
    root = m["robot_logger_device"][0, 0]
    want = ("description_list", "yarp_robot_name", "roboest_provenance", "joints_state", "FTs")
    if with_empty:
        want += ("empty_channel",)
    check(root.dtype.names == want, f"root fields {root.dtype.names}")
    check(mat5_str(root["yarp_robot_name"]) == ATTRS[0][1], "yarp_robot_name")
    check(mat5_cellstr(root["description_list"]) == ATTRS[1][1].split(","), "description_list")
    prov = root["roboest_provenance"][0, 0]
    check({k: mat5_str(prov[k]) for k in prov.dtype.names} == PROVENANCE, "roboest_provenance")
    for name, (names, units, fn) in CHANNELS.items():
        a, b = name.split("/")
        g = root[a][0, 0][b][0, 0]
        data = g["data"]
        check(data.shape == (len(names), 1, len(TIME)), f"{name}/data shape {data.shape}")
        expect_matrix(data[:, 0, :].T, fn, len(names), name + "/data")
        check(g["timestamps"].shape == (len(TIME), 1), f"{name}/timestamps shape {g['timestamps'].shape}")
        expect_time(g["timestamps"].ravel(), name + "/timestamps")
        check(g["dimensions"].ravel().tolist() == [len(names), 1, len(TIME)], name + " dimensions")
        check(mat5_cellstr(g["elements_names"]) == names, name + " elements_names")
        check(mat5_cellstr(g["units_of_measure"]) == units, name + " units_of_measure")
        check(mat5_str(g["name"]) == name.replace("/", "::"), name + " name")


# ---- CSV ----------------------------------------------------------------------------------------
def check_csv(path, with_empty):
    with open(path, newline="", encoding="utf-8") as f:
        lines = f.read().split("\n")
    comments = [l for l in lines if l.startswith("# ")]
    check(comments == [f"# {k}: {v}" for k, v in ATTRS], f"comment lines {comments}")
    rows = list(csv.reader(lines[len(comments):-1]))
    header = ["time"]
    for name, (names, units, _) in CHANNELS.items():
        header += [f"{name}:{e}" + (f" [{u}]" if u else "") for e, u in zip(names, units)]
    check(rows[0] == header, f"header {rows[0]}")
    check(len(rows) == 1 + len(TIME), f"{len(rows) - 1} data rows")
    for t, row in enumerate(rows[1:]):
        want = [TIME[t]]
        for _, (names, _, fn) in CHANNELS.items():
            want += [fn(t, i) for i in range(len(names))]
        check(len(row) == len(want), f"row {t}: {len(row)} fields")
        for k, (s, w) in enumerate(zip(row, want)):
            check(same(float(s), w), f"row {t} field {k}: {s!r}, want {w!r}")
            check(s != "nan" or math.isnan(w), f"row {t} field {k}: nan spelling")


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with_empty = "--with-empty" in sys.argv[3:]
    try:
        {"h5": check_h5, "mat73": check_mat73, "mat5": check_mat5, "csv": check_csv}[mode](path, with_empty)
    except Mismatch as e:
        print(f"{mode} {path}: {e}")
        return 1
    print(f"{mode} {path}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
