"""numpy reference cases for the matrix-structure ops: writes structure.json.

Run with Debian's numpy: /usr/bin/python3 ops/testdata/gen_structure.py

Diagonal, Diag, Trace, Tri, Tril, Triu, Kron, Inner, VecDot and AddMM, for
every dtype each takes, with negative and out-of-range offsets, empty and
batched inputs. numpy 1.24 has no vecdot; its numpy 2 definition,
sum(conj(a) * b, axis) over the broadcast operands, stands in. Trace's
result has fathom's Sum dtype (narrow integers and bool widen to 32 bits,
keeping their signedness), which numpy's dtype argument gives.
"""
import numpy as np

from refgen import case, write

rng = np.random.default_rng(1919)

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
       "float16", "float32", "float64", "complex64"]
NUMERIC = [d for d in ALL if d != "bool"]


def arr(shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if dtype.startswith("uint"):
        return rng.integers(0, 6, size=shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-5, 6, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def sum_dtype(dt):
    return {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}.get(dt, dt)


def main():
    cases = []
    # Diagonal: a view, so every dtype on one shape, and the offsets and
    # axes on float64.
    for dt in ALL:
        a = arr((3, 4), dt)
        cases.append(case("Diagonal %s" % dt, "Diagonal", [a], [np.diagonal(a, 1)], offset=1, axis1=0, axis2=1))
    for shape, off, ax1, ax2 in [((3, 4), 0, 0, 1), ((3, 4), -1, 0, 1), ((3, 4), 2, 0, 1), ((3, 4), 3, 0, 1),
                                 ((3, 4), 4, 0, 1), ((3, 4), -3, 0, 1), ((3, 4), (1 << 31) - 1, 0, 1),
                                 ((3, 4), -(1 << 31) + 1, 0, 1), ((4, 3), 1, 1, 0), ((2, 3, 4), 0, 1, 2),
                                 ((2, 3, 4), 1, -1, 0), ((2, 3, 4), -1, 2, 0), ((2, 3, 4), 0, -3, -2),
                                 ((0, 3), 0, 0, 1), ((2, 0, 3), 0, 1, 2), ((3, 3), 0, 1, 0)]:
        a = arr(shape, "float64")
        cases.append(case("Diagonal %s offset %d axes %d %d" % (shape, off, ax1, ax2), "Diagonal", [a],
                          [np.diagonal(a, off, ax1, ax2)], offset=off, axis1=ax1, axis2=ax2))
    # Diag: 1-D builds a matrix, 2-D takes a diagonal.
    for dt in ALL:
        v = arr((3,), dt)
        cases.append(case("Diag build %s" % dt, "Diag", [v], [np.diag(v, -1)], k=-1))
        m = arr((3, 4), dt)
        cases.append(case("Diag extract %s" % dt, "Diag", [m], [np.diag(m, 1)], k=1))
    for shape, k in [((3,), 0), ((3,), 2), ((1,), -3), ((0,), 2), ((0,), 0), ((4, 3), 0), ((4, 3), -2),
                     ((4, 3), 10), ((3, 4), -10)]:
        a = arr(shape, "float32")
        cases.append(case("Diag %s k %d" % (shape, k), "Diag", [a], [np.diag(a, k)], k=k))
    # Trace, in fathom's Sum dtype.
    for dt in ALL:
        a = arr((3, 4), dt)
        cases.append(case("Trace %s" % dt, "Trace", [a], [np.trace(a, 0, dtype=sum_dtype(dt))],
                          offset=0, axis1=0, axis2=1))
    for shape, off, ax1, ax2 in [((3, 4), 1, 0, 1), ((3, 4), -2, 0, 1), ((3, 4), 9, 0, 1), ((2, 3, 4), 0, 1, 2),
                                 ((2, 3, 4), 1, 2, 0), ((2, 3, 4), 0, -1, -3), ((0, 0), 0, 0, 1),
                                 ((2, 0, 0), 0, 1, 2)]:
        a = arr(shape, "float64")
        cases.append(case("Trace %s offset %d axes %d %d" % (shape, off, ax1, ax2), "Trace", [a],
                          [np.trace(a, off, ax1, ax2)], offset=off, axis1=ax1, axis2=ax2))
    # Tri.
    for dt in ALL:
        cases.append(case("Tri %s" % dt, "Tri", [], [np.tri(3, 4, 1, dtype=dt)], n=3, m=4, k=1, dtype=dt))
    for n, m, k in [(3, 4, 0), (4, 3, -1), (3, 3, 2), (3, 5, 10), (3, 5, -10), (0, 3, 0), (2, 0, 0),
                    (3, 3, 1 << 40), (3, 3, -(1 << 40))]:
        cases.append(case("Tri %d %d k %d" % (n, m, k), "Tri", [], [np.tri(n, m, k, dtype="float32")],
                          n=n, m=m, k=k, dtype="float32"))
    # Tril and Triu.
    for name, f in [("Tril", np.tril), ("Triu", np.triu)]:
        for dt in ALL:
            a = arr((3, 4), dt)
            cases.append(case("%s %s" % (name, dt), name, [a], [f(a, -1)], k=-1))
        for shape, k in [((3, 4), 0), ((4, 3), 1), ((2, 3, 4), 0), ((2, 2, 3, 3), -1), ((5,), 1), ((5,), 0),
                         ((0, 3), 0), ((2, 0, 3), 1), ((3, 4), 100), ((3, 4), -100), ((3, 3), 1 << 40),
                         ((3, 3), -(1 << 40))]:
            a = arr(shape, "float64")
            cases.append(case("%s %s k %d" % (name, shape, k), name, [a], [f(a, k)], k=k))
    # Kron.
    for dt in NUMERIC:
        a, b = arr((2, 2), dt), arr((2, 3), dt)
        cases.append(case("Kron %s" % dt, "Kron", [a, b], [np.kron(a, b)]))
    for sa, sb in [((3,), (2,)), ((2,), (2, 3)), ((2, 3, 1), (2, 2)), ((), (2, 2)), ((), ()), ((0, 2), (2, 2)),
                   ((2, 2), (2, 0))]:
        a, b = arr(sa, "float64"), arr(sb, "float64")
        cases.append(case("Kron %s %s" % (sa, sb), "Kron", [a, b], [np.kron(a, b)]))
    a, b = arr((2, 2), "int32"), arr((2, 2), "float32")
    # fathom promotes int32 with float32 to float32 (MLX's rule), numpy to
    # float64.
    cases.append(case("Kron int32 float32", "Kron", [a, b], [np.kron(a, b).astype(np.float32)]))
    # Inner (complex values are not conjugated).
    for dt in NUMERIC:
        a, b = arr((2, 3), dt), arr((4, 3), dt)
        cases.append(case("Inner %s" % dt, "Inner", [a, b], [np.inner(a, b)]))
    for sa, sb in [((3,), (3,)), ((2, 2, 3), (3,)), ((3,), (2, 2, 3)), ((), (2, 3)), ((2, 3), ()),
                   ((0, 3), (2, 3)), ((2, 0), (3, 0))]:
        a, b = arr(sa, "float64"), arr(sb, "float64")
        cases.append(case("Inner %s %s" % (sa, sb), "Inner", [a, b], [np.inner(a, b)]))
    # VecDot: sum(conj(a) * b, axis) over the broadcast operands.
    def vecdot(a, b, axis):
        a, b = np.broadcast_arrays(a, b)
        return np.sum(np.conj(a) * b, axis=axis, dtype=np.result_type(a, b))
    for dt in NUMERIC:
        a, b = arr((2, 3), dt), arr((2, 3), dt)
        cases.append(case("VecDot %s" % dt, "VecDot", [a, b], [vecdot(a, b, -1)], axis=-1))
    for sa, sb, axis in [((3,), (3,), 0), ((2, 3), (3,), -1), ((2, 3), (2, 3), 0), ((2, 1, 3), (4, 3), -1),
                         ((2, 1, 3), (4, 3), 1), ((2, 3, 1), (3, 4), 1), ((2, 0), (2, 0), -1), ((0, 3), (3,), 1),
                         ((2, 1), (2, 3), 1)]:
        a, b = arr(sa, "float64"), arr(sb, "float64")
        cases.append(case("VecDot %s %s axis %d" % (sa, sb, axis), "VecDot", [a, b], [vecdot(a, b, axis)],
                          axis=axis))
    # AddMM: alpha * (a @ b) + beta * c; beta = 0 leaves c unread.
    for dt in ["float16", "float32", "float64", "complex64"]:
        c, a, b = arr((2, 4), dt), arr((2, 3), dt), arr((3, 4), dt)
        want = (np.asarray(2, dt) * (a @ b) + np.asarray(0.5, dt) * c).astype(dt)
        cases.append(case("AddMM %s" % dt, "AddMM", [c, a, b], [want], alpha=2.0, beta=0.5))
    for sc, sa, sb, alpha, beta in [((2, 4), (2, 3), (3, 4), 1.0, 1.0), ((4,), (2, 3), (3, 4), 1.0, -1.0),
                                    ((2, 2, 4), (2, 2, 3), (3, 4), 0.5, 2.0), ((1, 4), (2, 2, 3), (2, 3, 4), 1.0, 1.0),
                                    ((2,), (2, 3), (3,), 1.0, 1.0), ((2, 4), (2, 0), (0, 4), 1.0, 1.0),
                                    ((), (2, 3), (3, 4), 1.0, 3.0)]:
        c, a, b = arr(sc, "float64"), arr(sa, "float64"), arr(sb, "float64")
        cases.append(case("AddMM %s %s %s" % (sc, sa, sb), "AddMM", [c, a, b], [alpha * (a @ b) + beta * c],
                          alpha=alpha, beta=beta))
    c, a, b = np.full((2, 4), np.nan), arr((2, 3), "float64"), arr((3, 4), "float64")
    cases.append(case("AddMM beta 0 ignores NaN", "AddMM", [c, a, b], [3.0 * (a @ b)], alpha=3.0, beta=0.0))
    c, a, b = arr((2, 2), "float32"), arr((2, 3), "int32"), arr((3, 2), "float32")
    cases.append(case("AddMM int32 float32", "AddMM", [c, a, b], [(a @ b + c).astype(np.float32)], alpha=1.0,
                      beta=1.0))
    write("structure.json", cases)


if __name__ == "__main__":
    main()
