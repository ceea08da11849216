package io.shardtrain.persistence;

import io.shardtrain.compute.Tensor;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The binary tensor format used on the wire, in events and snapshots, and in checkpoint files:
 * {@code int32 rank, int32 dims[rank], float32 values[product(dims)]}, all little-endian.
 *
 * <p>Floats never go through JSON: a text round trip is slow and can lose bits; this format is a
 * straight copy and keeps every value exact.
 */
public final class TensorCodec {
  private TensorCodec() {}

  /** Bytes {@link #write} produces for {@code t}. */
  public static int encodedSize(Tensor t) {
    return 4 + 4 * t.rank() + 4 * t.size();
  }

  /** Writes {@code t} at the buffer's position; the buffer's byte order is set to little-endian. */
  public static void write(Tensor t, ByteBuffer out) {
    out.order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(t.rank());
    for (int i = 0; i < t.rank(); i++) out.putInt(t.dim(i));
    out.asFloatBuffer().put(t.data());
    out.position(out.position() + 4 * t.size());
  }

  /** Reads one tensor at the buffer's position; a malformed header or short buffer is rejected. */
  public static Tensor read(ByteBuffer in) {
    in.order(ByteOrder.LITTLE_ENDIAN);
    try {
      int rank = in.getInt();
      if (rank < 1 || rank > 4) {
        throw new IllegalArgumentException("tensor header has rank " + rank + ", expected 1..4");
      }
      int[] shape = new int[rank];
      for (int i = 0; i < rank; i++) {
        shape[i] = in.getInt();
        if (shape[i] < 0) {
          throw new IllegalArgumentException("tensor header has negative dimension " + shape[i]);
        }
      }
      long count = Tensor.elementCount(shape);
      // Divided, not multiplied: count * 4 can overflow to a negative and pass.
      if (count > in.remaining() / 4) {
        throw new IllegalArgumentException("tensor of shape " + Tensor.shapeString(shape) + " needs "
            + (count == Long.MAX_VALUE ? "more than 2^63" : String.valueOf(count)) + " floats of 4 bytes, only "
            + in.remaining() + " bytes remain");
      }
      float[] data = new float[(int) count];
      in.asFloatBuffer().get(data);
      in.position(in.position() + 4 * data.length);
      return Tensor.wrap(data, shape);
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("truncated tensor header", e);
    }
  }

  public static byte[] toBytes(Tensor t) {
    ByteBuffer buf = ByteBuffer.allocate(encodedSize(t));
    write(t, buf);
    return buf.array();
  }

  public static Tensor fromBytes(byte[] bytes) {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    Tensor t = read(buf);
    if (buf.hasRemaining()) {
      throw new IllegalArgumentException(buf.remaining() + " trailing bytes after tensor " + t.shapeString());
    }
    return t;
  }
}
