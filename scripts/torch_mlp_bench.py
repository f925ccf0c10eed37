#!/usr/bin/env python3
"""PyTorch's CPU cost of one Higgs MLP training step, the anchor of
scripts/cpu-vs-torch.sh (not CI).

The paper's Higgs MLP (28→300×4→1, ReLU), BCE-with-logits loss, Adam 1e-3,
batch 1024, synthetic N(0,1) features and random 0/1 labels, as labelprivacy's
`train bench` measures it. Times STEPS steps after WARMUP untimed ones and
prints one line: threads, examples/s (wall) and CPU µs per example
(process CPU time, all threads). For one truly single-threaded core set
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 in the environment as well as
--threads 1: torch.set_num_threads does not bind OpenBLAS's own threads.
Needs torch (Debian: python3-torch).
"""
import argparse
import time

import torch
from torch import nn


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--warmup", type=int, default=10)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    layers, width = [], 28
    for _ in range(4):
        layers += [nn.Linear(width, 300), nn.ReLU()]
        width = 300
    model = nn.Sequential(*layers, nn.Linear(width, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)  # β 0.9, 0.999, ε 1e-8
    loss_fn = nn.BCEWithLogitsLoss()
    n = a.batch * (a.steps + a.warmup)
    x = torch.randn(n, 28)
    y = torch.randint(0, 2, (n,)).float()

    def step(i):
        xb, yb = x[i * a.batch:(i + 1) * a.batch], y[i * a.batch:(i + 1) * a.batch]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb).squeeze(-1), yb)
        loss.backward()
        opt.step()

    for i in range(a.warmup):
        step(i)
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(a.warmup, a.warmup + a.steps):
        step(i)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ex = a.steps * a.batch
    print(f"pytorch {torch.__version__} threads={a.threads} batch={a.batch} steps={a.steps}: "
          f"{ex / wall:.0f} ex/s, {cpu / ex * 1e6:.1f} cpu_us_per_ex")


if __name__ == "__main__":
    main()
