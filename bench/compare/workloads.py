"""The Python side of bench/compare: numpy and PyTorch run the workloads
that the Go side names, one request per line on stdin:

    {"engine": "numpy" | "torch", "workload": "exp/16M", "min_ms": 20}

and answer one line on stdout: {"ms": <mean milliseconds per run>} or
{"error": "..."}. Inputs are built once per workload and engine. Each
request runs the workload enough times to take at least min_ms, so the
clock's resolution does not matter.
"""
import json
import math
import sys
import time

import numpy as np

try:
    import torch
    import torch.nn.functional as F

except ImportError:  # the Go side reports what is missing
    torch = None

SIZES = {"1M": (1024, 1024), "16M": (4096, 4096)}
C = math.sqrt(2 / math.pi)


def numpy_gelu(x, out, tmp):
    # numpy's fastest form: in-place ufuncs, no temporaries beyond two buffers
    np.multiply(x, x, out=tmp)
    np.multiply(tmp, x, out=tmp)
    np.multiply(tmp, 0.044715, out=tmp)
    np.add(tmp, x, out=tmp)
    np.multiply(tmp, C, out=tmp)
    np.tanh(tmp, out=tmp)
    np.add(tmp, 1, out=tmp)
    np.multiply(x, 0.5, out=out)
    np.multiply(out, tmp, out=out)
    return out


def mlp_args(rng):
    # as internal/mlp's Args: 2-layer ReLU network, batch 256, 784 -> 512 -> 10
    b, i, h, o = 256, 784, 512, 10

    def u(shape, s):
        return (rng.uniform(-1, 1, shape) * s).astype(np.float32)

    labels = np.zeros((b, o), np.float32)
    labels[np.arange(b), np.arange(b) * 7 % o] = 1
    return u((i, h), 0.05), u(h, 0.1), u((h, o), 0.05), u(o, 0.1), u((b, i), 1), labels


def numpy_mlp_step(w1, b1, w2, b2, x, labels):
    # forward, then backward by hand: the loss and the four gradients
    pre = x @ w1 + b1
    h = np.maximum(pre, 0)
    logits = h @ w2 + b2
    m = logits.max(axis=-1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=-1, keepdims=True)
    logp = logits - m - np.log(s)
    n = x.shape[0]
    loss = -(labels * logp).sum() / n
    dlogits = (e / s * labels.sum(axis=-1, keepdims=True) - labels) / n
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dh = dlogits @ w2.T
    dh[pre <= 0] = 0
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    return dw1, db1, dw2, db2, loss


def torch_mlp_step(params, x, labels):
    for p in params:
        p.grad = None
    w1, b1, w2, b2 = params
    logits = torch.relu(x @ w1 + b1) @ w2 + b2
    loss = -(labels * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
    loss.backward()
    return loss


def build(engine, workload):
    kind, size = workload.split("/")
    kind = {"gelu-compiled": "gelu"}.get(kind, kind)
    rng = np.random.default_rng(0)
    if kind == "mlp-step":
        args = mlp_args(rng)
        if engine == "numpy":
            return lambda: numpy_mlp_step(*args)
        params = [torch.from_numpy(a).requires_grad_() for a in args[:4]]
        x, labels = torch.from_numpy(args[4]), torch.from_numpy(args[5])
        return lambda: torch_mlp_step(params, x, labels)
    if kind in ("sgemm", "dgemm"):
        n = int(size)
        dt = np.float32 if kind == "sgemm" else np.float64
        a = rng.uniform(-1, 1, (n, n)).astype(dt)
        b = rng.uniform(-1, 1, (n, n)).astype(dt)
        if engine == "numpy":
            return lambda: a @ b
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        return lambda: ta @ tb
    if kind in INDEX_KINDS:
        return build_index(engine, kind)
    if kind in CONV_KINDS:
        return build_conv(engine, kind)
    if kind in LINALG_KINDS:
        return build_linalg(engine, kind, int(size))
    if kind in FFT_KINDS:
        return build_fft(engine, kind)
    if kind in OPTIM_KINDS:
        return build_optim(engine, kind)
    if kind in SMALL_KINDS:
        return build_small(engine, kind)
    if kind in FAST_KINDS:
        return build_fast(engine, kind)
    if kind in MNIST_KINDS:
        return build_mnist(engine, size)
    r, c = SIZES[size]
    if kind in ("uniform", "normal"):  # 16M float32 random numbers
        n = r * c
        if engine == "numpy":
            gen = np.random.default_rng(0)  # PCG64
            if kind == "uniform":
                return lambda: gen.random(n, dtype=np.float32)
            return lambda: gen.standard_normal(n, dtype=np.float32)
        torch.manual_seed(0)
        return (lambda: torch.rand(n)) if kind == "uniform" else (lambda: torch.randn(n))
    x = rng.uniform(-1, 1, (r, c)).astype(np.float32)
    y = rng.uniform(-1, 1, (r, c)).astype(np.float32)
    z = rng.uniform(-1, 1, (r, c)).astype(np.float32)
    if kind == "triad":  # a = b + 3c, STREAM's triad: the bandwidth probe
        a = np.empty_like(x)
        if engine == "numpy":
            return lambda: np.add(y, np.multiply(z, 3, out=a), out=a)
        ta, ty, tz = torch.from_numpy(a), torch.from_numpy(y), torch.from_numpy(z)
        return lambda: torch.add(ty, tz, alpha=3, out=ta)
    if engine == "numpy":
        flat = x.reshape(-1)
        out, tmp = np.empty_like(flat), np.empty_like(flat)

        def softmax():
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

        return {
            "a*b+c": lambda: x * y + z,
            "exp": lambda: np.exp(flat),
            "tanh": lambda: np.tanh(flat),
            "sigmoid": lambda: 1 / (1 + np.exp(-flat)),
            "gelu": lambda: numpy_gelu(flat, out, tmp),
            "sum": lambda: x.sum(),
            "max": lambda: x.max(),
            "argmax": lambda: flat.argmax(),
            "softmax": softmax,
        }[kind]
    tx, ty, tz = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(z)
    tflat = tx.reshape(-1)
    return {
        "a*b+c": lambda: tx * ty + tz,
        "exp": lambda: torch.exp(tflat),
        "tanh": lambda: torch.tanh(tflat),
        "sigmoid": lambda: torch.sigmoid(tflat),
        "gelu": lambda: F.gelu(tflat, approximate="tanh"),
        "sum": lambda: tx.sum(),
        "max": lambda: tx.max(),
        "argmax": lambda: tflat.argmax(),
        "softmax": lambda: torch.softmax(tx, dim=-1),
    }[kind]


INDEX_KINDS = ("scatter-add", "index-rows", "einsum-bmm", "bmm", "einsum-chain", "matmul-chain")


def build_index(engine, kind):
    # main.go's indexTasks: the same shapes and index patterns (values
    # differ: a uniform draw of numpy's, which does not change the work).
    rng = np.random.default_rng(0)

    def u(*shape):
        return rng.uniform(-1, 1, shape).astype(np.float32)

    if kind == "scatter-add":  # 1M updates into 64K slots, each hit 16 times
        n, slots = 1 << 20, 1 << 16
        idx = (np.arange(n, dtype=np.int64) * 40503 % slots).astype(np.int32)
        upd, a = u(n), np.zeros(slots, np.float32)
        if engine == "numpy":
            def add_at():  # fathom's ScatterAdd returns a new array: so does this
                out = a.copy()
                np.add.at(out, idx, upd)
                return out
            return add_at
        ti, tu, ta = torch.from_numpy(idx.astype(np.int64)), torch.from_numpy(upd), torch.from_numpy(a)
        return lambda: ta.index_add(0, ti, tu)
    if kind == "index-rows":  # 4096 scattered rows of a 4096x4096 array
        n = 4096
        x = u(n, n)
        idx = (np.arange(n) * 1103 % n).astype(np.int32)
        if engine == "numpy":
            return lambda: x[idx]
        tx, ti = torch.from_numpy(x), torch.from_numpy(idx.astype(np.int64))
        return lambda: tx[ti]
    if kind in ("einsum-bmm", "bmm"):
        x, y = u(16, 256, 256), u(16, 256, 256)
        if engine == "numpy":
            if kind == "bmm":
                return lambda: x @ y
            return lambda: np.einsum("bij,bjk->bik", x, y, optimize=True)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        if kind == "bmm":
            return lambda: torch.bmm(tx, ty)
        return lambda: torch.einsum("bij,bjk->bik", tx, ty)
    big, small = 512, 16
    a, b, c, d = u(big, small), u(small, big), u(big, small), u(small, big)
    if engine == "numpy":
        if kind == "matmul-chain":
            return lambda: a @ (b @ c) @ d
        return lambda: np.einsum("ij,jk,kl,lm->im", a, b, c, d, optimize="greedy")
    ta, tb, tc, td = (torch.from_numpy(v) for v in (a, b, c, d))
    if kind == "matmul-chain":
        return lambda: ta @ (tb @ tc) @ td
    return lambda: torch.einsum("ij,jk,kl,lm->im", ta, tb, tc, td)


CONV_KINDS = ("conv7x7s2", "conv3x3", "conv3x3-fwdbwd", "depthwise3x3", "maxpool2x2", "maxpool2x2-fwdbwd")


def build_conv(engine, kind):
    # main.go's convTasks, in PyTorch's NCHW layout; numpy has no
    # convolution or pooling to compare with.
    if engine != "torch":
        raise NotImplementedError("numpy has no convolution or pooling")
    rng = np.random.default_rng(0)

    def u(*shape):
        return torch.from_numpy(rng.uniform(-1, 1, shape).astype(np.float32))

    if kind == "conv7x7s2":
        x, w = u(32, 3, 224, 224), u(64, 3, 7, 7)
        return lambda: F.conv2d(x, w, stride=2, padding=3)
    if kind == "conv3x3":
        x, w = u(32, 64, 56, 56), u(64, 64, 3, 3)
        return lambda: F.conv2d(x, w, padding=1)
    if kind == "conv3x3-fwdbwd":
        x, w, g = u(32, 64, 56, 56).requires_grad_(), u(64, 64, 3, 3).requires_grad_(), u(32, 64, 56, 56)

        def step():
            y = F.conv2d(x, w, padding=1)
            return torch.autograd.grad(y, (x, w), g)
        return step
    if kind == "depthwise3x3":
        x, w = u(32, 128, 56, 56), u(128, 1, 3, 3)
        return lambda: F.conv2d(x, w, padding=1, groups=128)
    if kind == "maxpool2x2":
        x = u(32, 64, 112, 112)
        return lambda: F.max_pool2d(x, 2, 2)
    x, g = u(32, 64, 112, 112).requires_grad_(), u(32, 64, 56, 56)

    def pool_step():
        y = F.max_pool2d(x, 2, 2)
        return torch.autograd.grad(y, (x,), g)
    return pool_step


LINALG_KINDS = tuple("linalg-" + k + g for k in ("solve", "inv", "cholesky", "qr", "eigh", "svd")
                     for g in ("", "-gonum"))


def build_linalg(engine, kind, n):
    # main.go's linalgTasks, float64. A "-gonum" row is fathom with gonum's
    # own BLAS; numpy's and PyTorch's side of it is the same call.
    kind = kind[len("linalg-"):].replace("-gonum", "")
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n))
    if kind in ("cholesky", "eigh"):
        a = a @ a.T / n + np.eye(n)
    b = rng.uniform(-1, 1, (n, 1))
    if engine == "numpy":
        la = np.linalg
        return {
            "solve": lambda: la.solve(a, b),
            "inv": lambda: la.inv(a),
            "cholesky": lambda: la.cholesky(a),
            "qr": lambda: la.qr(a),
            "eigh": lambda: la.eigh(a),
            "svd": lambda: la.svd(a),
        }[kind]
    ta, tb, tl = torch.from_numpy(a), torch.from_numpy(b), torch.linalg
    return {
        "solve": lambda: tl.solve(ta, tb),
        "inv": lambda: tl.inv(ta),
        "cholesky": lambda: tl.cholesky(ta),
        "qr": lambda: tl.qr(ta),
        "eigh": lambda: tl.eigh(ta),
        "svd": lambda: tl.svd(ta),
    }[kind]


FFT_KINDS = ("fft", "rfft", "fft2")


def build_fft(engine, kind):
    # main.go's fftTasks: a complex64 FFT of 1M points, an RFFT of 4M
    # float32, an FFT2 of 64x512x512 complex64. numpy computes in
    # complex128 (its pocketfft has no single precision).
    rng = np.random.default_rng(0)
    if kind == "rfft":
        x = rng.uniform(-1, 1, 1 << 22).astype(np.float32)
    else:
        shape = (1 << 20,) if kind == "fft" else (64, 512, 512)
        x = (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(np.complex64)
    if engine == "numpy":
        return {"fft": lambda: np.fft.fft(x), "rfft": lambda: np.fft.rfft(x), "fft2": lambda: np.fft.fft2(x)}[kind]
    t = torch.from_numpy(x)
    return {"fft": lambda: torch.fft.fft(t), "rfft": lambda: torch.fft.rfft(t), "fft2": lambda: torch.fft.fft2(t)}[kind]


OPTIM_KINDS = ("adam-update",)


def build_optim(engine, kind):
    # optim.go's optimTasks: one Adam update (bias correction included)
    # of the MNIST MLP's 669,706 float32 parameters; numpy's with
    # in-place operations, PyTorch's torch.optim.Adam.step.
    shapes = [(512, 784), (512,), (512, 512), (512,), (10, 512), (10,)]
    rng = np.random.default_rng(0)
    ps = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    gs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    if engine == "numpy":
        ms, vs, ds = [np.zeros_like(p) for p in ps], [np.zeros_like(p) for p in ps], [np.empty_like(p) for p in ps]
        t = [0]

        def step():
            t[0] += 1
            c1, c2 = lr / (1 - b1 ** t[0]), math.sqrt(1 - b2 ** t[0])
            for p, g, m, v, d in zip(ps, gs, ms, vs, ds):
                np.multiply(g, 1 - b1, out=d)
                m *= b1
                m += d
                np.multiply(g, g, out=d)
                d *= 1 - b2
                v *= b2
                v += d
                np.sqrt(v, out=d)
                d /= c2
                d += eps
                np.divide(m, d, out=d)
                d *= c1
                p -= d

        return step
    params = [torch.from_numpy(p).requires_grad_() for p in ps]
    for p, g in zip(params, gs):
        p.grad = torch.from_numpy(g)
    return torch.optim.Adam(params, lr=lr, betas=(b1, b2), eps=eps).step


SMALL_KINDS = ("small-ops", "compiled-small")


def build_small(engine, kind):
    # smallop.go's smallTasks: what an engine adds around each op. A
    # chain of 100 y = y + 1 on 16 float32, each op a new array as in
    # fathom; and five tanh(y * w) on 16 elements, which fathom runs as
    # one compiled call and numpy and PyTorch op by op.
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 16).astype(np.float32)
    w = rng.uniform(-1, 1, 16).astype(np.float32)
    tanh = np.tanh
    if engine == "torch":
        x, w, tanh = torch.from_numpy(x), torch.from_numpy(w), torch.tanh
    if kind == "small-ops":
        def chain():
            y = x
            for _ in range(100):
                y = y + 1
            return y
        return chain

    def compiled():
        y = x
        for _ in range(5):
            y = tanh(y * w)
        return y
    return compiled


FAST_KINDS = ("sdpa-fwd", "sdpa-fwd-bwd", "layernorm")


def build_fast(engine, kind):
    # main.go's fastTasks: attention at batch 8, 8 heads, sequence 512,
    # head 64 (float32), forward and forward with backward, and LayerNorm
    # over 4096 rows of 4096 with a weight and a bias. PyTorch 1.13 has no
    # F.scaled_dot_product_attention: its attention is the composition
    # softmax(q @ k^T * scale) @ v, which is what that function's math
    # backend computes; numpy's backward is written out.
    rng = np.random.default_rng(0)
    if kind == "layernorm":
        x = rng.uniform(-1, 1, (4096, 4096)).astype(np.float32)
        w = rng.uniform(-1, 1, 4096).astype(np.float32)
        b = rng.uniform(-1, 1, 4096).astype(np.float32)
        if engine == "numpy":
            def ln():
                mu = x.mean(-1, keepdims=True)
                xc = x - mu
                return xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + 1e-5) * w + b
            return ln
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)

        def tln():
            with torch.no_grad():
                return torch.nn.functional.layer_norm(tx, (4096,), tw, tb, 1e-5)
        return tln
    shape = (8, 8, 512, 64)
    q, k, v, g = (rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(4))
    scale = np.float32(1 / np.sqrt(64))
    if engine == "numpy":
        def probs():
            s = (q @ k.swapaxes(-1, -2)) * scale
            e = np.exp(s - s.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
        if kind == "sdpa-fwd":
            return lambda: probs() @ v

        def fwd_bwd():
            p = probs()
            o = p @ v
            dv = p.swapaxes(-1, -2) @ g
            dp = g @ v.swapaxes(-1, -2)
            ds = p * (dp - (g * o).sum(-1, keepdims=True))
            return o, (ds @ k) * scale, (ds.swapaxes(-1, -2) @ q) * scale, dv
        return fwd_bwd
    tq, tk, tv, tg = (torch.from_numpy(a) for a in (q, k, v, g))

    def attn(q, k, v):
        return torch.softmax((q @ k.transpose(-1, -2)) * float(scale), -1) @ v
    if kind == "sdpa-fwd":
        def fwd():
            with torch.no_grad():
                return attn(tq, tk, tv)
        return fwd
    rq, rk, rv = (t.clone().requires_grad_() for t in (tq, tk, tv))

    def fwd_bwd():
        rq.grad = rk.grad = rv.grad = None
        attn(rq, rk, rv).backward(tg)
    return fwd_bwd


MNIST_KINDS = ("mnist-step",)


def build_mnist(engine, size):
    # mnist.go's mnistTasks: one training step (zero_grad, forward,
    # backward, Adam) of the MNIST MLP or CNN, batch 128, float32; the CNN
    # in PyTorch's native NCHW. numpy has no autograd to compare with.
    if engine != "torch":
        raise NotImplementedError("numpy has no training step")
    nn = torch.nn
    torch.manual_seed(0)
    if size == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        x = torch.rand(128, 784)
    else:
        model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(3136, 10))
        x = torch.rand(128, 1, 28, 28)
    y = torch.randint(0, 10, (128,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def timed(f, min_ms):
    """The mean milliseconds of f over runs that take at least min_ms."""
    f()  # untimed, as main.go's timeGo: waking up is not the workload's speed
    reps, start = 0, time.perf_counter()
    while True:
        f()
        reps += 1
        elapsed = time.perf_counter() - start
        if elapsed * 1e3 >= min_ms:
            return elapsed * 1e3 / reps


def main():
    # main.go waits for this line: importing torch keeps a core busy for
    # over a second, which would otherwise overlap its bandwidth probe.
    print(json.dumps({"ready": True}), flush=True)
    cache = {}
    for line in sys.stdin:
        req = json.loads(line)
        key = (req["engine"], req["workload"])
        try:
            if req["engine"] == "torch" and torch is None:
                raise RuntimeError("PyTorch is not installed")
            if key not in cache:
                cache[key] = build(*key)
                cache[key]()
            f = cache[key]
            if req["engine"] == "torch":
                # Debian's PyTorch starts with one thread; it is timed at
                # one and at two, and its faster time is its best.
                ms = []
                for n in (1, 2):
                    torch.set_num_threads(n)
                    ms.append(timed(f, req["min_ms"]))
                print(json.dumps({"ms": min(ms)}), flush=True)
            else:
                print(json.dumps({"ms": timed(f, req["min_ms"])}), flush=True)
        except Exception as e:  # reported per workload, the run goes on
            print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}), flush=True)


if __name__ == "__main__":
    main()
