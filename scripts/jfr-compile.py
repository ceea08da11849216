#!/usr/bin/env python3
"""How long the JIT compiled while a run's trainers ran, by tier, from a JFR recording.

Usage (the recording needs jdk.Compilation with a 0 ms threshold and jdk.ExecutionSample):
  jfr print --json --events jdk.Compilation,jdk.ExecutionSample F.jfr > F.json
  python3 scripts/jfr-compile.py F.json [TrainerClass] [--top N]

The training window runs from the first to the last execution sample with a frame in the trainer
class (CtrTrainer by default; Trainer for the MLP jobs). A compilation counts for the part of its
wall time inside the window. Prints seconds and compilations per tier, and the seconds of tier 4
(C2) in each second of the window. With --top N, also the N packages C2 compiled longest for
(akka.* and io.* by their package's first three names, others by its first) and the N methods most often on top
of a Java execution sample in the window, with their share of those samples.
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


def package(type_name):
    parts = type_name.split("$$Lambda")[0].replace(".", "/").split("/")[:-1] or ["(default)"]
    return ".".join(parts[:3] if parts[0] in ("akka", "io") else parts[:1])


def main(path, trainer, top=0):
    events = json.load(open(path))["recording"]["events"]
    marker = "/" + trainer
    inside = [instant(e["values"]["startTime"]) for e in events if e["type"] == "jdk.ExecutionSample"
              and any(f["method"]["type"]["name"].endswith(marker) for f in e["values"]["stackTrace"]["frames"])]
    if not inside:
        sys.exit("no execution sample in " + trainer + ": record jdk.ExecutionSample too")
    t0, t1 = min(inside), max(inside)
    busy, count = collections.Counter(), collections.Counter()
    per_second = collections.Counter()
    c2_by_package, c2_count = collections.Counter(), collections.Counter()
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
            c2_by_package[package(v["method"]["type"]["name"])] += b - a
            c2_count[package(v["method"]["type"]["name"])] += 1
            x = a
            while x < b:
                nxt = min(b, t0 + int(x - t0) + 1)
                per_second[int(x - t0)] += nxt - x
                x = nxt
    print("training window %.1f s" % (t1 - t0))
    for tier in sorted(busy):
        print("  tier %d: %.2f s compiling, %d compilations" % (tier, busy[tier], count[tier]))
    print("  tier 4 seconds per second: " + " ".join("%.2f" % per_second[s] for s in range(int(t1 - t0) + 1)))
    if not top:
        return
    print("tier 4 by package (seconds, compilations):")
    for name, t in c2_by_package.most_common(top):
        print("  %6.2f %5d  %s" % (t, c2_count[name], name))
    on_top = collections.Counter()
    for e in events:
        frames = e["values"]["stackTrace"]["frames"] if e["type"] == "jdk.ExecutionSample" else None
        if frames and t0 <= instant(e["values"]["startTime"]) <= t1:
            m = frames[0]["method"]
            on_top[m["type"]["name"].split("/")[-1] + "." + m["name"]] += 1
    total = sum(on_top.values())
    print("methods on top of the window's %d Java execution samples:" % total)
    for name, n in on_top.most_common(top):
        print("  %5.1f%%  %s" % (100.0 * n / total, name))


if __name__ == "__main__":
    args = sys.argv[1:]
    top = 0
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    main(args[0], args[1] if len(args) > 1 else "CtrTrainer", top)
