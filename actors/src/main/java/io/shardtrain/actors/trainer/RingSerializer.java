package io.shardtrain.actors.trainer;

import akka.actor.ExtendedActorSystem;
import io.shardtrain.actors.ps.TableSerializer;
import io.shardtrain.actors.transport.BulkAddress;

/**
 * Binary serializer of what all-reduce ring members send each other ({@link RingLink}): a chunk
 * letter's header goes with every bucket of every step, so it is a few bytes, not a CBOR document.
 * Messages that only travel: one format.
 */
public final class RingSerializer extends TableSerializer {
  public static final int IDENTIFIER = 717_004;
  private static final int FORMAT = 1;

  public RingSerializer(ExtendedActorSystem system) {
    super(system, FORMAT, FORMAT, true);
    entry("ChunkLetter", RingLink.ChunkLetter.class, (out, m) -> {
      putRef(out, m.recipient());
      putHead(out, m.step(), m.bucket(), m.phase(), m.examples(), m.leaving());
    }, in -> new RingLink.ChunkLetter(getRef(in), in.getLong(), in.getInt(), in.getInt(), in.getInt(),
        in.getBoolean()));
    entry("ChunkArrived", RingLink.ChunkArrived.class, (out, m) -> {
      putHead(out, m.step(), m.bucket(), m.phase(), m.examples(), m.leaving());
      out.putFloats(m.values());
    }, in -> new RingLink.ChunkArrived(in.getLong(), in.getInt(), in.getInt(), in.getInt(), in.getBoolean(),
        in.getFloats()));
    entry("Hello", RingLink.Hello.class, (out, m) -> {
      out.putString(m.trainerId());
      putRef(out, m.trainer());
      out.putByte(m.bulk() == null ? (byte) 0 : 1);
      if (m.bulk() != null) {
        out.putString(m.bulk().host());
        out.putInt(m.bulk().port());
      }
    }, in -> new RingLink.Hello(in.getString(), getRef(in),
        in.getBoolean() ? new BulkAddress(in.getString(), in.getInt()) : null));
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  private static void putHead(Out out, long step, int bucket, int phase, int examples, boolean leaving) {
    out.putLong(step);
    out.putInt(bucket);
    out.putInt(phase);
    out.putInt(examples);
    out.putByte(leaving ? (byte) 1 : 0);
  }
}
