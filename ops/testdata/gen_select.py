"""numpy reference cases for selection, order statistics and scans: writes select.json.

Run with Debian's numpy: /usr/bin/python3 ops/testdata/gen_select.py

Partition, ArgPartition, SearchSorted, CountNonzero, Diff, Median, Quantile
(method "linear") and LogCumSumExp (logaddexp.accumulate), for every dtype
each takes, with empty and 0-d inputs, negative axes and NaNs.

Results have fathom's dtypes: positions and counts are int32 (numpy's are
int64); Median, Quantile and LogCumSumExp of integers and bools are float32
(numpy's float64, rounded). For a partition only the kth element and the
partition property are defined: the Go test checks those against numpy's
result, not its order. numpy has no bfloat16: bfloat16 inputs hold values
it represents exactly, and their results are float32, which the Go test
compares at bfloat16's tolerance. Integer quantiles take values whose
differences fit the dtype, since numpy subtracts before it converts.
"""
import warnings

import numpy as np

from refgen import case, enc, write

rng = np.random.default_rng(1903)

INTS = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
REAL = ["bool"] + INTS + FLOATS
ALL = REAL + ["complex64"]


def arr(shape, dtype, specials=False):
    """Values with ties; specials adds NaNs and infinities to floats."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "complex64":
        re = rng.integers(-2, 3, size=shape)
        im = rng.integers(-1, 2, size=shape)
        return (re + 1j * im).astype(np.complex64)
    if dtype.startswith("uint"):
        return rng.integers(0, 9, size=shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-6, 7, size=shape).astype(dtype)
    if dtype == "bfloat16":
        return (rng.integers(-16, 17, size=shape) / 4).astype(np.float32)
    a = (rng.integers(-20, 21, size=shape) / 4 + rng.standard_normal(shape) * (rng.random(shape) < 0.5)).astype(dtype)
    if specials and a.size:
        flat = a.reshape(-1)
        for v in [np.nan, np.inf, -np.inf]:
            if rng.random() < 0.6:
                flat[rng.integers(0, flat.size)] = v
    return a


def inp(a, dtype):
    return enc(a, "bfloat16") if dtype == "bfloat16" else enc(a)


def float_dtype(dt):
    return dt if dt in FLOATS or dt == "bfloat16" else "float32"


def out(a, dt):
    """Encode a result computed in float64 in fathom's dtype dt."""
    if dt == "bfloat16":
        return enc(np.asarray(a, dtype=np.float32), "bfloat16")
    return enc(np.asarray(a).astype(dt))


def partition_cases():
    cases = []
    for dt in REAL + ["bfloat16"]:
        a = arr((3, 7), dt, specials=True)
        for kth, axis in [(3, 1), (-1, -1), (0, 0), (2, -2)]:
            cases.append(case("Partition %s kth %d axis %d" % (dt, kth, axis), "Partition", [inp(a, dt)],
                              [inp(np.partition(a, kth, axis), dt)], kth=kth, axis=axis))
            cases.append(case("ArgPartition %s kth %d axis %d" % (dt, kth, axis), "ArgPartition", [inp(a, dt)],
                              [np.argpartition(a, kth, axis).astype(np.int32)], kth=kth, axis=axis))
    for shape, kth, axis in [((9,), 4, 0), ((1,), 0, 0), ((2, 0, 5), 2, 2), ((0, 4), -4, 1), ((2, 3, 4), 1, 0),
                             ((2, 3, 4), -2, 1), ((40,), 17, 0)]:
        a = arr(shape, "float32", specials=True)
        for op, f in [("Partition", np.partition), ("ArgPartition", np.argpartition)]:
            r = f(a, kth, axis)
            if op == "ArgPartition":
                r = r.astype(np.int32)
            cases.append(case("%s %s kth %d axis %d" % (op, shape, kth, axis), op, [a], [r], kth=kth, axis=axis))
    return cases


def searchsorted_cases():
    cases = []
    for dt in REAL + ["bfloat16"]:
        a = np.sort(arr((8,), dt, specials=True))
        v = arr((2, 5), dt, specials=True)
        if dt in FLOATS or dt == "bfloat16":
            v.reshape(-1)[0] = np.nan
        for side in ["left", "right"]:
            cases.append(case("SearchSorted %s %s" % (dt, side), "SearchSorted", [inp(a, dt), inp(v, dt)],
                              [np.searchsorted(a, v, side).astype(np.int32)], side=side))
    for an, vn, adt, vdt in [((0,), (3,), "float32", "float32"), ((4,), (0,), "float32", "float32"),
                             ((5,), (), "float32", "float32"), ((6,), (2, 2), "int32", "float32"),
                             ((6,), (4,), "float32", "int32"), ((1,), (3,), "int64", "int64"),
                             ((12,), (3, 2, 2), "float64", "float64")]:
        a = np.sort(arr(an, adt))
        v = arr(vn, vdt)
        for side in ["left", "right"]:
            cases.append(case("SearchSorted %s %s %s %s %s" % (an, adt, vn, vdt, side), "SearchSorted", [a, v],
                              [np.asarray(np.searchsorted(a, v, side)).astype(np.int32)], side=side))
    return cases


def count_cases():
    cases = []
    for dt in ALL:
        a = arr((3, 4), dt)
        if dt in FLOATS:
            a[0, 0], a[1, 1], a[2, 2] = np.nan, -0.0, 0.0
        if dt == "complex64":
            a[0, :] = [0, 1j, 1, 0]
        for axes in [None, [1], [-2], [0, 1]]:
            r = np.count_nonzero(a, axis=None if axes is None else tuple(axes))
            cases.append(case("CountNonzero %s axes %s" % (dt, axes), "CountNonzero", [a],
                              [np.asarray(r).astype(np.int32)], axes=axes or []))
    for shape, axes in [((), []), ((0,), []), ((2, 0, 3), [1]), ((2, 0, 3), [0, 2]), ((2, 3, 4), [-1, 0])]:
        a = arr(shape, "float32")
        r = np.count_nonzero(a, axis=tuple(axes) if axes else None)
        cases.append(case("CountNonzero %s axes %s" % (shape, axes), "CountNonzero", [a],
                          [np.asarray(r).astype(np.int32)], axes=axes))
    return cases


def diff_cases():
    cases = []
    for dt in ALL:
        a = arr((3, 5), dt)
        for n, axis in [(1, -1), (2, 0), (0, 1)]:
            cases.append(case("Diff %s n %d axis %d" % (dt, n, axis), "Diff", [a], [np.diff(a, n, axis)], n=n, axis=axis))
    for shape, dt, n, axis in [((6,), "float32", 1, 0), ((6,), "float32", 5, 0), ((6,), "float32", 6, 0),
                               ((6,), "float32", 9, -1), ((0,), "float32", 1, 0), ((2, 0), "float32", 1, 1),
                               ((2, 0), "float32", 1, 0), ((4, 3, 5), "float64", 3, 1), ((5,), "uint8", 1, 0),
                               ((5,), "bool", 3, 0), ((5,), "float32", 0, 0)]:
        a = arr(shape, dt, specials=dt == "float32")
        cases.append(case("Diff %s %s n %d axis %d" % (shape, dt, n, axis), "Diff", [a], [np.diff(a, n, axis)],
                          n=n, axis=axis))
    return cases


def median_cases():
    cases = []
    for dt in REAL + ["bfloat16"]:
        for shape, axes in [((3, 6), [1]), ((3, 5), [-1]), ((4, 3), [0]), ((2, 3, 4), [0, 2]), ((3, 5), None)]:
            a = arr(shape, dt)
            src = a.astype(np.float64) if dt == "bfloat16" else a
            r = np.median(src, axis=None if axes is None else tuple(axes))
            cases.append(case("Median %s %s axes %s" % (dt, shape, axes), "Median", [inp(a, dt)],
                              [out(r, float_dtype(dt))], axes=axes or []))
    for shape, axes, specials in [((), None, False), ((1,), None, False), ((4, 6), [1], True), ((5, 7), [-1], True),
                                  ((2, 0), [1], False), ((2, 0), [0], False), ((0,), None, False),
                                  ((2, 3, 4), [-1, -3], True), ((3, 2, 4), [1], False)]:
        for dt in ["float32", "float64"]:
            a = arr(shape, dt, specials=specials)
            if specials:
                a.reshape(-1)[0] = np.nan
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = np.median(a, axis=None if axes is None else tuple(axes))
            cases.append(case("Median %s %s axes %s" % (dt, shape, axes), "Median", [a], [out(r, dt)], axes=axes or []))
    return cases


def quantile_cases():
    cases = []
    for dt in INTS + FLOATS + ["bfloat16"]:
        for q in [0.0, 0.3, 0.5, 0.75, 1.0]:
            a = arr((3, 7), dt)
            src = a.astype(np.float64) if dt == "bfloat16" else a
            r = np.quantile(src, q, axis=1)
            cases.append(case("Quantile %s q %g" % (dt, q), "Quantile", [inp(a, dt)], [out(r, float_dtype(dt))],
                              q=q, axes=[1]))
    for shape, q, axes, specials in [((), 0.4, None, False), ((1,), 0.9, None, False), ((5,), 0.1, None, False),
                                     ((4, 6), 0.25, [-1], True), ((6, 4), 0.6, [0], True),
                                     ((2, 3, 4), 0.35, [0, -1], True), ((2, 3, 4), 0.8, None, False),
                                     ((10,), 0.123456789, None, False), ((7,), 1 / 3, None, False),
                                     ((3, 8), 0.5, [1], False)]:
        for dt in ["float32", "float64"]:
            a = arr(shape, dt, specials=specials)
            r = np.quantile(a, q, axis=None if axes is None else tuple(axes))
            cases.append(case("Quantile %s %s q %g axes %s" % (dt, shape, q, axes), "Quantile", [a], [out(r, dt)],
                              q=q, axes=axes or []))
    # an infinite neighbour: numpy's lerp gives NaN even at gamma 0 or 1
    for q in [0.0, 0.5, 1.0]:
        a = np.array([1.0, np.inf])
        cases.append(case("Quantile inf neighbour q %g" % q, "Quantile", [a], [np.quantile(a, q)], q=q, axes=[]))
    return cases


def logcumsumexp(a, axis, reverse, inclusive):
    x = a.astype(np.float64)
    if x.shape[axis] == 0:
        return x
    if reverse:
        x = np.flip(x, axis)
    y = np.logaddexp.accumulate(x, axis=axis)
    if not inclusive:
        pad = np.full_like(np.take(y, [0], axis=axis), -np.inf)
        y = np.concatenate([pad, np.take(y, range(y.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        y = np.flip(y, axis)
    return y


def logcumsumexp_cases():
    cases = []
    for dt in REAL + ["bfloat16"]:
        a = arr((3, 6), dt)
        src = a.astype(np.float64)
        for axis, reverse, inclusive in [(1, False, True), (-1, True, True), (0, False, False), (-2, True, False)]:
            r = logcumsumexp(src, axis, reverse, inclusive)
            cases.append(case("LogCumSumExp %s axis %d reverse %s inclusive %s" % (dt, axis, reverse, inclusive),
                              "LogCumSumExp", [inp(a, dt)], [out(r, float_dtype(dt))],
                              axis=axis, reverse=reverse, inclusive=inclusive))
    specials = np.array([[-np.inf, -np.inf, 1.0, np.nan, 2.0],
                         [1000.0, 1000.0, -1000.0, 999.0, np.inf],
                         [np.inf, -np.inf, np.inf, 3.0, -np.inf],
                         [-np.inf, 5.0, -np.inf, -np.inf, 88.0]])
    for dt in ["float32", "float64", "float16"]:
        a = specials.astype(dt)
        for reverse in [False, True]:
            for inclusive in [True, False]:
                r = logcumsumexp(a, 1, reverse, inclusive)
                cases.append(case("LogCumSumExp specials %s reverse %s inclusive %s" % (dt, reverse, inclusive),
                                  "LogCumSumExp", [a], [out(r, dt)], axis=1, reverse=reverse, inclusive=inclusive))
    for shape, axis in [((0,), 0), ((2, 0), 1), ((0, 3), 1), ((1,), 0), ((2, 3, 4), 1), ((40,), 0)]:
        a = arr(shape, "float32") * 10
        for reverse, inclusive in [(False, True), (True, False)]:
            r = logcumsumexp(a, axis, reverse, inclusive)
            cases.append(case("LogCumSumExp %s axis %d reverse %s inclusive %s" % (shape, axis, reverse, inclusive),
                              "LogCumSumExp", [a], [out(r, "float32")], axis=axis, reverse=reverse, inclusive=inclusive))
    return cases


def main():
    # NaNs and infinities in the inputs are the point of some cases.
    warnings.simplefilter("ignore")
    cases = (partition_cases() + searchsorted_cases() + count_cases() + diff_cases() + median_cases()
             + quantile_cases() + logcumsumexp_cases())
    write("select.json", cases)


if __name__ == "__main__":
    main()
