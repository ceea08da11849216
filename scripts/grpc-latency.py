#!/usr/bin/python3
"""How long one gRPC call takes as a node warms up: heartbeats from one Python client in a loop.

Usage: /usr/bin/python3 scripts/grpc-latency.py HOST:PORT [SECONDS]
against a node serving the API (e.g. `bin/shardtrain node --roles ps,master --journal memory
--grpc-port 50071`). Submits a small job (job id `latency`), registers trainer `t1`, then calls
Heartbeat for SECONDS (default 25) and prints the medians of the first and last 500 calls. Needs the
Python client's packages (clients/python; Debian's python3-grpcio and python3-protobuf).
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
from shardtrain import Client  # noqa: E402

JOB = ("shardtrain.train { job-id = latency, dataset = mnist, hidden = [128], batch = 128, lr = 0.2, epochs = 50,"
       " trainers = 1, mode = sync }")


def main():
    target = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 25.0
    with Client(target) as c:
        c.connect()
        c.submit_job(JOB, 784, 60000, 10)
        c.register("t1", "latency")
        times = []
        start = time.time()
        while time.time() - start < seconds:
            t = time.perf_counter()
            c.heartbeat("t1", "latency")
            times.append((time.perf_counter() - t) * 1000)
    print("%d heartbeats in %.0f s; median of the first 500 %.2f ms, of the last 500 %.2f ms"
          % (len(times), seconds, statistics.median(times[:500]), statistics.median(times[-500:])))


if __name__ == "__main__":
    main()
