"""numpy reference cases for ops.ConvGeneral, Conv1D/2D/3D and
ConvTranspose1D/2D/3D: writes conv.json.

Run with Debian's numpy: /usr/bin/python3 ops/testdata/gen_conv.py

The references are plain loops over output (or, for the transposed
convolutions, input) positions and kernel positions, straight from the
definitions, with a small matrix product over channels per group; they
compute in float64. Layout is channels last, as MLX: x is [N, ...spatial,
C_in] and w is [C_out, ...kernel, C_in/groups].

float16 cases hold float16 inputs and the float64 result rounded to
float16. bfloat16 cases use inputs that are multiples of 1/8 (exact in
bfloat16) and hold the unrounded result, labelled "bfloat16"; the reader
rounds the inputs and compares with bfloat16 tolerance.
"""
import itertools

import numpy as np

from refgen import case, enc, write

rng = np.random.default_rng(20)


def operand(shape, dtype):
    if dtype in ("float16", "bfloat16"):
        return rng.integers(-16, 17, size=shape).astype(np.float64) / 8
    return rng.standard_normal(shape).astype(dtype).astype(np.float64)


def conv_ref(x, w, stride, lo, hi, kdil, idil, groups, flip):
    """conv_general: output position o reads the dilated, padded input at
    o*stride + k*kdil for kernel position k (mirrored under flip)."""
    nd = x.ndim - 2
    n, cin = x.shape[0], x.shape[-1]
    cout, ks = w.shape[0], w.shape[1:-1]
    cig, cog = cin // groups, cout // groups
    ins = x.shape[1:-1]
    dil = [(ins[i] - 1) * idil[i] + 1 for i in range(nd)]
    outs = [(dil[i] + lo[i] + hi[i] - (ks[i] - 1) * kdil[i] - 1) // stride[i] + 1 for i in range(nd)]
    out = np.zeros([n] + outs + [cout])
    for o in itertools.product(*[range(s) for s in outs]):
        for k in itertools.product(*[range(s) for s in ks]):
            q = [o[i] * stride[i] + k[i] * kdil[i] - lo[i] for i in range(nd)]
            if any(q[i] < 0 or q[i] >= dil[i] or q[i] % idil[i] for i in range(nd)):
                continue
            src = tuple(q[i] // idil[i] for i in range(nd))
            kk = tuple(ks[i] - 1 - k[i] for i in range(nd)) if flip else k
            xv = x[(slice(None),) + src]  # [N, C_in]
            for g in range(groups):
                wg = w[(slice(g * cog, (g + 1) * cog),) + kk]  # [C_out/g, C_in/g]
                out[(slice(None),) + o + (slice(g * cog, (g + 1) * cog),)] += xv[:, g * cig:(g + 1) * cig] @ wg.T
    return out


def conv_transpose_ref(x, w, stride, padding, dilation, output_padding, groups):
    """The transposed convolution by scattering: x[i] times w[k] lands on
    output position i*stride - padding + k*dilation."""
    nd = x.ndim - 2
    n, cin = x.shape[0], x.shape[-1]
    cout, ks = w.shape[0], w.shape[1:-1]
    cig, cog = cin // groups, cout // groups
    ins = x.shape[1:-1]
    outs = [(ins[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ks[i] - 1) + 1 + output_padding[i] for i in range(nd)]
    out = np.zeros([n] + outs + [cout])
    for i in itertools.product(*[range(s) for s in ins]):
        for k in itertools.product(*[range(s) for s in ks]):
            o = tuple(i[a] * stride[a] - padding[a] + k[a] * dilation[a] for a in range(nd))
            if any(o[a] < 0 or o[a] >= outs[a] for a in range(nd)):
                continue
            xv = x[(slice(None),) + i]
            for g in range(groups):
                wg = w[(slice(g * cog, (g + 1) * cog),) + k]
                out[(slice(None),) + o + (slice(g * cog, (g + 1) * cog),)] += xv[:, g * cig:(g + 1) * cig] @ wg.T
    return out


def arr(a, dtype):
    if dtype == "bfloat16":
        return enc(a.astype(np.float32), "bfloat16")
    return enc(a.astype(dtype))


cases = []


def add(name, op, xs, ws, dtype, **p):
    x, w = operand(xs, dtype), operand(ws, dtype)
    if dtype == "float16":
        x, w = x.astype(np.float16).astype(np.float64), w.astype(np.float16).astype(np.float64)
    nd = len(xs) - 2
    one, zero = [1] * nd, [0] * nd
    if op.startswith("ConvTranspose"):
        want = conv_transpose_ref(x, w, p.get("stride", one), p.get("padding", zero), p.get("dilation", one),
                                  p.get("output_padding", zero), p.get("groups", 1))
    elif op == "ConvGeneral":
        want = conv_ref(x, w, p.get("stride", one), p.get("lo", zero), p.get("hi", zero), p.get("kdil", one),
                        p.get("idil", one), p.get("groups", 1), p.get("flip", False))
    else:
        pad = p.get("padding", zero)
        want = conv_ref(x, w, p.get("stride", one), pad, pad, p.get("dilation", one), one, p.get("groups", 1), False)
    cases.append(case(name, op, [arr(x, dtype), arr(w, dtype)], [arr(want, dtype)], **p))


# Conv1D
add("1d plain", "Conv1D", (2, 7, 3), (4, 3, 3), "float32")
add("1d stride 2 padding 1", "Conv1D", (2, 8, 3), (4, 3, 3), "float32", stride=[2], padding=[1])
add("1d dilation 2", "Conv1D", (1, 9, 2), (3, 3, 2), "float64", dilation=[2], padding=[2])
add("1d groups 2", "Conv1D", (2, 6, 4), (6, 2, 2), "float32", groups=2, padding=[1])
add("1d depthwise", "Conv1D", (2, 6, 5), (5, 3, 1), "float32", groups=5, padding=[1])
add("1d float16", "Conv1D", (2, 7, 3), (4, 3, 3), "float16", padding=[1])
add("1d bfloat16", "Conv1D", (2, 7, 3), (4, 3, 3), "bfloat16", stride=[2])
# Conv2D
add("2d 3x3 padding 1", "Conv2D", (2, 5, 6, 3), (4, 3, 3, 3), "float32", padding=[1, 1])
add("2d stride 2", "Conv2D", (2, 7, 8, 3), (5, 3, 3, 3), "float32", stride=[2, 2], padding=[1, 1])
add("2d 7x7 stride 2 padding 3", "Conv2D", (1, 11, 12, 3), (4, 7, 7, 3), "float32", stride=[2, 2], padding=[3, 3])
add("2d dilation (2, 1)", "Conv2D", (1, 7, 6, 2), (3, 3, 2, 2), "float64", dilation=[2, 1], padding=[1, 0])
add("2d groups 3", "Conv2D", (2, 5, 5, 6), (9, 3, 3, 2), "float32", groups=3, padding=[1, 1])
add("2d depthwise", "Conv2D", (2, 6, 5, 8), (8, 3, 3, 1), "float32", groups=8, padding=[1, 1])
add("2d depthwise stride 2", "Conv2D", (1, 7, 7, 4), (4, 3, 3, 1), "float64", groups=4, stride=[2, 2], padding=[1, 1])
add("2d 1x1", "Conv2D", (2, 4, 4, 5), (3, 1, 1, 5), "float32")
add("2d many channels", "Conv2D", (1, 6, 6, 40), (33, 3, 3, 40), "float32", padding=[1, 1])
add("2d float64", "Conv2D", (2, 5, 5, 3), (4, 2, 3, 3), "float64", stride=[1, 2])
add("2d float16", "Conv2D", (2, 5, 5, 3), (4, 3, 3, 3), "float16", padding=[1, 1])
add("2d bfloat16", "Conv2D", (2, 5, 5, 4), (4, 3, 3, 2), "bfloat16", groups=2)
add("2d depthwise float16", "Conv2D", (1, 5, 5, 4), (4, 3, 3, 1), "float16", groups=4, padding=[1, 1])
# Conv3D
add("3d plain", "Conv3D", (1, 4, 5, 4, 2), (3, 2, 3, 2, 2), "float32")
add("3d stride padding dilation", "Conv3D", (2, 5, 5, 6, 3), (4, 3, 2, 3, 3), "float64",
    stride=[2, 1, 2], padding=[1, 0, 1], dilation=[1, 2, 1])
add("3d groups 2", "Conv3D", (1, 4, 4, 4, 4), (4, 3, 3, 3, 2), "float32", groups=2, padding=[1, 1, 1])
add("3d bfloat16", "Conv3D", (1, 3, 4, 4, 2), (2, 2, 2, 2, 2), "bfloat16")
# ConvGeneral
add("general per-side padding", "ConvGeneral", (2, 6, 5, 3), (4, 3, 3, 3), "float32", lo=[0, 2], hi=[2, 1])
add("general input dilation", "ConvGeneral", (1, 4, 5, 2), (3, 3, 2, 2), "float64", idil=[2, 3], lo=[1, 1], hi=[1, 0])
add("general flip", "ConvGeneral", (2, 6, 6, 2), (3, 3, 2, 2), "float32", flip=True, lo=[1, 0], hi=[0, 1])
add("general everything", "ConvGeneral", (2, 7, 6, 4), (6, 3, 2, 2), "float64",
    stride=[2, 1], lo=[2, 0], hi=[1, 3], kdil=[1, 2], idil=[2, 1], groups=2, flip=True)
add("general 1d", "ConvGeneral", (2, 9, 3), (2, 4, 3), "float32", stride=[3], lo=[1], hi=[2], kdil=[2])
add("general 3d", "ConvGeneral", (1, 3, 4, 3, 2), (2, 2, 2, 2, 2), "float32", idil=[2, 1, 2], lo=[1, 0, 0], hi=[0, 1, 1], flip=True)
# ConvTranspose
add("transpose 1d", "ConvTranspose1D", (2, 5, 3), (4, 3, 3), "float32", stride=[2], padding=[1], output_padding=[1])
add("transpose 1d dilation", "ConvTranspose1D", (1, 4, 2), (3, 3, 2), "float64", stride=[1], padding=[0], dilation=[2])
add("transpose 2d stride 2", "ConvTranspose2D", (2, 4, 3, 3), (2, 3, 3, 3), "float32", stride=[2, 2], padding=[1, 1],
    output_padding=[1, 0])
add("transpose 2d groups", "ConvTranspose2D", (1, 3, 4, 4), (6, 2, 3, 2), "float64", stride=[2, 1], groups=2)
add("transpose 2d float16", "ConvTranspose2D", (1, 3, 3, 2), (3, 3, 3, 2), "float16", stride=[2, 2], padding=[1, 1])
add("transpose 3d", "ConvTranspose3D", (1, 2, 3, 2, 2), (2, 2, 2, 3, 2), "float32", stride=[2, 1, 2], padding=[0, 1, 1],
    dilation=[1, 1, 2], output_padding=[1, 0, 0])

write("conv.json", cases)
