"""MNIST's IDX files, and the batches of a leased task in the order a JVM trainer reads them.

A lease names examples [from, to) of the training set, the epoch and the reader offset to start
at. TaskReader yields the same batches as the JVM's BatchReader over that range (shuffled by the
job's seed and the task, compute/data/BatchReader), so a task one trainer started can be finished
by any other, in Python or on the JVM, without an example applied twice or left out.
"""

import gzip
import os

import numpy as np

TRAIN_IMAGES = "train-images-idx3-ubyte"
TRAIN_LABELS = "train-labels-idx1-ubyte"
TEST_IMAGES = "t10k-images-idx3-ubyte"
TEST_LABELS = "t10k-labels-idx1-ubyte"


def _read(directory, name):
    for candidate, opener in ((os.path.join(directory, name), open), (os.path.join(directory, name + ".gz"), gzip.open)):
        if os.path.isfile(candidate):
            with opener(candidate, "rb") as f:
                return candidate, f.read()
    raise FileNotFoundError(f"neither {name} nor {name}.gz is in {directory} (the MNIST IDX files: "
                            f"bin/shardtrain fetches them into <data-dir>/mnist)")


def _images(directory, name):
    path, raw = _read(directory, name)
    if len(raw) < 16 or int.from_bytes(raw[0:4], "big") != 0x803:
        raise ValueError(f"{path} is not an IDX image file (magic 0x00000803)")
    n, rows, cols = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
    if len(raw) != 16 + n * rows * cols:
        raise ValueError(f"{path} holds {len(raw) - 16} bytes of pixels; its header says {n} images of {rows}x{cols}")
    return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, rows * cols).astype(np.float32) / np.float32(255)


def _labels(directory, name):
    path, raw = _read(directory, name)
    if len(raw) < 8 or int.from_bytes(raw[0:4], "big") != 0x801:
        raise ValueError(f"{path} is not an IDX label file (magic 0x00000801)")
    n = int.from_bytes(raw[4:8], "big")
    if len(raw) != 8 + n:
        raise ValueError(f"{path} holds {len(raw) - 8} labels; its header says {n}")
    return np.frombuffer(raw, dtype=np.uint8, offset=8).astype(np.int64)


def load_mnist(directory):
    """(train images, train labels, test images, test labels): images as rows of 784 floats in [0, 1]."""
    parts = (_images(directory, TRAIN_IMAGES), _labels(directory, TRAIN_LABELS),
             _images(directory, TEST_IMAGES), _labels(directory, TEST_LABELS))
    for images, labels, name in ((parts[0], parts[1], TRAIN_IMAGES), (parts[2], parts[3], TEST_IMAGES)):
        if len(images) != len(labels):
            raise ValueError(f"{directory}: {name} holds {len(images)} images but its labels {len(labels)}")
    return parts


_M64 = (1 << 64) - 1
_GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def _long(v):
    """v as Java's long arithmetic leaves it, as an unsigned 64-bit pattern."""
    return v & _M64


def mix64(z):
    """compute/data/CtrGenerator.mix64 (MurmurHash3's finaliser)."""
    z = ((z ^ (z >> 33)) * 0xFF51AFD7ED558CCD) & _M64
    z = ((z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53) & _M64
    return z ^ (z >> 33)


class SplittableRandom:
    """java.util.SplittableRandom(seed): nextInt() and nextInt(bound), bit for bit."""

    def __init__(self, seed):
        self.seed = _long(seed)

    def next_int(self):
        """The next int as an unsigned 32-bit pattern."""
        self.seed = (self.seed + _GOLDEN_GAMMA) & _M64
        z = self.seed
        z = ((z ^ (z >> 33)) * 0x62A9D9ED799705F5) & _M64
        return (((z ^ (z >> 28)) * 0xCB24D0A5C88C35B3) & _M64) >> 32

    def next_bounded(self, bound):
        r = self.next_int()
        m = bound - 1
        if bound & m == 0:
            return r & m
        u = r >> 1
        while True:
            r = u % bound
            if u + m - r < 1 << 31:  # Java: the int u + m - r did not overflow
                return r
            u = self.next_int() >> 1


def epoch_order(length, shuffle_seed, epoch):
    """Positions [0, length) in the order BatchReader hands them out in `epoch`."""
    order = list(range(length))
    r = SplittableRandom(mix64(_long(_long(shuffle_seed) * _GOLDEN_GAMMA + epoch)))
    for i in range(length - 1, 0, -1):
        j = r.next_bounded(i + 1)
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)


def task_seed(job_seed, task):
    """The shuffle seed of a task's reader (actors/trainer/TaskLease.openReader)."""
    return _long(_long(job_seed * 1_000_003) + task)


class TaskReader:
    """Batches of a leased task from its offset: (indices into the data set, reader offset after the batch)."""

    def __init__(self, lease, batch, job_seed):
        if lease.to <= getattr(lease, "from"):
            raise ValueError(f"task {lease.epoch}/{lease.task} has the empty range [{getattr(lease, 'from')}, {lease.to})")
        self.start = getattr(lease, "from")
        self.length = lease.to - self.start
        if not 0 <= lease.offset <= self.length:
            raise ValueError(f"task {lease.epoch}/{lease.task}: offset {lease.offset} is outside its "
                             f"{self.length} examples")
        self.batch = batch
        self.offset = lease.offset
        self.skip = dict(lease.skip)
        self.order = epoch_order(self.length, task_seed(job_seed, lease.task), lease.epoch)

    def done(self):
        return self.offset >= self.length

    def holds(self, block_id, offset_after):
        """Whether the block already holds the batch that ends at offset_after (from the task's former trainer)."""
        return self.skip.get(block_id, 0) >= offset_after

    def next(self):
        # A batch ends where a block that already holds examples of this task stops holding them.
        limit = self.batch
        for held in self.skip.values():
            if held > self.offset:
                limit = min(limit, held - self.offset)
        count = min(limit, self.length - self.offset)
        indices = self.start + self.order[self.offset:self.offset + count]
        self.offset += count
        return indices, self.offset
