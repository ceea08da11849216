import struct
import unittest

import numpy as np

from shardtrain import shardtrain_pb2 as pb
from shardtrain.wire import decode_pulled, encode_push


class WireTest(unittest.TestCase):
    def test_a_push_encoded_from_numpy_parses_as_protobuf_builds_it(self):
        values = np.array([1.5, -0.0, np.inf, 3e-39, -2.25], dtype=np.float32)
        request = pb.PushRequest(job_id="j", block_id="dense1.weight#0", trainer_id="py", step=7, base_version=6,
                                 weight=128, generation=2, mark=pb.TaskMark(epoch=1, task=3, offset=256))
        parsed = pb.PushRequest.FromString(encode_push(request, values))
        expected = pb.PushRequest()
        expected.CopyFrom(request)
        expected.values.extend(values.tolist())
        self.assertEqual(expected, parsed)
        self.assertEqual(values.tobytes(), np.array(parsed.values, dtype=np.float32).tobytes())
        self.assertEqual(0, len(pb.PushRequest.FromString(encode_push(request, [])).values))

    def test_pulled_values_decode_packed_unpacked_and_split_the_same(self):
        message = pb.BlockValues(block_id="dense2.bias#0", parameter="dense2.bias", index=0, offset=0, version=469,
                                 values=[0.25, -1.0, 7.0, 1e-7])
        packed = decode_pulled(message.SerializeToString())
        self.assertEqual(("dense2.bias#0", "dense2.bias", 0, 0, 469),
                         (packed.block_id, packed.parameter, packed.index, packed.offset, packed.version))
        self.assertEqual(np.float32, packed.values.dtype)
        self.assertEqual(np.array([0.25, -1.0, 7.0, 1e-7], dtype=np.float32).tolist(), packed.values.tolist())
        # A writer may send each float as its own field (wire type 5), or the packed run in two pieces.
        head = pb.BlockValues(block_id="b#1", parameter="b", index=1, offset=4, version=3).SerializeToString()
        unpacked = head + b"".join(b"\x35" + struct.pack("<f", v) for v in (1.0, 2.0))
        split = b"\x32\x04" + struct.pack("<f", 1.0) + head + b"\x32\x04" + struct.pack("<f", 2.0)
        for data in (unpacked, split):
            pulled = decode_pulled(data)
            self.assertEqual([1.0, 2.0], pulled.values.tolist())
            self.assertEqual(("b#1", 4, 3), (pulled.block_id, pulled.offset, pulled.version))
        self.assertEqual(0, decode_pulled(head).values.size)

    def test_a_truncated_message_is_refused(self):
        data = pb.BlockValues(block_id="b#0", values=[1.0, 2.0]).SerializeToString()
        with self.assertRaisesRegex(ValueError, "ends inside a field"):
            decode_pulled(data[:-3])
