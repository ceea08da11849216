#!/bin/bash
# Issue 17's single-process bar: ShardTrain's `local` against PyTorch's torch_single.py (the reference
# runs kept outside this repository, in the directory PEERS; docs/BENCHMARKS.md, "The PyTorch
# reference runs"), one compute thread each, in alternating rounds (which goes first alternates
# too); prints each round's samples/s, their ratio and both test accuracies, and the median of the
# ratios. With CPU both are pinned to that vCPU (taskset), the JVM's compiler and collector threads
# with them; without it, neither is pinned. PyTorch runs on OpenBLAS's own choice of kernels (the AVX-512 ones on an
# AVX-512 machine): OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset.
#   bash scripts/single-vs-torch.sh ROUNDS PEERS [CPU]    # from the repository root
set -euo pipefail
rounds=${1:?usage: single-vs-torch.sh ROUNDS PEERS [CPU]}
peers=${2:?usage: single-vs-torch.sh ROUNDS PEERS [CPU] (PEERS: the directory of torch_single.py)}
pin=()
if [[ -n "${3:-}" ]]; then pin=(taskset -c "$3"); fi
# As the reference trains: its layers start as nn.Linear's, its learning rate stays constant.
M2="--dataset mnist --hidden 512,256 --optimizer sgd --lr 0.05 --lr-schedule constant --init pytorch --batch 64"
M2="$M2 --no-progress --steps 3000"
out=$(mktemp)
torch_run() {
  (cd "$peers" && OMP_NUM_THREADS=1 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "${pin[@]}" \
    /usr/bin/python3 torch_single.py --steps 3000) > "$out"
  t=$(sed -n 's/^RESULT .*"samples_per_s": \([0-9.]*\).*/\1/p' "$out")
  ta=$(sed -n 's/^RESULT .*"test_accuracy": \([0-9.]*\).*/\1/p' "$out")
}
ours_run() {
  "${pin[@]}" bin/shardtrain local $M2 --compute-threads 1 2>/dev/null > "$out"
  s=$(sed -n 's/^mnist: 3000 steps, \([0-9]*\) samples\/s.*/\1/p' "$out")
  sa=$(sed -n 's/^mnist: .* test accuracy \([0-9.]*\).*/\1/p' "$out")
}
ratios=()
for i in $(seq 1 "$rounds"); do
  if (( i % 2 )); then torch_run; ours_run; else ours_run; torch_run; fi
  r=$(python3 -c "print(f'{$s / $t:.3f}')")
  ratios+=("$r")
  echo "round $i $(date -u +%H:%M:%S): PyTorch $t, ShardTrain $s samples/s: $r (test accuracy $ta, $sa)"
done
echo "median of the rounds' ratios: $(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c \
  'import sys, statistics; print(f"{statistics.median(float(l) for l in sys.stdin):.3f}")')"
