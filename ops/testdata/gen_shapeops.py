"""numpy reference cases for MLX's wider shape, view, window and creation
ops (shapeops.go, window.go, PadMode in tile.go, LinspaceNoEndpoint and
Identity in create.go) and for HadamardTransform (hadamard.go). Run with
/usr/bin/python3 from anywhere; writes shapeops.json.

Ops are named as the Go functions. Params use the Go argument names. A
case with a "bcast" param broadcasts its input to that shape before the
op runs, so the op sees a view with zero strides; its expected values are
numpy's on np.broadcast_to of the input.
"""
import numpy as np

from refgen import case, enc, write

# Every fathom dtype. bfloat16 has no numpy dtype: its cases use float32
# data whose values (small multiples of 1/4) bfloat16 holds exactly,
# labelled "bfloat16"; float results are compared unrounded.
ALL = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
       "float16", "bfloat16", "float32", "float64", "complex64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def make(shape, dtype, seed=0):
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.float64) + seed
    if dtype == "bool":
        v = (i % 3) == 0
    elif dtype in ("int8", "int16", "int32", "int64"):
        v = (i - n // 2).astype(dtype)
    elif dtype in ("uint8", "uint16", "uint32", "uint64"):
        v = (i % 251).astype(dtype)
    elif dtype == "complex64":
        v = (i * 0.5 + 1j * (1 - i * 0.25)).astype(np.complex64)
    elif dtype == "bfloat16":
        v = (i * 0.25 - 2).astype(np.float32)
    else:
        v = (i * 0.5 - 3).astype(dtype)
    return v.reshape(shape)


def e(x, dtype):
    return enc(x, "bfloat16") if dtype == "bfloat16" else enc(x)


cases = []


def add(name, op, dtype, inputs, expected, **params):
    cases.append(case(name, op, [e(x, dtype) for x in inputs], [e(y, dtype) for y in expected], **params))


# Roll: one shift for every axis, or none (flattened).
for dt in ALL:
    x = make((3, 4, 2), dt)
    for shift, axes in [(1, None), (-5, None), (2, [1]), (-1, [-1]), (7, [0, 2]), (3, [1, 1]), (0, [0]),
                        (-13, [-3, -2])]:
        want = np.roll(x, shift, None if axes is None else tuple(axes))
        p = {"shift": shift}
        if axes is not None:
            p["axes"] = axes
        add("roll %s %d %s" % (dt, shift, axes), "Roll", dt, [x], [want], **p)
for dt in ["float32", "int32", "bool", "complex64"]:
    s = make((), dt)
    add("roll 0-d %s" % dt, "Roll", dt, [s], [np.roll(s, 3)], shift=3)
    z = make((2, 0, 3), dt)
    add("roll empty %s" % dt, "Roll", dt, [z], [np.roll(z, 2, (0, 1, 2))], shift=2, axes=[0, 1, 2])
    add("roll empty flat %s" % dt, "Roll", dt, [z], [np.roll(z, 2)], shift=2)
    b = make((3, 1), dt)
    add("roll broadcast %s" % dt, "Roll", dt, [b], [np.roll(np.broadcast_to(b, (3, 4)), (1, -1), (0, 1))],
        shift=1, axes=[0, -1], bcast=[3, 4])
# RollAxes: numpy's tuples of shifts and axes, broadcast against each other.
for dt in ["float32", "int64", "bool", "float16", "bfloat16", "complex64", "uint8", "float64"]:
    x = make((3, 4, 5), dt)
    for shifts, axes in [([1, -2], [0, 2]), ([2, 3, -1], [-1, 0, 1]), ([1, 2], [1, 1]), ([4], [0, 1, 2]),
                         ([1, 2, 3], [2]), ([5, -7], None), ([100, -200], [0, -1])]:
        want = np.roll(x, tuple(shifts), None if axes is None else tuple(axes))
        p = {"shifts": shifts}
        if axes is not None:
            p["axes"] = axes
        add("roll_axes %s %s %s" % (dt, shifts, axes), "RollAxes", dt, [x], [want], **p)
    b = make((1, 4), dt)
    add("roll_axes broadcast %s" % dt, "RollAxes", dt, [b], [np.roll(np.broadcast_to(b, (3, 4)), (2, 1), (0, 1))],
        shifts=[2, 1], axes=[0, 1], bcast=[3, 4])

# Flip.
for dt in ALL:
    x = make((2, 3, 4), dt)
    for axes in [None, [0], [-1], [0, 2], [2, -2], [0, 1, 2]]:
        want = np.flip(x, None if axes is None else tuple(axes))
        p = {} if axes is None else {"axes": axes}
        add("flip %s %s" % (dt, axes), "Flip", dt, [x], [want], **p)
for dt in ["float32", "int32", "bool", "complex64"]:
    s = make((), dt)
    add("flip 0-d %s" % dt, "Flip", dt, [s], [np.flip(s)])
    z = make((0, 3), dt)
    add("flip empty %s" % dt, "Flip", dt, [z], [np.flip(z, 1)], axes=[1])
    b = make((2, 1), dt)
    add("flip broadcast %s" % dt, "Flip", dt, [b], [np.flip(np.broadcast_to(b, (2, 3)))], bcast=[2, 3])

# Meshgrid: any number of vectors, both indexings, sparse and dense.
for dt in ALL:
    xs = [make((3,), dt), make((2,), dt, 5), make((4,), dt, 9)]
    for k in [1, 2, 3]:
        for indexing in ["xy", "ij"]:
            for sparse in [False, True]:
                want = np.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
                add("meshgrid %s %d %s sparse=%s" % (dt, k, indexing, sparse), "Meshgrid", dt, xs[:k], want,
                    indexing=indexing, sparse=sparse)
for dt in ["float32", "int32"]:
    a, m, s = make((2, 2), dt), make((0,), dt), make((), dt)
    for indexing in ["xy", "ij"]:
        add("meshgrid 2-d input, empty, 0-d %s %s" % (dt, indexing), "Meshgrid", dt, [a, m, s],
            np.meshgrid(a, m, s, indexing=indexing), indexing=indexing, sparse=False)
    add("meshgrid none %s" % dt, "Meshgrid", dt, [], [], indexing="xy", sparse=False)
# Meshgrid of vectors of different dtypes keeps each one's.
cases.append(case("meshgrid mixed dtypes", "Meshgrid", [make((2,), "int32"), make((3,), "float16")],
                  np.meshgrid(make((2,), "int32"), make((3,), "float16")), indexing="xy", sparse=False))

# BroadcastArrays.
for dt in ALL:
    a, b, c = make((3, 1), dt), make((4,), dt, 2), make((2, 1, 1), dt, 7)
    add("broadcast_arrays %s" % dt, "BroadcastArrays", dt, [a, b, c], np.broadcast_arrays(a, b, c))
    add("broadcast_arrays one %s" % dt, "BroadcastArrays", dt, [a], np.broadcast_arrays(a))
for dt in ["float32", "bool"]:
    s, z, v = make((), dt), make((0, 1), dt), make((3,), dt)
    add("broadcast_arrays 0-d %s" % dt, "BroadcastArrays", dt, [s, v], np.broadcast_arrays(s, v))
    add("broadcast_arrays empty %s" % dt, "BroadcastArrays", dt, [z, v], np.broadcast_arrays(z, v))
    add("broadcast_arrays none %s" % dt, "BroadcastArrays", dt, [], [])
cases.append(case("broadcast_arrays mixed dtypes", "BroadcastArrays", [make((2, 1), "uint8"), make((3,), "complex64")],
                  np.broadcast_arrays(make((2, 1), "uint8"), make((3,), "complex64"))))

# Unflatten (MLX's: numpy has no function; the result is a reshape).
for dt in ALL:
    x = make((2, 12, 3), dt)
    for axis, shape in [(1, [3, 4]), (-2, [2, -1, 3]), (0, [1, 2]), (2, [3]), (-1, [1, 3, 1]), (1, [-1])]:
        sh = list(x.shape)
        ax = axis % 3
        new = sh[:ax] + shape + sh[ax + 1:]
        add("unflatten %s %d %s" % (dt, axis, shape), "Unflatten", dt, [x], [x.reshape(new)], axis=axis, shape=shape)
for dt in ["float32", "int32", "bool"]:
    z = make((3, 0), dt)
    add("unflatten empty %s" % dt, "Unflatten", dt, [z], [z.reshape(3, 0, 5)], axis=1, shape=[0, 5])
    add("unflatten empty axis of 3 %s" % dt, "Unflatten", dt, [z], [z.reshape(1, 3, 0)], axis=0, shape=[1, -1])
    b = make((4, 1), dt)
    add("unflatten broadcast %s" % dt, "Unflatten", dt, [b], [np.broadcast_to(b, (4, 6)).reshape(4, 2, 3)],
        axis=-1, shape=[2, 3], bcast=[4, 6])


# Unstack (numpy 2's unstack; numpy 1.24 has none, so the slices of
# moveaxis).
def unstack(x, axis):
    return list(np.moveaxis(x, axis, 0))


for dt in ALL:
    x = make((2, 3, 4), dt)
    for axis in [0, 1, 2, -1, -3]:
        add("unstack %s %d" % (dt, axis), "Unstack", dt, [x], unstack(x, axis), axis=axis)
for dt in ["float32", "int32", "bool"]:
    add("unstack 1-d %s" % dt, "Unstack", dt, [make((3,), dt)], unstack(make((3,), dt), 0), axis=0)
    z = make((2, 0), dt)
    add("unstack empty axis %s" % dt, "Unstack", dt, [z], [], axis=1)
    add("unstack empty slices %s" % dt, "Unstack", dt, [z], unstack(z, 0), axis=0)
    b = make((3, 1), dt)
    add("unstack broadcast %s" % dt, "Unstack", dt, [b], unstack(np.broadcast_to(b, (3, 2)), 1), axis=1, bcast=[3, 2])

# AtLeast1D/2D/3D.
for dt in ALL:
    for shape in [(), (3,), (2, 3), (2, 1, 3), (0,), (1, 0, 2, 1)]:
        x = make(shape, dt)
        for op, f in [("AtLeast1D", np.atleast_1d), ("AtLeast2D", np.atleast_2d), ("AtLeast3D", np.atleast_3d)]:
            add("%s %s %s" % (op, dt, list(shape)), op, dt, [x], [f(x)])

# View: a bitcast between dtypes of one size. Inputs are bit patterns that
# every dtype of the size holds (no float NaN, so the float encodings are
# exact); bfloat16 is float32's upper half.
BITS = {1: ["bool", "uint8", "int8"], 2: ["int16", "uint16", "float16", "bfloat16"],
        4: ["int32", "uint32", "float32"], 8: ["int64", "uint64", "float64", "complex64"]}


def bf16_bits_to_f32(u16):
    return np.asarray(np.left_shift(u16.astype(np.uint32), np.uint32(16)), dtype=np.uint32).view(np.float32)


def as_bits(width, n, seed):
    """n bit patterns of width bytes, never a float NaN or infinity."""
    rng = np.random.default_rng(seed)
    if width == 1:
        return rng.integers(0, 2, n).astype(np.uint8)
    if width == 2:
        # sign, exponent 1..29 of float16 and of bfloat16 read 5 bits higher
        return ((rng.integers(0, 2, n) << 15) | (rng.integers(1, 30, n) << 10) | rng.integers(0, 1 << 10, n)).astype(
            np.uint16)
    if width == 4:
        return ((rng.integers(0, 2, n) << 31) | (rng.integers(1, 250, n) << 23) | rng.integers(0, 1 << 23, n)).astype(
            np.uint32)
    # float32's exponent in bits 23-30 keeps float64's off all-ones too
    hi = ((rng.integers(0, 2, n) << 31) | (rng.integers(1, 250, n) << 23) | rng.integers(0, 1 << 23, n)).astype(np.uint64)
    lo = ((rng.integers(0, 2, n) << 31) | (rng.integers(1, 250, n) << 23) | rng.integers(0, 1 << 23, n)).astype(np.uint64)
    return (hi << np.uint64(32)) | lo


def view_as(bits, dt):
    """the bit patterns bits as dtype dt, and the JSON label's values."""
    if dt == "bool":
        return bits.astype(np.bool_)
    if dt == "bfloat16":
        return bf16_bits_to_f32(bits)
    return bits.view(dt)


for width, dts in BITS.items():
    bits = as_bits(width, 12, width).reshape(3, 4)
    for src in dts:
        for dst in dts:
            if dst == "bool" and src != "bool":
                continue
            name = "view %s as %s" % (src, dst)
            add_in = view_as(bits, src)
            want = view_as(bits, dst)
            cases.append(case(name, "View", [e(add_in, src)], [e(want, dst)], dtype=dst))
    z = view_as(as_bits(width, 0, 1).reshape(0, 2), dts[-1])
    cases.append(case("view empty %s as %s" % (dts[-1], dts[1]), "View", [e(z, dts[-1])],
                      [e(view_as(as_bits(width, 0, 1).reshape(0, 2), dts[1]), dts[1])], dtype=dts[1]))
    s = as_bits(width, 1, 3).reshape(())
    cases.append(case("view 0-d %s as %s" % (dts[-1], dts[1]), "View", [e(view_as(s, dts[-1]), dts[-1])],
                      [e(view_as(s, dts[1]), dts[1])], dtype=dts[1]))
b = as_bits(4, 3, 9).reshape(3, 1)
cases.append(case("view broadcast float32 as int32", "View", [e(view_as(b, "float32"), "float32")],
                  [e(np.broadcast_to(view_as(b, "int32"), (3, 5)), "int32")], dtype="int32", bcast=[3, 5]))


# AsStrided: MLX's as_strided over the row-major elements, strides in
# elements; the expected values are gathered by index arithmetic.
def as_strided(x, shape, strides, offset):
    flat = x.reshape(-1)
    idx = np.full(shape, offset, dtype=np.int64)
    for k, (d, s) in enumerate(zip(shape, strides)):
        r = np.arange(d).reshape([-1 if i == k else 1 for i in range(len(shape))])
        idx = idx + r * s
    return flat[idx]


STRIDED = [([3, 3], [2, 1], 1), ([2, 3], [0, -2], 4), ([4], [3], 0), ([2, 2, 2], [4, 2, 1], 0), ([], [], 5),
           ([3, 4], [1, 3], 0), ([12], [-1], 11), ([0, 3], [5, 1], 2), ([5, 2], [2, 1], 2)]
for dt in ALL:
    x = make((3, 4), dt)
    for shape, strides, offset in STRIDED:
        add("as_strided %s %s %s %d" % (dt, shape, strides, offset), "AsStrided", dt, [x],
            [as_strided(x, shape, strides, offset)], shape=shape, strides=strides, offset=offset)
for dt in ["float32", "int64", "bool", "float16", "complex64"]:
    v = make((12,), dt)
    for shape, strides, offset in [([4, 3], [2, 1], 0), ([3, 2], [-3, 5], 6), ([2, 2], [0, 0], 11)]:
        add("as_strided 1-d %s %s %s %d" % (dt, shape, strides, offset), "AsStrided", dt, [v],
            [as_strided(v, shape, strides, offset)], shape=shape, strides=strides, offset=offset)
for dt in ["float32", "int32", "bool"]:
    s = make((), dt)
    add("as_strided 0-d %s" % dt, "AsStrided", dt, [s], [as_strided(s, [3], [0], 0)], shape=[3], strides=[0], offset=0)
    z = make((0, 4), dt)
    add("as_strided empty %s" % dt, "AsStrided", dt, [z], [as_strided(z, [2, 0], [7, 1], 9)[:, :0]],
        shape=[2, 0], strides=[7, 1], offset=9)
    b = make((3, 1), dt)
    add("as_strided broadcast %s" % dt, "AsStrided", dt, [b], [as_strided(np.broadcast_to(b, (3, 2)), [2, 2], [3, 1], 1)],
        shape=[2, 2], strides=[3, 1], offset=1, bcast=[3, 2])

# HadamardTransform: scale·H·x along the last axis, H the Sylvester
# matrix built here, computed in float64.


def sylvester(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def hadamard(x, scale=None):
    x = np.asarray(x)
    n = x.shape[-1] if x.ndim else 1
    if scale is None:
        scale = 1 / np.sqrt(n)
    h = sylvester(n)
    y = (x.astype(np.float64).reshape(-1, n) @ h.T) * scale
    return y.reshape(x.shape)


def hadamard_in(shape, dt, seed):
    """inputs in [-1, 1) on a grid of 1/64, which every float dtype holds."""
    n = int(np.prod(shape, dtype=np.int64))
    v = ((np.arange(n) * 37 + seed * 11) % 128 - 64) / 64.0
    return v.astype(np.float32 if dt == "bfloat16" else dt).reshape(shape)


for dt in FLOATS:
    for shape in [(4, 8), (3, 2, 16), (1,), (2, 1), (5, 64), (2, 256)]:
        x = hadamard_in(shape, dt, len(shape))
        for scale in [None, 1.0, 0.25, -2.0] if len(x.reshape(-1)) <= 64 else [None, 0.25]:
            want = hadamard(x, scale)
            p = {} if scale is None else {"scale": scale}
            y = want if dt in ("float64", "bfloat16") else want.astype(dt)
            add("hadamard %s %s scale=%s" % (dt, list(shape), scale), "HadamardTransform", dt, [x], [y], **p)
    s = hadamard_in((), dt, 1)
    add("hadamard 0-d %s" % dt, "HadamardTransform", dt, [s], [hadamard(s).astype(np.float32 if dt == "bfloat16" else dt)])
    z = hadamard_in((0, 8), dt, 0)
    add("hadamard empty %s" % dt, "HadamardTransform", dt, [z], [z])
    b = hadamard_in((3, 1), dt, 2)
    add("hadamard broadcast %s" % dt, "HadamardTransform", dt, [b],
        [hadamard(np.broadcast_to(b, (3, 8))).astype(np.float32 if dt == "bfloat16" else dt)], bcast=[3, 8])
    b = hadamard_in((8,), dt, 3)
    add("hadamard broadcast rows %s" % dt, "HadamardTransform", dt, [b],
        [hadamard(np.broadcast_to(b, (2, 8)), 0.5).astype(np.float32 if dt == "bfloat16" else dt)], scale=0.5,
        bcast=[2, 8])
# Integers and bool compute in float32.
for dt in ["int32", "uint8", "bool", "int64", "int8"]:
    x = make((2, 4), dt)
    cases.append(case("hadamard %s" % dt, "HadamardTransform", [enc(x)], [enc(hadamard(x).astype(np.float32))]))

# PadMode: numpy's pad modes, widths wider than the axis included.
MODES = ["edge", "reflect", "symmetric", "wrap", "constant"]


def pad(x, widths, mode):
    """np.pad, except that "wrap" is periodic however wide the pad, as
    numpy 1.24's is along one axis: for a pad wider than its axis of a
    2-D array it repeats part of a period (see docs_E.md)."""
    if mode != "wrap" or all(w <= n for n, ws in zip(x.shape, widths) for w in ws):
        return np.pad(x, widths, mode=mode)
    for ax, (n, (lo, hi)) in enumerate(zip(x.shape, widths)):
        x = np.take(x, np.arange(-lo, n + hi) % n, axis=ax)
    return x


for dt in ALL:
    x = make((3, 4), dt)
    for mode in MODES:
        for widths in [[[1, 2], [0, 3]], [[0, 0], [2, 2]], [[5, 7], [9, 1]], [[3, 0], [0, 0]]]:
            add("pad %s %s %s" % (mode, dt, widths), "PadMode", dt, [x], [pad(x, widths, mode)],
                widths=widths, mode=mode)
for dt in ["float32", "int32", "bool", "complex64"]:
    for mode in MODES:
        one = make((1, 3), dt)
        add("pad %s axis of one %s" % (mode, dt), "PadMode", dt, [one], [pad(one, [[2, 3], [1, 1]], mode)],
            widths=[[2, 3], [1, 1]], mode=mode)
        z = make((0, 3), dt)
        add("pad %s empty array %s" % (mode, dt), "PadMode", dt, [z], [np.pad(z, [[0, 0], [2, 1]], mode=mode)],
            widths=[[0, 0], [2, 1]], mode=mode)
        s = make((), dt)
        add("pad %s 0-d %s" % (mode, dt), "PadMode", dt, [s], [np.pad(s, 0, mode=mode)], widths=[], mode=mode)
        v = make((5,), dt)
        add("pad %s 1-d %s" % (mode, dt), "PadMode", dt, [v], [pad(v, [[11, 6]], mode)], widths=[[11, 6]], mode=mode)
        b = make((2, 1), dt)
        add("pad %s broadcast %s" % (mode, dt), "PadMode", dt, [b],
            [pad(np.broadcast_to(b, (2, 3)), [[1, 2], [2, 4]], mode)], widths=[[1, 2], [2, 4]], mode=mode,
            bcast=[2, 3])
    z = make((0, 3), dt)
    add("pad constant empty axis %s" % dt, "PadMode", dt, [z], [np.pad(z, [[1, 1], [0, 0]], mode="constant")],
        widths=[[1, 1], [0, 0]], mode="constant")

# Windows: numpy computes float64, fathom rounds once to the dtype.
for name, f in [("Hanning", np.hanning), ("Hamming", np.hamming), ("Blackman", np.blackman),
                ("Bartlett", np.bartlett)]:
    for m in [-3, 0, 1, 2, 3, 7, 12, 51]:
        for dt in FLOATS + [None]:
            w = f(m)
            out = dt or "float32"
            y = w if out in ("float64", "bfloat16") else w.astype(out)
            p = {"m": m}
            if dt is not None:
                p["dtype"] = dt
            cases.append(case("%s %d %s" % (name, m, dt), name, [], [e(y, out)], **p))

# LinspaceNoEndpoint: numpy's linspace(endpoint=False), which converts
# with astype (toward zero) for integer dtypes in numpy 1.24.
for start, stop, n in [(0, 1, 5), (-2.5, 3, 7), (3, -3, 4), (1, 1, 3), (0, 10, 1), (0, 1, 0), (-1, 1, 2), (0, 0.3, 10)]:
    for dt in ALL:
        # numpy's cast of a negative float to an unsigned dtype is C's,
        # undefined
        if dt == "bool" or (dt.startswith("uint") and min(start, stop) < 0):
            continue
        nd = np.float32 if dt == "bfloat16" else dt
        want = np.linspace(start, stop, n, endpoint=False).astype(nd)
        cases.append(case("linspace_no_endpoint %s %s %s %s" % (start, stop, n, dt), "LinspaceNoEndpoint", [],
                          [e(want, dt)], start=start, stop=stop, n=n, dtype=dt))
    cases.append(case("linspace_no_endpoint %s %s %s bool" % (start, stop, n), "LinspaceNoEndpoint", [],
                      [enc(np.linspace(start, stop, n, endpoint=False).astype(np.bool_))], start=start, stop=stop, n=n,
                      dtype="bool"))

# Identity.
for n in [0, 1, 3, 5]:
    for dt in ALL:
        nd = np.float32 if dt == "bfloat16" else dt
        cases.append(case("identity %d %s" % (n, dt), "Identity", [], [e(np.identity(n, dtype=nd), dt)], n=n, dtype=dt))

write("shapeops.json", cases)
