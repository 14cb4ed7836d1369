"""numpy reference cases for indexing, sorting and matrix products
(indexing.go, sort.go, matmul.go). Run with /usr/bin/python3 from anywhere;
writes indexing.json.

Ops: take, take_along_axis, put_along_axis, sort, argsort (numpy's
kind="stable", as int32), topk (the k largest, largest first: numpy's sort
reversed, so NaNs count as largest), matmul, outer, tensordot. Params use
the Go names: axis, k, axes_a, axes_b.
"""
import numpy as np

from refgen import case, enc, write

# bfloat16 has no numpy dtype: its cases use float32 data whose values
# (small multiples of 1/4) bfloat16 holds exactly, labelled "bfloat16".
ALL = ["float32", "float64", "int32", "float16", "bool", "bfloat16", "uint8", "int64", "complex64"]
SORTABLE = [d for d in ALL if d != "complex64"]
rng = np.random.default_rng(20240602)


def make(shape, dtype, lo=-8, hi=8):
    """Values every dtype holds exactly: quarters for floats, small
    integers (with repeats) otherwise."""
    n = int(np.prod(shape, dtype=np.int64))
    q = rng.integers(lo * 4, hi * 4, size=n)
    if dtype == "bool":
        v = q % 3 == 0
    elif dtype == "uint8":
        v = (q % 50 + 50).astype(np.uint8)
    elif dtype in ("int32", "int64"):
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


def add(name, op, dtype, inputs, expected, out_dtype=None, **params):
    """inputs are (array, dtype-label) pairs or arrays of the case dtype."""
    ins = []
    for x in inputs:
        ins.append(e(x[0], x[1]) if isinstance(x, tuple) else e(x, dtype))
    outs = [e(y, out_dtype or dtype) for y in expected]
    cases.append(case(name, op, ins, outs, **params))


def with_nan(x, dtype):
    """Puts NaNs, infinities and ties into a float array."""
    if dtype not in ("float32", "float64", "float16", "bfloat16"):
        return x
    x = x.copy()
    f = x.reshape(-1)
    for i, v in [(1, np.nan), (4, np.inf), (5, -np.inf), (7, np.nan), (8, f[2]), (10, f[2])]:
        if i < f.size:
            f[i] = v
    return x


# take
for dt in ALL:
    a = make((3, 4), dt)
    for name, idx, axis in [
        ("int32 rows", np.array([2, 0, 2], np.int32), 0),
        ("int64 negative", np.array([-1, 0, -4], np.int64), 1),
        ("uint8", np.array([3, 1], np.uint8), 1),
        ("2-D indices", np.array([[0, -1], [1, 1]], np.int32), -1),
        ("0-d index", np.array(2, np.int64), -2),
        ("empty indices", np.zeros((0,), np.int32), 1),
    ]:
        add("take %s %s" % (dt, name), "take", dt, [a, (idx, str(idx.dtype))], [np.take(a, idx, axis=axis)], axis=axis)
for dt in ["float32", "int32", "bool"]:
    a3 = make((2, 3, 4), dt)
    idx = np.array([[1, -1, 0]], np.int32)
    add("take 3-D middle %s" % dt, "take", dt, [a3, (idx, "int32")], [np.take(a3, idx, axis=1)], axis=1)
    z = make((0, 3), dt)
    idx = np.array([2, 0], np.int32)
    add("take empty array %s" % dt, "take", dt, [z, (idx, "int32")], [np.take(z, idx, axis=1)], axis=1)
    v = make((5,), dt)
    idx = np.array([4, -5, 2, 2], np.int64)
    add("take 1-D %s" % dt, "take", dt, [v, (idx, "int64")], [np.take(v, idx, axis=0)], axis=0)

# take_along_axis
for dt in ALL:
    a = make((3, 4), dt)
    idx = np.array([[3, 0], [-1, 1], [2, 2]], np.int64)
    add("take_along_axis %s axis 1" % dt, "take_along_axis", dt, [a, (idx, "int64")],
        [np.take_along_axis(a, idx, axis=1)], axis=1)
    idx = np.array([[2, -3, 0, 1]], np.int32)
    add("take_along_axis %s axis -2" % dt, "take_along_axis", dt, [a, (idx, "int32")],
        [np.take_along_axis(a, idx, axis=-2)], axis=-2)
for dt in ["float32", "int32", "bool", "float16"]:
    a = make((2, 3, 4), dt)
    idx = (np.array([[[1], [0], [-1]]]) % 4).astype(np.uint8 if dt == "bool" else np.int32)
    add("take_along_axis %s broadcast indices" % dt, "take_along_axis", dt, [a, (idx, str(idx.dtype))],
        [np.take_along_axis(a, idx, axis=2)], axis=2)
    a1 = make((1, 4), dt)
    idx = np.array([[0, 3], [1, 1], [2, 0]], np.int32)
    add("take_along_axis %s broadcast array" % dt, "take_along_axis", dt, [a1, (idx, "int32")],
        [np.take_along_axis(np.broadcast_to(a1, (3, 4)), idx, axis=1)], axis=1)
    z = make((0, 4), dt)
    idx = np.zeros((0, 2), np.int32)
    add("take_along_axis %s empty" % dt, "take_along_axis", dt, [z, (idx, "int32")],
        [np.take_along_axis(z, idx, axis=1)], axis=1)
    v = make((6,), dt)
    idx = np.argsort(v, kind="stable").astype(np.int64)
    add("take_along_axis %s argsort" % dt, "take_along_axis", dt, [v, (idx, "int64")],
        [np.take_along_axis(v, idx, axis=0)], axis=0)


def put(a, idx, vals, axis):
    r = a.copy()
    np.put_along_axis(r, idx, vals, axis=axis)
    return r


# put_along_axis; repeated indices: the later value wins.
for dt in ALL:
    a = make((3, 4), dt)
    idx = np.array([[1, 1], [-1, 0], [3, -4]], np.int64)
    vals = make((3, 2), dt)
    add("put_along_axis %s axis 1" % dt, "put_along_axis", dt, [a, (idx, "int64"), vals],
        [put(a, idx, vals, 1)], axis=1)
    idx = np.array([[2, 0, 0, -1]], np.int32)
    vals = make((1, 4), dt)
    add("put_along_axis %s axis -2" % dt, "put_along_axis", dt, [a, (idx, "int32"), vals],
        [put(a, idx, vals, -2)], axis=-2)
for dt in ["float32", "int32", "bool"]:
    a = make((2, 3, 4), dt)
    idx = (np.array([[[0], [3], [2]], [[1], [1], [-1]]]) % 4).astype(np.uint8)
    s = make((), dt)
    add("put_along_axis %s scalar value" % dt, "put_along_axis", dt, [a, (idx, "uint8"), s],
        [put(a, idx, s, 2)], axis=2)
    vals = make((3, 1), dt)
    add("put_along_axis %s broadcast values" % dt, "put_along_axis", dt, [a, (idx, "uint8"), vals],
        [put(a, idx, np.broadcast_to(vals, idx.shape), 2)], axis=2)
    z = make((2, 0), dt)
    idx = np.zeros((2, 0), np.int32)
    add("put_along_axis %s empty" % dt, "put_along_axis", dt, [z, (idx, "int32"), make((), dt)],
        [z], axis=1)
a = make((2, 3), "float32")
idx = np.array([[0], [2]], np.int32)
vals = np.array([[2.75], [-1.5]], np.float64)
add("put_along_axis float32 from float64 values", "put_along_axis", "float32",
    [a, (idx, "int32"), (vals, "float64")], [put(a, idx, vals.astype(np.float32), 1)], axis=1)
a = make((2, 3), "int32")
add("put_along_axis int32 from float64 values", "put_along_axis", "int32",
    [a, (idx, "int32"), (vals, "float64")], [put(a, idx, vals.astype(np.int32), 1)], axis=1)


def topk(x, k, axis):
    s = np.flip(np.sort(x, axis=axis), axis=axis)
    return np.take(s, np.arange(k), axis=axis)


# sort, argsort, topk
for dt in SORTABLE:
    x = with_nan(make((3, 5), dt, -3, 3), dt)
    for axis in [0, 1, -1]:
        add("sort %s axis %d" % (dt, axis), "sort", dt, [x], [np.sort(x, axis=axis)], axis=axis)
        add("argsort %s axis %d" % (dt, axis), "argsort", dt, [x],
            [np.argsort(x, axis=axis, kind="stable").astype(np.int32)], out_dtype="int32", axis=axis)
    for k, axis in [(2, 1), (0, 1), (5, -1), (1, 0), (3, -2)]:
        add("topk %s k=%d axis %d" % (dt, k, axis), "topk", dt, [x], [topk(x, k, axis)], k=k, axis=axis)
for dt in ["float32", "int32", "bool", "float16"]:
    x = with_nan(make((2, 3, 4), dt, -2, 2), dt)
    add("sort 3-D %s" % dt, "sort", dt, [x], [np.sort(x, axis=1)], axis=1)
    add("argsort 3-D %s" % dt, "argsort", dt, [x], [np.argsort(x, axis=1, kind="stable").astype(np.int32)],
        out_dtype="int32", axis=1)
    add("topk 3-D %s" % dt, "topk", dt, [x], [topk(x, 2, 1)], k=2, axis=1)
    z = make((0, 4), dt)
    add("sort empty %s" % dt, "sort", dt, [z], [np.sort(z, axis=1)], axis=1)
    add("argsort empty %s" % dt, "argsort", dt, [z], [np.argsort(z, axis=0).astype(np.int32)], out_dtype="int32", axis=0)
    add("topk empty %s" % dt, "topk", dt, [z], [topk(z, 3, 1)], k=3, axis=1)
    z = make((3, 0), dt)
    add("topk empty axis %s" % dt, "topk", dt, [z], [topk(z, 0, 1)], k=0, axis=1)
    v = make((40,), dt, -4, 4)
    add("argsort ties %s" % dt, "argsort", dt, [v], [np.argsort(v, kind="stable").astype(np.int32)],
        out_dtype="int32", axis=0)
    add("topk long %s" % dt, "topk", dt, [v], [topk(v, 3, 0)], k=3, axis=0)
# Long enough that an unstable quicksort would reorder ties.
for dt in ["float32", "int32"]:
    v = with_nan(make((2, 300), dt, -2, 2), dt)
    add("argsort many ties %s" % dt, "argsort", dt, [v], [np.argsort(v, axis=1, kind="stable").astype(np.int32)],
        out_dtype="int32", axis=1)
x = np.array([np.nan, 1.0, -0.5, np.nan, np.inf, -np.inf, 1.0], np.float64)
add("sort nan float64", "sort", "float64", [x], [np.sort(x)], axis=0)
add("argsort nan float64", "argsort", "float64", [x], [np.argsort(x, kind="stable").astype(np.int32)],
    out_dtype="int32", axis=0)
add("topk nan float64", "topk", "float64", [x], [topk(x, 4, 0)], k=4, axis=0)


def mm(a, b, dt):
    """numpy matmul computed exactly in float64 for the small-integer
    data, then cast: float16 and bfloat16 round once like fathom's float32
    accumulation."""
    if dt in ("bool", "int32", "int64", "uint8", "complex64", "float64", "float32"):
        return np.matmul(a, b)
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float16 if dt == "float16" else np.float32)


# matmul
MM_SHAPES = [
    ("1-D x 1-D", (4,), (4,)),
    ("1-D x 2-D", (3,), (3, 5)),
    ("2-D x 1-D", (2, 3), (3,)),
    ("2-D x 2-D", (3, 4), (4, 2)),
    ("batched", (2, 3, 4), (2, 4, 5)),
    ("broadcast batch", (2, 1, 3, 4), (5, 4, 2)),
    ("1-D x 3-D", (3,), (2, 3, 4)),
    ("3-D x 1-D", (2, 4, 3), (3,)),
    ("empty K", (3, 0), (0, 4)),
    ("empty M", (0, 3), (3, 2)),
    ("empty batch", (0, 2, 3), (3, 4)),
    ("empty K 1-D", (0,), (0,)),
]
for dt in ["float32", "float64", "int32", "float16", "bfloat16", "bool", "int64", "uint8", "complex64"]:
    for name, sa, sb in MM_SHAPES:
        lo, hi = (0, 3) if dt == "uint8" else (-4, 4)
        a, b = make(sa, dt, lo, hi), make(sb, dt, lo, hi)
        add("matmul %s %s" % (dt, name), "matmul", dt, [a, b], [mm(a, b, dt)])
a, b = make((3, 4), "int32"), make((4, 2), "float32")
add("matmul int32 @ float32", "matmul", "float32", [(a, "int32"), b], [np.matmul(a.astype(np.float32), b)])
a, b = make((2, 3), "float16"), make((3, 2), "float32")
add("matmul float16 @ float32", "matmul", "float32", [(a, "float16"), b], [np.matmul(a.astype(np.float32), b)])
a, b = make((2, 3), "bool"), make((3,), "int32")
add("matmul bool @ int32", "matmul", "int32", [(a, "bool"), b], [np.matmul(a.astype(np.int32), b)])
a, b = make((2, 3), "float32"), make((3, 2), "float64")
add("matmul float32 @ float64", "matmul", "float64", [(a, "float32"), b], [np.matmul(a, b)])
# Bigger than one of gonum's 64-wide blocks along K.
a, b = make((20, 70), "float64"), make((70, 9), "float64")
add("matmul float64 long K", "matmul", "float64", [a, b], [a @ b])
add("matmul float32 long K", "matmul", "float32", [a.astype(np.float32), b.astype(np.float32)],
    [(a @ b).astype(np.float32)])

# outer
for dt in ["float32", "float64", "int32", "float16", "bool", "complex64"]:
    a, b = make((2, 2), dt), make((3,), dt)
    add("outer %s" % dt, "outer", dt, [a, b], [np.outer(a, b)])
    add("outer empty %s" % dt, "outer", dt, [make((0,), dt), b], [np.outer(make((0,), dt), b)])
    s = make((), dt)
    add("outer 0-d %s" % dt, "outer", dt, [s, b], [np.outer(s, b)])

# tensordot
for dt in ["float32", "float64", "int32", "float16"]:
    a, b = make((2, 3, 4), dt), make((4, 3, 5), dt)
    for axa, axb in [([1, 2], [1, 0]), ([2], [0]), ([-1, -2], [0, 1]), ([], [])]:
        add("tensordot %s %s %s" % (dt, axa, axb), "tensordot", dt, [a, b],
            [np.tensordot(a, b, axes=(axa, axb)).astype(dt)], axes_a=axa, axes_b=axb)
    c = make((4, 3, 2), dt)
    add("tensordot %s full" % dt, "tensordot", dt, [a, c],
        [np.tensordot(a, c, axes=([0, 1, 2], [2, 1, 0])).astype(dt)], axes_a=[0, 1, 2], axes_b=[2, 1, 0])
    z = make((2, 0), dt)
    add("tensordot %s empty" % dt, "tensordot", dt, [z, make((0, 3), dt)],
        [np.tensordot(z, make((0, 3), dt), axes=([1], [0])).astype(dt)], axes_a=[1], axes_b=[0])
a, b = make((3, 4), "int32"), make((4, 2), "float32")
add("tensordot int32 float32", "tensordot", "float32", [(a, "int32"), b],
    [np.tensordot(a.astype(np.float32), b, axes=([1], [0]))], axes_a=[1], axes_b=[0])

# The integer dtypes of issue 17: as values (take, take_along_axis,
# put_along_axis, sort, argsort, topk, matmul) and as indices. Their own
# generator keeps the values of the cases above.
NEW_INTS = ["int8", "int16", "uint16", "uint32", "uint64"]
rng_new = np.random.default_rng(20250117)


def make_int(shape, dtype):
    n = int(np.prod(shape, dtype=np.int64))
    info = np.iinfo(dtype)
    v = rng_new.integers(max(info.min, -20), 20, size=n).astype(dtype)
    f = v.reshape(-1)
    if n > 3:
        f[0], f[3] = info.max, info.min
    return v.reshape(shape)


for dt in NEW_INTS:
    a = make_int((3, 4), dt)
    for name, idx, axis in [("int32 rows", np.array([2, 0, 2], np.int32), 0),
                            ("int64 negative", np.array([-1, 0, -4], np.int64), 1)]:
        add("take %s %s" % (dt, name), "take", dt, [a, (idx, str(idx.dtype))], [np.take(a, idx, axis=axis)], axis=axis)
    idx = np.array([[3, 0], [-1, 1], [2, 2]], np.int64)
    add("take_along_axis %s axis 1" % dt, "take_along_axis", dt, [a, (idx, "int64")],
        [np.take_along_axis(a, idx, axis=1)], axis=1)
    idx = np.array([[0], [2], [1]], np.int32)
    vals = make_int((3, 1), dt)
    add("put_along_axis %s" % dt, "put_along_axis", dt, [a, (idx, "int32"), vals], [put(a, idx, vals, 1)], axis=1)
    # indices of this dtype (negative ones where it has them)
    f = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = (np.array([3, 1, 0, -2]) if dt[0] != "u" else np.array([3, 1, 0, 2])).astype(dt)
    add("take float32 %s indices" % dt, "take", "float32", [f, (idx, dt)], [np.take(f, idx.astype(np.int64), axis=1)], axis=1)
    idx2 = (np.array([[2, 0, 1, 1]]) if dt[0] == "u" else np.array([[2, -3, 1, -1]])).astype(dt)
    add("take_along_axis float32 %s indices" % dt, "take_along_axis", "float32", [f, (idx2, dt)],
        [np.take_along_axis(f, idx2.astype(np.int64), axis=0)], axis=0)
    x = make_int((3, 5), dt)
    for axis in [0, 1, -1]:
        add("sort %s axis %d" % (dt, axis), "sort", dt, [x], [np.sort(x, axis=axis)], axis=axis)
        add("argsort %s axis %d" % (dt, axis), "argsort", dt, [x],
            [np.argsort(x, axis=axis, kind="stable").astype(np.int32)], out_dtype="int32", axis=axis)
    for k, axis in [(2, 1), (3, -2)]:
        add("topk %s k=%d axis %d" % (dt, k, axis), "topk", dt, [x], [topk(x, k, axis)], k=k, axis=axis)
    a, b = (rng_new.integers(0, 5, (2, 3)).astype(dt), rng_new.integers(0, 5, (3, 4)).astype(dt))
    add("matmul %s" % dt, "matmul", dt, [a, b], [np.matmul(a, b).astype(dt)])

write("indexing.json", cases)
