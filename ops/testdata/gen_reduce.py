"""Reference cases for the reductions, scans and the softmax family.

Run with Debian's numpy:  /usr/bin/python3 ops/testdata/gen_reduce.py
It writes ops/testdata/reduce.json (read by ops/reduce_test.go).

Results follow fathom's dtype rules, which are MLX's rather than numpy's
where they differ: Sum/Prod/CumSum/CumProd of bool give int32 and of
integers keep the dtype (wrapping), float functions of integers and bools
are float32, float16 reductions accumulate in float32. Expected values are
computed in float64 (or exact integer arithmetic) and cast to the result
dtype. bfloat16 inputs hold values exactly representable in bfloat16 and
are computed as float32 and labelled "bfloat16". The softmax family uses
scipy.special's formulas (scipy is not installed here, so they are written
out below).
"""
import warnings

import numpy as np

from refgen import case, enc, write

warnings.simplefilter("ignore", RuntimeWarning)  # empty means, ddof >= n: NaN is the point
rng = np.random.default_rng(20240602)

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int32", "int64", "uint8"]
NEW_INTS = ["int8", "int16", "uint16", "uint32", "uint64"]  # issue 17; cases at the end, from their own generator
SUM_DT = {"int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}
SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4), (2, 0, 3), (4, 1, 3)]


def np_dtype(name):
    return np.float32 if name == "bfloat16" else np.dtype(name)


def values(shape, dt, kind="any"):
    """Random values of dtype dt (a name) that every dtype holds exactly."""
    n = int(np.prod(shape))
    if dt == "bool":
        return rng.random(n).reshape(shape) < 0.6
    if dt == "uint8":
        hi = 4 if kind == "prod" else 256
        return rng.integers(0, hi, n).astype(np.uint8).reshape(shape)
    if dt in INTS:
        lo, hi = (-3, 4) if kind == "prod" else (-100, 100)
        return rng.integers(lo, hi, n).astype(dt).reshape(shape)
    if kind == "prod":
        v = rng.choice([0.5, 0.75, 1.0, 1.25, 1.5, 2.0, -1.0], n)
    else:
        v = rng.integers(-64, 65, n) / 16.0
    if dt == "complex64":
        w = rng.integers(-64, 65, n) / 16.0
        return (v + 1j * w).astype(np.complex64).reshape(shape)
    return v.astype(np_dtype(dt)).reshape(shape)


def label(a, dt):
    """Encode an input or float result, labelling bfloat16 data."""
    return enc(a, "bfloat16" if dt == "bfloat16" else None)


def float_dt(dt):
    return dt if dt in FLOATS or dt == "complex64" else "float32"


def cast(x, dt):
    """Cast a float64/complex128 result to result dtype dt and encode it."""
    if dt == "bfloat16":
        return enc(np.asarray(x, dtype=np.float32), "bfloat16")
    return enc(np.asarray(x).astype(np.dtype(dt)))


def norm_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in axes))


def kept_shape(shape, axes):
    """The keepdims shape of a reduction of shape over axes."""
    return [1 if i in norm_axes(axes, len(shape)) else d for i, d in enumerate(shape)]


cases = []


def add(name, op, x, xdt, expected, **params):
    cases.append(case(name, op, [label(x, xdt)], [expected], **params))


def axes_for(shape):
    nd = len(shape)
    out = [None]
    if nd >= 1:
        out += [[0], [-1]]
    if nd >= 2:
        out += [[0, nd - 1], [1]]
    if nd >= 3:
        out += [[-1, -3], [0, 1, 2]]
    return out


def nonempty_fold(shape, axes):
    ax = norm_axes(axes, len(shape))
    n = int(np.prod([shape[a] for a in ax])) if ax else 1
    kept = int(np.prod([shape[i] for i in range(len(shape)) if i not in ax])) if len(shape) else 1
    return n > 0 or kept == 0


# --- Sum, Prod, Max, Min, All, Any ---------------------------------------

def reduce_expected(op, x, dt, axes):
    ax = norm_axes(axes, x.ndim)
    if op in ("all", "any"):
        f = np.all if op == "all" else np.any
        return enc(f(x, axis=ax))
    if dt == "bool" and op in ("sum", "prod"):
        f = np.sum if op == "sum" else np.prod
        return enc(f(x.astype(np.int64), axis=ax).astype(np.int32))
    if dt in INTS + NEW_INTS or dt == "bool":
        f = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op]
        # Sum and Prod accumulate as MLX's: int8 and int16 in int32, uint8
        # and uint16 in uint32, wider types in their own (numpy: the
        # platform's 64-bit integers)
        odt = SUM_DT.get(dt, dt)
        return enc(f(x.astype(odt), axis=ax, dtype=odt) if op in ("sum", "prod") else f(x, axis=ax))
    if dt == "complex64":
        f = np.sum if op == "sum" else np.prod
        return enc(f(x.astype(np.complex128), axis=ax).astype(np.complex64))
    f = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op]
    return cast(f(x.astype(np.float64), axis=ax), dt)


for op in ["sum", "prod", "max", "min", "all", "any"]:
    dts = FLOATS + INTS + ["bool"]
    if op in ("sum", "prod", "all", "any"):
        dts = dts + ["complex64"]
    for dt in dts:
        for shape in SHAPES:
            x = values(shape, dt, "prod" if op == "prod" else "any")
            for axes in axes_for(shape):
                if op in ("max", "min") and not nonempty_fold(shape, axes):
                    continue
                add("%s %s %s axes=%s" % (op, dt, shape, axes), op, x, dt,
                    reduce_expected(op, x, dt, axes), axes=axes)
        # keepdims on one shape per dtype
        x = values((2, 3, 4), dt, "prod" if op == "prod" else "any")
        for axes in [[1], [-1, 0], None]:
            exp = reduce_expected(op, x, dt, axes)
            exp["shape"] = kept_shape((2, 3, 4), axes)
            add("%s %s keepdims axes=%s" % (op, dt, axes), op, x, dt, exp, axes=axes, keepdims=True)

# integers wrap like numpy's with the same dtype
for dt, vals, op in [("uint8", [200, 100, 7], "sum"), ("int32", [2**31 - 1, 1, 5], "sum"),
                     ("int32", [65536, 65536, 3], "prod"), ("int64", [2**62, 2**62, 1], "sum"),
                     ("uint8", [16, 17, 1], "prod")]:
    x = np.array(vals, dtype=dt)
    add("%s %s wraps" % (op, dt), op, x, dt, reduce_expected(op, x, dt, None), axes=None)

# NaN and infinities
nan, inf = float("nan"), float("inf")
for dt in ["float32", "float64", "float16", "bfloat16"]:
    x = np.array([[1.0, nan, 3.0], [2.0, -inf, 0.5], [inf, 1.0, -0.0]], dtype=np_dtype(dt))
    for op in ["sum", "prod", "max", "min", "all", "any"]:
        for axes in [None, [0], [1]]:
            add("%s %s nan axes=%s" % (op, dt, axes), op, x, dt, reduce_expected(op, x, dt, axes), axes=axes)

# -0.0 is false for all/any; NaN is true
for dt in ["float32", "float16"]:
    x = np.array([[-0.0, 0.0], [nan, -0.0]], dtype=np_dtype(dt))
    for op in ["all", "any"]:
        add("%s %s signed zero" % (op, dt), op, x, dt, reduce_expected(op, x, dt, [1]), axes=[1])

# a long float32 sum, where summation order matters
x = (rng.random(5000) * 2 - 1).astype(np.float32)
add("sum float32 long", "sum", x, "float32", cast(np.sum(x.astype(np.float64)), "float32"), axes=None)

# --- Mean, Var, Std --------------------------------------------------------

def stat_expected(op, x, dt, axes, ddof=0):
    ax = norm_axes(axes, x.ndim)
    out = float_dt(dt)
    wide = x.astype(np.complex128 if dt == "complex64" else np.float64)
    with np.errstate(all="ignore"):
        if op == "mean":
            return cast(np.mean(wide, axis=ax), out)
        v = np.var(wide, axis=ax, ddof=ddof)
        if op == "std":
            v = np.sqrt(v)
    return cast(v, "float32" if dt == "complex64" else out)


for op in ["mean", "var", "std"]:
    for dt in FLOATS + INTS + ["bool", "complex64"]:
        for shape in SHAPES:
            x = values(shape, dt)
            for axes in axes_for(shape):
                add("%s %s %s axes=%s" % (op, dt, shape, axes), op, x, dt, stat_expected(op, x, dt, axes), axes=axes)
    x = values((3, 4), "float32")
    for ddof in [1, 2, 3, 4, 5]:
        for axes in [[0], None]:
            p = {"axes": axes, "ddof": ddof}
            if op != "mean":
                add("%s ddof=%d axes=%s" % (op, ddof, axes), op, x, "float32",
                    stat_expected(op, x, "float32", axes, ddof), **p)
    x = values((2, 3, 4), "float64")
    exp = stat_expected(op, x, "float64", [0, 2])
    exp["shape"] = kept_shape((2, 3, 4), [0, 2])
    add("%s keepdims" % op, op, x, "float64", exp, axes=[0, 2], keepdims=True)

# a float16 mean whose sum overflows float16 but whose mean does not
x = np.full((100,), 1000.0, dtype=np.float16)
add("mean float16 large sum", "mean", x, "float16", cast(np.float64(1000.0), "float16"), axes=None)
add("var float16 large", "var", x, "float16", cast(np.float64(0.0), "float16"), axes=None)

# --- LogSumExp, Softmax, LogSoftmax (scipy.special's formulas) ------------

def lse(x, axes):
    ax = norm_axes(axes, x.ndim)
    if x.size == 0:  # fathom: the logsumexp of nothing is -inf (scipy raises)
        return np.full([d for i, d in enumerate(x.shape) if i not in ax], -inf)
    with np.errstate(all="ignore"):
        m = np.amax(x, axis=ax, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        s = np.sum(np.exp(x - m), axis=ax, keepdims=True)
        return np.squeeze(np.log(s) + m, axis=ax)


def softmax(x, axes):
    ax = norm_axes(axes, x.ndim)
    if x.size == 0:
        return x
    with np.errstate(all="ignore"):
        m = np.amax(x, axis=ax, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=ax, keepdims=True)


def log_softmax(x, axes):
    ax = norm_axes(axes, x.ndim)
    if x.size == 0:
        return x
    with np.errstate(all="ignore"):
        m = np.amax(x, axis=ax, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        t = x - m
        return t - np.log(np.sum(np.exp(t), axis=ax, keepdims=True))


SOFT = {"logsumexp": lse, "softmax": softmax, "log_softmax": log_softmax}

for op, f in SOFT.items():
    for dt in FLOATS + ["int32", "uint8", "bool"]:
        for shape in SHAPES:
            x = values(shape, dt)
            for axes in axes_for(shape):
                add("%s %s %s axes=%s" % (op, dt, shape, axes), op, x, dt,
                    cast(f(x.astype(np.float64), axes), float_dt(dt)), axes=axes)
    # stability and the edges: large values, -inf rows, +inf, NaN
    edge = np.array([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1002.0], [-inf, -inf, -inf],
                     [-inf, 0.0, 1.0], [inf, 0.0, 1.0], [nan, 0.0, 1.0]])
    for dt in ["float32", "float64", "float16"]:
        x = edge.astype(dt)
        for axes in [[1], [-1], None]:
            add("%s %s edges axes=%s" % (op, dt, axes), op, x, dt, cast(f(x.astype(np.float64), axes), dt), axes=axes)
        add("%s %s edges axes=[0]" % (op, dt), op, x.T.copy(), dt,
            cast(f(x.T.astype(np.float64), [0]), dt), axes=[0])
    x = values((2, 3, 4), "float32")
    if op == "logsumexp":
        exp = cast(f(x.astype(np.float64), [1]), "float32")
        exp["shape"] = kept_shape((2, 3, 4), [1])
        add("logsumexp keepdims", op, x, "float32", exp, axes=[1], keepdims=True)

# --- ArgMax, ArgMin ----------------------------------------------------------

for op in ["argmax", "argmin"]:
    f = np.argmax if op == "argmax" else np.argmin
    for dt in FLOATS + INTS + ["bool"]:
        for shape in SHAPES[1:]:
            # few distinct values so ties are common
            x = (rng.integers(0, 4, int(np.prod(shape))).reshape(shape)).astype(np_dtype(dt) if dt != "bool" else bool)
            for axis in range(-len(shape), len(shape)):
                if not nonempty_fold(shape, [axis]):
                    continue
                add("%s %s %s axis=%d" % (op, dt, shape, axis), op, x, dt,
                    enc(f(x, axis=axis).astype(np.int32)), axis=axis)
    for dt in ["float32", "float64", "float16"]:
        x = np.array([[1.0, nan, 5.0, nan], [3.0, 2.0, 2.0, -inf], [nan, 9.0, 1.0, 1.0]], dtype=dt)
        for axis in [0, 1]:
            add("%s %s nan axis=%d" % (op, dt, axis), op, x, dt, enc(f(x, axis=axis).astype(np.int32)), axis=axis)

# --- CumSum, CumProd, CumMax, CumMin -----------------------------------------

def scan_dt(op, dt):
    if dt == "bool" and op in ("cumsum", "cumprod"):
        return "int32"
    return dt


def identity(op, dt):
    if op == "cumsum":
        return 0
    if op == "cumprod":
        return 1
    if dt == "bool":
        return op == "cummin"
    if dt in INTS + NEW_INTS:
        info = np.iinfo(dt)
        return info.min if op == "cummax" else info.max
    return -inf if op == "cummax" else inf


def scan_expected(op, x, dt, axis, reverse, inclusive):
    odt = scan_dt(op, dt)
    if dt in FLOATS:
        w = x.astype(np.float64)
    elif dt == "complex64":
        w = x.astype(np.complex128)
    else:
        w = x.astype(odt)
    if reverse:
        w = np.flip(w, axis)
    if op == "cumsum":
        r = np.cumsum(w, axis=axis, dtype=w.dtype)
    elif op == "cumprod":
        r = np.cumprod(w, axis=axis, dtype=w.dtype)
    elif op == "cummax":
        r = np.maximum.accumulate(w, axis=axis)
    else:
        r = np.minimum.accumulate(w, axis=axis)
    if not inclusive and r.shape[axis]:
        first = np.full_like(np.take(r, [0], axis=axis), identity(op, dt))
        r = np.concatenate([first, np.take(r, range(r.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        r = np.flip(r, axis)
    if dt in FLOATS or dt == "complex64":
        return cast(r, odt)
    return enc(r.astype(odt))


for op in ["cumsum", "cumprod", "cummax", "cummin"]:
    dts = FLOATS + INTS + ["bool"] + (["complex64"] if op in ("cumsum", "cumprod") else [])
    for dt in dts:
        for shape in [(5,), (3, 4), (2, 3, 4), (2, 0, 3)]:
            x = values(shape, dt, "prod" if op == "cumprod" else "any")
            for axis in range(-len(shape), len(shape)):
                for reverse in [False, True]:
                    for inclusive in [True, False]:
                        add("%s %s %s axis=%d reverse=%s inclusive=%s" % (op, dt, shape, axis, reverse, inclusive),
                            op, x, dt, scan_expected(op, x, dt, axis, reverse, inclusive),
                            axis=axis, reverse=reverse, inclusive=inclusive)
    if op in ("cummax", "cummin"):
        for dt in ["float32", "float64"]:
            x = np.array([1.0, 3.0, nan, 0.0, 5.0], dtype=dt)
            for reverse in [False, True]:
                add("%s %s nan reverse=%s" % (op, dt, reverse), op, x, dt,
                    scan_expected(op, x, dt, 0, reverse, True), axis=0, reverse=reverse, inclusive=True)
for dt, vals in [("uint8", [200, 100, 7]), ("int32", [2**31 - 1, 1, 5])]:
    x = np.array(vals, dtype=dt)
    add("cumsum %s wraps" % dt, "cumsum", x, dt, scan_expected("cumsum", x, dt, 0, False, True),
        axis=0, reverse=False, inclusive=True)

# --- the integer dtypes of issue 17 ------------------------------------------
# From their own generator, so the cases above keep their values.
rng_new = np.random.default_rng(20250117)


def int_values(shape, dt, kind="any"):
    n = int(np.prod(shape))
    info = np.iinfo(dt)
    if kind == "prod":
        lo, hi = (0, 4) if info.min == 0 else (-3, 4)
    else:
        lo, hi = (0, 250) if info.min == 0 else (-100, 100)
    return rng_new.integers(lo, hi, n).astype(dt).reshape(shape)


for dt in NEW_INTS:
    for op in ["sum", "prod", "max", "min", "all", "any"]:
        for shape in [(), (5,), (3, 4), (2, 3, 4), (2, 0, 3)]:
            x = int_values(shape, dt, "prod" if op == "prod" else "any")
            for axes in axes_for(shape):
                if op in ("max", "min") and not nonempty_fold(shape, axes):
                    continue
                add("%s %s %s axes=%s" % (op, dt, shape, axes), op, x, dt,
                    reduce_expected(op, x, dt, axes), axes=axes)
    # the extremes: sums that leave the dtype, wrapping in 64 bits
    info = np.iinfo(dt)
    x = np.array([info.max, info.max, 1, info.min], dtype=dt)
    for op in ["sum", "max", "min"]:
        add("%s %s extremes" % (op, dt), op, x, dt, reduce_expected(op, x, dt, None), axes=None)
    for op in ["cumsum", "cumprod", "cummax", "cummin"]:
        for shape in [(5,), (3, 4)]:
            x = int_values(shape, dt, "prod" if op == "cumprod" else "any")
            for axis in range(-len(shape), len(shape)):
                for reverse in [False, True]:
                    for inclusive in [True, False]:
                        add("%s %s %s axis=%d reverse=%s inclusive=%s" % (op, dt, shape, axis, reverse, inclusive),
                            op, x, dt, scan_expected(op, x, dt, axis, reverse, inclusive),
                            axis=axis, reverse=reverse, inclusive=inclusive)
    for op in ["argmax", "argmin"]:
        f = np.argmax if op == "argmax" else np.argmin
        for shape in [(5,), (3, 4), (2, 3, 4)]:
            x = int_values(shape, dt)
            x.reshape(-1)[0] = info.max if op == "argmax" else info.min
            for axis in range(-len(shape), len(shape)):
                add("%s %s %s axis=%d" % (op, dt, shape, axis), op, x, dt,
                    enc(f(x, axis=axis).astype(np.int32)), axis=axis)

write("reduce.json", cases)
