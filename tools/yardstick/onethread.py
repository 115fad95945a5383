"""What both PyTorch yardstick scripts share: torch on one thread, and the
timing loop.

Importing this module pins OpenBLAS and OpenMP to one thread before torch
loads (torch.set_num_threads does not reach a BLAS that Debian's
alternatives swap in; it reads the environment when torch loads it), then
imports torch and sets its own thread count to one.
"""
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402  (after the environment above)

torch.set_num_threads(1)


def timed(run, reps=3, budget=0.5):
    """Median over reps of the mean time of run() over at least budget
    seconds (at least one call), after one warm-up call."""
    run()
    times = []
    for _ in range(reps):
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < budget or calls == 0:
            run()
            calls += 1
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)
