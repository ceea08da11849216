#!/bin/bash
# Issue 17's two-thread runs, each round bracketed by the cores' round trip, which tells the host's
# phases apart (scripts/ReplicaStep.java): rounds of `local` with two compute threads and then one,
# 12,000 steps each, each read by windows of 1000 steps (the median of windows 2-12).
#   bash scripts/two-thread-rounds.sh ROUNDS [DIR]    # from the repository root; reports go to DIR
set -euo pipefail
rounds=${1:?usage: two-thread-rounds.sh ROUNDS [DIR]}
dir=${2:-$(mktemp -d)}
root=$(pwd)
mvn -B -o -q install -DskipTests -pl compute
M2="--dataset mnist --hidden 512,256 --optimizer sgd --lr 0.05 --batch 64 --no-progress"
ping() {
  java --add-modules jdk.incubator.vector -cp "$root/compute/target/classes" "$root/scripts/ReplicaStep.java" ping \
    2>/dev/null
}
for i in $(seq 1 "$rounds"); do
  echo "round $i $(date -u +%H:%M:%S) before: $(ping)"
  for t in 2 1; do
    "$root/bin/shardtrain" local $M2 --steps 12000 --compute-threads $t --report "$dir/r$i-$t.json" >/dev/null 2>&1
    echo "  threads $t: $(python3 "$root/scripts/report-windows.py" "$dir/r$i-$t.csv" --window 1000 --skip 1 | tail -1)"
  done
  echo "  after: $(ping) $(date -u +%H:%M:%S)"
done
