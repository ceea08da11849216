#!/usr/bin/env python3
"""Splits a JFR recording's Java execution samples of a click-through cluster run by what they ran.

Usage: jfr print --json --events jdk.ExecutionSample F.jfr > F.json && python3 scripts/jfr-split.py F.json

Only the samples taken while the trainers ran count: from the first sample inside
CtrTrainer.compute to the last. Each sample goes to the first category, in the order below,
that a frame of its stack matches; the rest are listed by their top frame.
"""
import collections
import json
import sys

CATEGORIES = [
    ("table shard: applying a step's rows", "ShardState.applyRows"),
    ("table shard: building a step's update", "ShardRules.commit"),
    ("table shard: answering a pull", "SparseShard.rows"),
    ("sparse serialization", "SparseSerializer"),
    ("trainer: factorization machine step", "FmBatch.trainStep"),
    ("trainer: indexing and fetching the next batch's rows", "FmSparseStep.fetch"),
    ("trainer: pushing rows", "FmSparseStep$Fetched.push"),
    ("trainer: gathering fetched rows", "BatchRouting.gather"),
    ("Akka remoting (Artery)", "akka/remote/artery"),
    ("Akka streams", "akka/stream"),
    ("journal", "akka/persistence/journal"),
    ("persistence (typed)", "akka/persistence/typed"),
    ("cluster sharding", "akka/cluster/sharding"),
    ("parameter blocks", "actors/ps/"),
    ("dense wire serializer", "WireSerializer"),
    ("bulk channel", "actors/transport/Bulk"),
    ("trainer: the rest", "CtrTrainer"),
]


def frames(event):
    return [f["method"]["type"]["name"] + "." + f["method"]["name"] for f in event["values"]["stackTrace"]["frames"]]


def main(path):
    events = json.load(open(path))["recording"]["events"]
    times = sorted(e["values"]["startTime"] for e in events if any("CtrTrainer.compute" in f for f in frames(e)))
    if not times:
        sys.exit("no sample inside CtrTrainer.compute: not a click-through cluster run?")
    window = [e for e in events if times[0] <= e["values"]["startTime"] <= times[-1]]
    counts = collections.Counter()
    for e in window:
        stack = " ".join(frames(e))
        for name, pattern in CATEGORIES:
            if pattern in stack:
                counts[name] += 1
                break
        else:
            top = frames(e)
            counts["other: " + (top[0] if top else "?")] += 1
    print(f"{len(window)} Java samples from {times[0]} to {times[-1]}")
    for name, n in counts.most_common(25):
        print(f"{n:6d} {100.0 * n / len(window):5.1f}%  {name}")


if __name__ == "__main__":
    main(sys.argv[1])
