#!/usr/bin/env bash
# One node serving the gRPC API, and the numpy example trainer training one MNIST epoch on it RUNS
# times in a row (a new job each time, so the node warms up from run to run): per run, the
# trainer's examples/s, the node's CPU seconds (user and system, from /proc) and the trainer's.
#
# Usage: scripts/python-trainer-epochs.sh [RUNS] [GRPC_PORT] [AKKA_PORT]     (defaults 6, 50081, 25581)
# SHARDTRAIN_JAVA_OPTS reaches the node, as with bin/shardtrain. Needs /usr/bin/python3 with the
# Python client's packages (Debian's python3-grpcio, python3-protobuf, python3-numpy).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-6}
PORT=${2:-50081}
AKKA_PORT=${3:-25581}
WORK=$(mktemp -d)
trap 'kill "$NODE" 2>/dev/null && wait "$NODE" 2>/dev/null; rm -rf "$WORK"' EXIT

"$ROOT/bin/shardtrain" node --roles ps,master --grpc-port "$PORT" --port "$AKKA_PORT" --journal memory >"$WORK/node.log" 2>&1 &
NODE=$!
# bin/shardtrain builds the project first where it is not built: minutes on a busy machine.
for _ in $(seq 1 600); do
  grep -q "gRPC API at" "$WORK/node.log" && break
  sleep 1
done
grep -q "gRPC API at" "$WORK/node.log" || { cat "$WORK/node.log"; echo "the node did not start" >&2; exit 1; }
# bin/shardtrain execs java: the node's process is the one started here.
JVM=$NODE
[ "$(cat "/proc/$JVM/comm")" = java ] || { echo "process $JVM is $(cat "/proc/$JVM/comm"), not the node's java" >&2; exit 1; }
TICK=$(getconf CLK_TCK)

for i in $(seq 1 "$RUNS"); do
  cat >"$WORK/job.conf" <<EOF
shardtrain.train { job-id = epoch-$i, dataset = mnist, hidden = [128], batch = 128, lr = 0.2, epochs = 1, trainers = 1, mode = sync }
EOF
  read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$JVM/stat")
  out=$(cd "$ROOT/clients/python" && /usr/bin/time -o "$WORK/trainer.time" -f "%U %S" /usr/bin/python3 \
    examples/train_mnist_numpy.py --grpc "127.0.0.1:$PORT" --trainer-id "t$i" --submit "$WORK/job.conf" 2>&1) \
    || { echo "$out"; exit 1; }
  read -r tu ts <"$WORK/trainer.time"
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$JVM/stat")
  rate=$(grep -o '[0-9]* examples/s' <<<"$out" | tail -1) || { echo "$out"; echo "no examples/s in run $i" >&2; exit 1; }
  awk -v i="$i" -v r="$rate" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v t="$TICK" -v tu="$tu" -v ts="$ts" \
    'BEGIN { printf "run %d: %s, node CPU %.2f s user + %.2f s system, trainer CPU %.2f + %.2f s\n", i, r, u / t, s / t, tu, ts }'
done
