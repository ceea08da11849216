"""The float arrays of pushes and pulls straight between numpy and protobuf's wire format.

The protobuf Python runtime converts a repeated float field one element at a time (about 5 ms each
way for a block of 100,000 floats, as long as the step's compute). A packed repeated float field is
a length-delimited run of little-endian float32s, and a message's fields may come in any order, so
PushRequest's values are appended to the serialized rest of the message, and BlockValues' values
are cut out of the bytes before the rest is parsed.
"""

import numpy as np

from . import shardtrain_pb2 as pb

_PUSH_VALUES = 8   # PushRequest.values
_PULL_VALUES = 6   # BlockValues.values


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(data, i):
    shift = result = 0
    while True:
        if i >= len(data):
            raise ValueError("a message ends inside a varint")
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def encode_push(request, values):
    """`request` (a PushRequest without values) with `values` as its packed values, serialized."""
    floats = np.ascontiguousarray(values, dtype="<f4")
    if floats.size == 0:
        return request.SerializeToString()
    tag = _varint((_PUSH_VALUES << 3) | 2)
    return request.SerializeToString() + tag + _varint(floats.nbytes) + floats.tobytes()


class Pulled:
    """A pulled block: BlockValues' other fields, and its values as a float32 array."""

    __slots__ = ("block_id", "parameter", "index", "offset", "version", "values")

    def __init__(self, message, values):
        self.block_id = message.block_id
        self.parameter = message.parameter
        self.index = message.index
        self.offset = message.offset
        self.version = message.version
        self.values = values


def decode_pulled(data):
    """A serialized BlockValues as Pulled; the values packed or not, in one run or several."""
    rest = bytearray()
    runs = []
    i = 0
    n = len(data)
    while i < n:
        start = i
        key, i = _read_varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _read_varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            length, i = _read_varint(data, i)
            if i + length > n:
                raise ValueError("a BlockValues message ends inside a field")
            if field == _PULL_VALUES:
                runs.append(np.frombuffer(data, dtype="<f4", count=length // 4, offset=i))
            i += length
        elif wire == 5:
            if i + 4 > n:
                raise ValueError("a BlockValues message ends inside a field")
            if field == _PULL_VALUES:
                runs.append(np.frombuffer(data, dtype="<f4", count=1, offset=i))
            i += 4
        else:
            raise ValueError(f"wire type {wire} of field {field} is not one BlockValues uses")
        if i > n:
            raise ValueError("a BlockValues message ends inside a field")
        if field != _PULL_VALUES:
            rest += data[start:i]
    values = np.concatenate(runs).astype(np.float32) if runs else np.zeros(0, dtype=np.float32)
    return Pulled(pb.BlockValues.FromString(bytes(rest)), values)
