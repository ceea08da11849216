#!/usr/bin/env python3
"""How long the JIT compiled while a run's trainers ran, by tier, from a JFR recording.

Usage (the recording needs jdk.Compilation with a 0 ms threshold and jdk.ExecutionSample):
  jfr print --json --events jdk.Compilation,jdk.ExecutionSample F.jfr > F.json
  python3 scripts/jfr-compile.py F.json [TrainerClass]

The training window runs from the first to the last execution sample with a frame in the trainer
class (CtrTrainer by default; Trainer for the MLP jobs). A compilation counts for the part of its
wall time inside the window. Prints seconds and compilations per tier, and the seconds of tier 4
(C2) in each second of the window.
"""
import collections
import datetime
import json
import sys


def seconds(duration):
    # JFR's JSON writes durations as ISO-8601, e.g. PT0.0123S or PT1M2.5S.
    d, t = duration[2:], 0.0
    if "M" in d:
        m, d = d.split("M")
        t += 60 * float(m)
    return t + (float(d[:-1]) if d else 0.0)


def instant(text):
    return datetime.datetime.fromisoformat(text[:26]).timestamp()


def main(path, trainer):
    events = json.load(open(path))["recording"]["events"]
    marker = "/" + trainer
    inside = [instant(e["values"]["startTime"]) for e in events if e["type"] == "jdk.ExecutionSample"
              and any(f["method"]["type"]["name"].endswith(marker) for f in e["values"]["stackTrace"]["frames"])]
    if not inside:
        sys.exit("no execution sample in " + trainer + ": record jdk.ExecutionSample too")
    t0, t1 = min(inside), max(inside)
    busy, count = collections.Counter(), collections.Counter()
    per_second = collections.Counter()
    for e in events:
        if e["type"] != "jdk.Compilation":
            continue
        v = e["values"]
        start = instant(v["startTime"])
        end = start + seconds(v["duration"])
        a, b = max(start, t0), min(end, t1)
        if b <= a:
            continue
        busy[v["compileLevel"]] += b - a
        count[v["compileLevel"]] += 1
        if v["compileLevel"] == 4:
            x = a
            while x < b:
                nxt = min(b, t0 + int(x - t0) + 1)
                per_second[int(x - t0)] += nxt - x
                x = nxt
    print("training window %.1f s" % (t1 - t0))
    for tier in sorted(busy):
        print("  tier %d: %.2f s compiling, %d compilations" % (tier, busy[tier], count[tier]))
    print("  tier 4 seconds per second: " + " ".join("%.2f" % per_second[s] for s in range(int(t1 - t0) + 1)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "CtrTrainer")
