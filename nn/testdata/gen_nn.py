"""Reference values for package nn's layers and losses.

Run with Debian's Python, which has numpy and torch 1.13:
    /usr/bin/python3 nn/testdata/gen_nn.py
It writes nn/testdata/nn.json, which is committed so tests need no Python.

A case is {"name", "kind", "params", "inputs": {name: arr}, "expected":
{name: arr}}; an arr is {"dtype", "shape", "data"} with data flattened in
row-major order. Layers are channels-last as fathom's (and MLX's): torch's
channels-first layers are fed transposed inputs and weights, and their
outputs transposed back. Everything is float64.
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261202)
torch.set_default_dtype(torch.float64)


def enc(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if np.issubdtype(a.dtype, np.integer):
        data = [int(v) for v in flat]
    else:
        data = [float(v) for v in flat]
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": data}


cases = []


def case(name, kind, inputs, expected, **params):
    cases.append({
        "name": name,
        "kind": kind,
        "params": params,
        "inputs": {k: enc(v) for k, v in inputs.items()},
        "expected": {k: enc(v) for k, v in expected.items()},
    })


def randn(*shape):
    return rng.standard_normal(shape)


def t(a):
    return torch.tensor(np.asarray(a))


def cl_to_cf(x):
    """[N, spatial..., C] -> [N, C, spatial...]"""
    return np.moveaxis(x, -1, 1)


def cf_to_cl(x):
    return np.moveaxis(x, 1, -1)


# --- linear layers
x, w, b = randn(2, 3, 4), randn(5, 4), randn(5)
case("linear", "linear", {"x": x, "weight": w, "bias": b}, {"y": F.linear(t(x), t(w), t(b)).numpy()})
case("linear no bias", "linear", {"x": x, "weight": w}, {"y": F.linear(t(x), t(w)).numpy()})
x1, x2, w, b = randn(3, 4), randn(3, 2), randn(5, 4, 2), randn(5)
case("bilinear", "bilinear", {"x1": x1, "x2": x2, "weight": w, "bias": b},
     {"y": F.bilinear(t(x1), t(x2), t(w), t(b)).numpy()})
idx, w = rng.integers(0, 6, size=(2, 3)).astype(np.int32), randn(6, 4)
case("embedding", "embedding", {"idx": idx, "weight": w}, {"y": w[idx]})

# --- convolutions: fathom's weight is [out, k..., in/groups]
conv_fns = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
convt_fns = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
for d, spatial, k, stride, pad, dil, groups in [
    (1, (9,), (3,), 2, 1, 1, 1),
    (1, (8,), (2,), 1, 0, 2, 2),
    (2, (6, 7), (3, 2), 2, 1, 1, 2),
    (2, (5, 5), (3, 3), 1, 1, 2, 1),
    (3, (4, 5, 4), (2, 3, 2), 1, 1, 1, 1),
]:
    cin, cout = 4, 6
    x = randn(2, *spatial, cin)
    w = randn(cout, *k, cin // groups)
    b = randn(cout)
    wt = np.moveaxis(w, -1, 1)  # torch: [out, in/groups, k...]
    y = conv_fns[d](t(cl_to_cf(x)), t(wt), t(b), stride=stride, padding=pad, dilation=dil, groups=groups)
    case(f"conv{d}d k{k} s{stride} p{pad} d{dil} g{groups}", f"conv{d}d",
         {"x": x, "weight": w, "bias": b}, {"y": cf_to_cl(y.numpy())},
         stride=stride, padding=pad, dilation=dil, groups=groups)

for d, spatial, k, stride, pad, dil, outpad in [
    (1, (5,), (3,), 2, 1, 1, 1),
    (2, (4, 3), (3, 2), 2, 1, 1, 1),
    (2, (3, 3), (2, 2), 1, 0, 2, 0),
    (3, (3, 2, 3), (2, 2, 3), 2, 0, 1, 0),
]:
    cin, cout = 3, 4
    x = randn(2, *spatial, cin)
    w = randn(cout, *k, cin)
    b = randn(cout)
    wt = np.moveaxis(w, -1, 0)  # torch: [in, out, k...]
    y = convt_fns[d](t(cl_to_cf(x)), t(wt), t(b), stride=stride, padding=pad, output_padding=outpad, dilation=dil)
    case(f"conv_transpose{d}d k{k} s{stride} p{pad} d{dil} op{outpad}", f"conv_transpose{d}d",
         {"x": x, "weight": w, "bias": b}, {"y": cf_to_cl(y.numpy())},
         stride=stride, padding=pad, dilation=dil, output_padding=outpad)

# --- pooling
max_fns = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
avg_fns = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
for d, spatial, k, stride, pad in [
    (1, (9,), 3, 2, 1),
    (2, (6, 7), 2, 0, 0),
    (2, (5, 6), 3, 2, 1),
    (3, (4, 5, 4), 2, 1, 1),
]:
    x = randn(2, *spatial, 3)
    s = stride or k
    for name, fns in (("maxpool", max_fns), ("avgpool", avg_fns)):
        y = fns[d](t(cl_to_cf(x)), k, stride=s, padding=pad)
        case(f"{name}{d}d k{k} s{stride} p{pad}", f"{name}{d}d", {"x": x}, {"y": cf_to_cl(y.numpy())},
             kernel=k, stride=stride, padding=pad)

# --- normalisation
x, w, b = randn(2, 3, 6), randn(6), randn(6)
case("layernorm", "layernorm", {"x": x, "weight": w, "bias": b},
     {"y": F.layer_norm(t(x), (6,), t(w), t(b), eps=1e-5).numpy()}, eps=1e-5)
case("layernorm no affine", "layernorm", {"x": x}, {"y": F.layer_norm(t(x), (6,), eps=1e-3).numpy()}, eps=1e-3)
ms = np.mean(x * x, axis=-1, keepdims=True)
case("rmsnorm", "rmsnorm", {"x": x, "weight": w}, {"y": x / np.sqrt(ms + 1e-6) * w}, eps=1e-6)
x, w, b = randn(2, 3, 4, 6), randn(6), randn(6)
case("groupnorm", "groupnorm", {"x": x, "weight": w, "bias": b},
     {"y": cf_to_cl(F.group_norm(t(cl_to_cf(x)), 3, t(w), t(b), eps=1e-5).numpy())}, groups=3, eps=1e-5)
for shape in [(5, 4), (3, 2, 3, 4)]:
    x, w, b = randn(*shape), randn(4), randn(4)
    rm, rv = randn(4), np.abs(randn(4)) + 0.5
    trm, trv = t(rm.copy()), t(rv.copy())
    y = F.batch_norm(t(cl_to_cf(x)), trm, trv, t(w), t(b), training=True, momentum=0.2, eps=1e-5)
    case(f"batchnorm train {list(shape)}", "batchnorm",
         {"x": x, "weight": w, "bias": b, "running_mean": rm, "running_var": rv},
         {"y": cf_to_cl(y.numpy()), "running_mean": trm.numpy(), "running_var": trv.numpy()},
         training=True, momentum=0.2, eps=1e-5)
    y = F.batch_norm(t(cl_to_cf(x)), t(rm), t(rv), t(w), t(b), training=False, eps=1e-5)
    case(f"batchnorm eval {list(shape)}", "batchnorm",
         {"x": x, "weight": w, "bias": b, "running_mean": rm, "running_var": rv},
         {"y": cf_to_cl(y.numpy()), "running_mean": rm, "running_var": rv},
         training=False, momentum=0.2, eps=1e-5)

# --- activations
x = np.concatenate([randn(12) * 3, [0.0, -30.0, 30.0]]).reshape(3, 5)
tx = t(x)
acts = {
    "relu": F.relu(tx), "leaky_relu": F.leaky_relu(tx, 0.2), "elu": F.elu(tx, 0.7),
    "gelu": F.gelu(tx), "gelu_tanh": F.gelu(tx, approximate="tanh"), "silu": F.silu(tx),
    "mish": F.mish(tx), "softplus": F.softplus(tx), "sigmoid": torch.sigmoid(tx),
    "tanh": torch.tanh(tx), "softmax": F.softmax(tx, dim=-1), "log_softmax": F.log_softmax(tx, dim=-1),
    "softmax0": F.softmax(tx, dim=0),
}
for name, y in acts.items():
    case(name, "activation", {"x": x}, {"y": y.numpy()}, fn=name)

# --- losses
reds = ["mean", "sum", "none"]
logits = randn(4, 5)
cls = np.array([1, 0, 4, 1], dtype=np.int64)
probs = F.softmax(t(randn(4, 5)), -1).numpy()
wts = np.abs(randn(5)) + 0.1
for red in reds:
    for smooth in (0.0, 0.2):
        for use_w in (False, True):
            wt = t(wts) if use_w else None
            inputs = {"logits": logits, "targets": cls.astype(np.int32)}
            if use_w:
                inputs["weights"] = wts
            y = F.cross_entropy(t(logits), t(cls), weight=wt, label_smoothing=smooth, reduction=red)
            case(f"cross_entropy classes {red} smoothing {smooth} weights {use_w}", "cross_entropy",
                 inputs, {"y": y.numpy()}, reduction=red, smoothing=smooth)
            inputs = {"logits": logits, "targets": probs}
            if use_w:
                inputs["weights"] = wts
            y = F.cross_entropy(t(logits), t(probs), weight=wt, label_smoothing=smooth, reduction=red)
            case(f"cross_entropy probabilities {red} smoothing {smooth} weights {use_w}", "cross_entropy",
                 inputs, {"y": y.numpy()}, reduction=red, smoothing=smooth)
    logp = F.log_softmax(t(logits), -1).numpy()
    y = F.nll_loss(t(logp), t(cls), weight=t(wts), reduction=red)
    case(f"nll {red}", "nll", {"logp": logp, "targets": cls.astype(np.int32), "weights": wts},
         {"y": y.numpy()}, reduction=red)
    z, tg = randn(3, 4) * 3, rng.uniform(size=(3, 4))
    ew, pw = np.abs(randn(3, 4)), np.abs(randn(4)) + 0.5
    y = F.binary_cross_entropy_with_logits(t(z), t(tg), reduction=red)
    case(f"bce_with_logits {red}", "bce_with_logits", {"logits": z, "targets": tg}, {"y": y.numpy()}, reduction=red)
    y = F.binary_cross_entropy_with_logits(t(z), t(tg), weight=t(ew), pos_weight=t(pw), reduction=red)
    case(f"bce_with_logits weighted {red}", "bce_with_logits",
         {"logits": z, "targets": tg, "weights": ew, "pos_weight": pw}, {"y": y.numpy()}, reduction=red)
    p, q = randn(3, 4), randn(3, 4)
    case(f"mse {red}", "mse", {"pred": p, "target": q}, {"y": F.mse_loss(t(p), t(q), reduction=red).numpy()}, reduction=red)
    case(f"l1 {red}", "l1", {"pred": p, "target": q}, {"y": F.l1_loss(t(p), t(q), reduction=red).numpy()}, reduction=red)
    case(f"smooth_l1 {red}", "smooth_l1", {"pred": p, "target": q},
         {"y": F.smooth_l1_loss(t(p), t(q), beta=0.7, reduction=red).numpy()}, reduction=red, beta=0.7)
    case(f"huber {red}", "huber", {"pred": p, "target": q},
         {"y": F.huber_loss(t(p), t(q), delta=0.7, reduction=red).numpy()}, reduction=red, delta=0.7)
    inp = F.log_softmax(t(randn(3, 4)), -1).numpy()
    tgt = F.softmax(t(randn(3, 4)), -1).numpy()
    tgt[0, 1] = 0
    case(f"kl_div {red}", "kl_div", {"input": inp, "target": tgt},
         {"y": F.kl_div(t(inp), t(tgt), reduction=red).numpy()}, reduction=red, log_target=False)
    case(f"kl_div log target {red}", "kl_div", {"input": inp, "target": np.log(tgt + 0.1)},
         {"y": F.kl_div(t(inp), t(np.log(tgt + 0.1)), reduction=red, log_target=True).numpy()},
         reduction=red, log_target=True)
inp = F.log_softmax(t(randn(3, 4)), -1).numpy()
tgt = F.softmax(t(randn(3, 4)), -1).numpy()
case("kl_div batchmean", "kl_div", {"input": inp, "target": tgt},
     {"y": F.kl_div(t(inp), t(tgt), reduction="batchmean").numpy()}, reduction="batchmean", log_target=False)


# --- attention and transformer layers, torch's modules with their weights
def mha_inputs(prefix, m):
    d = m.embed_dim
    wq, wk, wv = m.in_proj_weight.detach().numpy().reshape(3, d, d)
    bq, bk, bv = m.in_proj_bias.detach().numpy().reshape(3, d)
    return {
        prefix + "query_proj.weight": wq, prefix + "query_proj.bias": bq,
        prefix + "key_proj.weight": wk, prefix + "key_proj.bias": bk,
        prefix + "value_proj.weight": wv, prefix + "value_proj.bias": bv,
        prefix + "out_proj.weight": m.out_proj.weight.detach().numpy(),
        prefix + "out_proj.bias": m.out_proj.bias.detach().numpy(),
    }


torch.manual_seed(7)
dims, heads = 8, 2
mha = torch.nn.MultiheadAttention(dims, heads, batch_first=True)
q, kv = randn(2, 3, dims), randn(2, 5, dims)
with torch.no_grad():
    y, _ = mha(t(q), t(kv), t(kv), need_weights=False)
inputs = {"q": q, "kv": kv, **mha_inputs("", mha)}
case("multihead attention", "mha", inputs, {"y": y.numpy()}, heads=heads, causal=False)
causal = np.triu(np.ones((3, 3), dtype=bool), 1)
with torch.no_grad():
    y, _ = mha(t(q), t(q), t(q), attn_mask=torch.tensor(causal), need_weights=False)
case("multihead attention causal self", "mha", {"q": q, "kv": q, **mha_inputs("", mha)}, {"y": y.numpy()},
     heads=heads, causal=True)


def norm_inputs(name, m):
    return {name + ".weight": m.weight.detach().numpy(), name + ".bias": m.bias.detach().numpy()}


def lin_inputs(name, m):
    return {name + ".weight": m.weight.detach().numpy(), name + ".bias": m.bias.detach().numpy()}


for norm_first in (False, True):
    enc_layer = torch.nn.TransformerEncoderLayer(dims, heads, 16, dropout=0.0, batch_first=True, norm_first=norm_first)
    enc_layer.eval()
    x = randn(2, 4, dims)
    with torch.no_grad():
        y = enc_layer(t(x))
    inputs = {"x": x, **mha_inputs("attention.", enc_layer.self_attn),
              **norm_inputs("ln1", enc_layer.norm1), **norm_inputs("ln2", enc_layer.norm2),
              **lin_inputs("linear1", enc_layer.linear1), **lin_inputs("linear2", enc_layer.linear2)}
    case(f"transformer encoder norm_first {norm_first}", "encoder", inputs, {"y": y.numpy()},
         heads=heads, hidden=16, norm_first=norm_first)

    dec = torch.nn.TransformerDecoderLayer(dims, heads, 16, dropout=0.0, batch_first=True, norm_first=norm_first)
    dec.eval()
    x, mem = randn(2, 4, dims), randn(2, 3, dims)
    with torch.no_grad():
        y = dec(t(x), t(mem), tgt_mask=torch.tensor(np.triu(np.ones((4, 4), dtype=bool), 1)))
    inputs = {"x": x, "memory": mem, **mha_inputs("self_attention.", dec.self_attn),
              **mha_inputs("cross_attention.", dec.multihead_attn),
              **norm_inputs("ln1", dec.norm1), **norm_inputs("ln2", dec.norm2), **norm_inputs("ln3", dec.norm3),
              **lin_inputs("linear1", dec.linear1), **lin_inputs("linear2", dec.linear2)}
    case(f"transformer decoder norm_first {norm_first}", "decoder", inputs, {"y": y.numpy()},
         heads=heads, hidden=16, norm_first=norm_first)


# --- RoPE, MLX's formula in numpy
def rope(x, dims, traditional, base, scale, offset):
    L = x.shape[-2]
    pos = (np.arange(L) + offset) * scale
    freqs = base ** (-np.arange(0, dims, 2) / dims)
    theta = pos[:, None] * freqs[None, :]
    c, s = np.cos(theta), np.sin(theta)
    out = x.copy()
    if traditional:
        a, b = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2] = a * c - b * s
        out[..., 1:dims:2] = a * s + b * c
    else:
        h = dims // 2
        a, b = x[..., :h], x[..., h:dims]
        out[..., :h] = a * c - b * s
        out[..., h:dims] = a * s + b * c
    return out


x = randn(2, 5, 6)
for trad in (False, True):
    case(f"rope traditional {trad}", "rope", {"x": x}, {"y": rope(x, 4, trad, 10000.0, 1.0, 0),
                                                        "y_at3": rope(x, 4, trad, 10000.0, 1.0, 3)},
         dims=4, traditional=trad, base=10000.0, scale=1.0)

with open(os.path.join(HERE, "nn.json"), "w") as f:
    json.dump({"cases": cases}, f, separators=(",", ":"))
print(len(cases), "cases")
