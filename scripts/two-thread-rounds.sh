#!/bin/bash
# Issue 17's two-thread runs, each round bracketed by the cores' round trip, which tells the host's
# phases apart (scripts/ReplicaStep.java): rounds of `local` with two compute threads and then one,
# 12,000 steps each, each read by windows of 1000 steps (the median of windows 2-12); then the
# median of the rounds' ratios.
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
ratios=()
for i in $(seq 1 "$rounds"); do
  echo "round $i $(date -u +%H:%M:%S) before: $(ping)"
  declare -A rate=()
  for t in 2 1; do
    "$root/bin/shardtrain" local $M2 --steps 12000 --compute-threads $t --report "$dir/r$i-$t.json" >/dev/null 2>&1
    line=$(python3 "$root/scripts/report-windows.py" "$dir/r$i-$t.csv" --window 1000 --skip 1 | tail -1)
    rate[$t]=$(sed -n 's/.*windows [0-9-]*: \([0-9.]*\).*/\1/p' <<< "$line")
    echo "  threads $t: $line"
  done
  ratios+=("$(python3 -c "print(f'{${rate[2]} / ${rate[1]}:.3f}')")")
  echo "  after: $(ping) $(date -u +%H:%M:%S); two threads over one: ${ratios[-1]}"
done
echo "median of the rounds' ratios: $(printf '%s\n' "${ratios[@]}" | python3 -c \
  'import sys, statistics; print(f"{statistics.median(float(l) for l in sys.stdin):.3f}")') (${ratios[*]})"
