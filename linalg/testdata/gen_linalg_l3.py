"""numpy references for linalg's Norm, Pinv, Lstsq, MatrixPower and Cross.

Run with Debian's numpy:  /usr/bin/python3 linalg/testdata/gen_linalg_l3.py
It writes linalg/testdata/linalg_l3.json (committed: tests need no Python),
in the format of ops/testdata/refgen.py: a case is {"name", "op", "inputs",
"params", "expected"}. Inputs are float64; the Go tests also run them in
float32 with a looser tolerance.
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "ops", "testdata"))
from refgen import case, enc  # noqa: E402

import json  # noqa: E402

rng = np.random.default_rng(21)


def rand(*shape):
    return rng.standard_normal(shape)


def ord_param(o):
    """ord as JSON: null, a string, a number, or "inf"/"-inf"."""
    if o is None or isinstance(o, str):
        return o
    if math.isinf(o):
        return "inf" if o > 0 else "-inf"
    return o


cases = []

# Norm: vectors, matrices and batches, every ord, axes and keepdims.
vec = rand(7)
vec[2] = 0.0
for o in [None, math.inf, -math.inf, 0, 1, -1, 2, -2, 3, 0.5]:
    for keep in [False, True]:
        cases.append(case("norm/vec/ord=%s/keep=%s" % (o, keep), "norm", [vec],
                          [np.linalg.norm(vec, ord=o, keepdims=keep)],
                          ord=ord_param(o), axes=None, keepdims=keep))
mat = rand(3, 4)
for o in [None, "fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2]:
    for keep in [False, True]:
        cases.append(case("norm/mat/ord=%s/keep=%s" % (o, keep), "norm", [mat],
                          [np.linalg.norm(mat, ord=o, keepdims=keep)],
                          ord=ord_param(o), axes=None, keepdims=keep))
bat = rand(2, 3, 4)
for o in [None, "fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2]:
    for axes in [(1, 2), (2, 0), (-1, -3), (0, 1)]:
        for keep in [False, True]:
            cases.append(case("norm/batch/ord=%s/axes=%s/keep=%s" % (o, axes, keep), "norm", [bat],
                              [np.linalg.norm(bat, ord=o, axis=axes, keepdims=keep)],
                              ord=ord_param(o), axes=list(axes), keepdims=keep))
for o in [None, math.inf, -math.inf, 0, 1, 2, 3, -2]:
    for ax in [0, 1, -1]:
        for keep in [False, True]:
            cases.append(case("norm/batchvec/ord=%s/axis=%d/keep=%s" % (o, ax, keep), "norm", [bat],
                              [np.linalg.norm(bat, ord=o, axis=ax, keepdims=keep)],
                              ord=ord_param(o), axes=[ax], keepdims=keep))
for keep in [False, True]:
    cases.append(case("norm/flat3d/keep=%s" % keep, "norm", [bat],
                      [np.linalg.norm(bat, keepdims=keep)], ord=None, axes=None, keepdims=keep))
cases.append(case("norm/scalar", "norm", [np.array(-2.5)], [np.linalg.norm(np.array(-2.5))],
                  ord=None, axes=None, keepdims=False))
cases.append(case("norm/empty", "norm", [np.zeros((0, 3))],
                  [np.linalg.norm(np.zeros((0, 3)), axis=0)], ord=None, axes=[0], keepdims=False))
cases.append(case("norm/1x1/nuc", "norm", [np.array([[-3.0]])],
                  [np.linalg.norm(np.array([[-3.0]]), "nuc")], ord="nuc", axes=None, keepdims=False))
# A matrix with repeated singular values (an orthogonal one).
q, _ = np.linalg.qr(rand(4, 4))
for o in [2, -2, "nuc"]:
    cases.append(case("norm/orthogonal/ord=%s" % o, "norm", [q], [np.linalg.norm(q, o)],
                      ord=ord_param(o), axes=None, keepdims=False))
# NaN propagates through every order.
nanvec = vec.copy()
nanvec[1] = np.nan
for o in [None, 1, 2, math.inf, 3]:
    cases.append(case("norm/nan/ord=%s" % o, "norm", [nanvec], [np.linalg.norm(nanvec, o)],
                      ord=ord_param(o), axes=None, keepdims=False))
cvec = (rand(5) + 1j * rand(5)).astype(np.complex64)
for o in [None, 1, math.inf, 3]:
    cases.append(case("norm/complex/ord=%s" % o, "norm_complex", [cvec],
                      [np.linalg.norm(cvec.astype(np.complex128), o)],
                      ord=ord_param(o), axes=None, keepdims=False))


def pinv(a):
    m, n = a.shape[-2:]
    return np.linalg.pinv(a, rcond=max(m, n) * np.finfo(np.float64).eps)


# Pinv: tall, wide, square, batched, rank deficient, 1x1 and zero.
for name, a in [("tall", rand(5, 3)), ("wide", rand(3, 5)), ("square", rand(4, 4)),
                ("batch", rand(2, 4, 3)), ("rank2", rand(4, 2) @ rand(2, 4)),
                ("1x1", np.array([[4.0]])), ("zero", np.zeros((2, 3)))]:
    cases.append(case("pinv/" + name, "pinv", [a], [pinv(a)]))


def lstsq(a, b):
    m, n = a.shape
    rcond = max(m, n) * np.finfo(np.float64).eps
    x, _, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
    r = b - a @ x
    res = np.sum(r * r, axis=0)
    return x, res, np.array(rank, dtype=np.int32), s


# Lstsq: overdetermined, underdetermined (minimum norm), rank deficient,
# vector and matrix right-hand sides.
for name, a, b in [("over", rand(6, 3), rand(6, 2)), ("over/vec", rand(6, 3), rand(6)),
                   ("under", rand(3, 5), rand(3, 2)), ("square", rand(4, 4), rand(4, 1)),
                   ("rank2", rand(5, 2) @ rand(2, 4), rand(5, 3))]:
    cases.append(case("lstsq/" + name, "lstsq", [a, b], list(lstsq(a, b))))

# MatrixPower: positive, zero and negative powers.
mp = rand(3, 3) + 3 * np.eye(3)
for k in [0, 1, 2, 3, 5, -1, -3]:
    cases.append(case("matrix_power/%d" % k, "matrix_power", [mp], [np.linalg.matrix_power(mp, k)], n=k))
mpb = rand(2, 3, 3) + 3 * np.eye(3)
for k in [4, -2]:
    cases.append(case("matrix_power/batch/%d" % k, "matrix_power", [mpb],
                      [np.linalg.matrix_power(mpb, k)], n=k))

# Cross: last axis, another axis, broadcasting.
ca, cb = rand(4, 3), rand(4, 3)
cases.append(case("cross/last", "cross", [ca, cb], [np.cross(ca, cb)], axis=-1))
ca0, cb0 = rand(3, 2, 4), rand(3, 2, 4)
cases.append(case("cross/axis0", "cross", [ca0, cb0], [np.cross(ca0, cb0, axis=0)], axis=0))
cbb = rand(3)
cases.append(case("cross/broadcast", "cross", [ca, cbb], [np.cross(ca, cbb)], axis=-1))

path = os.path.join(HERE, "linalg_l3.json")
with open(path, "w") as f:
    json.dump({"generator": "numpy " + np.__version__, "cases": cases}, f, separators=(",", ":"))
    f.write("\n")
print("wrote %d cases to %s" % (len(cases), path))
