"""numpy reference cases for the solvers, LU and determinants (ops/linalg_solve.go, linalg/solve.go).

Run with Debian's numpy:  /usr/bin/python3 ops/testdata/gen_linalg_l2.py
It writes ops/testdata/linalg_l2.json.

fathom computes float32 in float64 (gonum's LAPACK is float64 only) and
rounds once, so the float32 references are numpy's float64 results on the
float32 inputs, rounded. numpy has no LU: lu_ref is partial pivoting as
LAPACK's getrf does it (the first largest magnitude in the column).
Solve's b follows numpy 2's rule (only a 1-D b is a vector); this numpy
is 1.24, so vectors of a batch are solved as explicit columns.
"""
import warnings

import numpy as np

from refgen import case, write

# numpy warns of the NaNs the NaN cases are there to record.
warnings.filterwarnings("ignore", category=RuntimeWarning)

rng = np.random.default_rng(21)


def well(shape):
    """Random matrices with a dominant diagonal: well conditioned."""
    a = rng.uniform(-1, 1, shape)
    n = shape[-1]
    return a + n * np.eye(n)


def lu_ref(a):
    """LU with partial pivoting of one m x n matrix: packed lu, LAPACK's
    0-based pivots, and row indices p with a = L[p] @ U."""
    a = np.array(a, dtype=np.float64)
    m, n = a.shape
    k = min(m, n)
    piv = np.zeros(k, dtype=np.int32)
    perm = np.arange(m)
    for j in range(k):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        piv[j] = p
        if p != j:
            a[[j, p]] = a[[p, j]]
            perm[[j, p]] = perm[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    rows = np.empty(m, dtype=np.int32)
    rows[perm] = np.arange(m, dtype=np.int32)
    return a, piv, rows


def batched(f, a, nout):
    """Apply f, which takes one matrix and returns nout arrays, over a's batch."""
    lead = a.shape[:-2]
    flat = a.reshape((int(np.prod(lead)),) + a.shape[-2:])
    res = [f(x) for x in flat]
    outs = []
    for i in range(nout):
        if res:
            parts = np.stack([r[i] for r in res])
        else:
            probe = f(np.eye(a.shape[-2], a.shape[-1]))[i]
            parts = np.zeros((0,) + probe.shape, dtype=probe.dtype)
        outs.append(parts.reshape(lead + parts.shape[1:]))
    return outs


def solve2(a, b):
    """numpy 2's solve: only a 1-D b is a vector. The operands are broadcast
    explicitly so that numpy 1's rule (b of a's rank less one is a stack of
    vectors) never applies."""
    if b.ndim == 1:
        return solve2(a, b[:, None])[..., 0]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if b.shape[-1] == 0 or 0 in batch:
        return np.zeros(b.shape)
    return np.linalg.solve(a, b)


def tri_solve(a, b, upper, unit):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - np.eye(n)) + np.eye(n)
    return solve2(t, b)


cases = []


def add(name, op, inputs, expected, dt, **params):
    ins = [x.astype(dt) if x.dtype.kind == "f" else x for x in inputs]
    wide = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in ins]
    exp = expected(*wide)
    exp = [e.astype(dt) if e.dtype.kind == "f" else e for e in exp]
    cases.append(case("%s/%s" % (name, np.dtype(dt).name), op, ins, exp, **params))


DTYPES = [np.float32, np.float64]

hilbert = 1.0 / (np.arange(6)[:, None] + np.arange(6)[None, :] + 1)
singular = np.array([[1.0, 2.0], [2.0, 4.0]])
withnan = np.array([[1.0, np.nan], [0.5, 2.0]])

for dt in DTYPES:
    # Inv
    for name, a in [("1x1", well((1, 1))), ("3x3", well((3, 3))), ("batch", well((2, 3, 4, 4))),
                    ("empty-batch", well((0, 3, 3))), ("0x0", np.zeros((0, 0))), ("nan", withnan)]:
        add("Inv/" + name, "Inv", [a], lambda a: [np.linalg.inv(a)], dt)
    add("Inv/hilbert6", "Inv", [hilbert], lambda a: [np.linalg.inv(a)], dt, rtol=1e-6)

    # Solve: matrices, vectors, broadcast batches
    for name, a, b in [
        ("vector", well((3, 3)), rng.uniform(-1, 1, 3)),
        ("matrix", well((3, 3)), rng.uniform(-1, 1, (3, 2))),
        ("1x1", well((1, 1)), rng.uniform(-1, 1, (1, 1))),
        ("batch", well((2, 4, 4)), rng.uniform(-1, 1, (2, 4, 3))),
        ("batch-vector", well((2, 4, 4)), rng.uniform(-1, 1, 4)),
        ("broadcast-a", well((3, 3)), rng.uniform(-1, 1, (2, 3, 3, 1))),
        ("broadcast-both", well((2, 1, 3, 3)), rng.uniform(-1, 1, (4, 3, 2))),
        ("b-square-batch", well((3, 3, 3)), rng.uniform(-1, 1, (3, 3))),
        ("empty-batch", well((0, 2, 2)), rng.uniform(-1, 1, (0, 2, 1))),
        ("zero-columns", well((2, 2)), np.zeros((2, 0))),
        ("nan", withnan, np.array([1.0, 2.0])),
    ]:
        add("Solve/" + name, "Solve", [a, b], lambda a, b: [solve2(a, b)], dt)
    add("Solve/hilbert6", "Solve", [hilbert, np.arange(6.0)], lambda a, b: [solve2(a, b)], dt, rtol=1e-6)

    # SolveTriangular: both triangles, unit diagonal, the other triangle full of noise
    for upper in (False, True):
        for unit in (False, True):
            for name, a, b in [
                ("vector", well((4, 4)), rng.uniform(-1, 1, 4)),
                ("batch", well((2, 3, 3)), rng.uniform(-1, 1, (2, 3, 2))),
                ("broadcast", well((3, 3)), rng.uniform(-1, 1, (2, 3, 1))),
                ("1x1", well((1, 1)), rng.uniform(-1, 1, (1, 3))),
                ("empty-batch", well((0, 2, 2)), rng.uniform(-1, 1, (2, 1))),
                ("0x0", np.zeros((0, 0)), np.zeros((0, 2))),
            ]:
                add("SolveTriangular/%s/upper=%s/unit=%s" % (name, upper, unit), "SolveTriangular", [a, b],
                    lambda a, b, upper=upper, unit=unit: [tri_solve(a, b, upper, unit)], dt, upper=upper, unit=unit)

    # LU factorisation, square and not, and LU solves with its factors
    for name, a in [("3x3", rng.uniform(-1, 1, (3, 3))), ("batch", rng.uniform(-1, 1, (2, 2, 4, 4))),
                    ("wide", rng.uniform(-1, 1, (3, 5))), ("tall", rng.uniform(-1, 1, (5, 3))),
                    ("1x1", rng.uniform(-1, 1, (1, 1))), ("empty-batch", rng.uniform(-1, 1, (0, 3, 3))),
                    ("singular", singular), ("zero-column", np.array([[0.0, 1.0], [0.0, 2.0]])),
                    ("0x3", np.zeros((0, 3)))]:
        add("LUFactor/" + name, "LUFactor", [a], lambda a: batched(lu_ref, a, 3), dt)

    for name, a, b in [("vector", well((4, 4)), rng.uniform(-1, 1, 4)),
                       ("batch", rng.uniform(-1, 1, (2, 3, 3)) + 0.5 * np.eye(3), rng.uniform(-1, 1, (2, 3, 2))),
                       ("broadcast-b", rng.uniform(-1, 1, (2, 3, 3)) + 0.5 * np.eye(3), rng.uniform(-1, 1, (3, 1))),
                       ("1x1", rng.uniform(-1, 1, (1, 1)), rng.uniform(-1, 1, (1, 2))),
                       ("empty-batch", well((0, 2, 2)), rng.uniform(-1, 1, (0, 2, 1)))]:
        lu, piv, _ = batched(lu_ref, a.astype(dt).astype(np.float64), 3)
        cases.append(case("LUSolve/%s/%s" % (name, np.dtype(dt).name), "LUSolve",
                          [lu.astype(dt), piv, b.astype(dt)],
                          [solve2(a.astype(dt).astype(np.float64), b.astype(dt).astype(np.float64)).astype(dt)]))

    # Determinants: numpy's values, 0 and (0, -inf) for singular matrices
    for name, a in [("1x1", rng.uniform(-1, 1, (1, 1))), ("3x3", rng.uniform(-1, 1, (3, 3))),
                    ("batch", rng.uniform(-1, 1, (2, 3, 4, 4))), ("empty-batch", rng.uniform(-1, 1, (0, 2, 2))),
                    ("0x0", np.zeros((0, 0))), ("singular", singular), ("zero-row", np.array([[1.0, 2.0], [0.0, 0.0]])),
                    ("negative", np.array([[0.0, 1.0], [1.0, 0.0]])), ("nan", withnan), ("hilbert6", hilbert)]:
        add("Det/" + name, "Det", [a], lambda a: [np.asarray(np.linalg.det(a))], dt)
        add("SlogDet/" + name, "SlogDet", [a], lambda a: [np.asarray(x) for x in np.linalg.slogdet(a)], dt)
    big = well((60, 60)) * 10
    add("SlogDet/overflowing", "SlogDet", [big], lambda a: [np.asarray(x) for x in np.linalg.slogdet(a)], dt)

write("linalg_l2.json", cases)
