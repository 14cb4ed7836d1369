"""numpy's repr of a table of arrays, for TestStringMatchesNumpy in
array/print_test.go.

Run with /usr/bin/python3 from this directory; it rewrites print.json:
{"numpy": "<version>", "cases": [case...]} where a case is
  {"name", "dtype", "shape", "data", "repr"}
and, for a strided view, also "strides" and "offset" (in elements, into
data). data holds the raw bits of the (base) array in row-major order, so
the Go side rebuilds it exactly: bools and integers as numbers, float16,
float32 and float64 as their unsigned bit patterns, complex64 as two
float32 bit patterns (real, imaginary) per element. The large (summarised)
arrays have "formula": [mul, mod, div] instead of data: element i is
v = ((i*mul) % mod) / div in float64, cast to the dtype (bool: v == 0;
complex64: v - v*1j), with div chosen so every cast is exact.

numpy leaves "dtype=" out of the repr of float64, int64 and bool arrays;
fathom always prints it (as MLX does). The generator asks numpy itself to
print it, by emptying the list of dtypes numpy treats as implied, so the
line-length rule that can move the dtype to its own line applies exactly as
numpy applies it.
"""
import json
import pathlib

import numpy as np
from numpy.core import arrayprint
from numpy.lib.stride_tricks import as_strided

HERE = pathlib.Path(__file__).resolve().parent
BITS = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}

arrayprint._typelessdata = []


def bits(flat):
    t = flat.dtype.type
    if t == np.bool_:
        return [int(v) for v in flat]
    if np.issubdtype(flat.dtype, np.integer):
        return [int(v) for v in flat]
    if t == np.complex64:
        return [int(v) for v in flat.view(np.float32).view(np.uint32)]
    return [int(v) for v in flat.view(BITS[t])]


def case(name, a):
    a = np.asarray(a)
    return {"name": name, "dtype": str(a.dtype), "shape": list(a.shape),
            "data": bits(np.ascontiguousarray(a).reshape(-1)), "repr": repr(a)}


def formula(name, dtype, shape, mul, mod, div):
    v = ((np.arange(int(np.prod(shape)), dtype=np.int64) * mul) % mod) / div
    if dtype == np.bool_:
        a = v == 0
    elif dtype == np.complex64:
        a = (v - 1j * v).astype(dtype)
        assert np.all(a.real == v)
    else:
        a = v.astype(dtype)
        assert np.all(a == v)
    c = case(name, a.reshape(shape))
    del c["data"]
    c["formula"] = [mul, mod, div]
    return c


def view(name, base, shape, strides, offset=0):
    """A strided view of base (C-contiguous); strides and offset in elements."""
    base = np.ascontiguousarray(base)
    flat = base.reshape(-1)
    isz = base.dtype.itemsize
    v = as_strided(flat[offset:], shape=shape, strides=[s * isz for s in strides])
    c = case(name, v)
    c["data"] = bits(flat)
    c["strides"] = list(strides)
    c["offset"] = offset
    return c


def main():
    rs = np.random.RandomState(7)
    f32, f64, f16, c64 = np.float32, np.float64, np.float16, np.complex64
    nan, inf = np.nan, np.inf
    cases = [
        # integers
        case("int32 2x2", np.array([[1, 2], [3, 4]], np.int32)),
        case("int32 mixed widths", np.array([-5, 0, 123456, -7], np.int32)),
        case("int64 wraps", np.arange(30, dtype=np.int64)),
        case("int64 extremes", np.array([-2**63, 2**63 - 1, 0], np.int64)),
        case("uint8", np.array([0, 7, 255], np.uint8)),
        case("int8 extremes", np.array([-128, 127, 0], np.int8)),
        case("int16 extremes", np.array([[-32768, 32767], [0, -1]], np.int16)),
        case("uint16 extremes", np.array([0, 65535, 9], np.uint16)),
        case("uint32 extremes", np.array([0, 2**32 - 1, 12], np.uint32)),
        case("uint64 extremes", np.array([0, 2**64 - 1, 2**63, 5], np.uint64)),
        case("int32 3-D", np.arange(24, dtype=np.int32).reshape(2, 3, 4)),
        case("int32 4-D", np.arange(16, dtype=np.int32).reshape(2, 2, 2, 2) - 8),
        formula("int64 summarised 1-D", np.int64, (2000,), 1, 10**9, 1),
        formula("int32 summarised 2-D", np.int32, (40, 50), 1, 10**9, 1),
        formula("int32 summarised 1001", np.int32, (1001,), 1, 10**9, 1),
        formula("int32 summarised short axis", np.int32, (2, 1001), 1, 10**9, 1),
        formula("uint8 summarised 3-D", np.uint8, (11, 12, 13), 1, 256, 1),
        case("int32 0-d", np.array(7, np.int32)),
        case("int64 0-d negative", np.array(-42, np.int64)),
        # float32
        case("float32 fractions", np.array([0.5, 1.25, -3.0], f32)),
        case("float32 1e-7", np.array([1e-7], f32)),
        case("float32 1e-7 and 1", np.array([1e-7, 1.0], f32)),
        case("float32 ratio 1000", np.array([1.0, 1000.0], f32)),
        case("float32 ratio over 1000", np.array([1.0, 1000.5], f32)),
        case("float32 0.0001", np.array([0.0001, 1.0], f32)),
        case("float32 1e8", np.array([1e8, 1.0], f32)),
        case("float32 just under 1e8", np.array([99999992.0, 1e5], f32)),
        case("float32 nan inf", np.array([nan, inf, -inf, 1.5], f32)),
        case("float32 all nan", np.array([nan, nan], f32)),
        case("float32 inf only", np.array([inf, inf], f32)),
        case("float32 nan and -inf", np.array([nan, -inf], f32)),
        case("float32 nan in sci", np.array([nan, 1e-9, -2.5e10], f32)),
        case("float32 signed zeros", np.array([-0.0, 0.0, 1.0], f32)),
        case("float32 thirds", np.array([1 / 3, 2 / 3, -1 / 3], f32)),
        case("float32 long", np.array([123456.78, 0.5], f32)),
        case("float32 random 3x4", rs.rand(3, 4).astype(f32)),
        case("float32 random 10x10", (rs.randn(10, 10) * 100).astype(f32)),
        case("float32 wrapped rows", (np.arange(40, dtype=f32) * 1.1).reshape(2, 20)),
        case("float32 dtype on new line", np.linspace(0, 1, 9).astype(f32)),
        case("float32 size-1 axes", np.arange(12, dtype=f32).reshape(3, 1, 4) / 4),
        case("float32 1x1x1", np.ones((1, 1, 1), f32)),
        formula("float32 summarised 2-D", f32, (40, 50), 7919, 10007, 1024),
        formula("float32 summarised 3-D", f32, (11, 12, 13), 7919, 10007, 2**30),
        case("float32 0-d", np.array(2.5, f32)),
        case("float32 0-d sci", np.array(1e-7, f32)),
        case("float32 0-d nan", np.array(nan, f32)),
        case("float32 zeros", np.zeros(5, f32)),
        case("float32 tiny subnormal", np.array([1e-45, 1.0], f32)),
        case("float32 max", np.array([np.finfo(f32).max, -np.finfo(f32).max], f32)),
        case("float32 cut at 8 places", np.array([0.00012345678, 0.5], f32)),
        case("float32 negative sci", np.array([-1e-5, 2.5e-5, -3e3], f32)),
        case("float32 large integers", np.array([16777217.0, 33554436.0, 99999992.0], f32)),
        case("float32 mixed widths wrap", np.array([1.5, -22.25, 333.125, 4.0625] * 7, f32)),
        case("float32 3e10 boundary", np.array([30000001024.0, 29999998976.0], f32)),
        # float64
        case("float64 0.1 0.2 0.3", np.array([0.1, 0.2, 0.1 + 0.2])),
        case("float64 three-digit exponent", np.array([1e-100, 1e5])),
        case("float64 pi multiples", np.pi * np.arange(1, 6)),
        case("float64 ties at 8 digits", np.array([0.001953125, 0.005859375])),
        case("float64 cut to 8 digits", np.array([123456.789, 0.5, 1 / 3])),
        case("float64 large", np.array([1e16, 1e20, -1e300])),
        case("float64 sci cut to 9 digits", np.array([np.pi * 1e10, np.e * 1e-10])),
        case("float64 wraps", np.arange(30.0)),
        case("float64 subnormal", np.array([5e-324, 1.0])),
        case("float64 zero in sci", np.array([0.0, 1e-9])),
        case("float64 1e-5 and 1e5", np.array([1e-5, 1e5])),
        case("float64 0-d", np.array(1.5)),
        case("float64 near 1e8", np.array([99999999.5, 0.25])),
        formula("float64 summarised rows wrap", f64, (10, 200), 7919, 10007, 8),
        case("float64 0-d nan", np.array(nan)),
        formula("float64 summarised", f64, (1200,), 7919, 10007, 7),
        # bool
        case("bool", np.array([True, False, True])),
        case("bool all true", np.array([True, True])),
        case("bool 2x3", np.array([[True, False, False], [False, True, True]])),
        case("bool 0-d true", np.array(True)),
        case("bool 0-d false", np.array(False)),
        formula("bool summarised", np.bool_, (1500,), 1, 3, 1),
        # float16
        case("float16 shortest digits", np.array([0.1, 0.2, 3.14], f16)),
        case("float16 sci", np.array([0.1, 65504], f16)),
        case("float16 subnormals", np.array([6e-8, 1e-5, -3e-6], f16)),
        case("float16 nan inf", np.array([nan, -inf, 1], f16)),
        case("float16 ratio in half precision", np.array([1.0, 1000.5, 999.0], f16)),
        case("float16 random", (rs.randn(4, 5) * 10).astype(f16)),
        formula("float16 summarised", f16, (1100,), 7919, 1009, 64),
        case("float16 0-d", np.array(0.1, f16)),
        case("float16 integers to the units", np.array([65504, 1000, -2050], f16)),
        case("float16 max in sci", np.array([65504, 0.01], f16)),
        # complex64
        case("complex64", np.array([1 + 2j, -3.5 - 0.25j, nan], c64)),
        case("complex64 units", np.array([0, 1j, -1j, -1], c64)),
        case("complex64 sci parts", np.array([1e-7 + 1j, 2 + 0j], c64)),
        case("complex64 inf", np.array([complex(inf, -inf), complex(1, nan)], c64)),
        case("complex64 2-D", (rs.randn(3, 3) + 1j * rs.randn(3, 3)).astype(c64)),
        case("complex64 sci imaginary", np.array([1 + 1e-9j, 2 - 3e5j], c64)),
        case("complex64 zero", np.array([0j], c64)),
        case("complex64 0-d", np.array(1.5 - 2j, c64)),
        formula("complex64 summarised", c64, (1100,), 7919, 10007, 16),
        # empty
        case("float32 empty", np.zeros((0,), f32)),
        case("float32 empty 0x3", np.zeros((0, 3), f32)),
        case("int32 empty 2x0x4", np.zeros((2, 0, 4), np.int32)),
        case("bool empty", np.zeros((0,), bool)),
        case("float64 empty 3x0", np.zeros((3, 0))),
        # strided views
        view("int32 transposed", np.arange(6, dtype=np.int32), (3, 2), (1, 3)),
        view("float32 stepped slice", np.arange(10, dtype=f32) / 8, (4,), (2,), offset=1),
        view("float32 broadcast row", np.array([1.5, -2, 3], f32), (4, 3), (0, 1)),
        view("int64 reversed", np.arange(5, dtype=np.int64), (5,), (-1,), offset=4),
        view("float64 transposed", np.arange(20.0) / 7, (5, 4), (1, 5)),
    ]
    with open(HERE / "print.json", "w") as f:
        # one case a line: readable diffs without a line per number
        f.write('{"numpy": %s, "cases": [\n' % json.dumps(np.__version__))
        f.write(",\n".join(json.dumps(c) for c in cases))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
