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
2. when the dump has hgpsim's float32 results (grad.f32, hvp.f32 and
   loss_f32), checks them against PyTorch's float64 values at the same
   point rounded to float32 (relative error ≤ TOL32 = 1e-4, or at most
   twice PyTorch float32's own error against that reference, which is
   reported beside it);
3. times the gradient (autograd) and the HVP (double backward) in float64
   and in float32, one thread each.

It prints one JSON object per op: {"op": NAME-grad | NAME-hvp, "ms": float64
time, "ms_f32": float32 time, "gflops": float64 GFLOP/s counted as hgpsim
counts them (3 forward passes per gradient, 8 per HVP), "rel_err": the
largest of the three agreement errors, and the float32 errors of step 2}; with --check only the errors, one
object per net. compare.py runs both sides and prints the ratios.

Usage: /usr/bin/python3 tools/yardstick/torch_nets.py DIR [--reps 3] [--only NAME,...] [--check]
"""
import argparse
import json
import os
import sys

import numpy as np

from onethread import timed  # first: pins torch and its BLAS to one thread

import torch


def read(path, dtype):
    return np.fromfile(path, dtype=dtype)


class Softplus(torch.nn.Module):
    """log(1 + e^v) everywhere, as hgpsim computes it: torch.nn.Softplus
    switches to v itself above its threshold (20), which is off by
    log(1 + e^-v) ≈ 2e-9 there, above the 1e-9 the check allows."""

    def forward(self, v):
        return torch.logaddexp(v, torch.zeros((), dtype=v.dtype))


def build(spec):
    """The torch.nn.Sequential of the layer list of spec.json. Kinds and
    fields are models/nn's (nn.Kind.String, nn.Spec): conv2d, maxpool2d,
    avgpool2d (out, kh, kw, stride, pad; stride resolved by the dump),
    relu, tanh, softplus, flatten, dense (out) and groupnorm (out = the
    number of groups; ε = 1e-5 and a per-channel scale and shift, which is
    torch.nn.GroupNorm(groups, C)). nn computes a ReLU that directly
    precedes a max pool after the pool; the two commute, so the order
    written here, the specs' order, gives the same values and derivatives.
    A dense layer reads its input flattened in NCHW order, as Linear after
    Flatten does."""
    c, h, w = spec["input"]
    shape = (c, h, w)  # per-sample shape; a 2-D activation has shape (size, 1, 1)
    flat = False  # whether the torch tensor is (N, size) rather than (N, C, H, W)
    mods = []

    def planes():
        nonlocal flat
        if flat:
            mods.append(torch.nn.Unflatten(1, shape))
            flat = False

    def window(layer, pad):
        kh, kw, s = layer["kh"], layer["kw"], layer["stride"]
        return (shape[1] + 2 * pad - kh) // s + 1, (shape[2] + 2 * pad - kw) // s + 1

    for layer in spec["layers"]:
        k = layer["kind"]
        if k == "conv2d":
            planes()
            pad = layer.get("pad", 0)
            mods.append(torch.nn.Conv2d(shape[0], layer["out"], (layer["kh"], layer["kw"]),
                                        stride=layer["stride"], padding=pad))
            shape = (layer["out"],) + window(layer, pad)
        elif k in ("maxpool2d", "avgpool2d"):
            planes()
            cls = torch.nn.MaxPool2d if k == "maxpool2d" else torch.nn.AvgPool2d
            mods.append(cls((layer["kh"], layer["kw"]), stride=layer["stride"]))
            shape = (shape[0],) + window(layer, 0)
        elif k == "relu":
            mods.append(torch.nn.ReLU())
        elif k == "tanh":
            mods.append(torch.nn.Tanh())
        elif k == "softplus":
            mods.append(Softplus())
        elif k == "groupnorm":
            planes()
            mods.append(torch.nn.GroupNorm(layer["out"], shape[0], eps=1e-5))
        elif k in ("flatten", "dense"):
            if not flat:
                mods.append(torch.nn.Flatten())
                flat = True
            size = shape[0] * shape[1] * shape[2]
            shape = (size, 1, 1)
            if k == "dense":
                mods.append(torch.nn.Linear(size, layer["out"]))
                shape = (layer["out"], 1, 1)
        else:
            sys.exit(f"torch_nets.py: unknown layer kind {k!r} in {spec['name']}")
    if shape[0] * shape[1] * shape[2] != spec["classes"]:
        sys.exit(f"torch_nets.py: {spec['name']} ends with {shape}, not {spec['classes']} classes")
    if not flat:
        mods.append(torch.nn.Flatten())
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




def rel_err(ours, theirs):
    scale = max(float(np.max(np.abs(theirs))), 1e-300)
    return float(np.max(np.abs(ours - theirs))) / scale


# The float32 check: hgpsim's float32 gradient and HVP against PyTorch's
# float64 ones at the same point rounded to float32, relative to the
# largest entry. float32's unit roundoff is 6e-8; the products' sums run
# over up to a few thousand terms per output and the HVP's backward pass
# through several layers, so 1e-4 leaves a margin of a few hundred ulps
# for that growth while a wrong index or a dropped term (errors of order
# 1) still fails. PyTorch's own float32 error against the same reference
# is reported beside hgpsim's. Where float32 itself cannot do better — its
# rounding moves a ReLU input or a max pool's winner across the kink, so
# the rounded net's HVP differs from the float64 one's by percents
# (fedem-cnn's HVP: 1.1e-2 for hgpsim and PyTorch alike, which agree with
# each other to 1e-6) — an error up to twice PyTorch float32's own passes.
TOL32 = 1e-4


def check32(folder, spec, x, a, y, u):
    """Returns hgpsim's and PyTorch's float32 errors ({} when the dump has
    no float32 results); the caller fails the net when hgpsim's exceed
    both TOL32 and twice PyTorch's."""
    g32 = os.path.join(folder, "grad.f32")
    if not os.path.exists(g32):
        return {}
    r = lambda v: v.astype(np.float32).astype(np.float64)
    net = build(spec).double()
    load_params(net, r(x))
    a64, u64 = torch.from_numpy(r(a.numpy())), torch.from_numpy(r(u.numpy()))
    loss, grad, hvp = ops(net, a64, y, u64, spec["l2"])
    ref = {"grad": grad().detach().numpy(), "hvp": hvp().detach().numpy()}
    net32 = build(spec).float()
    load_params(net32, x.astype(np.float32))
    _, grad32, hvp32 = ops(net32, a.float(), y, u.float(), spec["l2"])
    theirs = {"grad": grad32().detach().double().numpy(), "hvp": hvp32().detach().double().numpy()}
    out = {"loss_err_f32": abs(float(loss()) - spec["loss_f32"]) / max(abs(float(loss())), 1e-300)}
    for op in ("grad", "hvp"):
        out[f"{op}_err_f32"] = rel_err(read(os.path.join(folder, f"{op}.f32"), "<f4").astype(np.float64), ref[op])
        out[f"{op}_err_torch_f32"] = rel_err(theirs[op], ref[op])
    return out


def one(folder, reps, budget, check_only):
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
    errs = {
        "loss_err": abs(float(loss()) - spec["loss"]) / max(abs(spec["loss"]), 1e-300),
        "grad_err": rel_err(read(os.path.join(folder, "grad.f64"), "<f8"), grad().detach().numpy()),
        "hvp_err": rel_err(read(os.path.join(folder, "hvp.f64"), "<f8"), hvp().detach().numpy()),
    }
    err = max(errs.values())
    name = spec["name"]
    if not err <= 1e-9:
        print(json.dumps({"op": name, "error": f"values disagree with hgpsim: relative error {err:.3g} > 1e-9",
                          **errs}))
        sys.stdout.flush()
        return False
    errs32 = check32(folder, spec, x, a, y, u)
    err32 = max([v for k, v in errs32.items() if "torch" not in k], default=0.0)
    torch32 = max([v for k, v in errs32.items() if "torch" in k], default=0.0)
    if not (err32 <= TOL32 or err32 <= 2 * torch32):
        print(json.dumps({"op": name, "error": f"float32 values disagree with PyTorch float64 at the rounded point: "
                                              f"relative error {err32:.3g} > {TOL32:g} and > twice PyTorch "
                                              f"float32's own ({torch32:.3g})", **errs32}))
        sys.stdout.flush()
        return False
    if check_only:
        print(json.dumps({"op": name, "rel_err": err, **errs, **errs32}))
        sys.stdout.flush()
        return True
    t64 = {"grad": timed(grad, reps, budget), "hvp": timed(hvp, reps, budget)}
    net32 = build(spec).float()
    load_params(net32, x.astype(np.float32))
    _, grad32, hvp32 = ops(net32, a.float(), y, u.float(), spec["l2"])
    t32 = {"grad": timed(grad32, reps, budget), "hvp": timed(hvp32, reps, budget)}
    # The FLOP counts of hgpsim's bench/nets.go: 3 forward passes per
    # gradient, 8 per HVP.
    work = {"grad": 3 * spec["flops_forward"] * n, "hvp": 8 * spec["flops_forward"] * n}
    for op in ("grad", "hvp"):
        print(json.dumps({"op": f"{name}-{op}", "ms": 1e3 * t64[op], "ms_f32": 1e3 * t32[op],
                          "gflops": work[op] / t64[op] / 1e9, "rel_err": err, "torch": torch.__version__,
                          **errs32}))
        sys.stdout.flush()
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="the folder `hgpsim bench --phase nets --dump` wrote")
    ap.add_argument("--reps", type=int, default=3, help="timings per op (the median is reported)")
    ap.add_argument("--budget", type=float, default=0.5,
                    help="seconds of one timing, at least one call (hgpsim bench uses 0.5)")
    ap.add_argument("--only", default="", help="comma-separated net names (the dump's folder names)")
    ap.add_argument("--check", action="store_true", help="only check agreement, print the errors, time nothing")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    ok = True
    for name in sorted(os.listdir(a.dir)):
        folder = os.path.join(a.dir, name)
        if os.path.isdir(folder) and (not only or name in only):
            ok = one(folder, a.reps, a.budget, a.check) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
