#!/usr/bin/env python3
"""A single-process run's training rate window by window, from the CSV `local --report` writes.

Usage:
  bin/shardtrain local ... --report r.json        # also writes r.csv, one row per step
  python3 scripts/report-windows.py r.csv [--window N] [--skip K]

The CSV's time_s is the training time after each step (batch reading and evaluations left out).
Prints samples/s over each window of N steps (250 by default), then the median of the windows
after the first K (1 by default: the first holds the JIT's warm-up), so a run's steady rate can
be told from its start and from windows where something else took a core.
"""
import csv
import statistics
import sys


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    path, window, skip = argv[0], 250, 1
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        if flag not in ("--window", "--skip") or not rest:
            sys.exit("unknown or incomplete option " + flag + "\n" + __doc__)
        text = rest.pop(0)
        try:
            value = int(text)
        except ValueError:
            sys.exit("%s takes a whole number, not %r" % (flag, text))
        if flag == "--window":
            if value < 1:
                sys.exit("--window must be at least 1, got %d" % value)
            window = value
        else:
            if value < 0:
                sys.exit("--skip must be at least 0, got %d" % value)
            skip = value
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("step")]
    if not rows:
        sys.exit(path + " has no step rows")
    trainers = {r["trainer"] for r in rows}
    if len(trainers) != 1:
        sys.exit(path + " has the steps of %d trainers; this reads a single process's" % len(trainers))
    rates = []
    start_time, examples = 0.0, 0
    for i, r in enumerate(rows, 1):
        examples += int(r["examples"])
        if i % window == 0:
            t = float(r["time_s"])
            rates.append(examples / (t - start_time))
            start_time, examples = t, 0
    print("samples/s per %d steps: %s" % (window, " ".join("%.0f" % x for x in rates)))
    steady = rates[skip:]
    if steady:
        print("median of windows %d-%d: %.0f (lowest %.0f, highest %.0f)"
              % (skip + 1, len(rates), statistics.median(steady), min(steady), max(steady)))


if __name__ == "__main__":
    main(sys.argv[1:])
