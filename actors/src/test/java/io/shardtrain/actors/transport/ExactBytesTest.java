package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class ExactBytesTest {
  /** Writes ints and float arrays with a count, as the serializers do. */
  static final class Sink extends ExactBytes {
    Sink(int capacity) {
      super(capacity);
    }

    Sink() {}

    void putInt(int v) {
      ByteBuffer b = room(4);
      if (b != null) b.putInt(v);
    }

    void putFloats(float[] v) {
      ByteBuffer b = room(4L + 4L * v.length);
      if (b == null) return;
      b.putInt(v.length);
      b.asFloatBuffer().put(v);
      b.position(b.position() + 4 * v.length);
    }
  }

  static void write(Sink s) {
    s.putInt(7);
    s.putFloats(new float[] {1f, 2f, 3f});
    s.putInt(-1);
  }

  @Test
  void aCountedMessageIsWrittenIntoAnArrayOfExactlyItsSizeAndReturnedWithoutACopy() {
    Sink[] sinks = new Sink[2];
    byte[] bytes = ExactBytes.write(() -> sinks[0] = new Sink(), n -> sinks[1] = new Sink(n), ExactBytesTest::write,
        "test", "message");
    assertEquals(4 + 4 + 12 + 4, sinks[0].size());
    assertEquals(24, bytes.length);
    assertSame(bytes, sinks[1].toArray(), "the sink's backing array itself");
    assertArrayEquals(new byte[] {7, 0, 0, 0, 3, 0, 0, 0}, java.util.Arrays.copyOf(bytes, 8), "little-endian");
  }

  @Test
  void aSinkSmallerThanItsMessageGrowsAndTrimsAndAWriterThatWritesMoreThanItCountedIsNamed() {
    Sink small = new Sink(6);
    write(small);
    byte[] bytes = small.toArray();
    assertEquals(24, bytes.length);
    assertNotSame(bytes, small.toArray(), "trimmed copies");
    int[] passes = {0};
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> ExactBytes.write(Sink::new, Sink::new,
        s -> {
          write(s);
          if (passes[0]++ == 1) s.putInt(1);
        }, "TestSerializer", "Push"));
    assertEquals("TestSerializer wrote 28 bytes of a Push counted as 24: its writer must write the same fields in both"
        + " passes", e.getMessage());
    Sink counting = new Sink();
    write(counting);
    assertThrows(IllegalStateException.class, counting::toArray, "a counting sink holds no bytes");
  }
}
