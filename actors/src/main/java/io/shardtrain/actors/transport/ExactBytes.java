package io.shardtrain.actors.transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * A little-endian byte sink for the serializers, which write each message twice: first into a
 * counting sink, which only adds up the bytes, then into one of exactly that size, whose array is
 * returned as it is. A message of a block's values (megabytes) is then copied once, not through a
 * growing buffer and a final trim. Subclasses add the typed writes, each calling {@link #room}.
 */
public abstract class ExactBytes {
  /** Null while only counting. */
  private ByteBuffer buf;
  private long counted;

  /** A sink of {@code capacity} bytes, which grows if a writer writes more than was counted. */
  protected ExactBytes(int capacity) {
    buf = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** A counting sink. */
  protected ExactBytes() {}

  /** The bytes written (or counted) so far. */
  public final long size() {
    return buf == null ? counted : buf.position();
  }

  /**
   * Makes room for {@code extra} bytes and returns the buffer to write them into, or null when
   * only counting (the caller then writes nothing).
   */
  protected final ByteBuffer room(long extra) {
    if (buf == null) {
      counted += extra;
      if (counted > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("message too large: " + counted + " bytes");
      return null;
    }
    if (buf.remaining() >= extra) return buf;
    long needed = (long) buf.position() + extra;
    if (needed > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("message too large: " + needed + " bytes");
    ByteBuffer bigger = ByteBuffer.allocate((int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, 2L * buf.capacity())))
        .order(ByteOrder.LITTLE_ENDIAN);
    buf.flip();
    bigger.put(buf);
    buf = bigger;
    return buf;
  }

  /**
   * The bytes {@code writer} writes into a sink: counted in one from {@code counting}, then written
   * into one of exactly that size from {@code sized}. {@code serializer} and {@code what} name the
   * writer and the message when the two passes disagree, a bug of the writer.
   */
  public static <T extends ExactBytes> byte[] write(Supplier<T> counting, IntFunction<T> sized, Consumer<T> writer,
      String serializer, String what) {
    T size = counting.get();
    writer.accept(size);
    T out = sized.apply(Math.toIntExact(size.size()));
    writer.accept(out);
    if (out.size() != size.size()) {
      throw new IllegalStateException(serializer + " wrote " + out.size() + " bytes of a " + what + " counted as "
          + size.size() + ": its writer must write the same fields in both passes");
    }
    return out.toArray();
  }

  /** The bytes written: the backing array itself when they fill it. */
  final byte[] toArray() {
    if (buf == null) throw new IllegalStateException("a counting sink holds no bytes");
    byte[] a = buf.array();
    return buf.position() == a.length ? a : Arrays.copyOf(a, buf.position());
  }
}
