#!/bin/bash
# How often something else takes a vCPU from the single process's compute threads, and what else
# runs on the machine meanwhile (issue 17): starts `local` on MNIST, and over WINDOW seconds of its
# training (after WAIT seconds, the data read and the JIT's first steps) prints, for each of its
# busy threads, the CPU time it got and how often it was switched out, voluntarily or not (the
# kernel's /proc/PID/task/TID/sched), then the other processes that used the CPU in that window.
#   bash scripts/preemptions.sh [THREADS] [WAIT] [WINDOW]    # from the repository root
set -euo pipefail
threads=${1:-2}
wait_s=${2:-10}
window=${3:-10}
M2="--dataset mnist --hidden 512,256 --optimizer sgd --lr 0.05 --batch 64 --no-progress"
out=$(mktemp -d)
bin/shardtrain local $M2 --steps 200000 --compute-threads "$threads" > "$out/run.txt" 2>&1 &
# bin/shardtrain ends in exec java, so this is the trainer's JVM.
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
sleep "$wait_s"
threads_of() { # TID NAME CPU_NS SWITCHES INVOLUNTARY
  for t in /proc/"$pid"/task/*; do
    name=$(tr ' ' '_' < "$t/comm")
    awk -v tid="${t##*/}" -v name="$name" '/sum_exec_runtime/ {ns = $3 * 1e6} /^nr_switches/ {s = $3}
      /nr_involuntary_switches/ {i = $3} END {printf "%s %s %.0f %d %d\n", tid, name, ns, s, i}' "$t/sched"
  done
}
processes() { # PID NAME TICKS
  for p in /proc/[0-9]*; do
    case "${p##*/}" in "$pid" | "$$") continue ;; esac
    awk '{n = $2; for (i = 3; $(i) !~ /^[A-Z]$/; i++) n = n "_" $(i); print FILENAME, n, $(i + 12) + $(i + 13)}' \
      "$p/stat" 2>/dev/null | sed 's|/proc/||; s|/stat||'
  done
}
threads_of > "$out/t0"; processes > "$out/p0"
sleep "$window"
threads_of > "$out/t1"; processes > "$out/p1"
echo "threads of the trainer over ${window} s ($threads compute thread(s)): CPU ms, switches, of them involuntary"
join <(sort "$out/t0") <(sort "$out/t1") | awk '{cpu = ($7 - $3) / 1e6; if (cpu > 5 || $9 - $5 > 20)
  printf "  %-24s %8.1f %7d %7d\n", $2, cpu, $8 - $4, $9 - $5}' | sort -k2 -n -r
echo "other processes that used the CPU meanwhile (this script's own shell left out): CPU ms"
join <(sort "$out/p0") <(sort "$out/p1") | awk -v hz="$(getconf CLK_TCK)" '{ms = ($5 - $3) * 1000 / hz;
  if (ms > 0) printf "  %-24s %8.1f\n", $2, ms}' | sort -k2 -n -r | head -8
