#!/usr/bin/python3
"""Parity of labelprivacy's training with PyTorch (issue 12 §1), Python side.

Subcommands (scripts/parity.sh drives them):
  data    --out FILE --train N --test N --seed S
          writes a Higgs-shaped CSV in the UCI HIGGS layout (label, then 28
          features; the first --test rows are the test set, as
          `train data import higgs --test-rows` expects).
  torch   --csv FILE --test N --seeds K --epochs E --batch B --lr LR
          [--standardize false,true] [--init uniform_fan_in,...] --out FILE.jsonl
          trains the paper's Higgs MLP (28→300×4→1, ReLU) with Adam and BCE,
          PyTorch's protocol: shuffled batches without a partial last batch,
          one seed per run; one JSON line per run with its test AUC.
  summary --torch FILE.jsonl --lp NAME=runs.csv ...
          prints mean test AUC ± SE over seeds for every configuration.

Deterministic: numpy's PCG64 for the data, torch.manual_seed and one CPU
thread for training. Needs numpy and torch (Debian: python3-numpy,
python3-torch) and nothing else.
"""
import argparse
import csv
import json
import math
import sys

import numpy as np

FEATURES = (["lepton_pT", "lepton_eta", "lepton_phi", "missing_energy_magnitude", "missing_energy_phi"]
            + [f"jet{j}_{f}" for j in range(1, 5) for f in ("pt", "eta", "phi", "btag")]
            + ["m_jj", "m_jjj", "m_lv", "m_jlv", "m_bb", "m_wbb", "m_wwbb"])


def higgs_like(n, rng):
    """Rows shaped like UCI HIGGS: positive heavy-tailed momenta and masses
    (log-normal, means near 1, long right tails), bounded angles, discrete
    b-tags {0, 1.09, 2.17}, a W mass peak, and a signal H→bb peak in m_bb.
    Unscaled, like the real file: the means are far from 0 and the spreads
    differ by 10×, which is what exposes initialization and standardization."""
    y = (rng.random(n) < 0.53).astype(np.int64)

    def lognorm(mu, s):
        return np.exp(rng.normal(mu, s, n))

    cols = [lognorm(-0.15 + 0.10 * y, 0.55),
            np.clip(rng.normal(0, 1.0 - 0.12 * y, n), -2.43, 2.43),
            rng.uniform(-1.74, 1.74, n),
            lognorm(-0.15 + 0.08 * y, 0.65),
            rng.uniform(-1.74, 1.74, n)]
    for j in range(4):
        cols.append(lognorm(-0.05 - 0.12 * j + 0.07 * y, 0.55))
        cols.append(np.clip(rng.normal(0, 1.05 - 0.08 * y, n), -2.73, 2.73))
        cols.append(rng.uniform(-1.74, 1.74, n))
        tagged = rng.random(n) < 0.3 + 0.2 * y
        cols.append(np.where(tagged, np.where(rng.random(n) < 0.6, 2.173, 1.087), 0.0))
    peak = (y == 1) & (rng.random(n) < 0.55)
    cols += [lognorm(0.0, 0.4),
             lognorm(0.02, 0.3),
             np.where(rng.random(n) < 0.85, np.abs(rng.normal(0.98, 0.04, n)), lognorm(0.1, 0.35)),
             lognorm(0.02 + 0.05 * y, 0.3),
             np.where(peak, np.abs(rng.normal(1.0, 0.12, n)), lognorm(-0.05, 0.55)),
             lognorm(0.03 - 0.08 * y, 0.3),
             lognorm(0.0 - 0.12 * y, 0.25)]
    return np.stack(cols, axis=1).astype(np.float32), y


def cmd_data(a):
    rng = np.random.Generator(np.random.PCG64(a.seed))
    x, y = higgs_like(a.test + a.train, rng)
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        for yi, xi in zip(y, x):
            w.writerow([f"{float(yi):.1f}"] + [f"{v:.6g}" for v in xi])
    print(f"parity: wrote {a.out}: {a.test} test rows then {a.train} train rows, {len(FEATURES)} features, "
          f"{y.mean():.3f} positives", file=sys.stderr)


def read_csv(path, test):
    d = np.loadtxt(path, delimiter=",", dtype=np.float64)
    y, x = d[:, 0].astype(np.int64), d[:, 1:].astype(np.float32)
    return x[test:], y[test:], x[:test], y[:test]


def auc(scores, labels):
    """Exact, tie-aware AUC (Mann–Whitney U with average ranks)."""
    order = np.argsort(scores, kind="mergesort")
    s = scores[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j) / 2 + 1
        i = j + 1
    r = np.empty(len(s))
    r[order] = ranks
    pos = labels == 1
    n1, n0 = pos.sum(), (~pos).sum()
    return float((r[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def train_torch(xtr, ytr, xte, yte, seed, standardize, init, epochs, batch, lr):
    import torch
    from torch import nn
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    if standardize:  # mean and sd of the training rows only
        mu, sd = xtr.mean(0), xtr.std(0)
        sd[sd == 0] = 1
        xtr, xte = (xtr - mu) / sd, (xte - mu) / sd
    sizes = [xtr.shape[1], 300, 300, 300, 300, 1]
    layers = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])  # default init: U(±1/√fan_in), weights and biases
        if init == "he_normal":
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)
        elif init == "glorot_uniform":
            nn.init.xavier_uniform_(lin.weight)
            nn.init.zeros_(lin.bias)
        elif init != "uniform_fan_in":
            raise SystemExit(f"unknown init {init}")
        layers += [lin, nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    opt = torch.optim.Adam(model.parameters(), lr=lr)  # β 0.9, 0.999, ε 1e-8
    lossf = nn.BCEWithLogitsLoss()
    X, Y = torch.from_numpy(np.ascontiguousarray(xtr)), torch.from_numpy(ytr.astype(np.float32))
    n = len(X)
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        for b in range(n // batch):  # no partial last batch
            idx = perm[b * batch:(b + 1) * batch]
            opt.zero_grad()
            loss = lossf(model(X[idx]).squeeze(-1), Y[idx])
            loss.backward()
            opt.step()
    with torch.no_grad():
        p = torch.sigmoid(model(torch.from_numpy(np.ascontiguousarray(xte))).squeeze(-1)).numpy()
    return auc(p.astype(np.float64), yte)


def cmd_torch(a):
    import torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    xtr, ytr, xte, yte = read_csv(a.csv, a.test)
    with open(a.out, "w") as f:
        for init in a.init.split(","):
            for std in a.standardize.split(","):
                for seed in range(1, a.seeds + 1):
                    v = train_torch(xtr, ytr, xte, yte, seed, std == "true", init, a.epochs, a.batch, a.lr)
                    rec = {"trainer": "pytorch", "init": init, "standardize": std == "true", "seed": seed, "test_auc": v}
                    print(json.dumps(rec), file=f, flush=True)
                    print(f"parity: pytorch init={init} standardize={std} seed={seed}: test AUC {v:.4f}", file=sys.stderr)


def cmd_summary(a):
    groups = {}
    if a.torch:
        for line in open(a.torch):
            r = json.loads(line)
            groups.setdefault(("pytorch", r["init"], str(r["standardize"]).lower()), []).append(r["test_auc"])
    for spec in a.lp or []:
        name, path = spec.split("=", 1)
        init, std = name.split("/")
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r.get("pet", "none") in ("none", ""):
                    groups.setdefault(("labelprivacy", init, std), []).append(float(r["test_auc"]))
    print(f"{'trainer':<13} {'init':<15} {'standardize':<11} {'n':>2}  {'mean AUC':>8}  {'SE':>6}")
    for (trainer, init, std), v in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0])):
        m = sum(v) / len(v)
        se = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v)) if len(v) > 1 else float("nan")
        print(f"{trainer:<13} {init:<15} {std:<11} {len(v):>2}  {m:8.4f}  {se:6.4f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data")
    d.add_argument("--out", required=True)
    d.add_argument("--train", type=int, default=6500)
    d.add_argument("--test", type=int, default=5000)
    d.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("torch")
    t.add_argument("--csv", required=True)
    t.add_argument("--test", type=int, required=True)
    t.add_argument("--seeds", type=int, default=5)
    t.add_argument("--epochs", type=int, default=8)
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--standardize", default="false,true")
    t.add_argument("--init", default="uniform_fan_in")
    t.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--torch")
    s.add_argument("--lp", action="append", help="INIT/STANDARDIZE=path/to/runs.csv")
    a = p.parse_args()
    {"data": cmd_data, "torch": cmd_torch, "summary": cmd_summary}[a.cmd](a)


if __name__ == "__main__":
    main()
