package io.shardtrain.actors.transport;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Time spent turning data-path messages into bytes and back, for {@code --profile}: the wire
 * serializer's {@code toBinary} and {@code fromBinary} (which a bulk letter's open goes through),
 * and the float copies between arrays and the bulk channel's socket buffers. Process-wide: every
 * node of a local cluster adds to the same counters, from whichever thread did the work, so the
 * figures are not any one trainer's. Also counts the bytes sent: every serialized data-path message
 * and every bulk frame's header, manifest and floats (Akka's own envelopes and control messages are
 * not counted). Counted only while {@link #enable switched on}, so that off, the hot path pays one
 * read of a volatile flag.
 */
public final class WireTimings {

  /** What was timed. */
  public enum Kind {
    /** A wire message written to bytes (without the floats a bulk letter carries). */
    SERIALIZE,
    /** A wire message read from bytes, a bulk letter's included. */
    DESERIALIZE,
    /** A bulk frame's floats copied into the socket buffer. */
    COPY_OUT,
    /** A bulk frame's floats copied out of the socket buffer. */
    COPY_IN
  }

  /** Nanoseconds spent and calls counted for one kind. */
  public record Figure(long nanos, long calls) {}

  private static volatile boolean on;
  private static final Map<Kind, LongAdder> NANOS = adders();
  private static final Map<Kind, LongAdder> CALLS = adders();
  private static final LongAdder BYTES_SENT = new LongAdder();

  private WireTimings() {}

  private static Map<Kind, LongAdder> adders() {
    Map<Kind, LongAdder> m = new EnumMap<>(Kind.class);
    for (Kind k : Kind.values()) m.put(k, new LongAdder());
    return m;
  }

  /** Whether to time; callers check this first and skip the clock when off. */
  public static boolean on() {
    return on;
  }

  public static void enable(boolean enabled) {
    on = enabled;
  }

  /** Counts one call of {@code kind} that took {@code nanos}. */
  public static void add(Kind kind, long nanos) {
    NANOS.get(kind).add(nanos);
    CALLS.get(kind).increment();
  }

  /** Counts {@code bytes} sent: a serialized message, or the rest of a bulk frame around one. */
  public static void addBytesSent(long bytes) {
    BYTES_SENT.add(bytes);
  }

  /** Bytes sent so far, every node of this process together. */
  public static long bytesSent() {
    return BYTES_SENT.sum();
  }

  /** Sets every count back to zero. */
  public static void reset() {
    for (Kind k : Kind.values()) {
      NANOS.get(k).reset();
      CALLS.get(k).reset();
    }
    BYTES_SENT.reset();
  }

  /** The counts so far; a snapshot taken while others add may be off by the calls in progress. */
  public static Map<Kind, Figure> snapshot() {
    Map<Kind, Figure> m = new EnumMap<>(Kind.class);
    for (Kind k : Kind.values()) m.put(k, new Figure(NANOS.get(k).sum(), CALLS.get(k).sum()));
    return m;
  }
}
