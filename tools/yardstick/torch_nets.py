#!/usr/bin/python3
"""PyTorch yardstick for hgpsim's convolutional presets.

`hgpsim bench --phase nets --dump DIR` writes, per preset net, a folder
DIR/NAME with the net's layer list (spec.json), its parameters x, a batch
of inputs a and labels y, a direction u, and hgpsim's own loss, gradient
and Hessian-vector product at that point. This script builds the same net
in PyTorch (float64, NCHW, parameters in the order of `parameters()`:
weight then bias, layer by layer), loads the same x, and

1. checks that PyTorch's loss, gradient and HVP agree with hgpsim's
   (relative error ≤ 1e-9 of the largest entry); a net that disagrees is
   reported and not timed;
2. times the gradient (autograd) and the HVP (double backward) in float64
   and, for context, in float32, one thread each.

It prints one JSON object per op: {"op": NAME-grad | NAME-hvp, "ms": float64
time, "ms_f32": float32 time, "rel_err": agreement, "gflops_fwd": forward
GFLOP per sample batch}. compare.py runs both sides and prints the ratios.

Usage: /usr/bin/python3 tools/yardstick/torch_nets.py DIR [--reps 3]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

torch.set_num_threads(1)


def read(path, dtype):
    return np.fromfile(path, dtype=dtype)


class Norm(torch.nn.Module):
    """Per-sample, per-channel normalization over H×W with a per-channel
    affine (GroupNorm with one group per channel): hgpsim's exact
    replacement for batch normalization."""

    def __init__(self, channels, eps):
        super().__init__()
        self.gn = torch.nn.GroupNorm(channels, channels, eps=eps)

    def forward(self, v):
        return self.gn(v)


def build(spec):
    c, h, w = spec["input"]
    mods = []
    shape = (c, h, w)
    flat = None
    for layer in spec["layers"]:
        k = layer["kind"]
        if k == "conv":
            mods.append(torch.nn.Conv2d(shape[0], layer["out"], layer["kernel"],
                                        stride=layer.get("stride", 1), padding=layer.get("padding", 0)))
        elif k in ("maxpool", "avgpool"):
            cls = torch.nn.MaxPool2d if k == "maxpool" else torch.nn.AvgPool2d
            mods.append(cls(layer["kernel"], stride=layer.get("stride", layer["kernel"])))
        elif k == "relu":
            mods.append(torch.nn.ReLU())
        elif k == "tanh":
            mods.append(torch.nn.Tanh())
        elif k == "softplus":
            mods.append(torch.nn.Softplus())
        elif k == "norm":
            mods.append(Norm(shape[0], layer.get("eps", 1e-5)))
        elif k == "flatten":
            mods.append(torch.nn.Flatten())
        elif k == "dense":
            if flat is None:
                mods.append(torch.nn.Flatten())
                flat = int(np.prod(shape))
            mods.append(torch.nn.Linear(flat, layer["out"]))
        else:
            sys.exit(f"torch_nets.py: unknown layer kind {k!r} in {spec['name']}")
        # Track the shape through the layer with a dummy pass (cheap at batch 1).
        with torch.no_grad():
            out = torch.nn.Sequential(*mods)(torch.zeros(1, c, h, w, dtype=torch.float64))
        if out.dim() == 4:
            shape = tuple(out.shape[1:])
        else:
            flat = out.shape[1]
    return torch.nn.Sequential(*mods)


def load_params(net, x):
    params = list(net.parameters())
    need = sum(p.numel() for p in params)
    if need != x.size:
        sys.exit(f"torch_nets.py: the net has {need} parameters, hgpsim's x has {x.size}")
    k = 0
    with torch.no_grad():
        for p in params:
            p.copy_(torch.from_numpy(x[k:k + p.numel()]).view_as(p))
            k += p.numel()


def flat_grad(params, grads):
    return torch.cat([g.reshape(-1) for g in grads])


def ops(net, a, y, u, l2):
    params = list(net.parameters())

    def loss():
        reg = sum((p * p).sum() for p in params)
        return torch.nn.functional.cross_entropy(net(a), y) + 0.5 * l2 * reg

    def grad():
        return flat_grad(params, torch.autograd.grad(loss(), params))

    us = []
    k = 0
    for p in params:
        us.append(u[k:k + p.numel()].view_as(p))
        k += p.numel()

    def hvp():
        g = torch.autograd.grad(loss(), params, create_graph=True)
        dot = sum((gi * ui).sum() for gi, ui in zip(g, us))
        return flat_grad(params, torch.autograd.grad(dot, params))

    return loss, grad, hvp


def timed(run, reps, budget=1.0):
    run()
    times = []
    for _ in range(reps):
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < budget or calls == 0:
            run()
            calls += 1
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def rel_err(ours, theirs):
    scale = max(float(np.max(np.abs(theirs))), 1e-300)
    return float(np.max(np.abs(ours - theirs))) / scale


def one(folder, reps):
    with open(os.path.join(folder, "spec.json")) as f:
        spec = json.load(f)
    c, h, w = spec["input"]
    n = spec["batch"]
    x = read(os.path.join(folder, "x.f64"), "<f8")
    a = torch.from_numpy(read(os.path.join(folder, "a.f64"), "<f8").reshape(n, c, h, w).copy())
    y = torch.from_numpy(read(os.path.join(folder, "y.i64"), "<i8").copy())
    u = torch.from_numpy(read(os.path.join(folder, "u.f64"), "<f8").copy())
    torch.set_default_dtype(torch.float64)
    net = build(spec).double()
    load_params(net, x)
    loss, grad, hvp = ops(net, a, y, u, spec["l2"])
    err = max(
        abs(float(loss()) - spec["loss"]) / max(abs(spec["loss"]), 1e-300),
        rel_err(read(os.path.join(folder, "grad.f64"), "<f8"), grad().detach().numpy()),
        rel_err(read(os.path.join(folder, "hvp.f64"), "<f8"), hvp().detach().numpy()),
    )
    name = spec["name"]
    if not err <= 1e-9:
        print(json.dumps({"op": name, "error": f"values disagree with hgpsim: relative error {err:.3g} > 1e-9"}))
        return False
    t64 = {"grad": timed(grad, reps), "hvp": timed(hvp, reps)}
    net32 = build(spec).float()
    load_params(net32, x.astype(np.float32))
    _, grad32, hvp32 = ops(net32, a.float(), y, u.float(), spec["l2"])
    t32 = {"grad": timed(grad32, reps), "hvp": timed(hvp32, reps)}
    for op in ("grad", "hvp"):
        print(json.dumps({"op": f"{name}-{op}", "ms": 1e3 * t64[op], "ms_f32": 1e3 * t32[op],
                          "rel_err": err, "torch": torch.__version__}))
        sys.stdout.flush()
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="the folder `hgpsim bench --phase nets --dump` wrote")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated preset names")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    ok = True
    for name in sorted(os.listdir(a.dir)):
        folder = os.path.join(a.dir, name)
        if os.path.isdir(folder) and (not only or name in only):
            ok = one(folder, a.reps) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
