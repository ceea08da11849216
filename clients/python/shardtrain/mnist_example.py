"""What the MNIST example trainers share: their command line, the data, submitting the job,
training as one trainer of it and the final test accuracy. Each example only brings its model."""

import argparse
import os
import sys
import time

from .client import Client, ShardTrainError
from .data import load_mnist
from .trainer import SyncTrainer, default_trainer_id


def parse(description, argv):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--grpc", required=True, metavar="HOST:PORT", help="a node's gRPC API (bin/shardtrain node --grpc-port)")
    data_dir = os.environ.get("SHARDTRAIN_DATA_DIR") or os.path.expanduser("~/.shardtrain/data")
    p.add_argument("--data-dir", default=os.path.join(data_dir, "mnist"),
                   help="the directory holding the four MNIST IDX files (default: %(default)s)")
    p.add_argument("--trainer-id", default=None, help="this trainer's id in the job (default: python-HOST-PID)")
    p.add_argument("--submit", metavar="JOB.conf", default=None,
                   help="submit this job (HOCON, shardtrain.train.*) first, with MNIST's shape")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds a call may wait, a sync push for the other trainers' included (default: %(default)s)")
    p.add_argument("--connect-timeout", type=float, default=10.0, help="seconds to wait for the node (default: %(default)s)")
    p.add_argument("--heartbeat", type=float, default=5.0, help="seconds between heartbeats (default: %(default)s)")
    p.add_argument("--ca", metavar="CA.pem", default=None,
                   help="speak TLS, trusting this CA certificate (ca.pem of scripts/make-certs.sh)")
    p.add_argument("--token-file", metavar="FILE", default=None,
                   help="send the bearer token in FILE with every call (needs --ca)")
    p.add_argument("--quiet", action="store_true", help="print only the result")
    return p.parse_args(argv)


def main(name, make_model, accuracy, argv=None):
    """Runs the example; make_model(job) builds the model, accuracy(model, x, labels) scores it. Exit code."""
    args = parse(f"Trains MNIST as one trainer of a ShardTrain sync job ({name}).", argv)
    log = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    try:
        client = Client(args.grpc, timeout=args.timeout, ca_file=args.ca, token_file=args.token_file)
        train_x, train_y, test_x, test_y = load_mnist(args.data_dir)
        with client:
            client.connect(args.connect_timeout)
            if args.submit:
                with open(args.submit, encoding="utf-8") as f:
                    job = client.submit_job(f.read(), train_x.shape[1], len(train_x), 10)
                log(f"job {job.job_id} submitted: {job.mode} mode, {job.trainers} trainers, {len(job.blocks)} blocks")
            else:
                _await_job(client, train_x, log)
            trainer = SyncTrainer(client, args.trainer_id or default_trainer_id(), make_model, train_x, train_y,
                                  log=log, heartbeat_s=args.heartbeat)
            start = time.monotonic()
            last = trainer.run()
            seconds = time.monotonic() - start
            # The job is done: its blocks hold the final values.
            trainer.pull_latest()
            acc = accuracy(trainer.model, test_x, test_y)
        print(f"trainer {trainer.id}: {trainer.steps} steps pushed, {trainer.steps * trainer.job.batch / seconds:.0f} "
              f"examples/s, last step {last}, version {trainer.version}, test accuracy {acc:.4f}", flush=True)
        return 0
    except (ShardTrainError, ValueError, OSError) as e:
        print(f"{name}: error: {e}", file=sys.stderr, flush=True)
        return 2


def _await_job(client, train_x, log):
    """Waits for a job to be submitted and checks that it trains on this data."""
    s = client.status()
    if not s.submitted:
        log("waiting for a job to be submitted")
        while not s.submitted:
            time.sleep(1)
            s = client.status()
    if s.job.input_dim != train_x.shape[1] or s.job.train_examples != len(train_x):
        raise ValueError(f"job {s.job.job_id} trains on {s.job.train_examples} examples of {s.job.input_dim} "
                         f"features, the data has {len(train_x)} of {train_x.shape[1]}")


def numpy_accuracy(model, x, labels):
    return model.accuracy(x, labels)

