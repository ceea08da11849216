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
  private static final int FORMAT = 2;

  public RingSerializer(ExtendedActorSystem system) {
    super(system, FORMAT, FORMAT, true);
    entry("ChunkLetter", RingLink.ChunkLetter.class, (out, m) -> {
      putRef(out, m.recipient());
      putHead(out, m.epoch(), m.step(), m.bucket(), m.phase(), m.examples(), m.leaving(), m.marks());
    }, in -> new RingLink.ChunkLetter(getRef(in), in.getLong(), in.getLong(), in.getInt(), in.getInt(), in.getInt(),
        in.getBoolean(), getLongs(in)));
    entry("ChunkArrived", RingLink.ChunkArrived.class, (out, m) -> {
      putHead(out, m.epoch(), m.step(), m.bucket(), m.phase(), m.examples(), m.leaving(), m.marks());
      out.putFloats(m.values());
    }, in -> {
      long epoch = in.getLong();
      long step = in.getLong();
      int bucket = in.getInt();
      int phase = in.getInt();
      int examples = in.getInt();
      boolean leaving = in.getBoolean();
      long[] marks = getLongs(in);
      return new RingLink.ChunkArrived(epoch, step, bucket, phase, examples, leaving, in.getFloats(), marks);
    });
    entry("Sync", RingLink.Sync.class, (out, m) -> {
      out.putLong(m.epoch());
      out.putString(m.trainerId());
      out.putLong(m.lastStep());
      out.putByte(m.hasReplica() ? (byte) 1 : 0);
    }, in -> new RingLink.Sync(in.getLong(), in.getString(), in.getLong(), in.getBoolean()));
    entry("TransferPart", RingLink.TransferPart.class, (out, m) -> {
      out.putLong(m.epoch());
      out.putLong(m.step());
      out.putInt(m.index());
      out.putFloats(m.values());
    }, in -> new RingLink.TransferPart(in.getLong(), in.getLong(), in.getInt(), in.getFloats()));
    entry("PartLetter", RingLink.PartLetter.class, (out, m) -> {
      putRef(out, m.recipient());
      out.putLong(m.epoch());
      out.putLong(m.step());
      out.putInt(m.index());
    }, in -> new RingLink.PartLetter(getRef(in), in.getLong(), in.getLong(), in.getInt()));
    entry("TransferEnd", RingLink.TransferEnd.class, (out, m) -> {
      out.putLong(m.epoch());
      out.putLong(m.step());
      out.putInt(m.parts());
      out.putLong(m.examplesApplied());
      out.putLong(m.updates());
      out.putByte(m.leaving() ? (byte) 1 : 0);
      out.putStrings(m.markTrainers());
      putLongs(out, m.marks());
    }, in -> new RingLink.TransferEnd(in.getLong(), in.getLong(), in.getInt(), in.getLong(), in.getLong(),
        in.getBoolean(), in.getStrings(), getLongs(in)));
    entry("LeavesAfter", RingLink.LeavesAfter.class, (out, m) -> {
      out.putString(m.trainerId());
      out.putLong(m.step());
    }, in -> new RingLink.LeavesAfter(in.getString(), in.getLong()));
    entry("AppliedUpTo", RingLink.AppliedUpTo.class, (out, m) -> {
      out.putString(m.trainerId());
      out.putLong(m.step());
    }, in -> new RingLink.AppliedUpTo(in.getString(), in.getLong()));
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

  private static void putHead(Out out, long epoch, long step, int bucket, int phase, int examples, boolean leaving,
      long[] marks) {
    out.putLong(epoch);
    out.putLong(step);
    out.putInt(bucket);
    out.putInt(phase);
    out.putInt(examples);
    out.putByte(leaving ? (byte) 1 : 0);
    putLongs(out, marks);
  }

  /** Task marks: a ring of a few members sends a few of them, so a count field above that is garbage. */
  private static final int MAX_LONGS = 1 << 16;

  private static void putLongs(Out out, long[] a) {
    out.putInt(a.length);
    for (long v : a) out.putLong(v);
  }

  private static long[] getLongs(In in) {
    int n = in.getInt();
    if (n < 0 || n > MAX_LONGS) throw new IllegalArgumentException("a ring message with " + n + " marks");
    long[] a = new long[n];
    for (int i = 0; i < n; i++) a[i] = in.getLong();
    return a;
  }
}
