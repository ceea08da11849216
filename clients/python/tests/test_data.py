import gzip
import os
import tempfile
import unittest

import numpy as np

from shardtrain import data
from shardtrain import shardtrain_pb2 as pb


def lease(start, to, epoch, task, offset=0, skip=None):
    message = pb.Lease(to=to, epoch=epoch, task=task, offset=offset, skip=skip or {})
    setattr(message, "from", start)
    return message


class TaskReaderTest(unittest.TestCase):
    # Printed by the JVM: BatchReader(data, 100, 1100, 7, 42 * 1_000_003 + 1, true, false, (epoch 2, offset 0)),
    # the indices of its first three batches (the reader of task 1 of epoch 2 in a job of seed 42).
    JVM_TASK = [463, 1096, 322, 883, 381, 739, 617, 134, 163, 487, 517, 405, 823, 108, 255, 242, 681, 337, 318, 685,
                1068]
    # BatchReader over [0, 60000), shuffle seed -5 * 1_000_003 + 3 (a negative job seed), epoch 0: its first indices.
    JVM_NEGATIVE_SEED = [25100, 39939, 56143, 10749, 19012, 42924, 4267, 14741, 46712, 58174]

    def test_batches_are_the_jvm_readers_bit_for_bit(self):
        reader = data.TaskReader(lease(100, 1100, 2, 1), 7, 42)
        got = []
        for _ in range(3):
            indices, _ = reader.next()
            got.extend(indices.tolist())
        self.assertEqual(self.JVM_TASK, got)
        self.assertEqual(self.JVM_NEGATIVE_SEED, data.epoch_order(60000, data.task_seed(-5, 3), 0)[:10].tolist())

    def test_a_reader_resumed_at_an_offset_continues_the_same_order(self):
        whole = data.TaskReader(lease(100, 1100, 2, 1), 7, 42)
        whole.next()
        resumed = data.TaskReader(lease(100, 1100, 2, 1, offset=7), 7, 42)
        indices, offset = resumed.next()
        self.assertEqual(self.JVM_TASK[7:14], indices.tolist())
        self.assertEqual(14, offset)

    def test_the_last_batch_is_partial_and_held_blocks_cut_batches(self):
        reader = data.TaskReader(lease(0, 10, 0, 0, skip={"dense1.weight#0": 6}), 4, 1)
        sizes = []
        while not reader.done():
            indices, offset = reader.next()
            sizes.append((len(indices), offset))
        self.assertEqual([(4, 4), (2, 6), (4, 10)], sizes)
        self.assertTrue(reader.holds("dense1.weight#0", 6))
        self.assertFalse(reader.holds("dense1.weight#0", 10))
        self.assertFalse(reader.holds("dense1.bias#0", 4))

    def test_an_offset_beyond_the_task_is_refused_naming_it(self):
        with self.assertRaisesRegex(ValueError, "task 0/3: offset 11 is outside its 10 examples"):
            data.TaskReader(lease(0, 10, 0, 3, offset=11), 4, 1)


class IdxTest(unittest.TestCase):
    def write(self, directory, name, raw, compress=False):
        path = os.path.join(directory, name + (".gz" if compress else ""))
        with (gzip.open if compress else open)(path, "wb") as f:
            f.write(raw)

    def idx_images(self, pixels):
        n = len(pixels)
        return (0x803).to_bytes(4, "big") + n.to_bytes(4, "big") + (28).to_bytes(4, "big") + (28).to_bytes(4, "big") \
            + bytes(np.array(pixels, dtype=np.uint8).reshape(n, 784))

    def idx_labels(self, labels):
        return (0x801).to_bytes(4, "big") + len(labels).to_bytes(4, "big") + bytes(labels)

    def test_plain_and_gzipped_files_load_as_floats_in_0_1(self):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, data.TRAIN_IMAGES, self.idx_images([[255] * 784, [0] * 784]))
            self.write(d, data.TRAIN_LABELS, self.idx_labels([3, 9]), compress=True)
            self.write(d, data.TEST_IMAGES, self.idx_images([[51] * 784]), compress=True)
            self.write(d, data.TEST_LABELS, self.idx_labels([1]))
            x, y, tx, ty = data.load_mnist(d)
            self.assertEqual((2, 784), x.shape)
            self.assertEqual(np.float32, x.dtype)
            self.assertEqual(1.0, x[0, 0])
            self.assertEqual(0.0, x[1, 5])
            self.assertAlmostEqual(0.2, float(tx[0, 0]), places=6)
            self.assertEqual([3, 9], y.tolist())
            self.assertEqual([1], ty.tolist())

    def test_a_truncated_file_is_named_with_what_its_header_says(self):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, data.TRAIN_IMAGES, self.idx_images([[1] * 784, [2] * 784])[:-10])
            with self.assertRaisesRegex(ValueError, "train-images-idx3-ubyte holds 1558 bytes of pixels; its header "
                                                    "says 2 images of 28x28"):
                data.load_mnist(d)

    def test_a_missing_file_names_the_directory(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(FileNotFoundError, "neither train-images-idx3-ubyte nor "
                                                           "train-images-idx3-ubyte.gz is in " + d):
                data.load_mnist(d)
