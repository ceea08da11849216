#!/usr/bin/env bash
# Samples/s of a three-JVM cluster on this machine against the one-JVM local run: the same sync
# job (2 trainers, 2 ps nodes), the same PostgreSQL journal. Figures go to docs/BENCHMARKS.md.
#   bash scripts/bench-cluster.sh [STEPS]        (default 1000 steps per trainer)
# Needs PostgreSQL (sudo bash scripts/start-postgres.sh); uses SHARDTRAIN_TEST_POSTGRES_URL when set.
# Drops the journal tables of that database before each run: use a database of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-1000}
J=${SHARDTRAIN_TEST_POSTGRES_URL:-jdbc:postgresql://127.0.0.1:5432/shardtrain}
export SHARDTRAIN_POSTGRES_USER=${SHARDTRAIN_POSTGRES_USER:-shardtrain}
export SHARDTRAIN_POSTGRES_PASSWORD=${SHARDTRAIN_POSTGRES_PASSWORD:-shardtrain}
C=cluster-config/src/main/resources/examples/three-nodes-one-machine.conf
OUT=${OUT_DIR:-target/bench-cluster}
mkdir -p "$OUT"

reset_journal() {
  local hostdb=${J#jdbc:postgresql://}
  PGPASSWORD=$SHARDTRAIN_POSTGRES_PASSWORD psql -q -h "${hostdb%%:*}" -U "$SHARDTRAIN_POSTGRES_USER" \
    -d "${hostdb##*/}" -c "DROP TABLE IF EXISTS event_tag, event_journal, snapshot, durable_state CASCADE" 2>/dev/null
}

bin/shardtrain --help >/dev/null # builds once, before anything is timed
cat > "$OUT/job.conf" <<JOB
shardtrain.train { dataset = mnist, trainers = 2, mode = sync, hidden = [512, 256], optimizer = sgd,
  lr = 0.05, batch = 64, steps = $STEPS, epochs = 0, job-id = "bench-cluster" }
JOB

echo "== three JVMs: ps+master, ps+trainer, trainer"
reset_journal
pids=()
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true' EXIT
bin/shardtrain node --roles ps,master --port 25521 --seeds 127.0.0.1:25521 --journal "$J" --config $C \
  --grpc-port 25530 >"$OUT/n1.log" 2>&1 &
pids+=($!)
bin/shardtrain node --roles ps,trainer --port 25522 --seeds 127.0.0.1:25521 --journal "$J" --config $C >"$OUT/n2.log" 2>&1 &
pids+=($!)
bin/shardtrain node --roles trainer --port 25523 --seeds 127.0.0.1:25521 --journal "$J" --config $C >"$OUT/n3.log" 2>&1 &
pids+=($!)
# The tools fail fast when nothing answers: wait (up to 3 min) for the first node's gRPC API.
for _ in $(seq 180); do bin/shardtrain status --grpc 127.0.0.1:25530 >/dev/null 2>&1 && break; sleep 1; done
bin/shardtrain submit --grpc 127.0.0.1:25530 --job "$OUT/job.conf" --timeout 180 --wait \
  --report "$OUT/cluster.json" | tail -2
kill "${pids[@]}"
wait "${pids[@]}" 2>/dev/null || true
pids=()

echo "== one JVM: bin/shardtrain local, same job"
reset_journal
bin/shardtrain local --dataset mnist --trainers 2 --ps 2 --mode sync --hidden 512,256 --optimizer sgd \
  --lr 0.05 --batch 64 --steps "$STEPS" --compute-threads 1 --journal "$J" --report "$OUT/local.json" | tail -3
reset_journal
grep -h samples_per_sec "$OUT/cluster.json" "$OUT/local.json"
