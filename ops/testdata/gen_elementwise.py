"""Reference cases for the elementwise ops: unary, binary, scalar, Where
and creation (ops/unary.go, binary.go, scalar.go, where.go, create.go).

Run with Debian's numpy:  /usr/bin/python3 ops/testdata/gen_elementwise.py

The expected values follow fathom's rules where they differ from numpy's,
and say so where they do:
- dtypes promote with array.Promote (MLX's table: int64 + float32 is
  float32, int32 + float16 is float16, float16 + bfloat16 is float32,
  complex64 absorbs float64);
- float functions of integer and bool arrays compute in float32 (numpy:
  float64), Div of integers too; Floor/Ceil/Round keep integer dtypes;
- bool Abs/Sign/Square/Floor/Ceil/Round are the identity; FloorDivide,
  Remainder and Pow of two bools compute in int32;
- Pow of integers with a negative exponent array gives 0 except for bases
  1 and -1 (numpy raises); PowScalar with a negative whole exponent on an
  integer or bool array raises, as numpy does;
- weak scalars take the array's dtype (scalarDType in ops/ops.go).
bfloat16 data is computed in float32 on bf16-exact values and labelled
"bfloat16"; the reader rounds and compares with bf16 tolerance.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from refgen import case, enc, write  # noqa: E402

np.seterr(all="ignore")

BF = "bfloat16"
ORDER = {"bool": 0, "uint8": 1, "int32": 2, "int64": 3, "float16": 4, BF: 4,
         "float32": 5, "float64": 6, "complex64": 7}
FLOATS = ["float16", BF, "float32", "float64"]
INTS = ["uint8", "int32", "int64"]
ALL = ["bool"] + INTS + FLOATS + ["complex64"]


def npdt(name):
    """numpy dtype that holds a fathom dtype's values (bf16 in float32)."""
    return np.float32 if name == BF else np.dtype(name)


def bf16_round(x):
    """Rounds float32 values to the nearest bfloat16 (ties to even)."""
    x = np.asarray(x, np.float32)
    b = np.atleast_1d(x).view(np.uint32).astype(np.uint64)
    s16 = np.uint64(16)
    r = ((b + np.uint64(0x7FFF) + ((b >> s16) & np.uint64(1))) >> s16) << s16
    out = r.astype(np.uint32).view(np.float32).reshape(x.shape)
    return np.where(np.isnan(x), x, out).astype(np.float32)


def cast(x, name):
    """x converted to dtype name (numpy's astype; bf16 rounded)."""
    x = np.asarray(x)
    if name == BF:
        if np.issubdtype(x.dtype, np.complexfloating):
            x = x.real
        return bf16_round(x.astype(np.float32))
    if np.issubdtype(x.dtype, np.complexfloating) and name == "bool":
        return x != 0
    if np.issubdtype(x.dtype, np.complexfloating) and not name.startswith("complex"):
        x = x.real
    return x.astype(npdt(name))


def arr(x, name):
    """Encodes x as an array of dtype name."""
    return enc(cast(x, name), BF if name == BF else None)


def promote(a, b):
    if a == b:
        return a
    if {a, b} == {"float16", BF}:
        return "float32"
    if "complex64" in (a, b):
        return "complex64"
    if "float64" in (a, b):
        return "float64"
    return b if ORDER[b] > ORDER[a] else a


def float_dtype(d):
    return d if d in FLOATS or d == "complex64" else "float32"


def is_inexact(d):
    return d in FLOATS or d == "complex64"


# ---------------------------------------------------------------- unary

def sigmoid(x):
    return 1 / (1 + np.exp(-x.astype(np.float64)))


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64))


def erfinv_scalar(x):
    if math.isnan(x) or x < -1 or x > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    if x == 0:
        return x
    # Winitzki's approximation, then Newton to float64 accuracy: on
    # erfc(|y|) = 1-|x| near ±1 (1-|x| is exact there and erfc keeps the
    # digits that erf loses), on erf(y) = x elsewhere.
    a = 0.147
    ln = math.log(1 - x * x)
    t = 2 / (math.pi * a) + ln / 2
    y = math.sqrt(math.sqrt(t * t - ln / a) - t)
    ax = abs(x)
    for _ in range(100):
        d = 2 / math.sqrt(math.pi) * math.exp(-y * y)
        step = (math.erfc(y) - (1 - ax)) / d if ax > 0.5 else (ax - math.erf(y)) / d
        y += step
        if abs(step) <= 1e-17 * abs(y):
            break
    return math.copysign(y, x)


def erfinv(x):
    return np.vectorize(erfinv_scalar, otypes=[np.float64])(x.astype(np.float64))


FLOAT_FUNCS = {
    "Exp": np.exp, "Expm1": np.expm1, "Log": np.log, "Log1p": np.log1p, "Log2": np.log2,
    "Sqrt": np.sqrt, "Rsqrt": lambda x: 1 / np.sqrt(x), "Reciprocal": lambda x: 1 / x,
    "Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "ArcSin": np.arcsin, "ArcCos": np.arccos,
    "ArcTan": np.arctan, "Sinh": np.sinh, "Cosh": np.cosh, "Tanh": np.tanh,
    "Sigmoid": sigmoid, "Erf": erf, "ErfInv": erfinv,
}
KEEP_FUNCS = {
    "Neg": np.negative, "Abs": np.abs, "Sign": np.sign, "Square": np.square,
    "Floor": np.floor, "Ceil": np.ceil, "Round": np.rint,
}
PREDICATES = ["LogicalNot", "IsNaN", "IsInf"]
COMPLEX_UNARY = ["Neg", "Abs", "Square", "Reciprocal", "Sqrt", "Rsqrt", "Exp", "Log", "Log2",
                 "Sin", "Cos", "Tan", "Sinh", "Cosh", "Tanh"] + PREDICATES


def unary_ref(op, x, d):
    """fathom's op on x (already of dtype d): (result, result dtype)."""
    if op == "LogicalNot":
        return np.logical_not(cast(x, "bool")), "bool"
    if op in ("IsNaN", "IsInf"):
        if not is_inexact(d):
            return np.zeros(x.shape, bool), "bool"
        return (np.isnan(x) if op == "IsNaN" else np.isinf(x)), "bool"
    if op in FLOAT_FUNCS:
        cd = float_dtype(d)
        xc = cast(x, cd)
        if cd == "float16" and op in ("Sigmoid", "Erf", "ErfInv"):
            return FLOAT_FUNCS[op](xc).astype(np.float16), cd
        r = FLOAT_FUNCS[op](xc)
        return cast(r, cd) if cd != BF else np.asarray(r, np.float32), cd
    if d == "bool":
        return x.copy(), d
    if d in INTS and op in ("Floor", "Ceil", "Round"):
        return x.copy(), d
    r = KEEP_FUNCS[op](x)
    if d == "complex64" and op == "Abs":
        return r.astype(np.float32), "float32"
    return (np.asarray(r, np.float32) if d == BF else r.astype(npdt(d))), d


def out_enc(r, d):
    return enc(np.asarray(r), BF if d == BF else None)


def ucase(name, op, vals, d):
    x = cast(np.asarray(vals), d)
    r, rd = unary_ref(op, x, d)
    return case(name, op, [arr(x, d)], [out_enc(r, rd)])


GENERAL = [[-2.5, -1, -0.5, 0], [0.5, 1, 1.5, 3]]
POSITIVE = [[0.25, 0.5, 1, 1.5], [2, 3, 4, 10]]
UNIT = [[-0.875, -0.5, -0.25, 0], [0.25, 0.5, 0.75, 0.875]]
NONZERO = [[-2.5, -1, -0.5, 0.25], [0.5, 1, 1.5, 3]]
HALVES = [[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 0.375, -0.625]]
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0]


def domain(op):
    if op in ("Log", "Log2", "Sqrt", "Rsqrt", "Log1p"):
        return POSITIVE
    if op in ("ArcSin", "ArcCos", "ErfInv"):
        return UNIT
    if op == "Reciprocal":
        return NONZERO
    if op in ("Round", "Floor", "Ceil"):
        return HALVES
    return GENERAL


def int_domain(op, d):
    if op in ("Log", "Log2", "Sqrt", "Rsqrt", "Reciprocal"):
        return [[1, 2, 3], [4, 7, 9]]
    if op in ("ArcSin", "ArcCos", "ErfInv"):
        return [[-1, 0, 1], [1, 0, -1]] if d != "uint8" else [[0, 1, 0], [1, 1, 0]]
    if op in FLOAT_FUNCS:
        return [[-3, -1, 0], [1, 2, 5]] if d != "uint8" else [[0, 1, 2], [3, 5, 9]]
    if d == "uint8":
        return [[0, 1, 2], [3, 200, 255]]
    if d == "int64":
        return [[-(2 ** 40), -3, 0], [1, 5, 2 ** 33]]
    return [[-7, -2, 0], [3, 5, -(2 ** 31)]]


def unary_cases():
    cases = []
    ops = list(FLOAT_FUNCS) + list(KEEP_FUNCS) + PREDICATES
    for op in ops:
        for d in FLOATS:
            cases.append(ucase(f"{op}/{d}", op, domain(op), d))
        for d in ("float32", "float64", "float16"):
            cases.append(ucase(f"{op}/{d}/special", op, SPECIAL, d))
        for d in INTS:
            if op in FLOAT_FUNCS and d == "int64":
                continue
            cases.append(ucase(f"{op}/{d}", op, int_domain(op, d), d))
        if op != "Neg":
            cases.append(ucase(f"{op}/bool", op, [[True, False, True], [False, False, True]], "bool"))
        if op in COMPLEX_UNARY:
            vals = [1 + 2j, -0.5 + 0.25j, 2 - 1j, -1.5 - 0.5j, -4 + 0j, 3 + 0j]
            if op in PREDICATES or op in ("Neg", "Abs", "Square", "Exp", "Sin", "Cos", "Sinh", "Cosh"):
                vals.append(0j)
            cases.append(ucase(f"{op}/complex64", op, vals, "complex64"))
        cases.append(ucase(f"{op}/float32/0d", op, np.float32(0.5), "float32"))
        cases.append(ucase(f"{op}/float32/empty", op, np.zeros((0, 3), np.float32), "float32"))
    cnan = np.array([complex(math.nan, 0), complex(math.inf, 0), complex(0, math.nan),
                     1 + 1j, complex(0, -math.inf), 0j], np.complex64)
    for op in PREDICATES:
        cases.append(ucase(f"{op}/complex64/special", op, cnan, "complex64"))
    cases.append(ucase("Sqrt/float16/large", "Sqrt", np.linspace(0, 9, 1000), "float16"))
    return cases


# ---------------------------------------------------------------- binary

ARITH = ["Add", "Sub", "Mul", "Div", "FloorDivide", "Remainder", "Pow", "Maximum", "Minimum",
         "LogAddExp", "ArcTan2"]
COMPARE = ["Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"]
LOGICAL = ["LogicalAnd", "LogicalOr"]
NP_BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.true_divide,
    "FloorDivide": np.floor_divide, "Remainder": np.remainder, "Maximum": np.maximum,
    "Minimum": np.minimum, "Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less,
    "LessEqual": np.less_equal, "Greater": np.greater, "GreaterEqual": np.greater_equal,
    "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or, "LogAddExp": np.logaddexp,
    "ArcTan2": np.arctan2,
}


def compute_dtype(op, da, db):
    d = promote(da, db)
    if op in ("Div", "LogAddExp", "ArcTan2"):
        d = float_dtype(d)
    elif op in LOGICAL:
        d = "bool"
    elif op in ("FloorDivide", "Remainder", "Pow") and d == "bool":
        d = "int32"
    return d


def int_pow(a, b):
    """Pow of integers with wrapping; negative exponents give 0 except for
    the bases 1 and -1."""
    a, b = np.broadcast_arrays(a, b)
    out = np.power(a, np.maximum(b, 0))
    neg = b < 0
    one = a == 1
    mone = (a.astype(np.int64) == -1) if a.dtype != np.uint8 else np.zeros(a.shape, bool)
    res = np.where(neg, 0, out)
    res = np.where(neg & one, 1, res)
    res = np.where(neg & mone, np.where(b % 2 == 0, 1, -1), res)
    return res.astype(a.dtype)


def binary_ref(op, a, b, d):
    """fathom's op on a, b (both already of compute dtype d)."""
    if op == "Pow":
        if d in INTS:
            return int_pow(a, b), d
        r = np.power(a, b)
    else:
        r = NP_BINARY[op](a, b)
    if op in COMPARE or op in LOGICAL:
        return r, "bool"
    if d == BF:
        return np.asarray(r, np.float32), d
    return r.astype(npdt(d)), d


def bcase(name, op, av, da, bv, db):
    a, b = cast(av, da), cast(bv, db)
    d = compute_dtype(op, da, db)
    r, rd = binary_ref(op, cast(a, d), cast(b, d), d)
    return case(name, op, [arr(a, da), arr(b, db)], [out_enc(r, rd)])


def binary_supported(op, d):
    if op in COMPARE:
        return d != "complex64" or op in ("Equal", "NotEqual")
    if op in LOGICAL:
        return True
    if d == "complex64":
        return op in ("Add", "Sub", "Mul", "Div", "Pow")
    if d == "bool":
        return op != "Sub"
    return True


FA = [[-3, -1.5, 0, 2.5], [4, 7, -2, 1]]
FB = [[2, -0.5, 1.5, 3], [-4, 2.5, 2, -1.5]]
PA = [[0.5, 2, 3, 1.5], [4, 2.5, -2, -3]]
PB = [[2, 0.5, -1, 1.5], [0.5, 2, 3, 2]]
IA = [[-7, -3, 0, 5], [7, 9, -2, 1]]
IB = [[2, -2, 3, 3], [-4, 2, 5, -1]]
UA = [[7, 3, 0, 5], [200, 9, 250, 1]]
UB = [[2, 5, 3, 3], [100, 2, 10, 1]]
IPA = [[2, -3, 0, 5], [7, -1, 1, 2]]
IPB = [[3, 3, 0, 2], [20, 5, 7, 10]]
CA = [[1, 2, 3, 1], [0, 5, 2, 2]]
CB = [[1, 3, 2, 1], [0, 4, 2, 3]]
BA = [[True, True, False, False]]
BB = [[True, False, True, False]]
ZA = [[1 + 2j, -0.5 + 0.25j], [2 - 1j, 3 + 0j]]
ZB = [[0.5 - 1j, 2 + 0j], [-1 + 1j, 1.5 + 0.5j]]
SA = [math.nan, 1, math.inf, -math.inf, -0.0, 3, math.inf, 0, -5, 5]
SB = [1, math.nan, 2, -math.inf, 0.0, -math.inf, math.inf, 0, 0, -math.inf]


def operands(op, d):
    if op in COMPARE:
        return CA, CB
    if d == "bool":
        return BA, BB
    if d == "complex64":
        return ZA, ZB
    if d == "uint8":
        return (UA, UB) if op != "Pow" else ([[2, 3, 0, 5], [7, 1, 1, 2]], [[3, 3, 0, 2], [20, 5, 7, 10]])
    if d in ("int32", "int64"):
        return (IPA, IPB) if op == "Pow" else (IA, IB)
    return (PA, PB) if op == "Pow" else (FA, FB)


def binary_cases():
    cases = []
    for op in ARITH + COMPARE + LOGICAL:
        for d in ALL:
            if not binary_supported(op, d):
                continue
            a, b = operands(op, d)
            cases.append(bcase(f"{op}/{d}", op, a, d, b, d))
        for d in ("float32", "float64", "float16"):
            if op not in LOGICAL:
                cases.append(bcase(f"{op}/{d}/special", op, SA, d, SB, d))
        cases.append(bcase(f"{op}/0d", op, np.float32(2.5), "float32", np.float32(-1.5), "float32"))
        cases.append(bcase(f"{op}/empty", op, np.zeros((0, 3)), "float32", [1, 2, 3], "float32"))
    for op in ("FloorDivide", "Remainder"):
        for d in INTS + ["bool"]:
            a = [[7, 0, 255 if d == "uint8" else -7, 1]] if d != "bool" else [[True, False, True, False]]
            cases.append(bcase(f"{op}/{d}/zero", op, a, d, [[0, 0, 0, 0]], d))
    for d in ("int32", "int64"):
        cases.append(bcase(f"Pow/{d}/negative", "Pow", [1, -1, -1, 2, 0, 5, -2], d,
                           [-1, -1, -2, -1, -3, -2, -5], d))
        cases.append(bcase(f"Pow/{d}/wrap", "Pow", [7, -3, 2], d, [20, 41, 63], d))
    cases.append(bcase("Div/float32/zero", "Div", [1, -1, 0, -0.0], "float32", [0, 0, 0, 0], "float32"))
    # Maximum and Minimum put NaN on either side
    cases.append(bcase("Maximum/float32/nan", "Maximum", [math.nan, 1, math.nan, -1], "float32",
                       [1, math.nan, math.nan, -2], "float32"))
    cases.append(bcase("Minimum/float64/nan", "Minimum", [math.nan, 1, math.nan, -1], "float64",
                       [1, math.nan, math.nan, -2], "float64"))
    return cases


BROADCAST_SHAPES = [
    ("row", (2, 3), (3,)), ("column", (2, 3), (2, 1)), ("scalar_right", (2, 3), ()),
    ("scalar_left", (), (2, 3)), ("both", (2, 1), (1, 3)), ("rank3", (3, 1, 2), (4, 1)),
    ("leading", (1, 3), (4, 2, 3)), ("0d", (), ()), ("empty_row", (0, 3), (3,)),
    ("empty_both", (2, 0), (2, 1)), ("empty_one", (1,), (0,)),
]
# longer than one scratch tile (512) of the kernels' gather path
LONG_SHAPES = [("long_row", (2, 600), (600,)), ("long_scalar", (2, 600), ())]


def values(shape, seed, ints=False, positive=False):
    n = int(np.prod(shape)) if shape else 1
    r = np.random.default_rng(seed)
    if ints:
        v = r.integers(1 if positive else -9, 10, n)
    else:
        v = np.round(r.uniform(0.25 if positive else -4, 4, n) * 4) / 4
        v[v == 0] = 0.5
    return v.reshape(shape)


def broadcast_cases():
    cases = []
    specs = [("Add", "float32"), ("Sub", "float32"), ("Mul", "float64"), ("Div", "float32"),
             ("Maximum", "float32"), ("Minimum", "float64"), ("Less", "float32"),
             ("GreaterEqual", "int32"), ("Pow", "float32"), ("FloorDivide", "int32"),
             ("Remainder", "float64"), ("Sub", "float16"), ("Mul", BF), ("Add", "int64"),
             ("Sub", "uint8"), ("LogAddExp", "float32"), ("Equal", "complex64"), ("Add", "complex64")]
    long_specs = [("Less", "float32"), ("FloorDivide", "int32"), ("Sub", "float16")]
    for op, d in specs:
        for label, sa, sb in BROADCAST_SHAPES + (LONG_SHAPES if (op, d) in long_specs else []):
            ints = d in INTS
            positive = op in ("Pow", "FloorDivide") or d == "uint8"
            a = values(sa, 1, ints, positive)
            b = values(sb, 2, ints, True)
            if d == "complex64":
                a = a + 1j * values(sa, 3)
                b = b - 1j * values(sb, 4)
            cases.append(bcase(f"{op}/{d}/broadcast/{label}", op, a, d, b, d))
    return cases


def promotion_cases():
    cases = []
    a = [[1, 0, 3], [2, 1, 0]]
    b = [[2, 1, 0], [1, 1, 4]]
    for da in ALL:
        for db in ALL:
            for op in ("Add", "Mul", "Sub", "Less", "Div", "Equal"):
                d = compute_dtype(op, da, db)
                if not binary_supported(op, d):
                    continue
                cases.append(bcase(f"{op}/promote/{da}+{db}", op, a, da, b, db))
    return cases


# ---------------------------------------------------------------- scalar

SCALAR_OPS = {"AddScalar": "Add", "SubScalar": "Sub", "MulScalar": "Mul", "DivScalar": "Div",
              "PowScalar": "Pow", "MaximumScalar": "Maximum", "MinimumScalar": "Minimum"}


def scalar_dtype(d, v):
    if is_inexact(d):
        return d
    if v != math.trunc(v):
        return "float32"
    return "int32" if d == "bool" else d


def scase(name, op, av, da, v):
    a = cast(av, da)
    sd = scalar_dtype(da, v)
    base = SCALAR_OPS[op]
    d = compute_dtype(base, sd, sd)
    r, rd = binary_ref(base, cast(cast(a, sd), d), cast(np.array(v), d), d)
    return case(name, op, [arr(a, da)], [out_enc(r, rd)], v=v)


def scalar_cases():
    cases = []
    for op, base in SCALAR_OPS.items():
        for d in ALL:
            if d == "complex64" and base in ("Maximum", "Minimum"):
                continue
            av = {"bool": [[True, False, True]], "uint8": [[3, 0, 200]], "complex64": [[1 + 2j, -0.5j, 3]]}.get(
                d, [[-3, 0, 2.5]] if d in FLOATS else [[-3, 0, 7]])
            if base == "Pow" and d in FLOATS:
                av = [[0.5, 2, 3]]
            for v in (2.0, 0.5, -1.0):
                if d == "uint8" and v < 0:
                    continue
                if base == "Pow" and v < 0 and not is_inexact(d):
                    continue  # an error at the call, as in numpy (TestPowScalarNegativeIntegerExponent)
                cases.append(scase(f"{op}/{d}/{v}", op, av, d, v))
    # special values
    cases.append(scase("MaximumScalar/float32/nan", "MaximumScalar", [math.nan, -1, 3], "float32", 0.0))
    cases.append(scase("MinimumScalar/float64/nan", "MinimumScalar", [math.nan, -1, 3], "float64", 0.0))
    cases.append(scase("DivScalar/float32/zero", "DivScalar", [1, -1, 0], "float32", 0.0))
    cases.append(scase("MulScalar/float16/round", "MulScalar", [1.5, 2, -7], "float16", 3.3))
    cases.append(scase("AddScalar/int64/large", "AddScalar", [2 ** 40, -(2 ** 41)], "int64", 2.0 ** 45))
    cases.append(scase("AddScalar/float32/0d", "AddScalar", np.float32(1.5), "float32", 2.0))
    cases.append(scase("MulScalar/int32/empty", "MulScalar", np.zeros((0, 2)), "int32", 3.0))
    return cases


# ---------------------------------------------------------------- where

def wcase(name, cv, dc, xv, dx, yv, dy):
    c, x, y = cast(cv, dc), cast(xv, dx), cast(yv, dy)
    d = promote(dx, dy)
    r = np.where(cast(c, "bool"), cast(x, d), cast(y, d))
    return case(name, "Where", [arr(c, dc), arr(x, dx), arr(y, dy)], [out_enc(r, d)])


def where_cases():
    cases = []
    cond = [[True, False, True], [False, False, True]]
    for d in ALL:
        x = [[1, 2, 3], [4, 5, 6]] if d != "bool" else [[True, True, True], [True, True, True]]
        y = [[-1, -2, -3], [-4, -5, -6]] if d not in ("bool", "uint8") else [[0, 0, 0], [0, 0, 0]]
        if d == "complex64":
            x = np.array(x) + 1j
        cases.append(wcase(f"Where/{d}", cond, "bool", x, d, y, d))
    cases.append(wcase("Where/broadcast", [True, False, True], "bool", [[1], [2]], "float32", 9.5, "float32"))
    cases.append(wcase("Where/broadcast_cond", [[True], [False]], "bool", [1, 2, 3], "int32", [[7, 8, 9]], "int32"))
    cases.append(wcase("Where/promote", cond, "bool", [[1, 2, 3], [4, 5, 6]], "int32", 0.5, "float32"))
    cases.append(wcase("Where/float_cond", [[0.5, 0, -1], [0, math.nan, 0]], "float32",
                       [[1, 2, 3], [4, 5, 6]], "float64", [[0, 0, 0], [0, 0, 0]], "float64"))
    cases.append(wcase("Where/special", [True, False, True, False], "bool",
                       [math.nan, 1, -0.0, 2], "float32", [0, math.inf, 1, math.nan], "float32"))
    cases.append(wcase("Where/0d", np.bool_(True), "bool", np.float32(1), "float32", np.float32(2), "float32"))
    cases.append(wcase("Where/empty", np.zeros((0, 2), bool), "bool", [1, 2], "int64", 0, "int64"))
    cases.append(wcase("Where/long", np.arange(3000) % 3 == 0, "bool", np.arange(3000), "float32",
                       -np.arange(3000), "float32"))
    return cases


# ---------------------------------------------------------------- creation

def ccase(name, op, expected, d, inputs=(), **params):
    return case(name, op, list(inputs), [out_enc(cast(expected, d), d)], dtype=d, **params)


def creation_cases():
    cases = []
    for d in ALL:
        for shape in ([2, 3], [], [0, 4]):
            tag = "x".join(map(str, shape)) or "0d"
            cases.append(ccase(f"Zeros/{d}/{tag}", "Zeros", np.zeros(shape), d, shape=shape))
            cases.append(ccase(f"Ones/{d}/{tag}", "Ones", np.ones(shape), d, shape=shape))
            cases.append(ccase(f"Full/{d}/{tag}", "Full", np.full(shape, 2.5), d, shape=shape, v=2.5))
        cases.append(ccase(f"Full/{d}/negative", "Full", np.full([3], -3.75), d, shape=[3], v=-3.75)
                     if d != "uint8" else ccase("Full/uint8/large", "Full", np.full([3], 255.0), d,
                                                shape=[3], v=255.0))
        src = cast([[1, 0, 3], [2, 1, 0]], d)
        cases.append(ccase(f"ZerosLike/{d}", "ZerosLike", np.zeros((2, 3)), d, [arr(src, d)]))
        cases.append(ccase(f"OnesLike/{d}", "OnesLike", np.ones((2, 3)), d, [arr(src, d)]))
        cases.append(ccase(f"FullLike/{d}", "FullLike", np.full((2, 3), 7.0), d, [arr(src, d)], v=7.0))
        cases.append(ccase(f"Eye/{d}", "Eye", np.eye(3, 4, 1), d, n=3, m=4, k=1))
    for n, m, k in ((3, 3, 0), (4, 3, -1), (2, 5, 7), (2, 5, -7), (0, 3, 0), (3, 0, 0), (1, 1, 0), (5, 2, -3)):
        cases.append(ccase(f"Eye/{n}x{m}/k{k}", "Eye", np.eye(n, m, k), "float32", n=n, m=m, k=k))
    aranges = [(0, 5, 1, "int32"), (0, 1, 0.1, "float32"), (5, 0, -1.5, "float64"), (0, 0, 1, "float32"),
               (1, 0, 1, "int64"), (-1, 1, 0.25, "float16"), (0, 10, 3, "uint8"), (-2, 2, 0.5, BF),
               (0.5, 3, 1, "complex64"), (-1, 1, 0.1, "float64"), (2, -3, -1, "int32"),
               (0, 3000, 1, "float32"), (0, 2, 1, "bool")]
    for start, stop, step, d in aranges:
        want = start + np.arange(math.ceil((stop - start) / step)) * float(step)
        ref = np.arange(start, stop, step, dtype=np.float64)
        assert len(want) == len(ref), (start, stop, step)
        cases.append(ccase(f"Arange/{d}/{start}:{stop}:{step}", "Arange", ref, d,
                           start=start, stop=stop, step=step))
    linspaces = [(0, 1, 5, "float32"), (0, 1, 1, "float32"), (0, 1, 0, "float64"), (-1, 3, 7, "float64"),
                 (0, 10, 4, "int32"), (1, -1, 9, "float16"), (0, 1, 11, BF), (2, 2, 3, "float32"),
                 (0, 1, 2001, "float64"), (-5, 5, 6, "int64"), (0, 1, 3, "complex64")]
    for start, stop, n, d in linspaces:
        cases.append(ccase(f"Linspace/{d}/{start}:{stop}:{n}", "Linspace", np.linspace(start, stop, n), d,
                           start=start, stop=stop, n=n))
    return cases


# ---------------------------------------------------------------- new integer dtypes
# int8, int16, uint16, uint32 and uint64 (issue 17): each op that takes
# integers, promotion among every integer dtype, weak scalars, Where,
# creation and AsType both ways. Promotion is array.Promote's: numpy's
# result_type except uint64 with a signed integer, which gives float32
# (MLX; numpy: float64). Float to integer conversions are numpy's on this
# machine (amd64): truncation, and wrapping through int64 for values
# outside the target's range (the cases stay inside int64's).

NEW_INTS = ["int8", "int16", "uint16", "uint32", "uint64"]
EVERY_INT = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
INT_SIZE = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8}


def ipromote(a, b):
    """array.Promote for bool and integer dtypes."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    sa, sb = not a.startswith("u"), not b.startswith("u")
    if sa == sb:
        return a if INT_SIZE[a] >= INT_SIZE[b] else b
    s, u = (a, b) if sa else (b, a)
    n = max(INT_SIZE[s], 2 * INT_SIZE[u])
    return {2: "int16", 4: "int32", 8: "int64"}.get(n, "float32")


def ext(d):
    info = np.iinfo(d)
    return int(info.min), int(info.max)


def ivals(d, kind="any"):
    lo, hi = ext(d)
    if kind == "small":
        return [[0, 1, 2], [3, 5, 7]] if lo == 0 else [[-3, -1, 0], [1, 2, 5]]
    if lo == 0:
        return [[0, 1, 2], [3, 200, hi]]
    return [[lo, -3, 0], [1, 5, hi]]


def int_binary_ref(op, a, b, d):
    if op == "Pow":
        if a.dtype.kind == "u":  # no negative exponents; int_pow's np.where would widen uint64 to float64
            return np.power(a, b, dtype=a.dtype), d
        return int_pow(a, b), d
    if op in ("FloorDivide", "Remainder"):
        with np.errstate(all="ignore"):
            r = NP_BINARY[op](a, b)
        return np.where(b == 0, 0, r).astype(a.dtype), d
    r = NP_BINARY[op](a, b)
    if op in COMPARE:
        return r, "bool"
    return r.astype(npdt(d)), d


def newint_cases():
    cases = []
    for d in NEW_INTS:
        for op in list(KEEP_FUNCS) + PREDICATES:
            x = np.array(ivals(d), dtype=np.uint64 if d == "uint64" else None).astype(d)
            r, rd = unary_ref(op, x, d) if op not in ("Floor", "Ceil", "Round") else (x.copy(), d)
            cases.append(case(f"{op}/{d}", op, [enc(x)], [out_enc(r, rd)]))
        for op in ("Exp", "Sqrt", "Sin"):
            x = np.array(ivals(d, "small") if op != "Sqrt" else [[0, 1, 2], [3, 5, 7]]).astype(d)
            r = FLOAT_FUNCS[op](x.astype(np.float32))
            cases.append(case(f"{op}/{d}", op, [enc(x)], [out_enc(r.astype(np.float32), "float32")]))
        # binary: wrapping arithmetic, floored division, comparisons
        lo, hi = ext(d)
        a = np.array([[hi, lo, 7, 0], [hi, 9, 0, 1]], dtype=np.uint64 if d == "uint64" else object).astype(d)
        b = np.array([[1, 1, 2, 3], [hi, 2, 5, 1]], dtype=np.uint64 if d == "uint64" else object).astype(d)
        if lo < 0:
            a = np.array([[hi, lo, -7, 7], [lo, 9, -2, 1]]).astype(d)
            b = np.array([[1, -1, 2, -2], [-1, 2, 5, -1]]).astype(d)
        for op in ["Add", "Sub", "Mul", "FloorDivide", "Remainder", "Maximum", "Minimum"] + COMPARE:
            r, rd = int_binary_ref(op, a, b, d)
            cases.append(case(f"{op}/{d}", op, [enc(a), enc(b)], [out_enc(r, rd)]))
        for op in ("FloorDivide", "Remainder"):
            z = np.zeros_like(a)
            r, rd = int_binary_ref(op, a, z, d)
            cases.append(case(f"{op}/{d}/zero", op, [enc(a), enc(z)], [out_enc(r, rd)]))
        pa = np.array([[2, 3, 0, 5], [7, 1, 1, 2]]).astype(d)
        pb = np.array([[3, 3, 0, 2], [20, 5, 7, 10]]).astype(d)
        r, rd = int_binary_ref("Pow", pa, pb, d)
        cases.append(case(f"Pow/{d}", "Pow", [enc(pa), enc(pb)], [out_enc(r, rd)]))
        for op in ("Div", "ArcTan2"):
            x, y = np.array([[1, 2, 3]]).astype(d), np.array([[2, 4, 5]]).astype(d)
            f = np.true_divide if op == "Div" else np.arctan2
            r = f(x.astype(np.float32), y.astype(np.float32)).astype(np.float32)
            cases.append(case(f"{op}/{d}", op, [enc(x), enc(y)], [out_enc(r, "float32")]))
        # weak scalars keep the dtype; a fraction gives float32
        x = np.array([[1, 2, 3]]).astype(d)
        for op, base in (("AddScalar", np.add), ("MulScalar", np.multiply), ("MaximumScalar", np.maximum)):
            cases.append(case(f"{op}/{d}/2.0", op, [enc(x)], [enc(base(x, np.array(2).astype(d)).astype(d))], v=2.0))
            r = base(x.astype(np.float32), np.float32(0.5)).astype(np.float32)
            cases.append(case(f"{op}/{d}/0.5", op, [enc(x)], [enc(r)], v=0.5))
        # Where and creation
        cond = np.array([[True, False, True], [False, False, True]])
        xw, yw = np.array([[1, 2, 3], [4, 5, 6]]).astype(d), np.array([[hi, 0, hi], [0, 1, 2]], dtype=np.uint64 if d == "uint64" else object).astype(d)
        cases.append(case(f"Where/{d}", "Where", [enc(cond), enc(xw), enc(yw)], [enc(np.where(cond, xw, yw))]))
        cases.append(case(f"Zeros/{d}/2x3", "Zeros", [], [enc(np.zeros((2, 3), d))], shape=[2, 3], dtype=d))
        cases.append(case(f"Ones/{d}/2x3", "Ones", [], [enc(np.ones((2, 3), d))], shape=[2, 3], dtype=d))
        cases.append(case(f"Full/{d}/7", "Full", [], [enc(np.full((3,), 7, d))], shape=[3], v=7.0, dtype=d))
        cases.append(case(f"Arange/{d}/0:10:3", "Arange", [], [enc(np.arange(0, 10, 3, dtype=d))],
                          start=0, stop=10, step=3, dtype=d))
        cases.append(case(f"Eye/{d}", "Eye", [], [enc(np.eye(3, 4, 1, dtype=d))], n=3, m=4, k=1, dtype=d))
    # promotion among every integer dtype and bool, and with float32
    a = [[1, 0, 3], [2, 1, 0]]
    b = [[2, 1, 0], [1, 1, 4]]
    for da in EVERY_INT + ["bool"]:
        for db in EVERY_INT + ["bool", "float32", "float16"]:
            if da not in NEW_INTS and db not in NEW_INTS:
                continue
            x, y = np.array(a).astype(npdt(da)), np.array(b).astype(npdt(db))
            if db in ("float32", "float16"):
                d = db
            else:
                d = ipromote(da, db)
            for op in ("Add", "Mul", "Less"):
                if d == "bool" and op == "Add":
                    continue
                r = NP_BINARY[op](x.astype(npdt(d)), y.astype(npdt(d)))
                cases.append(case(f"{op}/promote/{da}+{db}", op, [enc(x), enc(y)],
                                  [enc(r if op == "Less" else r.astype(npdt(d)))]))
    # AsType both ways: integers wrap; floats truncate toward zero
    every = EVERY_INT + ["bool", "float16", "float32", "float64", "complex64"]
    for d in NEW_INTS:
        lo, hi = ext(d)
        src = np.array([lo, -1 if lo < 0 else 1, 0, 1, 100, hi], dtype=np.uint64 if d == "uint64" else object).astype(d)
        for to in every:
            r = src.astype(npdt(to))
            cases.append(case(f"AsType/{d}->{to}", "AsType", [enc(src)], [enc(r)], dtype=to))
        for frm in every:
            if frm in NEW_INTS and frm == d:
                continue
            if frm in ("float16", "float32", "float64", "complex64"):
                v = [-2.75, -1.5, -0.5, 0.0, 0.5, 1.5, 2.75, 100.25, 127.0]
                if not (np.dtype(d).kind == "u"):
                    v += [float(lo)]
                x = np.array(v).astype(npdt(frm))
                r = (x.real if frm == "complex64" else x).astype(np.float64)
                r = np.trunc(r).astype(np.int64).astype(d)
            elif frm == "bool":
                x = np.array([True, False, True])
                r = x.astype(d)
            else:
                flo, fhi = ext(frm)
                x = np.array([flo, 0, 1, 127, fhi], dtype=np.uint64 if frm == "uint64" else object).astype(frm)
                r = x.astype(d)
            cases.append(case(f"AsType/{frm}->{d}/values", "AsType", [enc(x)], [enc(r)], dtype=d))
    # float to unsigned below zero and to narrow types beyond their range wrap through int64 (numpy on amd64)
    x = np.array([-1.0, -2.5, 300.0, 65537.0, -129.0], np.float32)
    for d in ["uint8", "int8", "int16", "uint16", "uint32", "uint64"]:
        with np.errstate(all="ignore"):
            r = x.astype(d)
        cases.append(case(f"AsType/float32->{d}/wrap", "AsType", [enc(x)], [enc(r)], dtype=d))
    # uint64 beyond 2^63 from float64
    x = np.array([2.0 ** 63, 2.0 ** 64 - 2048, 1e19], np.float64)
    cases.append(case("AsType/float64->uint64/large", "AsType", [enc(x)], [enc(x.astype(np.uint64))], dtype="uint64"))
    return cases


def main():
    cases = (unary_cases() + binary_cases() + broadcast_cases() + promotion_cases() + scalar_cases()
             + where_cases() + creation_cases() + newint_cases())
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, sorted(dup)[:10]
    write("elementwise.json", cases)


if __name__ == "__main__":
    main()
