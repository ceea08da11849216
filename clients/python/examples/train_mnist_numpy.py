#!/usr/bin/env python3
"""Trains MNIST as one trainer of a ShardTrain sync job, forward and backward in numpy.

    python3 clients/python/examples/train_mnist_numpy.py --grpc 127.0.0.1:50051 [--submit job.conf]

Prints one line per task and, at the end, the test accuracy of the job's final parameters.
"""

import os
import sys

# One BLAS thread unless told otherwise, set before numpy loads OpenBLAS: this model's products are
# too small to split, and OpenBLAS's idle threads spin (sched_yield) on the cores that the node and
# gRPC's threads need (scripts/python-trainer-epochs.sh: half the trainer's CPU).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shardtrain.mnist_example import main, numpy_accuracy  # noqa: E402
from shardtrain.model import NumpyMlp  # noqa: E402

if __name__ == "__main__":
    sys.exit(main("train_mnist_numpy", NumpyMlp, numpy_accuracy))
