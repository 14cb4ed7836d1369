"""Reference values for package optim's tests, from PyTorch's torch.optim.

Run with Debian's Python, which has torch 1.13 and numpy 1.24:

    /usr/bin/python3 optim/testdata/gen_optim.py

It writes optim/testdata/optim.json, which is committed so tests need no
Python. An array is {"dtype", "shape", "data"}, data flattened row-major,
written by ops/testdata/refgen.py's enc. Running the unchanged script
reproduces the file byte for byte.

- "cases": optimiser trajectories. Each case starts from "params", feeds
  the gradients of "grads" one step at a time (a parameter missing from a
  step's gradients has grad None, so torch leaves it alone) and records
  the parameters after every step in "expected". Lion (not in torch 1.13)
  and Adam without bias correction (MLX's default) are written out from
  their published rules with torch tensor operations.
- "schedules": learning rates of torch.optim.lr_scheduler over steps.
- "clip": torch.nn.utils.clip_grad_norm_.
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "ops", "testdata"))
import refgen  # noqa: E402

STEPS = 4
num = refgen._num


def enc(t):
    return refgen.enc(t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t)


SHAPES = {"layers.0.weight": (3, 4), "layers.0.bias": (4,), "frozen": (2,)}
TRAINED = ["layers.0.weight", "layers.0.bias"]


def start(rng):
    params = {k: rng.standard_normal(s) for k, s in SHAPES.items()}
    grads = []
    for _ in range(STEPS):
        step = {}
        for k in TRAINED:
            g = rng.standard_normal(SHAPES[k])
            g.reshape(-1)[0] = 0.0  # a zero gradient: sign(0), 0/0 guards
            step[k] = g
        grads.append(step)
    return params, grads


class WrittenOut(torch.optim.Optimizer):
    """An optimiser torch 1.13 lacks, written out from its published rule:
    update(p, g, state, group) for every parameter with a gradient."""

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self.update(p, p.grad, self.state[p], group)


class Lion(WrittenOut):
    """Lion as MLX's optimizers.Lion and the paper's Algorithm 1."""

    def __init__(self, params, lr, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    def update(self, p, g, st, group):
        b1, b2 = group["betas"]
        m = st.get("m", torch.zeros_like(p))
        c = m * b1 + g * (1 - b1)
        st["m"] = m * b2 + g * (1 - b2)
        if group["weight_decay"] != 0:
            p.mul_(1 - group["lr"] * group["weight_decay"])
        p.sub_(torch.sign(c) * group["lr"])


class AdamNoBias(WrittenOut):
    """MLX's Adam with bias_correction=False: p - lr*m/(sqrt(v)+eps)."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def update(self, p, g, st, group):
        b1, b2 = group["betas"]
        st["m"] = st.get("m", torch.zeros_like(p)) * b1 + g * (1 - b1)
        st["v"] = st.get("v", torch.zeros_like(p)) * b2 + g.square() * (1 - b2)
        p.sub_(st["m"] / (st["v"].sqrt() + group["eps"]) * group["lr"])


# name, fathom optimiser, torch constructor, fathom fields, torch kwargs,
# schedule (fathom kind and args, torch scheduler) or None
OPTIMISERS = [
    ("sgd", "SGD", torch.optim.SGD, {}, dict(lr=0.1), None),
    ("sgd_momentum_wd", "SGD", torch.optim.SGD, {"Momentum": 0.9, "WeightDecay": 0.01},
     dict(lr=0.1, momentum=0.9, weight_decay=0.01), None),
    ("sgd_dampening", "SGD", torch.optim.SGD, {"Momentum": 0.9, "Dampening": 0.5},
     dict(lr=0.1, momentum=0.9, dampening=0.5), None),
    ("sgd_nesterov", "SGD", torch.optim.SGD, {"Momentum": 0.8, "Nesterov": True, "WeightDecay": 0.1},
     dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1), None),
    ("adam", "Adam", torch.optim.Adam, {}, dict(lr=0.01), None),
    ("adam_wd_betas", "Adam", torch.optim.Adam, {"Beta1": 0.8, "Beta2": 0.99, "Eps": 1e-6, "WeightDecay": 0.1},
     dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1), None),
    ("adam_no_bias_correction", "Adam", AdamNoBias, {"NoBiasCorrection": True}, dict(lr=0.01), None),
    ("adamw", "AdamW", torch.optim.AdamW, {"WeightDecay": 0.1}, dict(lr=0.01, weight_decay=0.1), None),
    ("adamax", "Adamax", torch.optim.Adamax, {"WeightDecay": 0.05}, dict(lr=0.02, weight_decay=0.05), None),
    ("rmsprop", "RMSProp", torch.optim.RMSprop, {}, dict(lr=0.01), None),
    ("rmsprop_centered_momentum", "RMSProp", torch.optim.RMSprop,
     {"Centered": True, "Momentum": 0.9, "WeightDecay": 0.1, "Alpha": 0.9},
     dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1, alpha=0.9), None),
    ("adagrad", "Adagrad", torch.optim.Adagrad, {"LRDecay": 0.05, "InitialAccumulator": 0.1, "WeightDecay": 0.01},
     dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1, weight_decay=0.01), None),
    ("adadelta", "AdaDelta", torch.optim.Adadelta, {"WeightDecay": 0.1}, dict(lr=1.0, weight_decay=0.1), None),
    ("lion", "Lion", Lion, {"WeightDecay": 0.1}, dict(lr=0.01, weight_decay=0.1), None),
    ("sgd_momentum_step_decay", "SGD", torch.optim.SGD, {"Momentum": 0.9},
     dict(lr=0.1, momentum=0.9),
     ({"kind": "step_decay", "init": 0.1, "rate": 0.5, "step_size": 2},
      lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5))),
    ("adam_cosine", "Adam", torch.optim.Adam, {}, dict(lr=0.01),
     ({"kind": "cosine_decay", "init": 0.01, "decay_steps": 4, "end": 0.001},
      lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.001))),
]


def trajectory(ctor, kwargs, sched, dtype, params, grads):
    ps = {k: torch.tensor(v, dtype=dtype, requires_grad=True) for k, v in params.items()}
    opt = ctor([ps[k] for k in sorted(ps)], **kwargs)
    s = sched(opt) if sched else None
    out = []
    for step in grads:
        for k in sorted(ps):
            ps[k].grad = torch.tensor(step[k], dtype=dtype) if k in step else None
        opt.step()
        if s:
            s.step()
        out.append({k: enc(ps[k]) for k in sorted(ps)})
    return out


def cases():
    rng = np.random.default_rng(23)
    out = []
    for name, kind, ctor, fields, kwargs, sched in OPTIMISERS:
        params, grads = start(rng)
        for dtype in (torch.float32, torch.float64):
            npdt = np.float32 if dtype == torch.float32 else np.float64
            out.append({
                "name": name,
                "optimizer": kind,
                "lr": kwargs["lr"],
                "fields": fields,
                "schedule": sched[0] if sched else None,
                "dtype": str(npdt.__name__),
                "params": {k: enc(v.astype(npdt)) for k, v in params.items()},
                "grads": [{k: enc(v.astype(npdt)) for k, v in g.items()} for g in grads],
                "expected": trajectory(ctor, kwargs, sched[1] if sched else None, dtype, params, grads),
            })
    return out


def lrs(make, steps=12):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    s = make(opt)
    vals = []
    for _ in range(steps):
        vals.append(opt.param_groups[0]["lr"])
        opt.step()
        s.step()
    return vals


def schedules():
    S = torch.optim.lr_scheduler
    return [
        {"name": "step_lr", "kind": "step_decay", "init": 0.1, "rate": 0.5, "step_size": 3,
         "values": lrs(lambda o: S.StepLR(o, step_size=3, gamma=0.5))},
        {"name": "exponential_lr", "kind": "exponential_decay", "init": 0.1, "rate": 0.9,
         "values": lrs(lambda o: S.ExponentialLR(o, gamma=0.9))},
        {"name": "cosine_annealing_lr", "kind": "cosine_decay", "init": 0.1, "decay_steps": 11, "end": 0.01,
         "values": lrs(lambda o: S.CosineAnnealingLR(o, T_max=11, eta_min=0.01))},
        {"name": "linear_lr", "kind": "linear_schedule", "init": 0.01, "end": 0.1, "steps": 4,
         "values": lrs(lambda o: S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=4))},
    ]


def clips():
    rng = np.random.default_rng(7)
    out = []
    for max_norm in (1.0, 100.0, 0.0):
        g = {"a": rng.standard_normal((3, 4)), "b.c": rng.standard_normal(5)}
        for dtype in (torch.float32, torch.float64):
            ts = {k: torch.zeros(v.shape, dtype=dtype, requires_grad=True) for k, v in g.items()}
            for k, t in ts.items():
                t.grad = torch.tensor(g[k], dtype=dtype)
            norm = torch.nn.utils.clip_grad_norm_([ts[k] for k in sorted(ts)], max_norm)
            out.append({
                "max_norm": max_norm,
                "dtype": str(dtype).replace("torch.", ""),
                "grads": {k: enc(torch.tensor(v, dtype=dtype)) for k, v in g.items()},
                "expected": {k: enc(ts[k].grad) for k in sorted(ts)},
                "norm": num(norm),
            })
    return out


def main():
    doc = {
        "generator": "torch %s, numpy %s" % (torch.__version__, np.__version__),
        "cases": cases(),
        "schedules": schedules(),
        "clip": clips(),
    }
    path = os.path.join(HERE, "optim.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print("wrote %d cases to %s" % (len(doc["cases"]), path))


if __name__ == "__main__":
    main()
