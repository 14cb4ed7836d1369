"""numpy reference cases for pooling (MaxPool1D/2D/3D, AvgPool1D/2D/3D) and
their gradients, channels-last (N, spatial..., C).

Run with Debian's numpy:  /usr/bin/python3 ops/testdata/gen_pool.py

The reference is a plain loop over output positions and window elements,
in float64. Max pool pads with -inf and its gradient goes to the first
maximum of each window (row-major window order); average pool pads with
zeros that count in the mean (divides by the window size), as PyTorch's
default and MLX do.
"""
import itertools

import numpy as np

from refgen import case, enc, write

rng = np.random.default_rng(20)


def out_size(n, k, s, p):
    return (n + 2 * p - k) // s + 1


def windows(shape, kernel, stride, padding):
    """Yield (output index, list of input spatial indices inside the input)."""
    spatial = shape[1:-1]
    outs = [out_size(n, k, s, p) for n, k, s, p in zip(spatial, kernel, stride, padding)]
    for o in itertools.product(*[range(d) for d in outs]):
        elems = []
        for kk in itertools.product(*[range(k) for k in kernel]):
            i = tuple(oi * s - p + ki for oi, s, p, ki in zip(o, stride, padding, kk))
            if all(0 <= ii < n for ii, n in zip(i, spatial)):
                elems.append(i)
        yield o, elems, outs


def pool_ref(x, kind, kernel, stride, padding):
    x = np.asarray(x, dtype=np.float64)
    n, c = x.shape[0], x.shape[-1]
    size = int(np.prod(kernel))
    res = None
    for o, elems, outs in windows(x.shape, kernel, stride, padding):
        if res is None:
            res = np.zeros([n] + outs + [c])
        for b in range(n):
            vals = np.stack([x[(b,) + i] for i in elems])
            if kind == "max":
                res[(b,) + o] = vals.max(axis=0)
            else:
                res[(b,) + o] = vals.sum(axis=0) / size
    return res


def pool_grad_ref(x, g, kind, kernel, stride, padding):
    x = np.asarray(x, dtype=np.float64)
    dx = np.zeros_like(x)
    n, c = x.shape[0], x.shape[-1]
    size = int(np.prod(kernel))
    for o, elems, _ in windows(x.shape, kernel, stride, padding):
        for b in range(n):
            for ch in range(c):
                gv = g[(b,) + o + (ch,)]
                if kind == "max":
                    vals = [x[(b,) + i + (ch,)] for i in elems]
                    first = elems[int(np.argmax(vals))]  # argmax: first on ties
                    dx[(b,) + first + (ch,)] += gv
                else:
                    for i in elems:
                        dx[(b,) + i + (ch,)] += gv / size
    return dx


def distinct(shape):
    """Values without ties, exact in every float dtype: multiples of 1/8."""
    n = int(np.prod(shape))
    return (rng.permutation(n) - n // 2).reshape(shape) / 8.0


# (nd, input shape, kernel, stride, padding)
GEOMS = [
    (1, (2, 7, 3), (3,), (1,), (0,)),
    (1, (1, 9, 2), (4,), (2,), (2,)),
    (1, (2, 5, 1), (2,), (3,), (1,)),
    (2, (2, 6, 5, 3), (2, 2), (2, 2), (0, 0)),
    (2, (1, 7, 6, 2), (3, 3), (2, 1), (1, 1)),
    (2, (2, 5, 5, 4), (3, 2), (1, 2), (1, 0)),
    (2, (1, 4, 4, 1), (4, 4), (1, 1), (2, 1)),
    (3, (1, 4, 5, 4, 2), (2, 2, 2), (2, 2, 2), (0, 0, 0)),
    (3, (2, 3, 4, 5, 1), (3, 2, 3), (1, 2, 2), (1, 1, 1)),
    # windows that tile the input exactly (the backward writes, not adds)
    (2, (2, 4, 6, 3), (2, 2), (2, 2), (0, 0)),
    (1, (1, 6, 2), (4,), (4,), (1,)),
]

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def params(nd, kernel, stride, padding):
    return dict(nd=nd, kernel=list(kernel), stride=list(stride), padding=list(padding))


def enc_as(a, dt):
    if dt == "bfloat16":
        return enc(np.asarray(a, np.float32), dtype="bfloat16")
    return enc(np.asarray(a).astype(dt))


cases = []
for gi, (nd, shape, k, s, p) in enumerate(GEOMS):
    x = distinct(shape)
    for dt in FLOATS:
        for kind, op in (("max", "MaxPool"), ("avg", "AvgPool")):
            want = pool_ref(x, kind, k, s, p)
            if dt == "float16":
                want = want.astype(np.float32).astype(np.float16)
            cases.append(case("%s%dD geom %d %s" % (op, nd, gi, dt), op, [enc_as(x, dt)],
                              [enc_as(want, dt)], **params(nd, k, s, p)))
    xi = rng.integers(0, 100, size=shape)
    for dt in INTS:
        want = pool_ref(xi, "max", k, s, p).astype(np.int64)
        cases.append(case("MaxPool%dD geom %d %s" % (nd, gi, dt), "MaxPool", [enc_as(xi, dt)],
                          [enc_as(want, dt)], **params(nd, k, s, p)))
    # gradients, float64 and float32: the max one on inputs with ties
    # (multiples of 1/2 from a few values), where the first maximum wins
    xt = rng.integers(-2, 3, size=shape) / 2.0
    for dt in ("float64", "float32"):
        for kind, op in (("max", "MaxPoolVJP"), ("avg", "AvgPoolVJP")):
            xin = xt if kind == "max" else x
            g = distinct(pool_ref(xin, kind, k, s, p).shape)
            want = pool_grad_ref(xin, g, kind, k, s, p)
            cases.append(case("%s%dD geom %d %s" % (op, nd, gi, dt), op, [enc_as(xin, dt), enc_as(g, dt)],
                              [enc_as(want, dt)], **params(nd, k, s, p)))

# NaN and infinities: a NaN wins its windows, -inf never beats an element
x = distinct((1, 6, 2))
x[0, 1, 0] = np.nan
x[0, 4, 1] = -np.inf
x[0, 5, 0] = np.inf
for dt in ("float32", "float64"):
    cases.append(case("MaxPool1D specials %s" % dt, "MaxPool", [enc_as(x, dt)],
                      [enc_as(pool_ref(x, "max", (3,), (1,), (1,)), dt)], **params(1, (3,), (1,), (1,))))

write("pool.json", cases)
