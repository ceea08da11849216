#!/bin/bash
# How fast each vCPU runs the training step's products while both are busy: one `bench gemm --shapes mlp`
# process pinned to each of the first two CPUs (taskset), started together, so that neither has the
# machine to itself. A two-thread step cut in even halves ends with the slower vCPU's half, so the
# ratio of the two bounds what it can give over one thread (issue 17; docs/BENCHMARKS.md, session 45).
#   bash scripts/vcpu-speeds.sh [ROUNDS]    # from the repository root
set -euo pipefail
rounds=${1:-1}
root=$(pwd)
"$root/bin/shardtrain" bench gemm --n 64 --iterations 1 --min-seconds 0 >/dev/null 2>&1 # builds first
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for i in $(seq 1 "$rounds"); do
  for cpu in 0 1; do
    taskset -c "$cpu" "$root/bin/shardtrain" bench gemm --shapes mlp --threads 1 --min-seconds 1 >"$out/cpu$cpu" 2>&1 &
  done
  wait
  python3 - "$out/cpu0" "$out/cpu1" "$i" <<'EOF'
import re, sys
def speed(path):
    v = [float(m.group(1)) for line in open(path)
         if re.search(r'layer 1 \(784->512\) (forward|weight gradient)', line)
         for m in [re.search(r'threads=1: ([0-9.]+) GFLOP/s', line)] if m]
    return sum(v) / len(v)
a, b = speed(sys.argv[1]), speed(sys.argv[2])
slow, fast = min(a, b), max(a, b)
print(f"round {sys.argv[3]}: cpu 0 {a:.1f}, cpu 1 {b:.1f} GFLOP/s (the first layer's forward and weight gradient,"
      f" two thirds of a step's multiply-adds; mean of their medians)")
print(f"  slower over faster {slow / fast:.3f}: even halves give at most {2 * slow / fast:.2f}x one thread on the"
      f" faster vCPU, {2 * slow / (a + b) * 2:.2f}x one thread at the two vCPUs' mean speed")
EOF
done
