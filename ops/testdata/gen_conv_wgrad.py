"""numpy reference cases for the weight gradient of ops.ConvGeneral (what
convWGradPrim computes): writes conv_wgrad.json.

Run with Debian's numpy: /usr/bin/python3 ops/testdata/gen_conv_wgrad.py

A case holds the convolution's input x and the cotangent g of its output
(inputs), the weight's shape and the convolution's parameters (params),
and dw, the cotangent of the weight (expected), from a plain loop over
output and kernel positions straight from the definition
dw[co, k, ci] = sum over n, o of g[n, o, co] * x[n, o*stride + k*kdil - lo,
group(co)*C_in/groups + ci] (x dilated by idil, k mirrored under flip),
in float64. Layout is channels last, as MLX.

float16 cases hold float16 inputs and the float64 result rounded to
float16. bfloat16 cases use inputs that are multiples of 1/8 (exact in
bfloat16) and hold the unrounded result, labelled "bfloat16"; the reader
rounds the inputs and compares with bfloat16 tolerance.
"""
import itertools

import numpy as np

from refgen import case, enc, write

rng = np.random.default_rng(21)


def operand(shape, dtype):
    if dtype in ("float16", "bfloat16"):
        return rng.integers(-16, 17, size=shape).astype(np.float64) / 8
    return rng.standard_normal(shape).astype(dtype).astype(np.float64)


def out_shape(xs, ws, stride, lo, hi, kdil, idil):
    nd = len(xs) - 2
    dil = [(xs[1 + i] - 1) * idil[i] + 1 for i in range(nd)]
    return [xs[0]] + [(dil[i] + lo[i] + hi[i] - (ws[1 + i] - 1) * kdil[i] - 1) // stride[i] + 1
                      for i in range(nd)] + [ws[0]]


def wgrad_ref(x, g, ws, stride, lo, kdil, idil, groups, flip):
    nd = x.ndim - 2
    cin, cout = x.shape[-1], ws[0]
    cig, cog = cin // groups, cout // groups
    ks = ws[1:-1]
    dil = [(x.shape[1 + i] - 1) * idil[i] + 1 for i in range(nd)]
    dw = np.zeros(ws)
    for o in itertools.product(*[range(s) for s in g.shape[1:-1]]):
        for k in itertools.product(*[range(s) for s in ks]):
            q = [o[i] * stride[i] + k[i] * kdil[i] - lo[i] for i in range(nd)]
            if any(q[i] < 0 or q[i] >= dil[i] or q[i] % idil[i] for i in range(nd)):
                continue
            src = tuple(q[i] // idil[i] for i in range(nd))
            kk = tuple(ks[i] - 1 - k[i] for i in range(nd)) if flip else k
            xv = x[(slice(None),) + src]  # [N, C_in]
            gv = g[(slice(None),) + o]  # [N, C_out]
            for grp in range(groups):
                dw[(slice(grp * cog, (grp + 1) * cog),) + kk] += gv[:, grp * cog:(grp + 1) * cog].T @ xv[:, grp * cig:(grp + 1) * cig]
    return dw


def arr(a, dtype):
    if dtype == "bfloat16":
        return enc(a.astype(np.float32), "bfloat16")
    return enc(a.astype(dtype))


cases = []


def add(name, xs, ws, dtype, stride=None, lo=None, hi=None, kdil=None, idil=None, groups=1, flip=False):
    nd = len(xs) - 2
    one, zero = [1] * nd, [0] * nd
    stride, lo, hi = stride or one, lo or zero, hi or zero
    kdil, idil = kdil or one, idil or one
    gs = out_shape(xs, ws, stride, lo, hi, kdil, idil)
    x, g = operand(xs, dtype), operand(gs, dtype)
    if dtype == "float16":
        x, g = x.astype(np.float16).astype(np.float64), g.astype(np.float16).astype(np.float64)
    want = wgrad_ref(x, g, list(ws), stride, lo, kdil, idil, groups, flip)
    cases.append(case(name, "ConvGeneral", [arr(x, dtype), arr(g, dtype)], [arr(want, dtype)],
                      wshape=list(ws), stride=stride, lo=lo, hi=hi, kdil=kdil, idil=idil, groups=groups, flip=flip))


add("1d plain", (2, 7, 3), (4, 3, 3), "float32")
add("1d stride 2 padding 1", (2, 8, 3), (4, 3, 3), "float64", stride=[2], lo=[1], hi=[1])
add("1d stride leaves input unread", (1, 10, 2), (3, 2, 2), "float32", stride=[3])
add("2d 3x3 padding 1", (2, 5, 6, 8), (16, 3, 3, 8), "float32", lo=[1, 1], hi=[1, 1])
add("2d many rows", (3, 9, 9, 5), (7, 3, 3, 5), "float32", lo=[1, 1], hi=[1, 1])
add("2d groups 3", (2, 5, 5, 6), (9, 3, 3, 2), "float64", lo=[1, 1], hi=[1, 1], groups=3)
add("2d depthwise", (2, 6, 5, 8), (8, 3, 3, 1), "float32", lo=[1, 1], hi=[1, 1], groups=8)
add("2d depthwise multiplier", (1, 6, 6, 4), (8, 3, 3, 1), "float64", stride=[2, 2], lo=[1, 1], hi=[1, 1], groups=4)
add("2d dilation", (1, 7, 6, 2), (3, 3, 2, 2), "float64", kdil=[2, 1], lo=[1, 0], hi=[1, 0])
add("2d input dilation and flip", (2, 4, 5, 3), (4, 3, 2, 3), "float32", idil=[2, 3], lo=[1, 1], hi=[1, 0], flip=True)
add("2d everything", (2, 7, 6, 4), (6, 3, 2, 2), "float64",
    stride=[2, 1], lo=[2, 0], hi=[1, 3], kdil=[1, 2], idil=[2, 1], groups=2, flip=True)
add("2d float16", (2, 5, 5, 3), (4, 3, 3, 3), "float16", lo=[1, 1], hi=[1, 1])
add("2d bfloat16", (2, 5, 5, 4), (4, 3, 3, 2), "bfloat16", groups=2)
add("3d", (1, 4, 5, 4, 2), (3, 2, 3, 2, 2), "float32", stride=[2, 1, 1], lo=[1, 0, 1], hi=[0, 1, 1], kdil=[1, 1, 2])

write("conv_wgrad.json", cases)
