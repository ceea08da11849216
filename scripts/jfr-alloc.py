#!/usr/bin/env python3
"""Where a JFR recording's heap allocation went, by the code that allocated it.

Usage: jfr print --json --events jdk.ObjectAllocationSample F.jfr > A.json
       python3 scripts/jfr-alloc.py A.json [--top N]

Record with SHARDTRAIN_JAVA_OPTS="-XX:StartFlightRecording=filename=F.jfr,settings=profile"
(which samples allocations). Each sample's weight (the bytes it stands for) goes to the first
frame of its stack outside the JDK (java., jdk., sun.): the library or ShardTrain code that asked
for the memory. Prints the total and the top sites in GB.
"""
import collections
import json
import sys

JDK = ("java/", "jdk/", "sun/", "java.", "jdk.", "sun.")


def site(frames):
    for f in frames:
        t = f["method"]["type"]["name"]
        if not t.startswith(JDK):
            return t.split("/")[-1] + "." + f["method"]["name"] + "  (" + "/".join(t.split("/")[:-1]) + ")"
    return "(JDK only)"


def main():
    args = sys.argv[1:]
    top = int(args[args.index("--top") + 1]) if "--top" in args else 20
    args = [a for i, a in enumerate(args) if a != "--top" and (i == 0 or args[i - 1] != "--top")]
    if len(args) != 1:
        sys.exit(__doc__)
    events = json.load(open(args[0]))["recording"]["events"]
    total = 0
    by_site = collections.Counter()
    for e in events:
        v = e["values"]
        w = v["weight"]
        total += w
        frames = v["stackTrace"]["frames"] if v.get("stackTrace") else []
        by_site[site(frames)] += w
    print(f"{total / 1e9:.1f} GB allocated in {len(events)} samples")
    for s, w in by_site.most_common(top):
        print(f"{w / 1e9:8.1f} GB {100 * w / total:5.1f}%  {s}")


if __name__ == "__main__":
    main()
