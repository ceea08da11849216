#!/bin/bash
# Issue 17's product bars: `bench gemm --threads 1` against torch.mm (scripts/torch-gemm.py, PyTorch
# on OpenBLAS's own choice of kernels: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset) on the same
# shapes, in pairs pinned to one vCPU (taskset), vCPU 0 in odd rounds and 1 in even ones, which goes
# first alternating every two rounds. Prints each pair's GFLOP/s and ratio by shape, then the median
# of the ratios by shape.
#   bash scripts/gemm-vs-torch.sh ROUNDS [SHAPES]    # from the repository root; SHAPES as bench gemm's
#   --shapes, MxKxN[:OP] or mlp (default: the square 1024x1024x1024 and the MLP's eight)
set -euo pipefail
rounds=${1:?usage: gemm-vs-torch.sh ROUNDS [SHAPES]}
shapes=${2:-1024x1024x1024,64x784x512,784x64x512:tn,64x512x256,512x64x256:tn,64x256x512:nt,64x256x10,256x64x10:tn,64x10x256:nt}
out=$(mktemp -d)
ours() {
  taskset -c "$1" bin/shardtrain bench gemm --threads 1 --shapes "$shapes" 2>/dev/null \
    | sed -n 's/^gemm .* \([0-9]*x[0-9]*x[0-9]*\(:[nt][nt]\)\?\) threads=1: \([0-9.]*\) GFLOP.*/\1 \3/p'
}
torch() {
  OMP_NUM_THREADS=1 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c "$1" /usr/bin/python3 \
    scripts/torch-gemm.py ${shapes//,/ } 2>/dev/null \
    | sed -n 's/^torch.mm \([0-9x:nt]*\) threads=1: \([0-9.]*\) GFLOP.*/\1 \2/p'
}
for i in $(seq 1 "$rounds"); do
  cpu=$(( (i + 1) % 2 ))
  if (( (i + 1) / 2 % 2 )); then ours "$cpu" > "$out/s"; torch "$cpu" > "$out/t"; else
    torch "$cpu" > "$out/t"; ours "$cpu" > "$out/s"; fi
  echo "round $i $(date -u +%H:%M:%S), vCPU $cpu (shape, ShardTrain, torch.mm, ratio):"
  join <(sort "$out/s") <(sort "$out/t") | awk '{ printf "  %s %s %s %.3f\n", $1, $2, $3, $2 / $3 }' \
    | tee -a "$out/ratios"
done
echo "median of the rounds' ratios by shape:"
python3 - "$out/ratios" <<'PY'
import sys, statistics, collections
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    shape, _, _, r = line.split()
    by[shape].append(float(r))
for shape, rs in by.items():
    print(f"  {shape}: {statistics.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f}, {len(rs)} rounds)")
PY
