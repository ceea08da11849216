#!/bin/bash
# Issue 17's two-thread step against an earlier commit's, alternating in the same minutes: each round
# runs `local` with two compute threads on this checkout and on BASE (built in a worktree of its own),
# then one thread on this checkout, 12,000 steps each, read by windows of 1000 steps (the median of
# windows 2-12), bracketed by the cores' round trip (scripts/ReplicaStep.java), which tells the
# host's phases apart.
#   bash scripts/two-thread-ab.sh BASE ROUNDS [DIR]    # from the repository root; reports go to DIR, and
#                                                      # BASE's worktree, removed at the end unless DIR is given
set -euo pipefail
base=${1:?usage: two-thread-ab.sh BASE ROUNDS [DIR]}
rounds=${2:?usage: two-thread-ab.sh BASE ROUNDS [DIR]}
dir=${3:-$(mktemp -d)}
root=$(pwd)
tree="$dir/base-tree"
[ -d "$tree" ] || git worktree add -q --detach "$tree" "$base"
mvn -B -o -q install -DskipTests -pl compute
M2="--dataset mnist --hidden 512,256 --optimizer sgd --lr 0.05 --batch 64 --no-progress"
ping() {
  java --add-modules jdk.incubator.vector -cp "$root/compute/target/classes" "$root/scripts/ReplicaStep.java" ping \
    2>/dev/null
}
run() { # NAME HOME THREADS ROUND
  "$2/bin/shardtrain" local $M2 --steps 12000 --compute-threads "$3" --report "$dir/r$4-$1.json" >/dev/null 2>&1
  echo "  $1: $(python3 "$root/scripts/report-windows.py" "$dir/r$4-$1.csv" --window 1000 --skip 1 | tail -1)"
}
"$tree/bin/shardtrain" local $M2 --steps 10 >/dev/null 2>&1 # builds BASE before the first round
for i in $(seq 1 "$rounds"); do
  echo "round $i $(date -u +%H:%M:%S) before: $(ping)"
  run new-2 "$root" 2 "$i"
  run base-2 "$tree" 2 "$i"
  run new-1 "$root" 1 "$i"
  echo "  after: $(ping) $(date -u +%H:%M:%S)"
done
# A temporary directory's worktree goes with the run; a given DIR keeps its worktree for the next rounds.
[ -n "${3:-}" ] || git worktree remove --force "$tree"
