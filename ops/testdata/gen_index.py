"""numpy reference cases for numpy-style indexing and scatter updates
(index.go, scatter.go). Run with /usr/bin/python3 from anywhere; writes
index.json.

Ops:
  index: a[idx] (numpy's basic and advanced indexing);
  at_set, at_add, at_mul, at_max, at_min: a copy of a with a[idx] = v,
    np.add.at, np.multiply.at, np.maximum.at, np.minimum.at;
  gather, scatter_add, scatter_max, scatter_min, scatter_prod, scatter:
    MLX's gather and scatter (params axes, slice_sizes), computed here
    with explicit loops over numpy's ufunc.at;
  take_flat: np.take without an axis.
The index param is a list of items: {"int": n}, {"range": [start, stop,
step]} (null for an omitted part), "newaxis", "ellipsis", {"array": k}
(inputs[k]). Inputs are a, then the index arrays, then the values.
"""
import itertools

import numpy as np

from refgen import case, enc, write

ALL = ["float32", "float64", "int32", "float16", "bool", "bfloat16", "uint8", "int64", "complex64",
       "int8", "int16", "uint16", "uint32", "uint64"]
INDEX_DTYPES = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
ORDERED = [d for d in ALL if d != "complex64"]
rng = np.random.default_rng(20261202)


def make(shape, dtype, lo=-8, hi=8):
    """Values every dtype holds exactly: quarters for floats, small
    integers (with repeats) otherwise."""
    n = int(np.prod(shape, dtype=np.int64))
    q = rng.integers(lo * 4, hi * 4, size=n)
    if dtype == "bool":
        v = q % 3 == 0
    elif dtype in ("uint8", "uint16", "uint32", "uint64"):
        v = (q % 50 + 50).astype(dtype)
    elif dtype in ("int8", "int16", "int32", "int64"):
        v = (q // 4).astype(dtype)
    elif dtype == "complex64":
        v = (q / 4 + 1j * rng.integers(-8, 8, size=n) / 2).astype(np.complex64)
    elif dtype == "bfloat16":
        v = (q / 4).astype(np.float32)
    else:
        v = (q / 4).astype(dtype)
    return v.reshape(shape)


def e(x, dtype):
    return enc(x, "bfloat16") if dtype == "bfloat16" else enc(x)


cases = []


def spec(items, arrays):
    """The JSON index and the Python one for items, where an np.ndarray
    item becomes {"array": k}."""
    js, py = [], []
    for it in items:
        if it is None:
            js.append("newaxis")
            py.append(None)
        elif it is Ellipsis:
            js.append("ellipsis")
            py.append(Ellipsis)
        elif isinstance(it, slice):
            js.append({"range": [it.start, it.stop, it.step]})
            py.append(it)
        elif isinstance(it, np.ndarray):
            js.append({"array": 1 + len(arrays)})
            arrays.append(it)
            py.append(it)
        else:
            js.append({"int": int(it)})
            py.append(int(it))
    return js, tuple(py)


I32 = lambda *v: np.array(v, np.int32)  # noqa: E731
I64 = lambda *v: np.array(v, np.int64)  # noqa: E731

# (name, shape, items)
INDEX = [
    ("int", (3, 4), [1]),
    ("negative int", (3, 4), [-1, -2]),
    ("0-d result", (3, 4), [2, 3]),
    ("range step", (5, 6), [slice(1, 5, 2)]),
    ("negative step", (5, 6), [slice(None, None, -1), slice(4, 0, -2)]),
    ("empty range", (5, 6), [slice(3, 1)]),
    ("newaxis", (3, 4), [None, 1, None, slice(None, None, 2)]),
    ("ellipsis", (2, 3, 4), [Ellipsis, 1]),
    ("ellipsis middle", (2, 3, 4, 5), [0, Ellipsis, slice(1, 3)]),
    ("0-d array", (), [Ellipsis]),
    ("0-d newaxis", (), [None]),
    ("array rows", (4, 5), [I32(3, 0, 3, -1)]),
    ("array cols", (4, 5), [slice(None), I64(4, 0, 1)]),
    ("uint8 array", (4, 5), [np.array([1, 2], np.uint8)]),
    ("2-D array", (4, 5), [np.array([[0, 1], [3, -2]], np.int32)]),
    ("adjacent pair", (3, 4, 5), [slice(None), I32(0, 2, 1), I32(4, 0, 3)]),
    ("adjacent broadcast", (3, 4, 5), [slice(1, None), np.array([[0], [3]], np.int32), I32(1, 2, 4)]),
    ("separated pair", (3, 4, 5), [I32(0, 2), slice(None), I32(4, 1)]),
    ("separated by int", (3, 4, 5, 2), [I32(0, 2), slice(None, None, -1), 1, I32(1, 0)]),
    ("int with array adjacent", (3, 4, 5), [slice(None), 2, I32(0, 4)]),
    ("int with array separated", (3, 4, 5), [0, slice(None), I32(1, 2, 3)]),
    ("array then newaxis", (3, 4), [I32(2, 0), None, slice(None)]),
    ("newaxis between arrays", (3, 4), [I32(2, 0), None, I32(1, 3)]),
    ("ellipsis between arrays", (3, 4, 5), [I32(2, 0), Ellipsis, I32(1, 3)]),
    ("empty ellipsis between arrays", (3, 4), [I32(2, 0), Ellipsis, I32(1, 3)]),
    ("0-d index array", (3, 4), [np.array(2, np.int64), slice(None, 3)]),
    ("empty index array", (3, 4), [np.zeros((0,), np.int32)]),
    ("empty axis range", (0, 3), [slice(None), I32(1, 2)]),
    ("all arrays", (3, 4), [I32(0, 1, 2), I32(3, 2, 1)]),
]

for name, shape, items in INDEX:
    for dt in ALL:
        if dt not in ("float32", "int32") and name not in ("array rows", "separated pair", "newaxis"):
            continue
        a = make(shape, dt)
        arrays = []
        js, py = spec(items, arrays)
        want = a[py]
        ins = [e(a, dt)] + [enc(x) for x in arrays]
        cases.append(case("index %s %s" % (dt, name), "index", ins, [e(want, dt)], index=js))

# (name, shape, items, values shape); duplicates everywhere.
AT = [
    ("rows dup", (4, 3), [I32(1, 3, 1, 1)], (4, 3)),
    ("scalar value", (4, 3), [I32(0, 0, 2)], ()),
    ("1-D dup", (6,), [I64(5, 0, 5, -1, 2)], (5,)),
    ("pair dup", (3, 4), [I32(0, 2, 0), I32(1, 3, 1)], (3,)),
    ("range", (5, 4), [slice(1, None, 2)], (2, 4)),
    ("separated", (3, 4, 2), [I32(0, 2, 0), slice(None), 1], (3, 4)),
    ("adjacent cols", (3, 4, 2), [slice(None), I32(3, 3, 0)], (3, 3, 2)),
    ("newaxis", (3, 4), [I32(1, 1), None], (2, 1, 4)),
    ("negative step", (5,), [slice(None, None, -2)], (3,)),
    ("int", (3, 4), [2], (4,)),
    ("empty", (3, 4), [np.zeros((0,), np.int32)], (0, 4)),
]
UFUNC = {"at_add": np.add, "at_mul": np.multiply, "at_max": np.maximum, "at_min": np.minimum}


def at_ref(op, a, py, v):
    out = a.copy()
    if op == "at_set":
        out[py] = v
    elif a.dtype == np.bool_ and op == "at_add":
        np.logical_or.at(out, py, v)
    elif a.dtype == np.bool_ and op == "at_mul":
        np.logical_and.at(out, py, v)
    else:
        UFUNC[op].at(out, py, v)
    return out


for name, shape, items, vshape in AT:
    for op in ["at_set", "at_add", "at_mul", "at_max", "at_min"]:
        for dt in ALL:
            if dt == "complex64" and op in ("at_max", "at_min"):
                continue
            if dt not in ("float32", "int32") and name not in ("rows dup", "pair dup", "separated"):
                continue
            a = make(shape, dt)
            v = make(vshape, dt, -3, 4)
            if op == "at_mul" and dt in ("float16", "bfloat16", "float32", "float64"):
                v = make(vshape, "int32", -2, 3).astype(np.float32 if dt == "bfloat16" else dt)
            arrays = []
            js, py = spec(items, arrays)
            with np.errstate(over="ignore"):
                want = at_ref(op, a, py, v)
            ins = [e(a, dt)] + [enc(x) for x in arrays] + [e(v, dt)]
            cases.append(case("%s %s %s" % (op, dt, name), op, ins, [e(want, dt)], index=js))

# Index arrays of every integer dtype (negative entries where signed),
# alone and beside another dtype.
for it in INDEX_DTYPES:
    a = make((4, 5), "float32")
    signed = np.dtype(it).kind == "i"
    rows = np.array([3, -1, 0, -4] if signed else [3, 1, 0, 3], it)
    cols = np.array([4, 0, 2, 2], it)
    for name, items in [("rows", [rows]), ("pair", [rows, cols.astype(np.int64)])]:
        arrays = []
        js, py = spec(items, arrays)
        cases.append(case("index %s index %s" % (it, name), "index", [enc(a)] + [enc(x) for x in arrays],
                          [enc(a[py])], index=js))
    v = make((4,), "float32", -3, 4)
    arrays = []
    js, py = spec([rows, cols], arrays)
    cases.append(case("at_add %s index" % it, "at_add", [enc(a)] + [enc(x) for x in arrays] + [enc(v)],
                      [enc(at_ref("at_add", a, py, v))], index=js))

# NaN in max/min: numpy's maximum and minimum propagate it.
for op in ["at_max", "at_min"]:
    a = np.array([1, np.nan, 3, 4], np.float32)
    v = np.array([np.nan, 2, 5, -1], np.float32)
    idx = I32(0, 1, 2, 2)
    want = at_ref(op, a, (idx,), v)
    cases.append(case("%s float32 nan" % op, op, [enc(a), enc(idx), enc(v)], [enc(want)], index=[{"array": 1}]))


def mlx_gather(a, idx, axes, sizes):
    b = np.broadcast_arrays(*idx) if idx else []
    bshape = b[0].shape if idx else ()
    out = np.zeros(bshape + tuple(sizes), a.dtype)
    for p in itertools.product(*[range(d) for d in bshape]):
        start = [0] * a.ndim
        for k, ax in enumerate(axes):
            start[ax] = int(b[k][p]) % a.shape[ax]
        sl = tuple(slice(s, s + n) for s, n in zip(start, sizes))
        out[p] = a[sl]
    return out


def mlx_scatter(op, a, idx, upd, axes):
    out = a.copy()
    b = np.broadcast_arrays(*idx)
    bshape = b[0].shape
    sizes = upd.shape[len(bshape):]
    for p in itertools.product(*[range(d) for d in bshape]):
        start = [0] * a.ndim
        for k, ax in enumerate(axes):
            start[ax] = int(b[k][p]) % a.shape[ax]
        sl = tuple(slice(s, s + n) for s, n in zip(start, sizes))
        if op == "scatter":
            out[sl] = upd[p]
        else:
            out[sl] = {"scatter_add": np.add, "scatter_prod": np.multiply, "scatter_max": np.maximum,
                       "scatter_min": np.minimum}[op](out[sl], upd[p])
    return out


GATHER = [
    ("rows", (5, 4), [I32(4, 0, -1)], [0], [1, 4]),
    ("window", (5, 4), [I32(3, 1)], [0], [1, 2]),
    ("two axes", (3, 4, 2), [np.array([[0], [2]], np.int32), I64(1, 3, -1)], [0, 1], [1, 1, 2]),
    ("second axis", (3, 4), [I32(0, 3)], [1], [3, 1]),
    ("no indices", (3, 4), [], [], [2, 2]),
]
for name, shape, idx, axes, sizes in GATHER:
    for dt in ["float32", "int32", "float16", "bool", "complex64", "int8", "uint16", "uint64"]:
        a = make(shape, dt)
        want = mlx_gather(a, idx, axes, sizes)
        cases.append(case("gather %s %s" % (dt, name), "gather", [e(a, dt)] + [enc(x) for x in idx],
                          [e(want, dt)], axes=axes, slice_sizes=sizes))

SCATTER = [
    ("rows dup", (5, 4), [I32(4, 0, 4, -1)], [0], (4, 1, 4)),
    ("window dup", (5, 4), [I32(1, 1)], [0], (2, 1, 3)),
    ("two axes dup", (3, 4, 2), [I32(0, 2, 0), I32(1, 3, 1)], [0, 1], (3, 1, 1, 2)),
]
for name, shape, idx, axes, ushape in SCATTER:
    for op in ["scatter", "scatter_add", "scatter_prod", "scatter_max", "scatter_min"]:
        for dt in ["float32", "int32", "float16", "uint8", "int8", "int16", "uint16", "uint32", "uint64", "int64",
                   "bfloat16", "bool"]:
            if dt == "bool" and op != "scatter":
                continue
            a = make(shape, dt)
            u = make(ushape, dt, -2, 3)
            with np.errstate(over="ignore"):
                want = mlx_scatter(op, a, idx, u, axes)
            cases.append(case("%s %s %s" % (op, dt, name), op, [e(a, dt)] + [enc(x) for x in idx] + [e(u, dt)],
                              [e(want, dt)], axes=axes))

for dt in ALL:
    a = make((3, 4), dt)
    idx = np.array([[11, -1], [0, 5]], np.int32)
    cases.append(case("take_flat %s" % dt, "take_flat", [e(a, dt), enc(idx)], [e(np.take(a, idx), dt)]))

write("index.json", cases)
