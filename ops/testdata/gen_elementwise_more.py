"""Reference cases for the elementwise ops of issue 19: Log10, ArcSinh,
ArcCosh, ArcTanh, Trunc, Invert, IsFinite, IsPosInf, IsNegInf, Degrees,
Radians, RoundDecimals, NanToNum, Real, Imag, Conj, Angle, LogicalXor,
DivMod, Clip, ClipScalar, IsClose, AllClose, ArrayEqual, Hypot, the bitwise
operations and shifts, and the weak-scalar forms FloorDivideScalar,
RemainderScalar, the six comparisons, LogAddExpScalar, ArcTan2Scalar,
HypotScalar and the bitwise and shift scalars.

Run with Debian's numpy:  /usr/bin/python3 ops/testdata/gen_elementwise_more.py

It writes elementwise_more.json, which ops/elementwise_test.go reads as it
reads elementwise.json (values, and the 2-D cases again on transposed and
stepped views). Every op gets every dtype it accepts, 0-d and empty inputs,
broadcasting and special values.

Where fathom differs from numpy on purpose, the expected values follow
fathom and the case says so here:
- float functions of integer and bool arrays (Log10, ArcSinh, ArcCosh,
  ArcTanh, Degrees, Radians, Angle, Hypot, the float scalar forms) compute
  in float32 (numpy: float64), as MLX does; IsClose compares integers in
  float32 too (numpy: float64), which the values here do not tell apart;
- dtypes promote with array.Promote (gen_elementwise.py's promote and
  ipromote): Clip of an int32 array with float32 bounds is float32 (numpy:
  float64), and the shifts of two bools are int32 (numpy: int8);
- weak scalars take the array's dtype (a fractional one on an integer
  array gives float32); comparisons of integer arrays with a Go number
  are exact, as numpy 2's are (numpy 1.24 compares in float64 and so
  rounds int64 values beyond 2^53);
- integer FloorDivide and Remainder by zero give 0 (numpy: 0 with a
  warning), so DivMod does too;
- RoundDecimals of bool arrays with negative decimals gives False (numpy
  rejects it); of integers with 10^-decimals beyond the dtype, 0; of
  integers near the dtype's ends, the exact multiple wrapped to the dtype,
  as integer arithmetic wraps (numpy rounds through float64 and gives the
  int64 minimum for int32 and int64 values that round past the end);
- NanToNum's defaults for bfloat16 are bfloat16's largest finite value
  (numpy has no bfloat16).
bfloat16 data is computed in float32 on bf16-exact values and labelled
"bfloat16", as in gen_elementwise.py.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from refgen import case, enc, write  # noqa: E402
from gen_elementwise import BF, EVERY_INT, FLOATS, arr, cast, ext, ipromote, npdt, promote  # noqa: E402

np.seterr(all="ignore")

INTS = EVERY_INT
REAL = ["bool"] + INTS + FLOATS
ALLD = REAL + ["complex64"]
INT_BITS = {d: 8 * np.dtype(d).itemsize for d in INTS}
BF16_MAX = float(np.float32(3.3895313892515355e38))
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0]


def fpromote(a, b):
    """array.Promote over every dtype."""
    if a in FLOATS or b in FLOATS or "complex64" in (a, b):
        return promote(a, b)
    return ipromote(a, b)


def float_of(d):
    return d if d in FLOATS or d == "complex64" else "float32"


def ivals(d):
    """Each integer dtype's extremes and a few small values, 2x3."""
    lo, hi = ext(d)
    if lo == 0:
        return np.array([[0, 1, 2], [7, hi - 1, hi]], dtype=np.uint64).astype(d)
    return np.array([[lo, -1, 0], [1, 7, hi]]).astype(d)


def small(d):
    """Small values every dtype holds, 2x3."""
    if d == "bool":
        return np.array([[True, False, True], [False, False, True]])
    if d.startswith("u"):
        return np.array([[0, 1, 2], [3, 5, 9]]).astype(d)
    return np.array([[-3, -1, 0], [1, 2, 5]]).astype(d)


def result(r, d):
    """Encodes r, computed in (or for) dtype d."""
    if d == BF:
        return enc(np.asarray(r, np.float32), BF)
    if d == "bool":
        return enc(np.asarray(r, bool))
    return enc(np.asarray(r).astype(npdt(d)))


def fval(v):
    """A float parameter: JSON numbers, or "inf", "-inf", "nan"."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


# ---------------------------------------------------------------- unary

FLOAT_UNARY = {"Log10": np.log10, "ArcSinh": np.arcsinh, "ArcCosh": np.arccosh, "ArcTanh": np.arctanh,
               "Degrees": np.degrees, "Radians": np.radians}
FLOAT_DOMAIN = {
    "Log10": [[0.25, 0.5, 1, 1.5], [2, 10, 100, 1000]],
    "ArcSinh": [[-100, -2.5, -0.5, 0], [0.25, 1, 3, 1000]],
    "ArcCosh": [[1, 1.25, 1.5, 2], [3, 4.5, 10, 1000]],
    "ArcTanh": [[-0.875, -0.5, -0.25, 0], [0.25, 0.5, 0.75, 0.875]],
    "Degrees": [[-6.25, -3.125, -1, 0], [0.5, 1, 3.125, 360]],
    "Radians": [[-720, -180, -90, 0], [1, 45, 90, 180]],
}
INT_DOMAIN = {
    "Log10": ([[1, 2, 10], [100, 7, 3]], [[1, 2, 10], [100, 7, 3]]),
    "ArcSinh": ([[-3, -1, 0], [1, 2, 100]], [[0, 1, 2], [3, 100, 9]]),
    "ArcCosh": ([[1, 2, 3], [10, 100, 1]], [[1, 2, 3], [10, 100, 1]]),
    "ArcTanh": ([[-1, 0, 1], [0, 0, 0]], [[0, 1, 0], [1, 0, 0]]),
    "Degrees": ([[-3, -1, 0], [1, 2, 100]], [[0, 1, 2], [3, 100, 9]]),
    "Radians": ([[-90, -1, 0], [1, 45, 100]], [[0, 1, 2], [45, 90, 100]]),
}


def float_unary(op, x, d):
    """op on x of dtype d, as fathom computes it: (result, dtype)."""
    cd = float_of(d)
    xc = cast(x, cd)
    if cd == BF:
        return np.asarray(FLOAT_UNARY[op](xc), np.float32), cd
    return FLOAT_UNARY[op](xc).astype(npdt(cd)), cd


def ucase(name, op, x, d, ref, **params):
    x = cast(np.asarray(x), d)
    r, rd = ref(x, d)
    return case(name, op, [arr(x, d)], [result(r, rd)], **params)


def float_unary_cases():
    cases = []
    for op in FLOAT_UNARY:
        ref = lambda x, d, op=op: float_unary(op, x, d)  # noqa: E731
        for d in FLOATS:
            cases.append(ucase(f"{op}/{d}", op, FLOAT_DOMAIN[op], d, ref))
        for d in ("float16", "float32", "float64"):
            cases.append(ucase(f"{op}/{d}/special", op, SPECIAL + [-1.0, 2.0], d, ref))
        signed, unsigned = INT_DOMAIN[op]
        for d in INTS:
            cases.append(ucase(f"{op}/{d}", op, unsigned if d.startswith("u") else signed, d, ref))
        cases.append(ucase(f"{op}/bool", op, [[True, False, True], [False, False, True]], "bool", ref))
        cases.append(ucase(f"{op}/float32/0d", op, np.float32(FLOAT_DOMAIN[op][1][1]), "float32", ref))
        cases.append(ucase(f"{op}/float32/empty", op, np.zeros((0, 3)), "float32", ref))
        cases.append(ucase(f"{op}/int32/empty", op, np.zeros((2, 0)), "int32", ref))
    # float16 overflow of Degrees, and values numpy's float16 loop rounds
    cases.append(ucase("Degrees/float16/overflow", "Degrees", [1000, 2000, -1200], "float16",
                       lambda x, d: float_unary("Degrees", x, d)))
    return cases


def keep(f):
    """A function that keeps the dtype; integers and bools pass through
    where f is the identity on whole numbers."""
    def ref(x, d):
        if d == "bool" or d in INTS:
            return f(x) if f is np.invert else x.copy(), d
        r = f(x)
        return (np.asarray(r, np.float32) if d == BF else r.astype(npdt(d))), d
    return ref


def predicate(kind):
    def ref(x, d):
        if d == "complex64":
            fin = np.isfinite(x)
            return fin, "bool"
        if d not in FLOATS:
            return np.full(x.shape, kind == "IsFinite"), "bool"
        f = {"IsFinite": np.isfinite, "IsPosInf": np.isposinf, "IsNegInf": np.isneginf}[kind]
        return f(x), "bool"
    return ref


CSPECIAL = np.array([1 + 2j, -0.5 + 0.25j, -4 + 0j, complex(-4, -0.0), 0j, complex(0, -0.0),
                     complex(math.nan, 0), complex(math.inf, 1), complex(1, -math.inf), complex(-math.inf, 0),
                     complex(0, math.nan), 3 - 5j], np.complex64)
HALVES = [[-2.5, -1.75, -0.5, 0.5], [1.5, 2.75, -0.375, 100.5]]


def keep_cases():
    cases = []
    ref = keep(np.trunc)
    for d in FLOATS:
        cases.append(ucase(f"Trunc/{d}", "Trunc", HALVES, d, ref))
    for d in ("float16", "float32", "float64"):
        cases.append(ucase(f"Trunc/{d}/special", "Trunc", SPECIAL + [-0.5, 2.5e9 + 0.5], d, ref))
    for d in INTS:
        cases.append(ucase(f"Trunc/{d}", "Trunc", ivals(d), d, ref))
    cases.append(ucase("Trunc/bool", "Trunc", [[True, False]], "bool", ref))
    cases.append(ucase("Trunc/float64/0d", "Trunc", np.float64(-7.9), "float64", ref))
    cases.append(ucase("Trunc/float32/empty", "Trunc", np.zeros((0, 2)), "float32", ref))

    ref = keep(np.invert)
    for d in INTS:
        cases.append(ucase(f"Invert/{d}", "Invert", ivals(d), d, ref))
    cases.append(ucase("Invert/bool", "Invert", [[True, False, True], [False, False, True]], "bool", ref))
    cases.append(ucase("Invert/int32/0d", "Invert", np.int32(5), "int32", ref))
    cases.append(ucase("Invert/uint8/empty", "Invert", np.zeros((0, 2)), "uint8", ref))

    for kind in ("IsFinite", "IsPosInf", "IsNegInf"):
        ref = predicate(kind)
        for d in FLOATS:
            cases.append(ucase(f"{kind}/{d}", kind, [[math.nan, math.inf, -math.inf], [-0.0, 1.5, -65504]], d, ref))
        cases.append(ucase(f"{kind}/float64/large", kind, [1e300, -1e308, 5e-324, math.inf], "float64", ref))
        cases.append(ucase(f"{kind}/float16/overflow", kind, [65504, 70000, -70000, 1], "float16", ref))
        for d in INTS + ["bool"]:
            cases.append(ucase(f"{kind}/{d}", kind, ivals(d) if d != "bool" else small(d), d, ref))
        if kind == "IsFinite":
            cases.append(ucase("IsFinite/complex64", kind, CSPECIAL, "complex64", ref))
        cases.append(ucase(f"{kind}/float32/0d", kind, np.float32(-math.inf), "float32", ref))
        cases.append(ucase(f"{kind}/float32/empty", kind, np.zeros((0, 3)), "float32", ref))
    return cases


def part(kind):
    """Real, Imag, Conj and Angle as fathom defines them on dtype d."""
    def ref(x, d):
        if d == "complex64":
            if kind == "Conj":
                return np.conj(x), d
            f = {"Real": np.real, "Imag": np.imag, "Angle": np.angle}[kind]
            return np.asarray(f(x)).astype(np.float32), "float32"
        if kind in ("Real", "Conj"):
            return x.copy(), d
        if kind == "Imag":
            return np.zeros_like(x), d
        cd = float_of(d)
        xc = cast(x, cd)
        r = np.angle(xc.astype(np.float64) if cd == BF else xc)
        return (np.asarray(r, np.float32) if cd == BF else r.astype(npdt(cd))), cd
    return ref


def complex_cases():
    cases = []
    for kind in ("Real", "Imag", "Conj", "Angle"):
        ref = part(kind)
        cases.append(ucase(f"{kind}/complex64", kind, CSPECIAL.reshape(3, 4), "complex64", ref))
        cases.append(ucase(f"{kind}/complex64/0d", kind, np.complex64(-1 - 1j), "complex64", ref))
        cases.append(ucase(f"{kind}/complex64/empty", kind, np.zeros((0, 2), np.complex64), "complex64", ref))
        for d in REAL:
            if d == "bool":
                x = small(d)
            elif d in INTS:
                x = ivals(d)
            else:
                x = [[-2.5, -0.0, 0.0], [1.5, math.nan, -math.inf]]
            cases.append(ucase(f"{kind}/{d}", kind, x, d, ref))
        cases.append(ucase(f"{kind}/float32/0d", kind, np.float32(-3), "float32", ref))
    return cases


def wrap(v, bits, signed):
    """v modulo 2^bits, as a signed or unsigned integer."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def round_ref(dec):
    def ref(x, d):
        if d == "bool":
            return (x.copy() if dec >= 0 else np.zeros_like(x)), d
        if d in INTS:
            if dec >= 0:
                return x.copy(), d
            p = 10 ** (-dec)
            lo, hi = ext(d)
            if p > hi:
                return np.zeros_like(x), d
            v = np.array([int(t) for t in x.reshape(-1)], dtype=object)
            q, r = np.array([t // p for t in v], dtype=object), np.array([t % p for t in v], dtype=object)
            up = np.array([2 * rr > p or (2 * rr == p and qq % 2 == 1) for qq, rr in zip(q, r)], dtype=bool)
            bits = INT_BITS[d]
            out = [wrap((int(qq) + int(u)) * p, bits, lo < 0) for qq, u in zip(q, up)]
            return np.array(out, dtype=object).reshape(x.shape).astype(d), d
        if d == BF:
            return np.round(x.astype(np.float32), dec), d
        return np.round(x, dec), d
    return ref


def round_cases():
    cases = []
    vals = [[1.25, -2.5, 125.0, -135.0], [0.5, 1.005, 2.675, -0.125]]
    for d in FLOATS:
        for dec in (-2, -1, 1, 2, 3):
            v = vals if d != BF else [[1.25, -2.5, 125.0, -136.0], [0.5, 1.0, 2.75, -0.125]]
            cases.append(ucase(f"RoundDecimals/{d}/{dec}", "RoundDecimals", v, d, round_ref(dec), decimals=dec))
    for d in ("float32", "float64"):
        cases.append(ucase(f"RoundDecimals/{d}/special", "RoundDecimals", SPECIAL + [-0.04], d, round_ref(1),
                           decimals=1))
    cases.append(ucase("RoundDecimals/float64/0", "RoundDecimals", HALVES, "float64", round_ref(0), decimals=0))
    for d in INTS:
        lo, hi = ext(d)
        x = ([[0, 5, 15], [25, 104, hi]] if lo == 0 else [[-25, -15, 15], [25, 45, 104]])
        x = np.array(x, dtype=np.uint64).astype(d) if lo == 0 else np.array(x).astype(d)
        for dec in (2, -1, -2):
            cases.append(ucase(f"RoundDecimals/{d}/{dec}", "RoundDecimals", x, d, round_ref(dec), decimals=dec))
        cases.append(ucase(f"RoundDecimals/{d}/extremes", "RoundDecimals", ivals(d), d, round_ref(-1), decimals=-1))
        big = 3 if INT_BITS[d] == 8 else 5 if INT_BITS[d] == 16 else 10 if INT_BITS[d] == 32 else 20
        cases.append(ucase(f"RoundDecimals/{d}/-{big}", "RoundDecimals", ivals(d), d, round_ref(-big),
                           decimals=-big))
    for dec in (1, -1):
        cases.append(ucase(f"RoundDecimals/bool/{dec}", "RoundDecimals", small("bool"), "bool", round_ref(dec),
                           decimals=dec))
    cases.append(ucase("RoundDecimals/float32/0d", "RoundDecimals", np.float32(3.14159), "float32", round_ref(2),
                       decimals=2))
    cases.append(ucase("RoundDecimals/int32/empty", "RoundDecimals", np.zeros((0, 2)), "int32", round_ref(-1),
                       decimals=-1))
    return cases


def nan_to_num_ref(nan, posinf, neginf):
    def ref(x, d):
        if d not in FLOATS:
            return x.copy(), d
        top = BF16_MAX if d == BF else float(np.finfo(npdt(d)).max)
        p = top if math.isinf(posinf) else posinf
        n = -top if math.isinf(neginf) else neginf
        r = np.nan_to_num(x, nan=nan, posinf=p, neginf=n)
        return r, d
    return ref


def nan_to_num_cases():
    cases = []
    x = [[math.nan, math.inf, -math.inf], [-0.0, 1.5, -2.0]]
    for d in FLOATS:
        for tag, (nan, posinf, neginf) in (("default", (0.0, math.inf, -math.inf)),
                                           ("custom", (0.5, 100.0, -100.0))):
            cases.append(ucase(f"NanToNum/{d}/{tag}", "NanToNum", x, d, nan_to_num_ref(nan, posinf, neginf),
                               nan=fval(nan), posinf=fval(posinf), neginf=fval(neginf)))
    for d in INTS + ["bool"]:
        cases.append(ucase(f"NanToNum/{d}", "NanToNum", ivals(d) if d != "bool" else small(d), d,
                           nan_to_num_ref(0.0, math.inf, -math.inf), nan=0.0, posinf="inf", neginf="-inf"))
    cases.append(ucase("NanToNum/float32/0d", "NanToNum", np.float32(math.nan), "float32",
                       nan_to_num_ref(7.0, math.inf, -math.inf), nan=7.0, posinf="inf", neginf="-inf"))
    cases.append(ucase("NanToNum/float64/empty", "NanToNum", np.zeros((0, 2)), "float64",
                       nan_to_num_ref(0.0, math.inf, -math.inf), nan=0.0, posinf="inf", neginf="-inf"))
    return cases


# ---------------------------------------------------------------- binary

def bcase(name, op, av, da, bv, db, ref, **params):
    a, b = cast(np.asarray(av), da), cast(np.asarray(bv), db)
    outs = ref(a, da, b, db)
    if not isinstance(outs, list):
        outs = [outs]
    return case(name, op, [arr(a, da), arr(b, db)], [result(r, rd) for r, rd in outs], **params)


def xor_ref(a, da, b, db):
    return np.logical_xor(cast(a, "bool"), cast(b, "bool")), "bool"


def hypot_ref(a, da, b, db):
    d = float_of(fpromote(da, db))
    r = np.hypot(cast(a, d), cast(b, d))
    return (np.asarray(r, np.float32) if d == BF else r.astype(npdt(d))), d


def int_op(f):
    def ref(a, da, b, db):
        d = fpromote(da, db)
        if f in (np.left_shift, np.right_shift) and d == "bool":
            d = "int32"
        x, y = cast(a, d), cast(b, d)
        if d == "bool":
            return f(x, y), d
        return shift(f, x, y, d) if f in (np.left_shift, np.right_shift) else f(x, y).astype(d), d
    return ref


def shift(f, x, y, d):
    """numpy's shifts, element by element in Python integers: a count that
    is negative or at least the width gives 0 (or -1 for a negative x
    shifted right); bits shifted out of the width are lost."""
    bits = INT_BITS[d]
    x, y = np.broadcast_arrays(x, y)
    out = []
    for a, n in zip(x.reshape(-1), y.reshape(-1)):
        a, n = int(a), int(n)
        if n < 0 or n >= bits:
            out.append(-1 if (f is np.right_shift and a < 0) else 0)
        elif f is np.left_shift:
            v = (a << n) & ((1 << bits) - 1)
            if not d.startswith("u") and v >= 1 << (bits - 1):
                v -= 1 << bits
            out.append(v)
        else:
            out.append(a >> n)
    ref = f(x, np.clip(y, 0, bits - 1).astype(y.dtype))
    res = np.array(out, dtype=object).reshape(x.shape).astype(d)
    # numpy agrees wherever the count is in range
    inrange = (y >= 0) & (y < bits)
    assert (res[inrange] == ref[inrange]).all(), (d, x, y)
    return res


def divmod_ref(a, da, b, db):
    d = fpromote(da, db)
    if d == "bool":
        d = "int32"
    x, y = cast(a, d), cast(b, d)
    if d in INTS:
        q, r = np.floor_divide(x, y), np.remainder(x, y)
        z = np.broadcast_to(y == 0, q.shape)
        q, r = np.where(z, 0, q).astype(d), np.where(z, 0, r).astype(d)
        return [(q, d), (r, d)]
    q, r = np.divmod(x.astype(np.float32) if d == BF else x, y.astype(np.float32) if d == BF else y)
    return [(q, d), (r, d)]


def binary_cases():
    cases = []
    # LogicalXor: every dtype, and mixed ones
    for d in ALLD:
        if d in FLOATS:
            a = [[0.0, -0.0, 1.5], [math.nan, 0.0, -2]]
        elif d == "complex64":
            a = np.array([[0, 1j, 1], [complex(0, -0.0), 2 + 2j, 0]], np.complex64)
        else:
            a = small(d)
        b = [[1, 0, 1], [0, 0, 0]] if d != "bool" else [[True, True, False], [False, True, True]]
        cases.append(bcase(f"LogicalXor/{d}", "LogicalXor", a, d, b, d, xor_ref))
    cases.append(bcase("LogicalXor/int32+float32/broadcast", "LogicalXor", [[0], [3]], "int32", [0, 0.5, -1],
                       "float32", xor_ref))
    cases.append(bcase("LogicalXor/0d", "LogicalXor", np.bool_(True), "bool", [True, False], "bool", xor_ref))
    cases.append(bcase("LogicalXor/empty", "LogicalXor", np.zeros((0, 3)), "float32", [1, 0, 1], "int8", xor_ref))

    # Hypot
    ha, hb = [[3, -5, 0, 1e-3], [0.5, -0.0, 8, 2.5]], [[4, 12, 0, 1e-3], [1.25, 0, -6, 2.5]]
    for d in FLOATS:
        cases.append(bcase(f"Hypot/{d}", "Hypot", ha, d, hb, d, hypot_ref))
    for d in ("float16", "float32", "float64"):
        cases.append(bcase(f"Hypot/{d}/special", "Hypot", [math.nan, math.inf, -math.inf, math.nan, 0, 1],
                           d, [math.inf, math.nan, 1, math.nan, -0.0, math.nan], d, hypot_ref))
    cases.append(bcase("Hypot/float32/large", "Hypot", [3e38, 1e-40, 2e30], "float32", [3e38, 1e-40, 2e30],
                       "float32", hypot_ref))
    cases.append(bcase("Hypot/float16/large", "Hypot", [60000, 3e-7], "float16", [60000, 4e-7], "float16", hypot_ref))
    for d in INTS + ["bool"]:
        a = small(d)
        cases.append(bcase(f"Hypot/{d}", "Hypot", a, d, np.abs(small(d).astype(np.int64)) + 1 if d != "bool" else a,
                           d, hypot_ref))
    cases.append(bcase("Hypot/int32+float16", "Hypot", [[3], [5]], "int32", [4, 12], "float16", hypot_ref))
    cases.append(bcase("Hypot/0d,2x3", "Hypot", np.float32(3), "float32", [[4, 0, -4], [1, 2, 3]], "float32", hypot_ref))
    cases.append(bcase("Hypot/empty", "Hypot", np.zeros((0, 1)), "float64", [1, 2], "float64", hypot_ref))

    # bitwise and shifts
    for name, f in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or), ("BitwiseXor", np.bitwise_xor)):
        ref = int_op(f)
        for d in INTS:
            lo, hi = ext(d)
            b = np.array([[hi, 5, 3], [lo if lo else 6, 12, 1]], dtype=np.uint64 if lo == 0 else None).astype(d)
            cases.append(bcase(f"{name}/{d}", name, ivals(d), d, b, d, ref))
        cases.append(bcase(f"{name}/bool", name, [[True, True, False, False]], "bool",
                           [[True, False, True, False]], "bool", ref))
        for da, db in (("uint8", "int8"), ("int16", "uint32"), ("bool", "int64"), ("uint16", "int32"),
                       ("uint32", "uint64")):
            cases.append(bcase(f"{name}/{da}+{db}", name, [[1, 2, 7], [0, 5, 3]], da, [6, 3, 1], db, ref))
        cases.append(bcase(f"{name}/0d", name, np.int32(12), "int32", [10, 7, -1], "int32", ref))
        cases.append(bcase(f"{name}/empty", name, np.zeros((2, 0)), "uint8", np.zeros((1, 0)), "uint8", ref))
    for name, f in (("LeftShift", np.left_shift), ("RightShift", np.right_shift)):
        ref = int_op(f)
        for d in INTS:
            bits = INT_BITS[d]
            lo, hi = ext(d)
            a = (np.array([[1, 3, hi], [hi, 5, 1]], dtype=np.uint64) if lo == 0
                 else np.array([[1, -3, hi], [lo, -1, 5]])).astype(d)
            counts = [[0, 1, bits - 1], [bits, bits + 3, 2]]
            cases.append(bcase(f"{name}/{d}", name, a, d, np.array(counts).astype(d), d, ref))
            if lo < 0:
                cases.append(bcase(f"{name}/{d}/negative", name, a, d,
                                   np.array([[-1, -bits, 1], [-128, 0, -3]]).astype(d), d, ref))
        cases.append(bcase(f"{name}/bool", name, [[True, True, False]], "bool", [[True, False, True]], "bool", ref))
        cases.append(bcase(f"{name}/int8+uint8", name, [[-5, 7]], "int8", [[2, 200]], "uint8", ref))
        cases.append(bcase(f"{name}/broadcast", name, [[1], [-64]], "int32", [0, 1, 31, 32], "int32", ref))
        cases.append(bcase(f"{name}/0d", name, np.int64(-(2 ** 62)), "int64", [1, 63, 64], "int64", ref))
        cases.append(bcase(f"{name}/empty", name, np.zeros((0, 2)), "int16", [1, 2], "int16", ref))

    # DivMod
    fa, fb = [[-3, -1.5, 0, 2.5], [4, 7, -2, 1]], [[2, -0.5, 1.5, 3], [-4, 2.5, 2, -1.5]]
    for d in FLOATS:
        cases.append(bcase(f"DivMod/{d}", "DivMod", fa, d, fb, d, divmod_ref))
    for d in ("float32", "float64"):
        cases.append(bcase(f"DivMod/{d}/special", "DivMod", [5, -5, 0, math.inf, 1, math.nan, -0.0, 7],
                           d, [0, 0, 0, 2, math.inf, 1, 3, -math.inf], d, divmod_ref))
    for d in INTS:
        lo, hi = ext(d)
        if lo == 0:
            a = np.array([[7, 0, hi], [200 % (hi + 1), 9, 1]], dtype=np.uint64).astype(d)
            b = np.array([[2, 3, 7], [0, 2, hi]], dtype=np.uint64).astype(d)
        else:
            a = np.array([[7, -7, 7], [lo, hi, -9]]).astype(d)
            b = np.array([[2, 2, -2], [-1, 0, -4]]).astype(d)
        cases.append(bcase(f"DivMod/{d}", "DivMod", a, d, b, d, divmod_ref))
    cases.append(bcase("DivMod/bool", "DivMod", [[True, True, False]], "bool", [[True, False, True]], "bool",
                       divmod_ref))
    cases.append(bcase("DivMod/int32+float32/broadcast", "DivMod", [[7], [-7]], "int32", [2, -2.5], "float32",
                       divmod_ref))
    cases.append(bcase("DivMod/0d", "DivMod", np.int64(-17), "int64", np.int64(5), "int64", divmod_ref))
    cases.append(bcase("DivMod/empty", "DivMod", np.zeros((0, 3)), "float32", [1, 2, 3], "float32", divmod_ref))

    # IsClose, AllClose, ArrayEqual
    xa = [[1.0, 1.0, math.nan, math.inf], [-math.inf, 0.0, 100.0, 1e-9]]
    xb = [[1.000001, 1.1, math.nan, math.inf], [math.inf, 1e-9, 100.001, 0.0]]
    for d in FLOATS:
        for rtol, atol, en in ((1e-5, 1e-8, False), (1e-5, 1e-8, True), (0.2, 0.0, False), (0.0, 0.0, True)):
            tag = f"{rtol}/{atol}/{'nan' if en else 'nonan'}"
            for op in ("IsClose", "AllClose"):
                cases.append(bcase(f"{op}/{d}/{tag}", op, xa, d, xb, d, close_ref(op, rtol, atol, en),
                                   rtol=rtol, atol=atol, equal_nan=en))
    for d in INTS + ["bool"]:
        a = small(d)
        b = a.copy()
        b[0, 0] = not b[0, 0] if d == "bool" else b[0, 0] + 1
        for op in ("IsClose", "AllClose"):
            cases.append(bcase(f"{op}/{d}", op, a, d, b, d, close_ref(op, 0.0, 0.5, False), rtol=0.0, atol=0.5,
                               equal_nan=False))
            cases.append(bcase(f"{op}/{d}/same", op, a, d, a, d, close_ref(op, 1e-5, 1e-8, False), rtol=1e-5,
                               atol=1e-8, equal_nan=False))
    for op in ("IsClose", "AllClose"):
        cases.append(bcase(f"{op}/int32+float32/broadcast", op, [[1], [3]], "int32", [1.25, 3.0, 2.0], "float32",
                           close_ref(op, 0.1, 0.0, False), rtol=0.1, atol=0.0, equal_nan=False))
        cases.append(bcase(f"{op}/0d", op, np.float64(2), "float64", [2.0, 2.0000001], "float64",
                           close_ref(op, 1e-5, 1e-8, False), rtol=1e-5, atol=1e-8, equal_nan=False))
        cases.append(bcase(f"{op}/empty", op, np.zeros((0, 2)), "float32", [1, 1], "float32",
                           close_ref(op, 1e-5, 1e-8, False), rtol=1e-5, atol=1e-8, equal_nan=False))
    ea = [[1.0, math.nan], [math.inf, -0.0]]
    for d in ALLD:
        a = ea if d in FLOATS else small(d)[:, :2]
        if d == "complex64":
            a = np.array([[1 + 1j, complex(math.nan, 0)], [2j, 0]], np.complex64)
        for en in (False, True):
            tag = "nan" if en else "nonan"
            cases.append(bcase(f"ArrayEqual/{d}/{tag}", "ArrayEqual", a, d, a, d, equal_ref(en), equal_nan=en))
        b = cast(np.asarray(a), d).copy()
        b[1, 0] = 1 - b[1, 0] if d == "bool" else (b[1, 0] + 1 if d != "complex64" else b[1, 0] + 1j)
        cases.append(bcase(f"ArrayEqual/{d}/differ", "ArrayEqual", a, d, b, d, equal_ref(True), equal_nan=True))
    cases.append(bcase("ArrayEqual/shapes", "ArrayEqual", [[1, 2]], "int32", [1, 2], "int32", equal_ref(False),
                       equal_nan=False))
    cases.append(bcase("ArrayEqual/broadcastable", "ArrayEqual", [[1, 1], [1, 1]], "int32", [1], "int32",
                       equal_ref(False), equal_nan=False))
    cases.append(bcase("ArrayEqual/int32+float32", "ArrayEqual", [1, 2, 3], "int32", [1, 2, 3], "float32",
                       equal_ref(False), equal_nan=False))
    cases.append(bcase("ArrayEqual/0d", "ArrayEqual", np.float32(math.nan), "float32", np.float32(math.nan),
                       "float32", equal_ref(True), equal_nan=True))
    cases.append(bcase("ArrayEqual/empty", "ArrayEqual", np.zeros((0, 2)), "float32", np.zeros((0, 2)), "float32",
                       equal_ref(False), equal_nan=False))
    return cases


def close_ref(op, rtol, atol, en):
    def ref(a, da, b, db):
        d = float_of(fpromote(da, db))
        x, y = cast(a, d), cast(b, d)
        if d == BF:
            x, y = x.astype(np.float32), y.astype(np.float32)
        r = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=en)
        return (np.all(r) if op == "AllClose" else r), "bool"
    return ref


def equal_ref(en):
    def ref(a, da, b, db):
        d = fpromote(da, db)
        x, y = cast(a, d), cast(b, d)
        return np.bool_(np.array_equal(x, y, equal_nan=en and d in FLOATS + ["complex64"])), "bool"
    return ref


# ---------------------------------------------------------------- Clip

def clip_ref(a, da, lo, dl, hi, dh):
    d = da
    if lo is not None:
        d = fpromote(d, dl)
    if hi is not None:
        d = fpromote(d, dh)
    x = cast(a, d)
    if lo is not None:
        x = np.maximum(x, cast(lo, d))
    if hi is not None:
        x = np.minimum(x, cast(hi, d))
    return x, d


def clip_case(name, av, da, lv, dl, hv, dh):
    a = cast(np.asarray(av), da)
    lo = None if lv is None else cast(np.asarray(lv), dl)
    hi = None if hv is None else cast(np.asarray(hv), dh)
    r, rd = clip_ref(a, da, lo, dl, hi, dh)
    inputs = [arr(a, da)] + ([arr(lo, dl)] if lo is not None else []) + ([arr(hi, dh)] if hi is not None else [])
    params = {"open": "lo" if lo is None else "hi"} if lo is None or hi is None else {}
    return case(name, "Clip", inputs, [result(r, rd)], **params)


def clip_cases():
    cases = []
    for d in REAL:
        if d == "bool":
            cases.append(clip_case("Clip/bool", small(d), d, [[True, False, False]], d, [[True, True, False]], d))
            continue
        x = small(d) if d in INTS else [[-3, -0.5, 0], [1.5, 2.75, 10]]
        lo, hi = (1, 3) if d.startswith("u") else (-1, 2)
        cases.append(clip_case(f"Clip/{d}", x, d, lo, d, hi, d))
        cases.append(clip_case(f"Clip/{d}/rows", x, d, [[lo], [lo + 1]], d, [hi, hi + 1, hi + 2], d))
    for d in ("float16", "float32", "float64"):
        cases.append(clip_case(f"Clip/{d}/special", [math.nan, math.inf, -math.inf, 0.5, -0.0, 2], d,
                               [0, 0, 0, math.nan, 0.0, 3], d, [1, 1, 1, 1, 1, 1], d))
    cases.append(clip_case("Clip/lo_above_hi", [[-5, 0, 5]], "float32", 2, "float32", 1, "float32"))
    cases.append(clip_case("Clip/no_hi", [[-5, 0, 5]], "int32", [0, 1, 2], "int32", None, None))
    cases.append(clip_case("Clip/no_lo", [[-5, 0, 5]], "float64", None, None, [[0], [3]], "float64"))
    cases.append(clip_case("Clip/int32+float32", [[-5, 0, 5]], "int32", -1.5, "float32", 2.5, "float32"))
    cases.append(clip_case("Clip/uint8+int8", [[0, 100, 255]], "uint8", -3, "int8", 90, "int8"))
    cases.append(clip_case("Clip/float16+bfloat16", [[-2, 0.5, 3]], "float16", 0, BF, 1, "float16"))
    cases.append(clip_case("Clip/0d", np.float32(7), "float32", [[0], [8]], "float32", [5, 9], "float32"))
    cases.append(clip_case("Clip/empty", np.zeros((0, 3)), "float32", 0, "float32", 1, "float32"))
    cases.append(clip_case("Clip/extremes", ivals("int64"), "int64", ext("int64")[0] + 1, "int64",
                           ext("int64")[1] - 1, "int64"))
    return cases


def clipscalar_ref(lo, hi):
    def ref(x, d):
        cd = d
        for v in (lo, hi):
            if not math.isinf(v) and d in INTS + ["bool"] and v != math.trunc(v):
                cd = "float32"
        if d == "bool" and cd == "bool":
            cd = "int32"
        out = cast(x, cd)
        if cd == BF:
            out = out.astype(np.float32)
        if not math.isinf(lo):
            out = np.maximum(out, cast(np.array(lo), cd))
        if not math.isinf(hi):
            out = np.minimum(out, cast(np.array(hi), cd))
        if d == "bool" and math.isinf(lo) and math.isinf(hi):
            return x.copy(), d
        return out, cd
    return ref


def clipscalar_cases():
    cases = []
    for d in REAL:
        if d == "bool":
            x = small(d)
        elif d in INTS:
            x = ivals(d)
        else:
            x = [[-3, -0.5, 0], [1.5, math.nan, math.inf]]
        lo, hi = (1.0, 7.0) if d.startswith("u") else (-1.0, 2.0)
        cases.append(ucase(f"ClipScalar/{d}", "ClipScalar", x, d, clipscalar_ref(lo, hi), lo=lo, hi=hi))
        cases.append(ucase(f"ClipScalar/{d}/open", "ClipScalar", x, d, clipscalar_ref(-math.inf, hi),
                           lo="-inf", hi=hi))
        if d != "bool":
            cases.append(ucase(f"ClipScalar/{d}/fraction", "ClipScalar", x, d, clipscalar_ref(0.5, 5.5),
                               lo=0.5, hi=5.5))
    cases.append(ucase("ClipScalar/float32/lo_above_hi", "ClipScalar", [-1, 0, 4], "float32",
                       clipscalar_ref(3.0, 1.0), lo=3.0, hi=1.0))
    cases.append(ucase("ClipScalar/int32/unbounded", "ClipScalar", [-1, 0, 4], "int32",
                       clipscalar_ref(-math.inf, math.inf), lo="-inf", hi="inf"))
    cases.append(ucase("ClipScalar/float32/0d", "ClipScalar", np.float32(-7), "float32", clipscalar_ref(0.0, 1.0),
                       lo=0.0, hi=1.0))
    cases.append(ucase("ClipScalar/float32/empty", "ClipScalar", np.zeros((0, 3)), "float32",
                       clipscalar_ref(0.0, 1.0), lo=0.0, hi=1.0))
    return cases


# ---------------------------------------------------------------- weak scalars

def sdtype(d, v):
    """ops.scalarDType: the array's dtype unless v is fractional (or not
    finite) and the array is integer or bool: float32; bool with a whole
    v: int32."""
    if d in FLOATS or d == "complex64":
        return d
    if math.isinf(v) or math.isnan(v) or v != math.trunc(v):
        return "float32"
    return "int32" if d == "bool" else d


def scalar_arith(f, flt=False):
    def ref(x, d, v):
        cd = sdtype(d, v)
        if flt:
            cd = float_of(cd)
        xc = cast(x, cd)
        vc = cast(np.array(v), cd)
        if cd == BF:
            xc, vc = xc.astype(np.float32), vc.astype(np.float32)
        if cd in INTS and f in (np.floor_divide, np.remainder):
            r = f(xc, vc) if v != 0 else np.zeros_like(xc)
            return r.astype(cd), cd
        return f(xc, vc), cd
    return ref


def scalar_compare(f):
    """Exact comparisons of integer arrays (Python integers hold every
    value), numpy's in the array's dtype for floats."""
    def ref(x, d, v):
        if d in FLOATS:
            xc = x.astype(np.float32) if d == BF else x
            vc = cast(np.array(v), d)
            return f(xc, vc.astype(np.float32) if d == BF else vc), "bool"
        if math.isnan(v):
            return np.full(x.shape, f is np.not_equal), "bool"
        from fractions import Fraction
        vf = Fraction(v) if not math.isinf(v) else None
        out = []
        for a in x.reshape(-1):
            a = int(a)
            if vf is None:
                out.append(bool(f(float(a), v)))
            else:
                out.append(bool(f(Fraction(a) - vf, 0)))
        return np.array(out, bool).reshape(x.shape), "bool"
    return ref


def int_scalar(f, shifts):
    """An integer op of an integer or bool array and a whole v: in the
    array's dtype, int32 for bool arrays."""
    def ref(x, d, v):
        cd = sdtype(d, v)
        xc, vc = cast(x, cd), np.full(x.shape, int(v)).astype(cd)
        return (shift(f, xc, vc, cd) if shifts else f(xc, vc).astype(cd)), cd
    return ref


def scase(name, op, x, d, v, ref):
    x = cast(np.asarray(x), d)
    r, rd = ref(x, d, v)
    return case(name, op, [arr(x, d)], [result(r, rd)], v=fval(v))


def scalar_cases():
    cases = []
    arith = {"FloorDivideScalar": scalar_arith(np.floor_divide), "RemainderScalar": scalar_arith(np.remainder),
             "LogAddExpScalar": scalar_arith(np.logaddexp, True), "ArcTan2Scalar": scalar_arith(np.arctan2, True)}
    for op, ref in arith.items():
        for d in REAL:
            if d == "bool":
                x = small(d)
            elif d in INTS:
                x = small(d)
            else:
                x = [[-3, -1.5, 0], [2.5, 7, -0.0]]
            for v in (2.0, -2.5, 0.5):
                if d.startswith("u") and v < 0 and sdtype(d, v) != "float32":
                    continue
                cases.append(scase(f"{op}/{d}/{v}", op, x, d, v, ref))
        for d in ("float32", "float64"):
            for v in (0.0, math.inf, -math.inf, math.nan):
                cases.append(scase(f"{op}/{d}/{v}", op, [math.nan, math.inf, -math.inf, -0.0, 3, -5], d, v, ref))
        if op in ("FloorDivideScalar", "RemainderScalar"):
            for d in ("int8", "int32", "uint16", "int64"):
                cases.append(scase(f"{op}/{d}/zero", op, small(d), d, 0.0, ref))
                cases.append(scase(f"{op}/{d}/-1", op, ivals(d), d, -1.0 if not d.startswith("u") else 3.0, ref))
        cases.append(scase(f"{op}/float32/0d", op, np.float32(5), "float32", 3.0, ref))
        cases.append(scase(f"{op}/int32/empty", op, np.zeros((0, 2)), "int32", 3.0, ref))
    ref = scalar_arith(np.hypot, True)
    for d in REAL:
        x = small(d) if d in INTS + ["bool"] else [[-3, -1.5, 0], [2.5, 7, -0.0]]
        for v in (4.0, -0.5):
            cases.append(scase(f"HypotScalar/{d}/{v}", "HypotScalar", x, d, v, ref))
    for d in ("float32", "float64"):
        for v in (0.0, math.inf, math.nan):
            cases.append(scase(f"HypotScalar/{d}/{v}", "HypotScalar", [math.nan, math.inf, -math.inf, -0.0, 3], d, v,
                               ref))
    cases.append(scase("HypotScalar/float32/0d", "HypotScalar", np.float32(5), "float32", 12.0, ref))
    cases.append(scase("HypotScalar/int32/empty", "HypotScalar", np.zeros((0, 2)), "int32", 3.0, ref))
    for op, f in (("BitwiseAndScalar", np.bitwise_and), ("BitwiseOrScalar", np.bitwise_or),
                  ("BitwiseXorScalar", np.bitwise_xor), ("LeftShiftScalar", np.left_shift),
                  ("RightShiftScalar", np.right_shift)):
        shifts = op.endswith("ShiftScalar")
        for d in INTS + ["bool"]:
            x = ivals(d) if d != "bool" else small(d)
            bits = INT_BITS.get(d, 32)
            for v in ((1.0, float(bits - 1), float(bits)) if shifts else (6.0, 1.0, 0.0)):
                cases.append(scase(f"{op}/{d}/{v}", op, x, d, v, int_scalar(f, shifts)))
            if shifts and not d.startswith("u") and d != "bool":
                cases.append(scase(f"{op}/{d}/-1.0", op, x, d, -1.0, int_scalar(f, shifts)))
        cases.append(scase(f"{op}/int32/0d", op, np.int32(-7), "int32", 2.0, int_scalar(f, shifts)))
        cases.append(scase(f"{op}/uint8/empty", op, np.zeros((0, 2)), "uint8", 2.0, int_scalar(f, shifts)))
    cmp = {"EqualScalar": np.equal, "NotEqualScalar": np.not_equal, "LessScalar": np.less,
           "LessEqualScalar": np.less_equal, "GreaterScalar": np.greater, "GreaterEqualScalar": np.greater_equal}
    for op, f in cmp.items():
        ref = scalar_compare(f)
        for d in REAL:
            if d in FLOATS:
                x = [[-3, -1.5, 0], [2.5, math.nan, math.inf]]
                vs = (2.5, 0.0, math.nan, -math.inf)
            else:
                x = ivals(d) if d != "bool" else small(d)
                lo, hi = ext(d) if d != "bool" else (0, 1)
                vs = (1.0, 1.5, -0.5, float(hi) + 1, float(lo) - 1, math.inf, math.nan)
            for v in vs:
                cases.append(scase(f"{op}/{d}/{v}", op, x, d, v, ref))
        # int64 beyond 2^53, where float64 and float32 comparisons round
        big = np.array([2 ** 53 + 1, 2 ** 62, -(2 ** 62), 2 ** 53], np.int64)
        for v in (2.0 ** 53, 2.0 ** 62, 9007199254740994.0):
            cases.append(scase(f"{op}/int64/large/{v}", op, big, "int64", v, ref))
        cases.append(scase(f"{op}/int32/fraction", op, [16777217, 16777216, -16777217], "int32", 16777216.5, ref))
        cases.append(scase(f"{op}/float32/0d", op, np.float32(1), "float32", 1.0, ref))
        cases.append(scase(f"{op}/uint8/empty", op, np.zeros((0, 2)), "uint8", 1.0, ref))
    return cases


def main():
    cases = (float_unary_cases() + keep_cases() + complex_cases() + round_cases() + nan_to_num_cases()
             + binary_cases() + clip_cases() + clipscalar_cases() + scalar_cases())
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, sorted(dup)[:10]
    write("elementwise_more.json", cases)


if __name__ == "__main__":
    main()
