#!/usr/bin/python3
"""PyTorch yardstick of `hgpsim bench --phase ops`.

The same operations on the same shapes (bench/ops.go), written as a PyTorch
user would: float64, one thread, autograd for gradients and double backward
for Hessian-vector products. For the VR-HGP round the graph of the gradient
at the fixed point is built once outside the timed loop and reused with
retain_graph, the best PyTorch allows (hgpsim keeps its forward pass the
same way). Prints one JSON object per op: {"op": ..., "ms": float64
time, "ms_f32": the same op in float32, for context}.

Needs Debian's python3-torch (apt-get install python3-torch); run with
/usr/bin/python3. tools/yardstick/compare.py runs both sides and prints the
ratios.
"""
import json
import sys

from onethread import timed  # first: pins torch and its BLAS to one thread

import torch

FEATURES, CLASSES, BATCH, HIDDEN = 784, 10, 128, 64
BASES, ROWS, DEGREE = 3, 42, 10
L2 = 1e-3


def data(n):
    return torch.rand(n, FEATURES), torch.randint(0, CLASSES, (n,))


def softmax_loss(theta, x, y):
    w = theta[: CLASSES * FEATURES].view(CLASSES, FEATURES)
    b = theta[CLASSES * FEATURES:]
    z = x @ w.T + b
    return torch.nn.functional.cross_entropy(z, y) + 0.5 * L2 * theta.dot(theta)


def mlp_loss(theta, x, y):
    k = 0
    w1 = theta[k: k + HIDDEN * FEATURES].view(HIDDEN, FEATURES)
    k += HIDDEN * FEATURES
    b1 = theta[k: k + HIDDEN]
    k += HIDDEN
    w2 = theta[k: k + CLASSES * HIDDEN].view(CLASSES, HIDDEN)
    k += CLASSES * HIDDEN
    b2 = theta[k:]
    z = torch.tanh(x @ w1.T + b1) @ w2.T + b2
    return torch.nn.functional.cross_entropy(z, y) + 0.5 * L2 * theta.dot(theta)


def grad_op(loss, dim, x, y):
    theta = (0.01 * torch.randn(dim)).requires_grad_()

    def run():
        torch.autograd.grad(loss(theta, x, y), theta)
    return run


def hvp_op(loss, dim, x, y):
    theta = (0.01 * torch.randn(dim)).requires_grad_()
    u = torch.randn(dim)

    def run():
        (g,) = torch.autograd.grad(loss(theta, x, y), theta, create_graph=True)
        torch.autograd.grad(g.dot(u), theta)
    return run


def mtlda_inner(xs, lam, x, y):
    """PDBO-MTL&DA inner loss: mixture of softmax bases, label weights."""
    logpi = torch.log_softmax(lam[:BASES], 0)
    w = CLASSES * torch.softmax(lam[BASES:], 0)
    logp = []
    reg = 0
    d = CLASSES * FEATURES + CLASSES
    for k in range(BASES):
        t = xs[k * d:(k + 1) * d]
        wk = t[: CLASSES * FEATURES].view(CLASSES, FEATURES)
        z = x @ wk.T + t[CLASSES * FEATURES:]
        logp.append(torch.log_softmax(z, 1).gather(1, y[:, None])[:, 0] + logpi[k])
        reg = reg + 0.5 * L2 * t.dot(t)
    ell = -torch.logsumexp(torch.stack(logp, 1), 1)
    return (w[y] * ell).mean() + reg


def vrhgp_round_op():
    x, y = data(ROWS)
    dx = BASES * (CLASSES * FEATURES + CLASSES)
    xs = (0.01 * torch.randn(dx)).requires_grad_()
    lam = torch.randn(BASES + CLASSES).requires_grad_()
    (g,) = torch.autograd.grad(mtlda_inner(xs, lam, x, y), xs, create_graph=True)
    msgs = 1e-3 * torch.randn(DEGREE + 1, 2 * dx)
    coef = torch.full((DEGREE + 1,), 1.0 / (DEGREE + 1) / 0.5)
    state = {"u": torch.zeros(dx), "w": torch.zeros(dx), "v": torch.zeros(BASES + CLASSES)}
    cy = 1e-3 * torch.randn(dx)
    alpha, beta, lr = 0.9, 0.1, 0.05

    def run():
        mix_u = coef @ msgs[:, :dx]
        mix_w = coef @ msgs[:, dx:]
        hu, bu = torch.autograd.grad(g.dot(state["u"]), (xs, lam), retain_graph=True, allow_unused=True)
        hw, bw = torch.autograd.grad(g.dot(state["w"]), (xs, lam), retain_graph=True, allow_unused=True)
        u_new = mix_u - lr * hu
        state["v"] = alpha * (state["v"] - lr * bu) + (1 - alpha) * (-lr * bw)
        state["w"] = beta * (mix_w - lr * hw + cy) + (1 - beta) * (state["w"] + u_new)
        state["u"] = u_new
    return run




def build():
    """The ops in the default dtype, from a fixed seed."""
    torch.manual_seed(1)
    xb, yb = data(4 * BATCH)
    idx = torch.randint(0, 4 * BATCH, (BATCH,))
    x, y = xb[idx], yb[idx]
    d_soft = CLASSES * FEATURES + CLASSES
    d_mlp = HIDDEN * FEATURES + HIDDEN + CLASSES * HIDDEN + CLASSES
    return [
        ("softmax-grad", grad_op(softmax_loss, d_soft, x, y)),
        ("softmax-hvp", hvp_op(softmax_loss, d_soft, x, y)),
        ("mlp-grad", grad_op(mlp_loss, d_mlp, x, y)),
        ("mlp-hvp", hvp_op(mlp_loss, d_mlp, x, y)),
        ("vrhgp-round", vrhgp_round_op()),
    ]


def main():
    times = {}
    for dtype in (torch.float64, torch.float32):
        torch.set_default_dtype(dtype)
        times[dtype] = {name: timed(run) for name, run in build()}
    for name, t in times[torch.float64].items():
        print(json.dumps({"op": name, "ms": 1e3 * t, "ms_f32": 1e3 * times[torch.float32][name],
                          "torch": torch.__version__}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
