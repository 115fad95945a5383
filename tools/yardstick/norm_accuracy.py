#!/usr/bin/python3
"""Test accuracy of the node-weighting paper's CNN with batch norm against
the per-sample group norm (one group per channel, i.e. instance norm) that
hgpsim's "node-weighting" preset uses instead.

hgpsim replaces the paper's BatchNorm2d by GroupNorm(C, C, eps=1e-5) because
batch statistics couple the samples of a minibatch (a sample's gradient
would depend on the other samples of its batch). This script measures in
PyTorch what that costs or gains in accuracy on the same net:

    conv C→C 4×4 stride 4 padding 1, norm, ReLU,
    conv C→2 2×2 stride 2 padding 1, norm, ReLU, flatten, dense → 10

(363 parameters on Fashion-MNIST's 1×28×28), with norm either
(a) BatchNorm2d, PyTorch defaults: batch statistics in train mode during
    training, running statistics (eval mode) for testing, or
(b) GroupNorm(C, C, eps=1e-5).

Data: Fashion-MNIST from /usr/share/datasets/fashion-mnist/*.gz (IDX,
gzip), pixels / 255, nothing else. Training: plain SGD, lr 0.05, batch 50
(the paper's batch size), softmax cross-entropy, float32, one thread, in
two regimes:
  - "node": 5 epochs over a random 4,000-example training subset (about
    one node's data in the paper's experiments);
  - "full": 2 epochs over all 60,000 training examples.
Seeds 1–3; for each seed both norms start from the same initial conv and
dense weights and see the same subset and batch order, so the per-seed
difference is a paired one. The score is the top-1 accuracy on the 10,000
test images. It prints a Markdown table: accuracy per norm and seed,
mean ± std (sample std over seeds), and the difference GroupNorm −
BatchNorm (mean ± std of the paired differences).

Usage, from the repository root (about a minute on one core):

    apt-get install -y python3-torch
    nice -n 10 /usr/bin/python3 tools/yardstick/norm_accuracy.py [--seeds 1,2,3] [--data DIR]
"""
import argparse
import gzip
import os
import statistics
import struct
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

LR = 0.05
BATCH = 50
# (name, training examples (None = all), epochs)
REGIMES = [("node", 4000, 5), ("full", None, 2)]
NORMS = ["batch", "group"]


def read_idx(path):
    """Read a gzip'd IDX file into a numpy array of its stored shape."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        sys.exit(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        sys.exit(f"{path}: {arr.size} values, header says {dims}")
    return arr.reshape(dims)


def load(data_dir, split):
    images = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


def make_norm(kind, c):
    if kind == "batch":
        return nn.BatchNorm2d(c)
    return nn.GroupNorm(c, c, eps=1e-5)


def make_net(kind, in_ch=1, classes=10, hw=28):
    second = 2 if in_ch == 1 else 5
    # Spatial size after each conv: floor((n + 2p - k) / s) + 1.
    h1 = (hw + 2 - 4) // 4 + 1
    h2 = (h1 + 2 - 2) // 2 + 1
    return nn.Sequential(
        nn.Conv2d(in_ch, in_ch, 4, stride=4, padding=1), make_norm(kind, in_ch), nn.ReLU(),
        nn.Conv2d(in_ch, second, 2, stride=2, padding=1), make_norm(kind, second), nn.ReLU(),
        nn.Flatten(), nn.Linear(second * h2 * h2, classes),
    )


def init_nets(seed):
    """Both norms' nets with identical conv and dense weights: the norms'
    own parameters start at weight 1, bias 0 in both, so copying the rest
    makes the comparison paired."""
    torch.manual_seed(seed)
    bn = make_net("batch")
    gn = make_net("group")
    with torch.no_grad():
        for i in (0, 3, 7):
            gn[i].weight.copy_(bn[i].weight)
            gn[i].bias.copy_(bn[i].bias)
    return {"batch": bn, "group": gn}


def train(net, x, y, epochs, gen_seed):
    g = torch.Generator().manual_seed(gen_seed)
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    n = x.shape[0]
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=g)
        for s in range(0, n - BATCH + 1, BATCH):
            idx = perm[s:s + BATCH]
            opt.zero_grad()
            loss_fn(net(x[idx]), y[idx]).backward()
            opt.step()


@torch.no_grad()
def accuracy(net, x, y):
    net.eval()
    correct = 0
    for s in range(0, x.shape[0], 1000):
        correct += (net(x[s:s + 1000]).argmax(1) == y[s:s + 1000]).sum().item()
    return correct / x.shape[0]


def mean_std(v):
    return statistics.mean(v), (statistics.stdev(v) if len(v) > 1 else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--seeds", default="1,2,3")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    torch.set_num_threads(1)

    xtr, ytr = load(args.data, "train")
    xte, yte = load(args.data, "t10k")
    nparams = sum(p.numel() for p in make_net("group").parameters())
    print(f"net: {nparams} parameters; train {tuple(xtr.shape)}, test {tuple(xte.shape)}; "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread", file=sys.stderr)

    acc = {}  # (regime, norm, seed) -> accuracy
    t0 = time.time()
    for regime, size, epochs in REGIMES:
        for seed in seeds:
            if size is None:
                x, y = xtr, ytr
            else:
                g = torch.Generator().manual_seed(1000 + seed)
                sub = torch.randperm(xtr.shape[0], generator=g)[:size]
                x, y = xtr[sub], ytr[sub]
            nets = init_nets(seed)
            for norm in NORMS:
                train(nets[norm], x, y, epochs, gen_seed=2000 + seed)
                acc[regime, norm, seed] = accuracy(nets[norm], xte, yte)
                print(f"{regime} seed {seed} {norm}: {acc[regime, norm, seed]:.4f} "
                      f"({time.time() - t0:.0f} s)", file=sys.stderr)

    seed_cols = " | ".join(f"seed {s}" for s in seeds)
    print(f"| training | norm | {seed_cols} | mean ± std |")
    print("|---|---|" + "---:|" * len(seeds) + "---:|")
    for regime, size, epochs in REGIMES:
        label = f"{size if size else xtr.shape[0]:,} ex × {epochs} ep"
        rows = {
            "BatchNorm2d (eval: running stats)": [100 * acc[regime, "batch", s] for s in seeds],
            "GroupNorm(C, C)": [100 * acc[regime, "group", s] for s in seeds],
        }
        rows["GroupNorm − BatchNorm"] = [g - b for g, b in zip(rows["GroupNorm(C, C)"],
                                                               rows["BatchNorm2d (eval: running stats)"])]
        for name, v in rows.items():
            m, sd = mean_std(v)
            sign = "+" if name.startswith("GroupNorm −") else ""
            cells = " | ".join(f"{a:{sign}.2f}" for a in v)
            print(f"| {label} | {name} | {cells} | {m:{sign}.2f} ± {sd:.2f} |")
    print(f"\nTest accuracy (%) on the 10,000 Fashion-MNIST test images; SGD lr {LR}, batch {BATCH}, "
          f"float32, {nparams} parameters; {time.time() - t0:.0f} s.")


if __name__ == "__main__":
    main()
