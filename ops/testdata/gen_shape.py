"""numpy reference cases for the shape ops (shape.go, slice.go, join.go,
tile.go). Run with /usr/bin/python3 from anywhere; writes shape.json.

Params use numpy's names; a slice range is [start, stop, step] with null
for an omitted bound (Python's None).
"""
import numpy as np

from refgen import case, enc, write

# bfloat16 has no numpy dtype: its cases use float32 data whose values
# (small multiples of 1/4) bfloat16 holds exactly, labelled "bfloat16".
DTYPES = ["float32", "int32", "bool", "float16", "complex64", "bfloat16", "uint8", "int64", "float64"]
MAIN = ["float32", "int32", "bool", "float16", "complex64"]


def make(shape, dtype, seed=0):
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.float64) + seed
    if dtype == "bool":
        v = (i % 3) == 0
    elif dtype in ("int32", "int64"):
        v = (i - n // 2).astype(dtype)
    elif dtype == "uint8":
        v = (i % 251).astype(np.uint8)
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


# Reshape and Flatten.
for dt in DTYPES:
    x = make((2, 3, 4), dt)
    for shape in [(4, 6), (-1,), (2, -1, 2), (24, 1), (1, 2, 12), (3, 8)]:
        add("reshape %s %s" % (dt, shape), "reshape", dt, [x], [x.reshape(shape)], shape=list(shape))
    add("flatten %s" % dt, "flatten", dt, [x], [x.reshape(-1)])
for dt in MAIN:
    s = make((), dt)
    add("reshape 0-d to [1 1] %s" % dt, "reshape", dt, [s], [s.reshape(1, 1)], shape=[1, 1])
    add("reshape [1] to 0-d %s" % dt, "reshape", dt, [s.reshape(1)], [s], shape=[])
    add("flatten 0-d %s" % dt, "flatten", dt, [s], [s.reshape(-1)])
    z = make((0, 3), dt)
    add("reshape empty %s" % dt, "reshape", dt, [z], [z.reshape(3, 0, 1)], shape=[3, 0, 1])
    add("reshape empty -1 %s" % dt, "reshape", dt, [z], [z.reshape(-1, 3)], shape=[-1, 3])

# Transpose, SwapAxes, MoveAxis.
for dt in DTYPES:
    x = make((2, 3, 4), dt)
    add("transpose reverse %s" % dt, "transpose", dt, [x], [x.T])
    for axes in [(1, 0, 2), (2, 0, 1), (-1, 0, -2), (0, 1, 2)]:
        add("transpose %s %s" % (dt, axes), "transpose", dt, [x], [np.transpose(x, axes)], axes=list(axes))
for dt in MAIN:
    x = make((2, 3, 4), dt)
    for i, j in [(0, 2), (-1, 1), (1, 1)]:
        add("swapaxes %s %d %d" % (dt, i, j), "swapaxes", dt, [x], [np.swapaxes(x, i, j)], i=i, j=j)
    for s, d in [(0, 2), (2, 0), (-1, 1), (1, -3)]:
        add("moveaxis %s %d %d" % (dt, s, d), "moveaxis", dt, [x], [np.moveaxis(x, s, d)], src=s, dst=d)
    s0 = make((), dt)
    add("transpose 0-d %s" % dt, "transpose", dt, [s0], [s0.T])
    z = make((0, 2, 3), dt)
    add("transpose empty %s" % dt, "transpose", dt, [z], [np.transpose(z, (2, 0, 1))], axes=[2, 0, 1])

# BroadcastTo.
for dt in DTYPES:
    x = make((3, 1), dt)
    for shape in [(3, 4), (2, 3, 5), (3, 1), (2, 1, 3, 0)]:
        add("broadcast_to %s %s" % (dt, shape), "broadcast_to", dt, [x], [np.broadcast_to(x, shape)], shape=list(shape))
for dt in MAIN:
    s0 = make((), dt)
    add("broadcast_to 0-d %s" % dt, "broadcast_to", dt, [s0], [np.broadcast_to(s0, (2, 3))], shape=[2, 3])
    add("broadcast_to 0-d to 0-d %s" % dt, "broadcast_to", dt, [s0], [s0], shape=[])
    z = make((0, 1), dt)
    add("broadcast_to empty %s" % dt, "broadcast_to", dt, [z], [np.broadcast_to(z, (2, 0, 4))], shape=[2, 0, 4])

# ExpandDims and Squeeze.
for dt in DTYPES:
    x = make((2, 3), dt)
    for axes in [(0,), (2,), (-1,), (1, 3), (0, -1), (-4, 2)]:
        add("expand_dims %s %s" % (dt, axes), "expand_dims", dt, [x], [np.expand_dims(x, axes)], axes=list(axes))
    y = make((1, 3, 1, 2, 1), dt)
    add("squeeze all %s" % dt, "squeeze", dt, [y], [np.squeeze(y)])
    for axes in [(0,), (-1,), (0, 2), (2, -1)]:
        add("squeeze %s %s" % (dt, axes), "squeeze", dt, [y], [np.squeeze(y, axes)], axes=list(axes))
for dt in MAIN:
    s0 = make((), dt)
    add("expand_dims 0-d %s" % dt, "expand_dims", dt, [s0], [np.expand_dims(s0, (0, 1))], axes=[0, 1])
    add("squeeze to 0-d %s" % dt, "squeeze", dt, [s0.reshape(1, 1)], [s0], axes=[])
    z = make((0, 1, 3), dt)
    add("squeeze empty %s" % dt, "squeeze", dt, [z], [np.squeeze(z)])
    add("expand_dims empty %s" % dt, "expand_dims", dt, [z], [np.expand_dims(z, -1)], axes=[-1])


# Slice: ranges as [start, stop, step], None for omitted bounds.
def sl(r):
    return slice(r[0], r[1], r[2])


SLICES = [
    [[1, 3, 1]],
    [[None, None, -1]],
    [[None, None, None], [None, None, -2]],
    [[-1, None, -1], [1, -1, 2], [None, None, 3]],
    [[-5, 10, 1], [-100, 100, 2]],
    [[5, 1, -2], [2, -10, -1]],
    [[2, 1, 1]],
    [[1, 1, 1], [None, None, -1]],
    [[10, None, 1]],
    [[None, -10, -1]],
    [[None, None, 1], [3, 0, -1], [-1, -5, -2]],
    [[0, 4, 2], [0, 1, 1], [3, None, -3]],
]
for dt in DTYPES:
    x = make((4, 5, 6), dt)
    for rs in SLICES:
        want = x[tuple(sl(r) for r in rs)]
        add("slice %s %s" % (dt, rs), "slice", dt, [x], [want], ranges=rs)
for dt in MAIN:
    x = make((4, 5, 6), dt)
    for axis, r in [(1, [1, None, 2]), (-1, [None, None, -1]), (0, [-2, None, 1]), (2, [4, 2, 1])]:
        idx = [slice(None)] * 3
        idx[axis] = sl(r)
        add("slice_axis %s %d %s" % (dt, axis, r), "slice_axis", dt, [x], [x[tuple(idx)]], axis=axis, range=r)
    s0 = make((), dt)
    add("slice 0-d %s" % dt, "slice", dt, [s0], [s0], ranges=[])
    z = make((0, 3), dt)
    add("slice empty %s" % dt, "slice", dt, [z], [z[::-1, 1:]], ranges=[[None, None, -1], [1, None, None]])
    y = make((6,), dt)
    add("slice big steps %s" % dt, "slice", dt, [y], [y[::4]], ranges=[[None, None, 4]])
    add("slice huge step %s" % dt, "slice", dt, [y], [y[::-(1 << 62)]], ranges=[[None, None, -(1 << 62)]])

# Concatenate and Stack, including mixed dtypes.
for dt in MAIN + ["bfloat16", "float64"]:
    a, b, c = make((2, 3), dt), make((2, 1), dt, 7), make((2, 0), dt)
    add("concatenate axis 1 %s" % dt, "concatenate", dt, [a, b, c], [np.concatenate([a, b, c], 1)], axis=1)
    add("concatenate axis -1 %s" % dt, "concatenate", dt, [a, b], [np.concatenate([a, b], -1)], axis=-1)
    d = make((1, 3), dt, 3)
    add("concatenate axis 0 %s" % dt, "concatenate", dt, [a, d, a], [np.concatenate([a, d, a], 0)], axis=0)
    add("concatenate one %s" % dt, "concatenate", dt, [a], [a], axis=0)
    z0, z1 = make((0, 3), dt), make((0, 3), dt)
    add("concatenate empty %s" % dt, "concatenate", dt, [z0, z1], [np.concatenate([z0, z1])], axis=0)
    add("stack axis 0 %s" % dt, "stack", dt, [a, a[::-1]], [np.stack([a, a[::-1]], 0)], axis=0)
    add("stack axis -1 %s" % dt, "stack", dt, [a, a, a], [np.stack([a, a, a], -1)], axis=-1)
    add("stack axis 1 %s" % dt, "stack", dt, [a, a], [np.stack([a, a], 1)], axis=1)
    s0, s1 = make((), dt), make((), dt, 1)
    add("stack 0-d %s" % dt, "stack", dt, [s0, s1], [np.stack([s0, s1])], axis=0)
    add("stack empty %s" % dt, "stack", dt, [z0, z1], [np.stack([z0, z1], 2)], axis=2)
# The result dtype is fathom's promotion (MLX's), which differs from numpy's
# where numpy widens int32 with float32 to float64.
for da, db, dr in [("int32", "float32", "float32"), ("bool", "int32", "int32"), ("float16", "float32", "float32"),
                   ("int32", "complex64", "complex64"), ("bool", "float16", "float16"), ("uint8", "int32", "int32"),
                   ("int32", "int64", "int64"), ("float32", "float64", "float64"), ("int32", "float16", "float16")]:
    a, b = make((2, 2), da), make((1, 2), db, 5)
    cases.append(case("concatenate %s %s" % (da, db), "concatenate", [a, b],
                      [np.concatenate([a.astype(dr), b.astype(dr)])], axis=0))
    b2 = b.repeat(2, 0)
    cases.append(case("stack %s %s" % (da, db), "stack", [a, b2], [np.stack([a.astype(dr), b2.astype(dr)], 1)], axis=1))

# Split and SplitAt.
for dt in MAIN + ["bfloat16", "int64"]:
    x = make((4, 6), dt)
    for n, axis in [(2, 0), (3, 1), (6, -1), (1, 0), (4, -2)]:
        add("split %s %d %d" % (dt, n, axis), "split", dt, [x], np.split(x, n, axis), n=n, axis=axis)
    for idx, axis in [([2, 4], 1), ([1], 0), ([-1], 1), ([10], 0), ([4, 2], 1), ([-2, 5], -1), ([], 0), ([0, 0, 3], 1)]:
        add("split_at %s %s %d" % (dt, idx, axis), "split_at", dt, [x], np.split(x, idx, axis), indices=idx, axis=axis)
    z = make((0, 3), dt)
    add("split empty %s" % dt, "split", dt, [z], np.split(z, 3, 1), n=3, axis=1)
    add("split empty axis %s" % dt, "split", dt, [z], np.split(z, 2, 0), n=2, axis=0)

# Tile.
for dt in DTYPES:
    x = make((2, 3), dt)
    for reps in [(2,), (2, 1), (1, 3), (2, 2), (2, 1, 2), (3, 1, 1, 1), (0, 2), (), (1, 1)]:
        add("tile %s %s" % (dt, reps), "tile", dt, [x], [np.tile(x, reps)], reps=list(reps))
for dt in MAIN:
    s0 = make((), dt)
    add("tile 0-d %s" % dt, "tile", dt, [s0], [np.tile(s0, (2, 3))], reps=[2, 3])
    add("tile 0-d none %s" % dt, "tile", dt, [s0], [np.tile(s0, ())], reps=[])
    z = make((0, 2), dt)
    add("tile empty %s" % dt, "tile", dt, [z], [np.tile(z, (3, 2))], reps=[3, 2])

# Repeat.
for dt in DTYPES:
    x = make((2, 3), dt)
    for reps, axis in [(2, 0), (3, 1), (2, -1), (1, 0), (0, 1), (4, -2)]:
        add("repeat %s %d %d" % (dt, reps, axis), "repeat", dt, [x], [np.repeat(x, reps, axis)], repeats=reps, axis=axis)
for dt in MAIN:
    y = make((5,), dt)
    add("repeat 1-d %s" % dt, "repeat", dt, [y], [np.repeat(y, 3, 0)], repeats=3, axis=0)
    z = make((2, 0), dt)
    add("repeat empty %s" % dt, "repeat", dt, [z], [np.repeat(z, 3, 0)], repeats=3, axis=0)

# Pad (constant). The value is converted to the array's dtype like numpy
# does (1.5 becomes 1 in int32 and True in bool).
for dt in DTYPES:
    x = make((2, 3), dt)
    for widths, value in [([[1, 2], [0, 1]], 0.0), ([[0, 0], [2, 2]], 1.5), ([[3, 0], [0, 0]], 7.0),
                          ([[1, 1], [1, 1]], 2.0), ([[0, 0], [0, 0]], 5.0)]:
        want = np.pad(x, widths, constant_values=np.array(value).astype(x.dtype))
        add("pad %s %s %g" % (dt, widths, value), "pad", dt, [x], [want], widths=widths, value=value)
for dt in ["float32", "float16", "complex64"]:
    x = make((3,), dt)
    want = np.pad(x, [[2, 1]], constant_values=np.nan)
    cases.append(case("pad nan %s" % dt, "pad", [x], [want], widths=[[2, 1]], value="nan"))
for dt in MAIN:
    x = make((2, 1, 2), dt)
    widths = [[1, 0], [0, 2], [1, 1]]
    add("pad 3-d %s" % dt, "pad", dt, [x], [np.pad(x, widths, constant_values=np.array(3).astype(x.dtype))],
        widths=widths, value=3.0)
    z = make((0, 2), dt)
    add("pad empty %s" % dt, "pad", dt, [z], [np.pad(z, [[1, 1], [0, 1]], constant_values=np.array(1).astype(z.dtype))],
        widths=[[1, 1], [0, 1]], value=1.0)
    s0 = make((), dt)
    add("pad 0-d %s" % dt, "pad", dt, [s0], [s0], widths=[], value=1.0)

write("shape.json", cases)
