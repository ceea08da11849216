package io.shardtrain.actors.transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

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

  /** The bytes written: the backing array itself when they fill it. */
  public final byte[] toArray() {
    if (buf == null) throw new IllegalStateException("a counting sink holds no bytes");
    byte[] a = buf.array();
    return buf.position() == a.length ? a : Arrays.copyOf(a, buf.position());
  }

  /**
   * Checks that a message of type {@code what} written by {@code writer} took as many bytes as
   * {@code counted} said; a writer that writes different fields in the two passes is a bug.
   */
  public final void checkWrittenAsCounted(ExactBytes counted, String writer, String what) {
    if (size() != counted.size()) {
      throw new IllegalStateException(writer + " wrote " + size() + " bytes of a " + what + " counted as "
          + counted.size() + ": its writer must write the same fields in both passes");
    }
  }
}
