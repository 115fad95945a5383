#!/usr/bin/python3
"""Run hgpsim's and PyTorch's per-op yardstick back to back and print the
ratios (PyTorch time / hgpsim time; > 1 means hgpsim is faster).

Usage, from the repository root:

    apt-get install -y python3-torch          # Debian's PyTorch 1.13
    /usr/bin/python3 tools/yardstick/compare.py [--hgpsim ./hgpsim] [--rounds 3]

The two sides alternate --rounds times (hgpsim, torch, torch, hgpsim, ...)
and the median per op is reported, so that a slow spell of a shared machine
does not fall on one side only. The BLAS that PyTorch runs on is printed:
Debian's python3-torch uses whatever libblas.so.3 the alternatives system
selects — the reference BLAS, or OpenBLAS when libopenblas0 is installed,
which apt does by default (a Recommends of libtorch) — and that changes
its times several-fold; --reference-blas measures against the reference
BLAS on a machine that has both.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_lines(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return {o["op"]: o for o in (json.loads(line) for line in out.splitlines() if line.strip())}


def blas():
    try:
        return os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hgpsim", default=None, help="hgpsim binary (default: go run .)")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the two sides")
    ap.add_argument("--reference-blas", action="store_true",
                    help="run PyTorch on Debian's reference BLAS/LAPACK (libblas3, liblapack3) even when an optimized "
                         "one is the system's choice, by putting their folders first on LD_LIBRARY_PATH")
    a = ap.parse_args()
    hg = [a.hgpsim] if a.hgpsim else ["go", "run", "."]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    torch_env = dict(env)
    lib = "/usr/lib/x86_64-linux-gnu"
    if a.reference_blas:
        ref = [f"{lib}/blas", f"{lib}/lapack"]
        if not os.path.exists(f"{lib}/blas/libblas.so.3"):
            sys.exit("--reference-blas: libblas3 is not installed (apt-get install -y libblas3 liblapack3)")
        torch_env["LD_LIBRARY_PATH"] = ":".join(ref + [env.get("LD_LIBRARY_PATH", "")]).rstrip(":")
    ours, theirs = {}, {}
    for r in range(a.rounds):
        sides = [("hgpsim", hg + ["bench", "--phase", "ops", "--json"]),
                 ("torch", [sys.executable, os.path.join(HERE, "torch_ops.py")])]
        if r % 2:
            sides.reverse()
        for name, cmd in sides:
            for op, o in run_lines(cmd, env if name == "hgpsim" else torch_env).items():
                (ours if name == "hgpsim" else theirs).setdefault(op, []).append(o)
    version = next(iter(theirs.values()))[0].get("torch", "?")
    which = f"{lib}/blas/libblas.so.3 (reference, --reference-blas)" if a.reference_blas else blas()
    print(f"PyTorch {version}, one thread, float64, BLAS {which}; median of {a.rounds} alternating runs\n")
    print("| op | shape | hgpsim ms | PyTorch ms | PyTorch / hgpsim |")
    print("|---|---|---:|---:|---:|")
    for op, os_ in ours.items():
        m = statistics.median(o["ms"] for o in os_)
        t = statistics.median(o["ms"] for o in theirs.get(op, [{"ms": float("nan")}]))
        print(f"| {op} | {os_[0]['shape']} | {m:.3f} | {t:.3f} | {t / m:.2f} |")


if __name__ == "__main__":
    main()
