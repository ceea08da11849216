#!/usr/bin/env bash
# One-call GPU check for ShardTrain's CUDA backend (issue 5). Two halves:
#
#   scripts/gpu-check.sh prepare   on the build machine (Maven, JDK 17, nvcc): builds compute,
#                                  compute-cuda and bench (CudaBenchmarks) and fills .gpu/ (git-ignored) with everything the
#                                  GPU machine needs: jars, a jlink'd Java 17 runtime, JNI headers,
#                                  a prebuilt cuBLAS shim, and MNIST (gzipped) when it is here.
#   scripts/gpu-check.sh           on the GPU machine, from the repository root, with .gpu carried:
#                                  rebuilds the shim with gcc if it can, finds libcublas.so.13,
#                                  runs the CUDA tests, the benchmarks and torch.matmul, and writes
#                                  $OUT/gpu-check.txt (summary) and $OUT/gpu-check.log (everything).
# Device tool: carry [".gpu"], command "bash scripts/gpu-check.sh", timeout_s 540. See docs/GPU.md.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gpu="$root/.gpu"

prepare() {
  set -e
  cd "$root"
  mvn -B -q -o -pl compute-cuda,bench -am package -Dmaven.test.skip.exec=true
  rm -rf "$gpu" && mkdir -p "$gpu/lib" "$gpu/test-lib" "$gpu/include" "$gpu/native"
  cp compute/target/shardtrain-compute-0.1.0-SNAPSHOT.jar compute-cuda/target/shardtrain-compute-cuda-0.1.0-SNAPSHOT.jar "$gpu/lib/"
  # CudaBenchmarks lives in module bench (package io.shardtrain.compute.cuda); it needs only the two jars above.
  cp bench/target/shardtrain-bench-0.1.0-SNAPSHOT.jar "$gpu/lib/"
  cp compute/target/shardtrain-compute-0.1.0-SNAPSHOT-tests.jar "$gpu/test-lib/"
  (cd compute-cuda/target/test-classes && jar cf "$gpu/test-lib/shardtrain-compute-cuda-tests.jar" .)
  m2="${M2_REPO:-$HOME/.m2/repository}"
  cp "$m2/org/jcuda/jcuda/12.0.0/jcuda-12.0.0.jar" "$gpu/lib/"
  # Only the driver API's native library is used: a jar of just that one saves 25 MB of carry.
  tmp="$(mktemp -d)"
  (cd "$tmp" && unzip -q "$m2/org/jcuda/jcuda-natives/12.0.0/jcuda-natives-12.0.0-linux-x86_64.jar" 'lib/libJCudaDriver-*' \
    && jar cf "$gpu/lib/jcuda-natives-driver-12.0.0-linux-x86_64.jar" lib)
  rm -rf "$tmp"
  cp "$m2/org/junit/platform/junit-platform-console-standalone/1.14.4/junit-platform-console-standalone-1.14.4.jar" "$gpu/test-lib/"
  jhome="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
  cp "$jhome/include/jni.h" "$jhome/include/linux/jni_md.h" "$gpu/include/"
  gcc -shared -fPIC -O2 -Wall -I"$gpu/include" -o "$gpu/native/libshardtrain_cublas.so" compute-cuda/src/main/native/cublas_shim.c -ldl
  "$jhome/bin/jlink" --add-modules java.base,java.logging,java.xml,jdk.incubator.vector,jdk.unsupported,jdk.zipfs \
    --strip-debug --no-header-files --no-man-pages --compress=2 --output "$gpu/jre"
  mnist="${MNIST_DIR:-$HOME/.shardtrain/data/mnist}"
  files="train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte"
  if (cd "$mnist" 2>/dev/null && ls $files >/dev/null 2>&1); then
    mkdir -p "$gpu/mnist"
    for f in $files; do gzip -c "$mnist/$f" > "$gpu/mnist/$f.gz"; done
  fi
  du -sh "$gpu"
  echo "prepared $gpu: carry [\".gpu\"] and run: bash scripts/gpu-check.sh"
}

check() {
  out="${OUT:-$root/out}"
  mkdir -p "$out"
  log="$out/gpu-check.log"
  summary="$out/gpu-check.txt"
  : > "$log"
  say() { echo "$*" | tee -a "$log"; }
  fail() { say "gpu-check: $1"; echo "gpu-check: NOT RUN: $1" > "$summary"; exit "${2:-2}"; }

  [ -d "$gpu/lib" ] || fail ".gpu/lib is missing: run 'scripts/gpu-check.sh prepare' on the build machine and carry .gpu"
  java="$gpu/jre/bin/java"
  if [ ! -x "$java" ] || ! "$java" -version >/dev/null 2>&1; then
    java="$(command -v java || true)"
    [ -n "$java" ] || fail "no Java 17 here: neither the carried .gpu/jre nor a java on PATH"
  fi
  say "java: $java ($("$java" -version 2>&1 | head -1))"
  cp="$(ls "$gpu"/lib/*.jar | tr '\n' ':')"
  jopts=(--add-modules jdk.incubator.vector -Xss4m)

  # libcublas.so.13: PyTorch's nvidia wheels, then the CUDA toolkit, then the linker cache.
  cublas="${SHARDTRAIN_CUBLAS:-}"
  if [ -z "$cublas" ] && command -v python3 >/dev/null; then
    cublas="$(python3 - <<'PY' 2>/dev/null
import glob, os, sys
dirs = [p for p in sys.path if p and os.path.isdir(p)]
try:
    import torch
    dirs.insert(0, os.path.join(os.path.dirname(torch.__file__), "lib"))
except Exception:
    pass
for d in dirs:
    for pat in ("nvidia/cu13/lib/libcublas.so.13*", "nvidia/cublas/lib/libcublas.so.13*", "libcublas.so.13*"):
        hits = sorted(glob.glob(os.path.join(d, pat)))
        if hits:
            print(hits[0]); sys.exit(0)
PY
)"
  fi
  [ -z "$cublas" ] && [ -e /usr/local/cuda/lib64/libcublas.so.13 ] && cublas=/usr/local/cuda/lib64/libcublas.so.13
  [ -z "$cublas" ] && cublas="$(ldconfig -p 2>/dev/null | awk '/libcublas\.so\.13 /{print $NF; exit}')"
  say "cublas: ${cublas:-not found (the PTX GEMM will run)}"
  if [ -n "$cublas" ]; then
    export SHARDTRAIN_CUBLAS="$cublas"
    export LD_LIBRARY_PATH="$(dirname "$cublas")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi

  # The shim: built here with gcc when possible, else the one built on the build machine.
  work="$(mktemp -d)"
  shim="$gpu/native/libshardtrain_cublas.so"
  if command -v gcc >/dev/null && gcc -shared -fPIC -O2 -I"$gpu/include" -o "$work/libshardtrain_cublas.so" \
      "$root/compute-cuda/src/main/native/cublas_shim.c" -ldl >>"$log" 2>&1; then
    shim="$work/libshardtrain_cublas.so"; say "shim: built here with $(gcc --version | head -1)"
  else
    say "shim: prebuilt $shim (gcc unavailable or failed)"
  fi
  export SHARDTRAIN_CUBLAS_SHIM="$shim"

  # Probed after the shim is set, so its line names the GEMM that will run.
  # No GPU: say so in one line and stop (exit 3).
  probe="$("$java" "${jopts[@]}" -cp "$cp" io.shardtrain.compute.cuda.CudaBenchmarks probe 2>>"$log" | grep '^RESULT' || true)"
  say "probe: ${probe:-no answer}"
  case "$probe" in
    *'"available":true'*) ;;
    *) fail "no usable GPU here: ${probe:-the probe did not answer (see $log)}" 3 ;;
  esac
  nvidia-smi -L >>"$log" 2>&1 || true

  # Tests: the shared kernel suite (cuBLAS and PTX GEMM), the resident step, selection.
  tcp="$cp$(ls "$gpu"/test-lib/shardtrain-*.jar | tr '\n' ':')"
  timeout 240 "$java" "${jopts[@]}" -jar "$gpu"/test-lib/junit-platform-console-standalone-*.jar execute \
    --class-path "$tcp" --select-package io.shardtrain.compute.cuda --details=summary --disable-banner \
    --reports-dir "$out/junit" >"$out/tests.txt" 2>&1
  trc=$?
  cat "$out/tests.txt" >>"$log"
  say "tests: exit $trc; $(grep -E 'tests (successful|failed|skipped|aborted)' "$out/tests.txt" | tr -s ' ' | tr '\n' ';')"

  bench() { timeout "$1" "$java" "${jopts[@]}" -cp "$cp" io.shardtrain.compute.cuda.CudaBenchmarks "${@:2}" 2>>"$log" | tee -a "$log" | grep '^RESULT' >>"$out/results.txt"; }
  : > "$out/results.txt"
  bench 120 gemm 4096 3 10
  bench 90 gemm-ptx 4096 2 5
  bench 120 mlp 512 50
  bench 120 trainer-step 64 50
  bench 120 trainer-step 512 30
  mnistsrc=synthetic; [ -d "$gpu/mnist" ] && mnistsrc="$gpu/mnist"
  bench 150 mnist "$mnistsrc" 2

  # torch.matmul fp32 at 4096^3, TF32 off, CUDA events, median of 10 after 3 warm-ups.
  timeout 120 python3 - >>"$out/results.txt" 2>>"$log" <<'PY'
import json, statistics, torch
torch.backends.cuda.matmul.allow_tf32 = False
n = 4096
a = torch.rand(n, n, device="cuda") * 2 - 1
b = torch.rand(n, n, device="cuda") * 2 - 1
for _ in range(3): torch.matmul(a, b)
torch.cuda.synchronize()
ts = []
for _ in range(10):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.matmul(a, b); e.record(); e.synchronize()
    ts.append(s.elapsed_time(e))
med = statistics.median(ts)
print("RESULT " + json.dumps({"bench": "torch", "n": n, "tf32": False, "torch": torch.__version__,
      "median_ms": med, "tflops": 2 * n**3 / (med * 1e-3) / 1e12}))
PY

  python3 - "$out/results.txt" "$trc" >"$summary" <<'PY'
import json, sys
rs = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        r = json.loads(line[7:]); rs.setdefault(r["bench"], []).append(r)
first = lambda k: rs.get(k, [None])[0]
p, g, gp, t, m = first("probe"), first("gemm"), first("gemm-ptx") , first("torch"), first("mlp")
out = ["ShardTrain gpu-check", "probe: " + (p["reason"] if p else "?"),
       "gemm impl: " + (g["impl"] if g else "?"), "tests: " + ("passed" if sys.argv[2] == "0" else "FAILED (exit %s, see tests.txt)" % sys.argv[2])]
if g: out.append("gemm 4096^3: %.2f TFLOP/s (median %.3f ms)" % (g["tflops"], g["median_ms"]))
ptx = [r for r in rs.get("gemm", [])[1:]]
if ptx: out.append("ptx gemm 4096^3: %.2f TFLOP/s" % ptx[0]["tflops"])
if t: out.append("torch.matmul fp32 (tf32 off) 4096^3: %.2f TFLOP/s" % t["tflops"])
if g and t:
    ratio = g["tflops"] / t["tflops"]
    out.append("gemm / torch: %.3f  target >= 0.8: %s" % (ratio, "MET" if ratio >= 0.8 else "NOT MET"))
if m:
    out.append("mlp step batch 512: gpu %.3f ms, cpu %.3f ms (%d threads), speedup %.1fx  target >= 10x: %s"
               % (m["gpu_step_ms"], m["cpu_step_ms"], m["cpu_threads"], m["speedup"], "MET" if m["speedup"] >= 10 else "NOT MET"))
for r in rs.get("trainer-step", []):
    cpu_all = [v for k, v in r.items() if k.startswith("cpu_") and k.endswith("_threads_ms")]
    out.append("trainer step batch %d (fwd+bwd, gradients on the host): cpu 1 thread %.3f ms, cpu all cores %.3f ms, "
               "cuda host-tensor ops %.3f ms, cuda resident %.3f ms, resident copying each gradient %.3f ms"
               % (r["batch"], r["cpu_1_thread_ms"], cpu_all[0] if cpu_all else float("nan"),
                  r["cuda_host_ops_ms"], r["cuda_resident_ms"], r.get("cuda_resident_copying_ms", float("nan"))))
for r in rs.get("mnist", []):
    out.append("mnist epoch %d (%s): %.2f s, mean loss %.4f" % (r["epoch"], r["data"], r["epoch_seconds"], r["mean_loss"]))
print("\n".join(out))
PY
  cat "$summary" | tee -a "$log"
  rm -rf "$work"
}

case "${1:-check}" in
  prepare) prepare ;;
  check) check ;;
  *) echo "usage: scripts/gpu-check.sh [prepare|check]" >&2; exit 2 ;;
esac
