"""numpy reference cases for the fast family: LayerNorm, RMSNorm, RoPE and
ScaledDotProductAttention, with the VJPs of the norms and of attention.

Run with Debian's numpy:  /usr/bin/python3 ops/testdata/gen_fast.py

Every reference is computed in float64 from the inputs as the dtype holds
them (inputs are multiples of 1/8 or 1/16, exact in every float dtype), and
rounded to the case's dtype (bfloat16 results stay float32: the reader
compares them unrounded). The formulas follow MLX's mx.fast definitions:
RoPE turns pair i at position p by (offset + p) * scale * base^(-2i/dims);
attention's causal mask keeps key j for query i when j <= i + S - L.
"""
import numpy as np

from refgen import case, enc, write

rng = np.random.default_rng(23)

FLOATS = ["float32", "float64", "float16", "bfloat16"]


def grid(shape, step=8.0, lim=3.0):
    """Values that every float dtype holds exactly: multiples of 1/step."""
    return np.clip(np.round(rng.standard_normal(shape) * step) / step, -lim, lim)


def enc_as(a, dt):
    if dt == "bfloat16":
        return enc(np.asarray(a, np.float32), dtype="bfloat16")
    return enc(np.asarray(a).astype(dt))


def out_as(a, dt):
    if dt == "float16":
        return enc(np.asarray(a).astype(np.float32).astype(np.float16))
    return enc_as(a, dt)


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    r = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
    y = xc * r
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def rms_norm(x, w, eps):
    r = 1 / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    y = x * r
    return y * w if w is not None else y


def norm_vjp(x, w, g, eps, rms):
    """dx, dw, db of the norm at x with cotangent g."""
    xc = x if rms else x - x.mean(-1, keepdims=True)
    r = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
    xh = xc * r
    gw = g * w if w is not None else g
    d = gw - xh * (gw * xh).mean(-1, keepdims=True)
    if not rms:
        d = d - gw.mean(-1, keepdims=True)
    lead = tuple(range(x.ndim - 1))
    return r * d, (g * xh).sum(lead), g.sum(lead)


def rope(x, dims, traditional, base, scale, offset):
    x = np.array(x, np.float64)
    l = x.shape[-2]
    half = dims // 2
    inv = base ** (-2.0 * np.arange(half) / dims)
    ang = ((offset + np.arange(l)) * scale)[:, None] * inv[None, :]
    c, s = np.cos(ang), np.sin(ang)
    y = x.copy()
    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
        y[..., 0:dims:2] = x1 * c - x2 * s
        y[..., 1:dims:2] = x1 * s + x2 * c
    else:
        x1, x2 = x[..., :half], x[..., half:dims]
        y[..., :half] = x1 * c - x2 * s
        y[..., half:dims] = x1 * s + x2 * c
    return y


def scores(q, k, scale, mask, causal):
    hq, hk = q.shape[1], k.shape[1]
    kr = np.repeat(k, hq // hk, axis=1)
    s = scale * q @ kr.swapaxes(-1, -2)
    if mask is not None:
        if mask.dtype == np.bool_:
            s = np.where(mask, s, -np.inf)
        else:
            s = s + mask
    if causal:
        l, sl = q.shape[2], k.shape[2]
        keep = np.arange(sl)[None, :] <= np.arange(l)[:, None] + sl - l
        s = np.where(keep, s, -np.inf)
    return s


def softmax(s):
    with np.errstate(invalid="ignore"):
        m = s.max(-1, keepdims=True)
        e = np.exp(s - m)
        return e / e.sum(-1, keepdims=True)


def sdpa(q, k, v, scale, mask, causal):
    p = softmax(scores(q, k, scale, mask, causal))
    vr = np.repeat(v, q.shape[1] // k.shape[1], axis=1)
    return p @ vr


def sdpa_vjp(q, k, v, scale, mask, causal, g):
    group = q.shape[1] // k.shape[1]
    p = softmax(scores(q, k, scale, mask, causal))
    kr, vr = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    dvr = p.swapaxes(-1, -2) @ g
    dp = g @ vr.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq = scale * ds @ kr
    dkr = scale * ds.swapaxes(-1, -2) @ q

    def fold(a):
        b, h = a.shape[0], a.shape[1] // group
        return a.reshape(b, h, group, *a.shape[2:]).sum(2)

    return dq, fold(dkr), fold(dvr)


cases = []

# ---- norms ----
NORM_SHAPES = [(4, 16), (2, 3, 33), (3, 1), (2, 70)]
for shape in NORM_SHAPES:
    n = shape[-1]
    x = grid(shape)
    w, b = grid((n,), 16, 2), grid((n,), 16, 2)
    for dt in FLOATS:
        for hw, hb in ((True, True), (True, False), (False, True), (False, False)):
            ww, bb = (w if hw else None), (b if hb else None)
            ins = [enc_as(x, dt)] + ([enc_as(w, dt)] if hw else []) + ([enc_as(b, dt)] if hb else [])
            tag = "w" * hw + "b" * hb or "plain"
            cases.append(case("LayerNorm %s %s %s" % (shape, tag, dt), "LayerNorm", ins,
                              [out_as(layer_norm(x, ww, bb, 1e-5), dt)], eps=1e-5, weight=hw, bias=hb))
        for hw in (True, False):
            ww = w if hw else None
            ins = [enc_as(x, dt)] + ([enc_as(w, dt)] if hw else [])
            cases.append(case("RMSNorm %s %s %s" % (shape, "w" if hw else "plain", dt), "RMSNorm", ins,
                              [out_as(rms_norm(x, ww, 1e-5), dt)], eps=1e-5, weight=hw, bias=False))
    for dt in ("float64", "float32"):
        g = grid(shape)
        for rms in (False, True):
            dx, dw, db = norm_vjp(x, w, g, 1e-5, rms)
            op = "RMSNormVJP" if rms else "LayerNormVJP"
            ins = [enc_as(x, dt), enc_as(w, dt)] + ([] if rms else [enc_as(b, dt)]) + [enc_as(g, dt)]
            want = [enc_as(dx, dt), enc_as(dw, dt)] + ([] if rms else [enc_as(db, dt)])
            cases.append(case("%s %s %s" % (op, shape, dt), op, ins, want, eps=1e-5, weight=True, bias=not rms))
# a large eps and a constant row (zero variance)
x = grid((3, 8))
x[1] = 0.5
for dt in ("float32", "float64"):
    cases.append(case("LayerNorm constant row eps 0.5 %s" % dt, "LayerNorm", [enc_as(x, dt)],
                      [out_as(layer_norm(x, None, None, 0.5), dt)], eps=0.5, weight=False, bias=False))
    cases.append(case("RMSNorm eps 0.5 %s" % dt, "RMSNorm", [enc_as(x, dt)],
                      [out_as(rms_norm(x, None, 0.5), dt)], eps=0.5, weight=False, bias=False))

# ---- RoPE ----
ROPE = [
    # shape, dims, traditional, base, scale, offset
    ((2, 3, 5, 16), 16, False, 10000.0, 1.0, 0),
    ((2, 3, 5, 16), 16, True, 10000.0, 1.0, 0),
    ((2, 3, 5, 16), 8, False, 10000.0, 1.0, 3),
    ((2, 3, 5, 16), 8, True, 500.0, 0.5, 7),
    ((6, 12), 12, False, 10000.0, 1.0, 2),
    ((6, 12), 6, True, 10.0, 2.0, 0),
    ((1, 2, 40, 10), 4, False, 10000.0, 1.0, 100),
]
for shape, dims, trad, base, scale, off in ROPE:
    x = grid(shape)
    want = rope(x, dims, trad, base, scale, off)
    for dt in FLOATS:
        cases.append(case("RoPE %s dims %d %s base %g scale %g offset %d %s" % (
            shape, dims, "traditional" if trad else "halves", base, scale, off, dt), "RoPE",
            [enc_as(x, dt)], [out_as(want, dt)],
            dims=dims, traditional=trad, base=base, scale=scale, offset=off))

# ---- attention ----
SDPA = [
    # name, (B, Hq, Hk, L, S, D, Dv), mask kind, causal
    ("plain", (2, 2, 2, 5, 5, 8, 8), None, False),
    ("grouped L<S", (2, 4, 2, 3, 7, 8, 6), None, False),
    ("grouped causal L<S", (1, 4, 1, 4, 9, 8, 8), None, True),
    ("causal L=S", (2, 2, 2, 6, 6, 4, 4), None, True),
    ("causal L>S", (1, 2, 2, 6, 4, 4, 4), None, True),
    ("additive mask [L S]", (2, 2, 1, 5, 7, 8, 8), "add2", False),
    ("additive mask [B 1 L S] causal", (2, 4, 2, 5, 7, 8, 8), "add4", True),
    ("boolean mask [B 1 L S]", (2, 2, 2, 5, 6, 8, 8), "bool4", False),
    ("boolean mask [L S] causal", (1, 2, 1, 5, 5, 8, 8), "bool2", True),
    ("long keys", (1, 1, 1, 3, 300, 8, 8), None, False),
    ("long keys, padding mask [S]", (1, 2, 1, 129, 260, 4, 4), "addS", True),
]
for name, (B, Hq, Hk, L, S, D, Dv), mk, causal in SDPA:
    q, k, v = grid((B, Hq, L, D)), grid((B, Hk, S, D)), grid((B, Hk, S, Dv))
    mask = None
    if mk == "add2":
        mask = grid((L, S), 4, 2)
    elif mk == "addS":
        mask = np.where(np.arange(S) < S - 5, 0.0, -np.inf)
    elif mk == "add4":
        mask = grid((B, 1, L, S), 4, 2)
    elif mk == "bool4":
        mask = rng.random((B, 1, L, S)) < 0.7
        mask[..., 0] = True
    elif mk == "bool2":
        mask = rng.random((L, S)) < 0.7
        mask[:, 0] = True
    scale = 1 / np.sqrt(D)
    want = sdpa(q, k, v, scale, mask, causal)
    dts = FLOATS if S < 100 else ["float32", "float64"]
    for dt in dts:
        ins = [enc_as(q, dt), enc_as(k, dt), enc_as(v, dt)]
        if mask is not None:
            ins.append(enc(mask) if mask.dtype == np.bool_ else enc_as(mask, dt))
        cases.append(case("ScaledDotProductAttention %s %s" % (name, dt), "ScaledDotProductAttention",
                          ins, [out_as(want, dt)], scale=scale, causal=causal, mask=mask is not None))
    g = grid((B, Hq, L, Dv))
    dq, dk, dv = sdpa_vjp(q, k, v, scale, mask, causal, g)
    for dt in ("float64", "float32"):
        ins = [enc_as(q, dt), enc_as(k, dt), enc_as(v, dt)]
        if mask is not None:
            ins.append(enc(mask) if mask.dtype == np.bool_ else enc_as(mask, dt))
        ins.append(enc_as(g, dt))
        cases.append(case("ScaledDotProductAttentionVJP %s %s" % (name, dt), "ScaledDotProductAttentionVJP",
                          ins, [enc_as(dq, dt), enc_as(dk, dt), enc_as(dv, dt)],
                          scale=scale, causal=causal, mask=mask is not None))

write("fast.json", cases)
