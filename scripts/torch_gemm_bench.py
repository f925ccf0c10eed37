#!/usr/bin/env python3
"""OpenBLAS's rate on the Higgs MLP's matrix products through PyTorch, the
per-product anchor of scripts/cpu-vs-torch.sh (not CI).

The shapes and layouts are those of sgemm's BenchmarkMultiply (sgemm/
bench_test.go): C = A·B with A m×k and B k×n, "T" meaning that operand is
stored transposed (torch.mm passes a transposed view to BLAS as a
transpose flag, no copy). Prints one line per shape: GFLOP per second of
process CPU time (2·m·n·k per product, all threads), the measure that moves
least when other jobs share the machine, and GFLOP/s of wall clock. For one
truly single-threaded core set OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1:
torch.set_num_threads does not bind OpenBLAS's own threads; the kernel
OpenBLAS runs is its own choice unless OPENBLAS_CORETYPE names one
(OPENBLAS_VERBOSE=2 prints it). Needs torch (Debian: python3-torch).
"""
import argparse
import time

import torch

# name, batch, m, n, k, A transposed, B transposed (sgemm/bench_test.go).
SHAPES = [
    ("higgs_fwd_NN", 1, 1024, 300, 300, False, False),
    ("higgs_gradx_NT", 1, 1024, 300, 300, False, True),
    ("higgs_gradw_TN", 2, 300, 300, 512, True, False),
    ("higgs_step_fwd_NN", 1, 1024, 301, 301, False, False),
    ("higgs_step_gradx_NT", 1, 1024, 301, 301, False, True),
    ("higgs_step_gradw_TN", 1, 301, 301, 1024, True, False),
    ("higgs_in_NN", 1, 1024, 300, 28, False, False),
    ("higgs_step_in_NN", 1, 1024, 301, 29, False, False),
    ("higgs_step_ingradw_TN", 1, 29, 301, 1024, True, False),
    ("higgs_logit_N1", 1, 1024, 1, 301, False, False),
    ("higgs_logitgradw_N1", 1, 301, 1, 1024, True, False),
    ("higgs_logitgrad_K1", 1, 1024, 301, 1, False, False),
    ("kdd_fwd_NN", 1, 1024, 100, 50, False, False),
    ("kdd_gradx_NT", 1, 1024, 50, 100, False, True),
    ("kdd_gradw_TN", 2, 50, 100, 512, True, False),
]


def operand(rows, cols, transposed, g):
    if transposed:
        return torch.randn(cols, rows, generator=g).t()
    return torch.randn(rows, cols, generator=g)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=float, default=0.5, help="CPU seconds per shape (at least)")
    p.add_argument("--filter", default="", help="only shapes whose name contains this")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(1)
    for name, batch, m, n, k, ta, tb in SHAPES:
        if a.filter not in name:
            continue
        xs = [operand(m, k, ta, g) for _ in range(batch)]
        ws = [operand(k, n, tb, g) for _ in range(batch)]
        cs = [torch.empty(m, n) for _ in range(batch)]
        for x, w, c in zip(xs, ws, cs):  # warm up
            torch.mm(x, w, out=c)
        reps, wall, cpu = 0, time.perf_counter(), time.process_time()
        while time.process_time() - cpu < a.seconds:
            for x, w, c in zip(xs, ws, cs):
                torch.mm(x, w, out=c)
            reps += 1
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        flops = 2.0 * batch * m * n * k * reps
        print(f"torch_gemm {name} threads={a.threads}: {flops / cpu / 1e9:.1f} GFLOP/cpu-s, "
              f"{flops / wall / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
