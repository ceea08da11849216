package io.shardtrain.actors.ps;

import akka.actor.ExtendedActorSystem;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.SerializerWithStringManifest;
import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import io.shardtrain.actors.transport.ExactBytes;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.actors.transport.WireTimings;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.io.NotSerializableException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Base of the parameter server's binary serializers ({@link WireSerializer}, {@link JournalSerializer}):
 * a table with one entry per type (manifest, class, writer, reader) drives {@code manifest},
 * {@code toBinary} and {@code fromBinary}, so a type is added with one entry. Every payload starts
 * with a format byte; numbers are little-endian, floats in bulk after a count, strings UTF-8 after
 * a length, an optional value after a presence byte, actor references through
 * {@link ActorRefResolver}. Malformed bytes fail with a {@link NotSerializableException} naming the
 * manifest. A serializer of data-path messages counts its time in {@link WireTimings} while that
 * is on.
 */
public abstract class TableSerializer extends SerializerWithStringManifest {

  /** Writes a message's fields (the format byte is already written). */
  public interface Writer<T> {
    void write(Out out, T message);
  }

  /** Reads a message's fields; {@link In#format()} says which layout they were written in. */
  public interface Reader<T> {
    T read(In in);
  }

  private record Entry<T>(String manifest, Class<T> type, Writer<T> writer, Reader<T> reader) {
    void write(Out out, Object message) {
      writer.write(out, type.cast(message));
    }
  }

  private final ExtendedActorSystem system;
  private final int oldestFormat;
  private final int format;
  private final boolean wire;
  // Messages are records (and the final BlockState), so the exact class finds the entry.
  private final Map<Class<?>, Entry<?>> byClass = new HashMap<>();
  private final Map<String, Entry<?>> byManifest = new HashMap<>();
  private volatile ActorRefResolver resolver;

  /** Writes {@code format}; reads {@code oldestFormat} to {@code format}. */
  protected TableSerializer(ExtendedActorSystem system, int oldestFormat, int format) {
    this(system, oldestFormat, format, false);
  }

  /** As above; {@code wire}: its time counts in {@link WireTimings}. */
  protected TableSerializer(ExtendedActorSystem system, int oldestFormat, int format, boolean wire) {
    this.system = system;
    this.oldestFormat = oldestFormat;
    this.format = format;
    this.wire = wire;
  }

  /** Registers {@code type} under {@code manifest}; each class and each manifest once. */
  protected final <T> void entry(String manifest, Class<T> type, Writer<T> writer, Reader<T> reader) {
    Entry<T> e = new Entry<>(manifest, type, writer, reader);
    if (byClass.putIfAbsent(type, e) != null || byManifest.putIfAbsent(manifest, e) != null) {
      throw new IllegalStateException(name() + " registers " + type.getName() + " or '" + manifest + "' twice");
    }
  }

  private String name() {
    return getClass().getSimpleName();
  }

  private Entry<?> entryFor(Object o) {
    Entry<?> e = byClass.get(o.getClass());
    if (e == null) throw new IllegalArgumentException(name() + " cannot serialize " + o.getClass().getName());
    return e;
  }

  @Override
  public final String manifest(Object o) {
    return entryFor(o).manifest();
  }

  @Override
  public final byte[] toBinary(Object o) {
    if (!WireTimings.on() || !wire) return write(o);
    long t0 = System.nanoTime();
    byte[] bytes = write(o);
    WireTimings.add(WireTimings.Kind.SERIALIZE, System.nanoTime() - t0);
    WireTimings.addBytesSent(bytes.length);
    return bytes;
  }

  /** Counted, then written into an array of the exact size ({@link ExactBytes}). */
  private byte[] write(Object o) {
    Entry<?> e = entryFor(o);
    return ExactBytes.write(Out::counting, Out::new, out -> {
      out.putByte((byte) format);
      e.write(out, o);
    }, name(), o.getClass().getSimpleName());
  }

  /** Writes {@code o}'s fields as its entry does, for a message nested in another. */
  final void writeFields(Out out, Object o) {
    entryFor(o).write(out, o);
  }

  /** Reads the fields of a message nested in another, by its manifest. */
  final Object readFields(In in, String manifest) {
    Entry<?> e = byManifest.get(manifest);
    if (e == null) throw new IllegalArgumentException("unknown manifest '" + manifest + "' for " + name());
    return e.reader().read(in);
  }

  @Override
  public final Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    if (!WireTimings.on() || !wire) return read(bytes, manifest);
    long t0 = System.nanoTime();
    Object message = read(bytes, manifest);
    WireTimings.add(WireTimings.Kind.DESERIALIZE, System.nanoTime() - t0);
    return message;
  }

  private Object read(byte[] bytes, String manifest) throws NotSerializableException {
    if (!byManifest.containsKey(manifest)) {
      throw new NotSerializableException("unknown manifest '" + manifest + "' for " + name());
    }
    try {
      In in = new In(bytes);
      if (in.format() < oldestFormat || in.format() > format) {
        throw new IllegalArgumentException(oldestFormat == format
            ? "format version " + in.format() + " (this node reads format " + format + " only: the sender runs another version)"
            : "unknown format version " + in.format() + " (this code reads " + oldestFormat + " to " + format + ")");
      }
      Object result = readFields(in, manifest);
      if (in.buf.hasRemaining()) throw new IllegalArgumentException(in.buf.remaining() + " trailing bytes");
      return result;
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      String why = e instanceof BufferUnderflowException ? "truncated" : e.getMessage();
      NotSerializableException ex = new NotSerializableException(
          "cannot read a '" + manifest + "' of " + bytes.length + " bytes: " + why);
      ex.initCause(e);
      throw ex;
    }
  }

  // --- values both serializers write

  protected final void putRef(Out out, ActorRef<?> ref) {
    out.putString(resolver().toSerializationFormat(ref));
  }

  protected final <T> ActorRef<T> getRef(In in) {
    return resolver().resolveActorRef(in.getString());
  }

  protected final void putOptionalRef(Out out, ActorRef<?> ref) {
    out.putByte(ref == null ? (byte) 0 : 1);
    if (ref != null) putRef(out, ref);
  }

  protected final <T> ActorRef<T> getOptionalRef(In in) {
    return in.getBoolean() ? getRef(in) : null;
  }

  private ActorRefResolver resolver() {
    // Resolved lazily: serializers are created while the system is still starting.
    ActorRefResolver r = resolver;
    if (r == null) {
      r = ActorRefResolver.get(Adapter.toTyped(system));
      resolver = r;
    }
    return r;
  }

  static void putSpec(Out out, BlockSpec spec) {
    out.putString(spec.parameter());
    out.putInt(spec.index());
    out.putInt(spec.offset());
    out.putInt(spec.length());
    OptimizerSpec o = spec.optimizer();
    out.putString(o.kind().name());
    out.putFloat(o.momentum());
    out.putByte(o.nesterov() ? (byte) 1 : 0);
    out.putFloat(o.beta1());
    out.putFloat(o.beta2());
    out.putFloat(o.eps());
    out.putFloat(o.weightDecay());
    out.putFloat(o.trustCoefficient());
    out.putByte(o.decoupledWeightDecay() ? (byte) 1 : 0);
    out.putFloat(o.initialAccumulator());
    out.putString(spec.lrSchedule());
    out.putFloat(spec.lr());
    out.putString(spec.mode().name());
    out.putLong(spec.maxStaleness());
    out.putLong(spec.examplesPerUpdate());
  }

  /** A spec; {@code withExamples}: written with its examples per update (older formats had none). */
  static BlockSpec getSpec(In in, boolean withExamples) {
    String parameter = in.getString();
    int index = in.getInt();
    int offset = in.getInt();
    int length = in.getInt();
    OptimizerSpec.Kind kind = OptimizerSpec.Kind.valueOf(in.getString());
    OptimizerSpec optimizer = new OptimizerSpec(kind, in.getFloat(), in.getBoolean(), in.getFloat(), in.getFloat(),
        in.getFloat(), in.getFloat(), in.getFloat(), in.getBoolean(), in.getFloat());
    String schedule = in.getString();
    float lr = in.getFloat();
    BlockSpec.Mode mode = BlockSpec.Mode.valueOf(in.getString());
    long maxStaleness = in.getLong();
    return new BlockSpec(parameter, index, offset, length, optimizer, schedule, lr, mode, maxStaleness,
        withExamples ? in.getLong() : 0);
  }

  /** A resumed block's state: its spec, step, values, slots, update count and examples applied. */
  static void putResumed(Out out, BlockEvents.Resumed r) {
    putSpec(out, r.spec());
    out.putLong(r.step());
    out.putFloats(r.values());
    out.putInt(r.slots().length);
    for (float[] slot : r.slots()) out.putFloats(slot);
    out.putLong(r.updates());
    out.putLong(r.examples());
  }

  static BlockEvents.Resumed getResumed(In in) {
    BlockSpec spec = getSpec(in, true);
    long step = in.getLong();
    float[] values = in.getFloats();
    float[][] slots = new float[in.getCount(4)][];
    for (int i = 0; i < slots.length; i++) slots[i] = in.getFloats();
    return new BlockEvents.Resumed(spec, step, values, slots, in.getLong(), in.getLong());
  }

  /** An optional task mark: a presence byte, then epoch, task and offset. */
  static void putMark(Out out, TaskMark m) {
    out.putByte(m == null ? (byte) 0 : 1);
    if (m == null) return;
    out.putInt(m.epoch());
    out.putInt(m.task());
    out.putLong(m.offset());
  }

  static TaskMark getMark(In in) {
    return in.getBoolean() ? new TaskMark(in.getInt(), in.getInt(), in.getLong()) : null;
  }

  // --- little-endian primitives

  public static final class Out extends ExactBytes {
    public Out(int capacity) {
      super(capacity);
    }

    private Out() {}

    /** An Out that writes nothing and counts the bytes it would have written ({@link #size()}). */
    static Out counting() {
      return new Out();
    }

    public void putByte(byte b) {
      ByteBuffer buf = room(1);
      if (buf != null) buf.put(b);
    }

    public void putInt(int v) {
      ByteBuffer buf = room(4);
      if (buf != null) buf.putInt(v);
    }

    public void putLong(long v) {
      ByteBuffer buf = room(8);
      if (buf != null) buf.putLong(v);
    }

    public void putFloat(float v) {
      ByteBuffer buf = room(4);
      if (buf != null) buf.putFloat(v);
    }

    public void putString(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      ByteBuffer buf = room(4L + b.length);
      if (buf == null) return;
      buf.putInt(b.length);
      buf.put(b);
    }

    public void putStrings(List<String> list) {
      putInt(list.size());
      for (String s : list) putString(s);
    }

    public void putFloats(float[] a) {
      putFloats(a, WirePrecision.FP32);
    }

    /** A count, then the values encoded in {@code precision}. */
    public void putFloats(float[] a, WirePrecision precision) {
      ByteBuffer buf = room(4L + (long) precision.bytesPerValue() * a.length);
      if (buf == null) return;
      buf.putInt(a.length);
      precision.put(buf, a, 0, a.length);
    }
  }

  public static final class In {
    final ByteBuffer buf;
    private final int format;

    /** Reads the format byte at once. */
    public In(byte[] bytes) {
      buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
      format = buf.get();
    }

    /** The payload's format version. */
    public int format() {
      return format;
    }

    public byte getByte() {
      return buf.get();
    }

    public boolean getBoolean() {
      byte b = buf.get();
      if (b != 0 && b != 1) throw new IllegalArgumentException("boolean byte " + b + " at " + (buf.position() - 1));
      return b == 1;
    }

    public int getInt() {
      return buf.getInt();
    }

    public long getLong() {
      return buf.getLong();
    }

    public float getFloat() {
      return buf.getFloat();
    }

    /** A count of items of at least {@code minBytes} each, checked against what is left. */
    public int getCount(int minBytes) {
      int n = buf.getInt();
      if (n < 0 || (long) n * minBytes > buf.remaining()) {
        throw new IllegalArgumentException("count " + n + " at " + (buf.position() - 4) + " exceeds the "
            + buf.remaining() + " bytes left");
      }
      return n;
    }

    public String getString() {
      int n = getCount(1);
      byte[] b = new byte[n];
      buf.get(b);
      return new String(b, StandardCharsets.UTF_8);
    }

    public List<String> getStrings() {
      int n = getCount(4);
      List<String> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) out.add(getString());
      return out;
    }

    public float[] getFloats() {
      return getFloats(WirePrecision.FP32);
    }

    /** Values written by {@link Out#putFloats(float[], WirePrecision)} in {@code precision}, as fp32. */
    public float[] getFloats(WirePrecision precision) {
      int n = getCount(precision.bytesPerValue());
      float[] a = new float[n];
      precision.get(buf, a, 0, n);
      return a;
    }
  }
}
