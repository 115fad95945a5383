#!/usr/bin/python3
"""Run hgpsim's and PyTorch's per-op yardstick back to back and print the
ratios (PyTorch time / hgpsim time; > 1 means hgpsim is faster).

Usage, from the repository root:

    apt-get install -y python3-torch libopenblas0-pthread   # Debian's PyTorch 1.13 on OpenBLAS
    /usr/bin/python3 tools/yardstick/compare.py [--hgpsim ./hgpsim] [--rounds 3] [--no-nets]

Two sets of ops share the table: the small ones of `hgpsim bench --phase
ops` against torch_ops.py (softmax and MLP gradient and HVP, one VR-HGP
round), and the gradient and HVP of the convolutional presets of
models/nn, `hgpsim bench --phase nets`, against torch_nets.py. For the
nets, the first hgpsim run also dumps each net's parameters, data and
results (--dump), and torch_nets.py rebuilds the nets from that dump and
checks that PyTorch computes the same loss, gradient and HVP (relative
error ≤ 1e-9) before timing them; a net that disagrees is reported and
left out; it checks hgpsim's float32 gradient and HVP the same way,
against PyTorch's float64 ones at the point rounded to float32 (relative
error ≤ 1e-4, or ≤ twice PyTorch float32's own). hgpsim's GFLOP/s count 3 forward passes per gradient and
8 per HVP (bench/nets.go). The float32 ratio compares hgpsim float32 with
PyTorch float32, where both sides report one (the nets).

The two sides alternate --rounds times (hgpsim, torch, torch, hgpsim, ...)
and the median per op is reported, so that a slow spell of a shared machine
does not fall on one side only. The BLAS that PyTorch runs on is printed:
Debian's python3-torch uses whatever libblas.so.3 the alternatives system
selects — the reference BLAS (libblas3, which libtorch depends on) or
OpenBLAS once libopenblas0-pthread is installed — and that changes its
times several-fold, so a run on the reference BLAS prints a warning unless
--reference-blas asked for it; --reference-blas measures against the
reference BLAS on a machine that has both. OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE are removed from PyTorch's environment (unless
--keep-openblas-coretype), so that OpenBLAS runs the kernels it picks for
the processor; the core it runs is printed, and so are the CPU and the
kernel path hgpsim chose (`hgpsim version`).
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = "/usr/lib/x86_64-linux-gnu"

# Prints the file that provides dgemm_ to a process that has imported torch
# (libtorch links libblas.so.3, and dlopen by that soname returns the copy
# already loaded, so this is the BLAS torch's matrix products call), and
# whether that file exports a symbol of an optimized BLAS.
BLAS_PROBE = r"""
import ctypes, os, torch
lib = ctypes.CDLL("libblas.so.3")
addr = ctypes.cast(lib.dgemm_, ctypes.c_void_p).value
for line in open("/proc/self/maps"):
    f = line.split()
    lo, hi = (int(v, 16) for v in f[0].split("-"))
    if lo <= addr < hi and len(f) > 5:
        path = os.path.realpath(f[5])
        break
else:
    path = "unknown"
own = ctypes.CDLL(path) if path != "unknown" else lib
marks = ("openblas_get_config", "bli_info_get_version_str", "MKL_Get_Version", "ATL_buildinfo")
core = "-"
if hasattr(own, "openblas_get_corename"):
    own.openblas_get_corename.restype = ctypes.c_char_p
    core = own.openblas_get_corename().decode()
print(path, any(hasattr(own, m) for m in marks), core)
"""


def run_lines(cmd, env, must=True):
    """Runs cmd and returns its JSON lines by op. With must=False a failing
    exit is tolerated (torch_nets.py exits 1 when a net disagrees, after
    printing its error line)."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0 and (must or not p.stdout.strip()):
        sys.exit(f"compare.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return {o["op"]: o for o in (json.loads(line) for line in p.stdout.splitlines() if line.strip())}


def probe_blas(env):
    """Returns the file of torch's dgemm_ and whether it is Debian's
    reference BLAS: libblas3 installs it in LIB/blas/, and it exports none
    of the optimized BLASes' own symbols."""
    p = subprocess.run([sys.executable, "-c", BLAS_PROBE], capture_output=True, text=True, env=env)
    fields = p.stdout.split()
    if len(fields) != 3:
        return "unknown (the probe failed)", False, "-"
    path, optimized, core = fields[0], fields[1] == "True", fields[2]
    return path, os.path.basename(os.path.dirname(path)) == "blas" and not optimized, core


def med(runs, key):
    vals = [o[key] for o in runs if key in o]
    return statistics.median(vals) if vals else math.nan


def cell(v, fmt):
    return "–" if math.isnan(v) else format(v, fmt)


def measure(a, hg, env, torch_env, dump):
    """Runs the sides alternately a.rounds times and returns hgpsim's and
    PyTorch's JSON objects per op, and hgpsim's shape per op."""
    ours, theirs, shapes = {}, {}, {}
    for r in range(a.rounds):
        hg_cmds = [hg + ["bench", "--phase", "ops", "--json"]]
        torch_cmds = [[sys.executable, os.path.join(HERE, "torch_ops.py")]]
        if not a.no_nets:
            nets = hg + ["bench", "--phase", "nets", "--json", "--reps", str(a.net_reps)] + ["--f32"]
            if r == 0:  # hgpsim goes first in even rounds: the dump is there before torch_nets.py reads it
                nets += ["--dump", dump]
            hg_cmds.append(nets)
            torch_cmds.append([sys.executable, os.path.join(HERE, "torch_nets.py"), dump, "--reps", str(a.net_reps)])
        sides = [("hgpsim", hg_cmds), ("torch", torch_cmds)]
        if r % 2:
            sides.reverse()
        for name, cmds in sides:
            for k, cmd in enumerate(cmds):
                print(f"compare.py: round {r + 1}/{a.rounds}: {' '.join(cmd[:4])} ...", file=sys.stderr)
                lines = run_lines(cmd, env if name == "hgpsim" else torch_env, must=(name == "hgpsim" or k == 0))
                for op, o in lines.items():
                    if "error" in o:
                        if r == 0:
                            print(f"compare.py: {op}: {o['error']}", file=sys.stderr)
                        continue
                    if name == "hgpsim":
                        shapes[op] = o["shape"]
                    (ours if name == "hgpsim" else theirs).setdefault(op, []).append(o)
    return ours, theirs, shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hgpsim", default=None, help="hgpsim binary (default: go run .)")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the two sides")
    ap.add_argument("--no-nets", action="store_true", help="only the small ops (the nets take minutes per round)")
    ap.add_argument("--net-reps", type=int, default=1,
                    help="timings per net op within one round (each side reports their median)")
    ap.add_argument("--keep-openblas-coretype", action="store_true",
                    help="pass OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE on to PyTorch; by default they are removed, so "
                         "that OpenBLAS runs the kernels it picks for this processor (a machine may set an older core, "
                         "e.g. Haswell's 256-bit kernels on an AVX-512 processor, which flatters hgpsim)")
    ap.add_argument("--reference-blas", action="store_true",
                    help="run PyTorch on Debian's reference BLAS/LAPACK (libblas3, liblapack3) even when an optimized "
                         "one is the system's choice, by putting their folders first on LD_LIBRARY_PATH")
    a = ap.parse_args()
    if a.rounds < 1 or a.net_reps < 1:
        sys.exit("compare.py: --rounds and --net-reps must be >= 1")
    hg = [a.hgpsim] if a.hgpsim else ["go", "run", "."]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    torch_env = dict(env)
    if not a.keep_openblas_coretype:
        for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
            torch_env.pop(k, None)
    if a.reference_blas:
        ref = [f"{LIB}/blas", f"{LIB}/lapack"]
        if not os.path.exists(f"{LIB}/blas/libblas.so.3"):
            sys.exit("--reference-blas: libblas3 is not installed (apt-get install -y libblas3 liblapack3)")
        torch_env["LD_LIBRARY_PATH"] = ":".join(ref + [env.get("LD_LIBRARY_PATH", "")]).rstrip(":")
    blas, reference, core = probe_blas(torch_env)
    warning = None
    if reference and not a.reference_blas:
        warning = (f"WARNING: PyTorch runs on the REFERENCE BLAS ({blas}), several times slower than an optimized "
                   f"one: the ratios below flatter hgpsim. Install libopenblas0-pthread, or pass --reference-blas "
                   f"if this is what you meant to measure.")
        print(warning, file=sys.stderr)
    load_before = os.getloadavg()

    dump = tempfile.mkdtemp(prefix="hgpsim-nets-")
    try:
        ours, theirs, shapes = measure(a, hg, env, torch_env, dump)
    finally:
        shutil.rmtree(dump, ignore_errors=True)
    load_after = os.getloadavg()

    version = next(iter(theirs.values()))[0].get("torch", "?") if theirs else "?"
    which = f"{blas} (reference, --reference-blas)" if a.reference_blas else blas
    if warning:
        print(warning + "\n")
    if core != "-":
        which += f" (OpenBLAS core {core})"
    print(f"PyTorch {version}, one thread, BLAS {which}; median of {a.rounds} alternating runs; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} CPUs)")
    vers = subprocess.run(hg + ["version"], capture_output=True, text=True, env=env).stdout.strip().splitlines()
    print("hgpsim " + "; ".join(line for line in vers if line.startswith(("cpu:", "kernels:"))) + "\n")
    print("| op | shape | hgpsim f64 ms | hgpsim GFLOP/s | PyTorch f64 ms | f64: PyTorch / hgpsim | "
          "hgpsim f32 ms | PyTorch f32 ms | f32: PyTorch / hgpsim |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for op, runs in ours.items():
        m, m32 = med(runs, "ms"), med(runs, "ms_f32")
        t = med(theirs.get(op, []), "ms")
        t32 = med(theirs.get(op, []), "ms_f32")
        print(f"| {op} | {shapes[op]} | {m:.3f} | {cell(med(runs, 'gflops'), '.1f')} | {cell(t, '.3f')} | "
              f"{cell(t / m, '.2f')} | {cell(m32, '.3f')} | {cell(t32, '.3f')} | {cell(t32 / m32, '.2f')} |")
    missing = sorted(op for op in ours if op not in theirs)
    if missing:
        print(f"\nNo PyTorch time (disagreement or failure, see above): {', '.join(missing)}")
    errs = {}
    for op, runs in theirs.items():
        if "rel_err" in runs[0]:
            net = op.rsplit("-", 1)[0]
            errs[net] = max([errs.get(net, 0.0)] + [o["rel_err"] for o in runs])
    if errs:
        print("\nPyTorch float64 against hgpsim, largest relative error of loss, gradient and HVP: " +
              ", ".join(f"{net} {e:.1e}" for net, e in errs.items()))
    errs32 = {}
    for op, runs in theirs.items():
        if "grad_err_f32" in runs[0]:
            o = runs[0]
            errs32[op.rsplit("-", 1)[0]] = (max(o["loss_err_f32"], o["grad_err_f32"], o["hvp_err_f32"]),
                                            max(o["grad_err_torch_f32"], o["hvp_err_torch_f32"]))
    if errs32:
        print("\nfloat32 against PyTorch float64 at the point rounded to float32, largest relative error of "
              "gradient and HVP, hgpsim / PyTorch float32 (hgpsim's must be ≤ 1e-4 or ≤ twice PyTorch's): " +
              ", ".join(f"{net} {h:.1e} / {p:.1e}" for net, (h, p) in errs32.items()))


if __name__ == "__main__":
    main()
