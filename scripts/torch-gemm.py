#!/usr/bin/python3
"""torch.mm on the shapes `bin/shardtrain bench gemm` measures, timed the same way, for side-by-side ratios.

Usage: OMP_NUM_THREADS=1 /usr/bin/python3 scripts/torch-gemm.py [--threads N] [--min-seconds S] SHAPE...
SHAPE is MxKxN[:OP] as in `bench gemm --shapes` (OP nn, tn, nt, tt: which of A and B are stored
transposed), `square` (1024x1024x1024) or `mlp` (the products of one training step of the MLP
784-512-256-10 at batch 64). Each shape: random operands, warm-up for at least one second, then at
least 15 measurements of repeated calls holding about 2e7 flops each, for at least --min-seconds
in all (1, as `bench gemm`'s default; 0: exactly 15); prints the median GFLOP/s.
Needs PyTorch (Debian's python3-torch with OpenBLAS); not part of the build or the tests.
"""
import argparse
import time

import torch

MLP = ["64x784x512", "784x64x512:tn", "64x512x256", "512x64x256:tn", "64x256x512:nt",
       "64x256x10", "256x64x10:tn", "64x10x256:nt"]


def measure(spec, min_seconds):
    dims, _, op = spec.partition(":")
    m, k, n = (int(x) for x in dims.split("x"))
    op = op or "nn"
    a = torch.randn(k, m).t() if op[0] == "t" else torch.randn(m, k)
    b = torch.randn(n, k).t() if op[1] == "t" else torch.randn(k, n)
    flops = 2.0 * m * n * k
    calls = max(1, int(2e7 / flops))
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:
        torch.mm(a, b)
    seconds = []
    measured = 0.0
    while len(seconds) < 15 or measured < min_seconds:
        t = time.perf_counter()
        for _ in range(calls):
            torch.mm(a, b)
        elapsed = time.perf_counter() - t
        measured += elapsed
        seconds.append(elapsed / calls)
    seconds.sort()
    half = len(seconds) // 2
    median = seconds[half] if len(seconds) % 2 else (seconds[half - 1] + seconds[half]) / 2
    return flops / median / 1e9, len(seconds)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--min-seconds", type=float, default=1.0)
    p.add_argument("shapes", nargs="+")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    specs = []
    for s in args.shapes:
        specs += MLP if s == "mlp" else ["1024x1024x1024"] if s == "square" else [s]
    if not args.min_seconds >= 0:
        p.error(f"--min-seconds must be a number of seconds >= 0, got {args.min_seconds}")
    for s in specs:
        gflops, count = measure(s, args.min_seconds)
        print(f"torch.mm {s} threads={args.threads}: {gflops:.1f} GFLOP/s (median of {count})")


if __name__ == "__main__":
    main()
