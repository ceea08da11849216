package io.shardtrain.actors.sparse;

import io.shardtrain.actors.transport.ExactBytes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Little-endian writing and reading for {@link SparseSerializer}: arrays after a count, strings
 * UTF-8 after a length, every count checked against the bytes left before anything is allocated.
 */
final class Bytes {
  private Bytes() {}

  static final class Out extends ExactBytes {
    Out(int capacity) {
      super(capacity);
    }

    private Out() {}

    /** An Out that writes nothing and counts the bytes it would have written ({@link #size()}). */
    static Out counting() {
      return new Out();
    }

    Out b(int v) {
      ByteBuffer buf = room(1);
      if (buf != null) buf.put((byte) v);
      return this;
    }

    Out i(int v) {
      ByteBuffer buf = room(4);
      if (buf != null) buf.putInt(v);
      return this;
    }

    Out l(long v) {
      ByteBuffer buf = room(8);
      if (buf != null) buf.putLong(v);
      return this;
    }

    Out f(float v) {
      ByteBuffer buf = room(4);
      if (buf != null) buf.putFloat(v);
      return this;
    }

    Out s(String v) {
      byte[] bytes = v.getBytes(StandardCharsets.UTF_8);
      ByteBuffer buf = room(4L + bytes.length);
      if (buf == null) return this;
      buf.putInt(bytes.length);
      buf.put(bytes);
      return this;
    }

    Out strings(List<String> v) {
      i(v.size());
      for (String x : v) s(x);
      return this;
    }

    Out longs(long[] v) {
      ByteBuffer buf = room(4L + 8L * v.length);
      if (buf == null) return this;
      buf.putInt(v.length);
      buf.asLongBuffer().put(v);
      buf.position(buf.position() + 8 * v.length);
      return this;
    }

    Out floats(float[] v) {
      ByteBuffer buf = room(4L + 4L * v.length);
      if (buf == null) return this;
      buf.putInt(v.length);
      buf.asFloatBuffer().put(v);
      buf.position(buf.position() + 4 * v.length);
      return this;
    }

    Out ints(int[] v) {
      ByteBuffer buf = room(4L + 4L * v.length);
      if (buf == null) return this;
      buf.putInt(v.length);
      buf.asIntBuffer().put(v);
      buf.position(buf.position() + 4 * v.length);
      return this;
    }
  }

  static final class In {
    private final ByteBuffer buf;

    In(byte[] bytes) {
      buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    int b() {
      return buf.get();
    }

    boolean bool() {
      int v = buf.get();
      if (v != 0 && v != 1) throw new IllegalArgumentException("boolean byte " + v + " at " + (buf.position() - 1));
      return v == 1;
    }

    int i() {
      return buf.getInt();
    }

    long l() {
      return buf.getLong();
    }

    float f() {
      return buf.getFloat();
    }

    private int count(int bytesEach) {
      int n = buf.getInt();
      if (n < 0 || (long) n * bytesEach > buf.remaining()) {
        throw new IllegalArgumentException("count " + n + " at " + (buf.position() - 4) + " exceeds the " + buf.remaining()
            + " bytes left");
      }
      return n;
    }

    String s() {
      byte[] bytes = new byte[count(1)];
      buf.get(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }

    List<String> strings() {
      int n = count(4);
      List<String> out = new ArrayList<>(n);
      for (int k = 0; k < n; k++) out.add(s());
      return out;
    }

    long[] longs() {
      long[] v = new long[count(8)];
      buf.asLongBuffer().get(v);
      buf.position(buf.position() + 8 * v.length);
      return v;
    }

    float[] floats() {
      float[] v = new float[count(4)];
      buf.asFloatBuffer().get(v);
      buf.position(buf.position() + 4 * v.length);
      return v;
    }

    int[] ints() {
      int[] v = new int[count(4)];
      buf.asIntBuffer().get(v);
      buf.position(buf.position() + 4 * v.length);
      return v;
    }

    int remaining() {
      return buf.remaining();
    }
  }
}
