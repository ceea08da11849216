#!/usr/bin/env bash
# Builds the kernels' PTX with nvcc and keeps the committed copy honest.
#   ptx.sh update   rebuild the PTX committed under src/main/resources (run after editing kernels.cu)
#   ptx.sh check    rebuild into target/generated-ptx and fail if the committed PTX differs
# Two targets: sm_90 (Hopper, the project's H200) and compute_75, the oldest that CUDA 13's
# nvcc still emits, which the driver JIT-compiles on any newer GPU. Lines starting with '//'
# (nvcc's version banner) are ignored by the comparison, so another nvcc 13.x does not count
# as stale unless the code it emits differs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
module="$(cd "$here/../../.." && pwd)"
nvcc="${NVCC:-/usr/local/cuda/bin/nvcc}"
res="$module/src/main/resources/io/shardtrain/compute/cuda"
build() {
  mkdir -p "$1"
  "$nvcc" -arch=sm_90 --ptx -O3 -o "$1/kernels-sm90.ptx" "$here/kernels.cu"
  "$nvcc" -arch=compute_75 --ptx -O3 -o "$1/kernels-sm75.ptx" "$here/kernels.cu"
}
case "${1:-check}" in
  update) build "$res"; echo "PTX updated in $res" ;;
  check)
    out="$module/target/generated-ptx"
    build "$out"
    for f in kernels-sm90.ptx kernels-sm75.ptx; do
      if ! diff -q <(grep -v '^//' "$out/$f") <(grep -v '^//' "$res/$f") >/dev/null 2>&1; then
        echo "committed PTX $res/$f is stale against kernels.cu: run compute-cuda/src/main/cuda/ptx.sh update and commit it" >&2
        exit 1
      fi
    done
    echo "committed PTX matches kernels.cu ($("$nvcc" --version | tail -1))" ;;
  *) echo "usage: ptx.sh update|check" >&2; exit 2 ;;
esac
