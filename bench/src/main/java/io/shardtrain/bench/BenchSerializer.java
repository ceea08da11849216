package io.shardtrain.bench;

import akka.actor.ExtendedActorSystem;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.ByteBufferSerializer;
import akka.serialization.SerializerWithStringManifest;
import io.shardtrain.bench.TransportBenchmark.ArteryBlock;
import io.shardtrain.bench.TransportBenchmark.BlockLetter;
import io.shardtrain.bench.TransportBenchmark.EchoLetter;
import java.io.NotSerializableException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Binary serializer for the {@link TransportBenchmark} messages: little-endian floats written
 * straight into Artery's envelope buffer ({@link ByteBufferSerializer}), so the Artery figure is
 * not held back by an extra byte[] copy. The bulk channel's letters are written without their
 * floats, which travel as the bulk frame's payload.
 */
public final class BenchSerializer extends SerializerWithStringManifest implements ByteBufferSerializer {
  private static final String BLOCK = "B";
  private static final String LETTER = "T";
  private static final String ECHO = "E";

  private final ExtendedActorSystem system;
  private volatile ActorRefResolver resolver;

  public BenchSerializer(ExtendedActorSystem system) {
    this.system = system;
  }

  @Override
  public int identifier() {
    return 731_001;
  }

  @Override
  public String manifest(Object o) {
    if (o instanceof ArteryBlock) return BLOCK;
    if (o instanceof BlockLetter) return LETTER;
    if (o instanceof EchoLetter) return ECHO;
    throw new IllegalArgumentException("BenchSerializer cannot serialize " + o.getClass().getName());
  }

  @Override
  public byte[] toBinary(Object o) {
    ByteBuffer buf = ByteBuffer.allocate(size(o));
    toBinary(o, buf);
    return buf.array();
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    return fromBinary(ByteBuffer.wrap(bytes), manifest);
  }

  @Override
  public void toBinary(Object o, ByteBuffer buf) {
    ByteOrder order = buf.order();
    buf.order(ByteOrder.LITTLE_ENDIAN);
    try {
      if (o instanceof ArteryBlock b) {
        buf.putInt(b.seq());
        putRef(buf, b.replyTo());
        buf.putInt(b.length());
        buf.asFloatBuffer().put(b.values(), b.offset(), b.length());
        buf.position(buf.position() + b.length() * Float.BYTES);
      } else if (o instanceof BlockLetter l) {
        putRef(buf, l.server());
        buf.putInt(l.seq()).putInt(l.replyPort());
        putString(buf, l.replyHost());
        putRef(buf, l.replyTo());
      } else if (o instanceof EchoLetter e) {
        putRef(buf, e.replyTo());
      } else {
        throw new IllegalArgumentException("BenchSerializer cannot serialize " + o.getClass().getName());
      }
    } finally {
      buf.order(order);
    }
  }

  @Override
  public Object fromBinary(ByteBuffer buf, String manifest) throws NotSerializableException {
    ByteOrder order = buf.order();
    buf.order(ByteOrder.LITTLE_ENDIAN);
    try {
      switch (manifest) {
        case BLOCK -> {
          int seq = buf.getInt();
          ActorRef<ArteryBlock> replyTo = getRef(buf);
          int length = count(buf, Float.BYTES);
          float[] values = new float[length];
          buf.asFloatBuffer().get(values);
          buf.position(buf.position() + length * Float.BYTES);
          return new ArteryBlock(seq, values, 0, length, replyTo);
        }
        case LETTER -> {
          ActorRef<TransportBenchmark.ServerMessage> server = getRef(buf);
          int seq = buf.getInt();
          int port = buf.getInt();
          String host = getString(buf);
          return new BlockLetter(server, seq, host, port, getRef(buf));
        }
        case ECHO -> {
          return new EchoLetter(getRef(buf));
        }
        default -> throw new NotSerializableException("unknown benchmark manifest '" + manifest + "'");
      }
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      NotSerializableException ex = new NotSerializableException("cannot read a benchmark message '" + manifest + "': "
          + (e instanceof BufferUnderflowException ? "truncated" : e.getMessage()));
      ex.initCause(e);
      throw ex;
    } finally {
      buf.order(order);
    }
  }

  /** A count of items of {@code bytesEach}, checked against what is left before anything is allocated. */
  private static int count(ByteBuffer buf, int bytesEach) {
    int n = buf.getInt();
    if (n < 0 || n > buf.remaining() / bytesEach) {
      throw new IllegalArgumentException("count " + n + " at " + (buf.position() - 4) + " exceeds the "
          + buf.remaining() + " bytes left");
    }
    return n;
  }

  private int size(Object o) {
    if (o instanceof ArteryBlock b) return 8 + refSize(b.replyTo()) + b.length() * Float.BYTES;
    if (o instanceof BlockLetter l) return 8 + 4 + l.replyHost().length() * 3 + refSize(l.server()) + refSize(l.replyTo());
    if (o instanceof EchoLetter e) return refSize(e.replyTo());
    throw new IllegalArgumentException("BenchSerializer cannot serialize " + o.getClass().getName());
  }

  private ActorRefResolver resolver() {
    ActorRefResolver r = resolver;
    if (r == null) {
      r = ActorRefResolver.get(Adapter.toTyped(system));
      resolver = r;
    }
    return r;
  }

  private int refSize(ActorRef<?> ref) {
    return 4 + (ref == null ? 0 : resolver().toSerializationFormat(ref).length() * 3);
  }

  private void putRef(ByteBuffer buf, ActorRef<?> ref) {
    putString(buf, ref == null ? "" : resolver().toSerializationFormat(ref));
  }

  private <T> ActorRef<T> getRef(ByteBuffer buf) {
    String s = getString(buf);
    return s.isEmpty() ? null : resolver().resolveActorRef(s);
  }

  private static void putString(ByteBuffer buf, String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    buf.putInt(bytes.length).put(bytes);
  }

  private static String getString(ByteBuffer buf) {
    byte[] bytes = new byte[count(buf, 1)];
    buf.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
