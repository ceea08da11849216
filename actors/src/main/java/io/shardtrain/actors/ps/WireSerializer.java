package io.shardtrain.actors.ps;

import akka.actor.ExtendedActorSystem;
import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockLetters.AckLetter;
import io.shardtrain.actors.ps.BlockLetters.PublishLetter;
import io.shardtrain.actors.ps.BlockLetters.PullLetter;
import io.shardtrain.actors.ps.BlockLetters.PushLetter;
import io.shardtrain.actors.ps.BlockLetters.ValuesLetter;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Captured;
import io.shardtrain.actors.ps.BlockProtocol.Checkpoint;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.GetStats;
import io.shardtrain.actors.ps.BlockProtocol.GetTaskMark;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.Publish;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.ReadCheckpoint;
import io.shardtrain.actors.ps.BlockProtocol.RollBack;
import io.shardtrain.actors.ps.BlockProtocol.RolledBack;
import io.shardtrain.actors.ps.BlockProtocol.Skipped;
import io.shardtrain.actors.ps.BlockProtocol.Stale;
import io.shardtrain.actors.ps.BlockProtocol.TaskProgress;
import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import io.shardtrain.actors.ps.BlockProtocol.UpdateMembership;
import io.shardtrain.actors.ps.BlockProtocol.ValuesWanted;
import io.shardtrain.actors.ps.BlockProtocol.WithValues;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.WirePrecision;
import java.util.List;
import java.util.function.LongFunction;

/**
 * Binary serializer of the parameter server's wire messages: commands, acknowledgements, values,
 * stats and bulk letters. A push's gradient travels in the precision the push names (fp32 or bf16,
 * a byte before the values) and is read back as fp32. They are never stored, so there is one format and no older layouts: a
 * node reads only what a node of its own version writes, and the format byte names a sender that
 * differs. Each message is one {@link #entry} below.
 */
public final class WireSerializer extends TableSerializer {
  /**
   * Unique among the system's serializers: 0-40 are Akka's own, 717001 the tensor serializer,
   * 717002 the {@link JournalSerializer}.
   */
  public static final int IDENTIFIER = 717_003;
  private static final int FORMAT = 6;

  public WireSerializer(ExtendedActorSystem system) {
    super(system, FORMAT, FORMAT, true);
    entry("Initialize", Initialize.class, (out, m) -> {
      putSpec(out, m.spec());
      out.putFloats(m.values());
      putRef(out, m.replyTo());
    }, in -> new Initialize(getSpec(in, true), in.getFloats(), getRef(in)));
    entry("Resume", BlockProtocol.Resume.class, (out, m) -> {
      putResumed(out, m.state());
      putRef(out, m.replyTo());
    }, in -> new BlockProtocol.Resume(getResumed(in), getRef(in)));
    entry("PushGradient", PushGradient.class, this::putPush, this::getPush);
    entry("Pull", Pull.class, (out, m) -> {
      out.putLong(m.minVersion());
      putAddress(out, m.replyBulk());
      putRef(out, m.replyTo());
    }, in -> new Pull(in.getLong(), getAddress(in), getRef(in)));
    entry("UpdateMembership", UpdateMembership.class, (out, m) -> {
      out.putLong(m.epoch());
      out.putStrings(m.trainers());
      putRef(out, m.replyTo());
    }, in -> new UpdateMembership(in.getLong(), in.getStrings(), getRef(in)));
    entry("Publish", Publish.class, (out, m) -> {
      out.putString(m.trainerId());
      out.putLong(m.step());
      out.putLong(m.ringEpoch());
      out.putLong(m.examples());
      out.putFloats(m.values());
      putRef(out, m.replyTo());
    }, in -> new Publish(in.getString(), in.getLong(), in.getLong(), in.getLong(), in.getFloats(), getRef(in)));
    entry("GetStats", GetStats.class, (out, m) -> putRef(out, m.replyTo()), in -> new GetStats(getRef(in)));
    entry("Retire", BlockProtocol.Retire.class, (out, m) -> { }, in -> new BlockProtocol.Retire());
    entry("Checkpoint", Checkpoint.class, (out, m) -> {
      out.putLong(m.step());
      out.putLong(m.keepFrom());
      putRef(out, m.replyTo());
    }, in -> new Checkpoint(in.getLong(), in.getLong(), getRef(in)));
    entry("ReadCheckpoint", ReadCheckpoint.class, (out, m) -> {
      out.putLong(m.step());
      out.putInt(m.part());
      putRef(out, m.replyTo());
    }, in -> new ReadCheckpoint(in.getLong(), in.getInt(), getRef(in)));
    entry("RollBack", RollBack.class, (out, m) -> {
      out.putLong(m.step());
      out.putLong(m.generation());
      putRef(out, m.replyTo());
    }, in -> new RollBack(in.getLong(), in.getLong(), getRef(in)));
    entry("GetTaskMark", GetTaskMark.class, (out, m) -> {
      out.putInt(m.epoch());
      out.putInt(m.task());
      putRef(out, m.replyTo());
    }, in -> new GetTaskMark(in.getInt(), in.getInt(), getRef(in)));

    ack("Applied", Applied.class, Applied::new);
    ack("Accepted", Accepted.class, Accepted::new);
    ack("Duplicate", Duplicate.class, Duplicate::new);
    ack("Stale", Stale.class, Stale::new);
    ack("Skipped", Skipped.class, Skipped::new);
    ack("RolledBack", RolledBack.class, RolledBack::new);
    entry("WithValues", WithValues.class, (out, m) -> {
      putPlainAck(out, m.ack());
      writeFields(out, m.values());
    }, in -> new WithValues(getPlainAck(in), (BlockValues) readFields(in, "BlockValues")));
    entry("BlockValues", BlockValues.class, (out, m) -> {
      putValuesHead(out, m);
      out.putFloats(m.values());
      putAddress(out, m.node());
      putOptionalRef(out, m.block());
    }, in -> {
      String parameter = in.getString();
      int index = in.getInt();
      int offset = in.getInt();
      long version = in.getLong();
      return new BlockValues(parameter, index, offset, version, in.getFloats(), getAddress(in), getOptionalRef(in));
    });
    entry("BlockStats", BlockStats.class, WireSerializer::putStats, WireSerializer::getStats);
    entry("Captured", Captured.class, (out, m) -> {
      out.putString(m.entityId());
      out.putLong(m.step());
      out.putLong(m.updates());
      out.putInt(m.slots());
      out.putLong(m.examples());
    }, in -> new Captured(in.getString(), in.getLong(), in.getLong(), in.getInt(), in.getLong()));
    entry("TaskProgress", TaskProgress.class, (out, m) -> {
      out.putLong(m.offset());
      out.putLong(m.step());
    }, in -> new TaskProgress(in.getLong(), in.getLong()));

    // Letters: their floats travel as the bulk frame's payload, not here.
    entry("PushLetter", PushLetter.class, (out, m) -> {
      putRef(out, m.block());
      putAddress(out, m.replyBulk());
      putPush(out, m.push().withValues(new float[0]));
    }, in -> {
      ActorRef<BlockProtocol.Command> block = getRef(in);
      BulkAddress replyBulk = getAddress(in);
      return new PushLetter(block, replyBulk, getPush(in).withValues(null));
    });
    entry("PullLetter", PullLetter.class, (out, m) -> {
      putRef(out, m.block());
      out.putLong(m.pull().minVersion());
      putAddress(out, m.pull().replyBulk());
      putRef(out, m.pull().replyTo());
    }, in -> {
      ActorRef<BlockProtocol.Command> block = getRef(in);
      return new PullLetter(block, new Pull(in.getLong(), getAddress(in), getRef(in)));
    });
    entry("PublishLetter", PublishLetter.class, (out, m) -> {
      putRef(out, m.block());
      Publish p = m.publish();
      out.putString(p.trainerId());
      out.putLong(p.step());
      out.putLong(p.ringEpoch());
      out.putLong(p.examples());
      putRef(out, p.replyTo());
    }, in -> new PublishLetter(getRef(in),
        new Publish(in.getString(), in.getLong(), in.getLong(), in.getLong(), null, getRef(in))));
    entry("AckLetter", AckLetter.class, (out, m) -> {
      putRef(out, m.replyTo());
      boolean withValues = m.ack() instanceof WithValues;
      putPlainAck(out, withValues ? ((WithValues) m.ack()).ack() : m.ack());
      out.putByte(withValues ? (byte) 1 : 0);
      if (withValues) {
        BlockValues v = ((WithValues) m.ack()).values();
        putValuesHead(out, v);
        putAddress(out, v.node());
        putOptionalRef(out, v.block());
      }
    }, in -> {
      ActorRef<StatusReply<PushAck>> replyTo = getRef(in);
      PushAck ack = getPlainAck(in);
      if (!in.getBoolean()) return new AckLetter(replyTo, ack);
      String parameter = in.getString();
      int index = in.getInt();
      int offset = in.getInt();
      long version = in.getLong();
      BulkAddress node = getAddress(in);
      return new AckLetter(replyTo, new WithValues(ack, new BlockValues(parameter, index, offset, version, null, node,
          getOptionalRef(in))));
    });
    entry("ValuesLetter", ValuesLetter.class, (out, m) -> {
      putRef(out, m.replyTo());
      putValuesHead(out, m.values());
      putAddress(out, m.values().node());
      putOptionalRef(out, m.values().block());
    }, in -> {
      ActorRef<StatusReply<BlockValues>> replyTo = getRef(in);
      String parameter = in.getString();
      int index = in.getInt();
      int offset = in.getInt();
      long version = in.getLong();
      BulkAddress node = getAddress(in);
      return new ValuesLetter(replyTo, new BlockValues(parameter, index, offset, version, null, node,
          getOptionalRef(in)));
    });
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  /** An acknowledgement: the block's version, nothing else. */
  private <T extends PushAck> void ack(String manifest, Class<T> type, LongFunction<T> create) {
    entry(manifest, type, (out, m) -> out.putLong(m.version()), in -> create.apply(in.getLong()));
  }

  /** An acknowledgement nested in another message: under its own manifest, as it travels on its own. */
  private void putPlainAck(Out out, PushAck ack) {
    out.putString(manifest(ack));
    writeFields(out, ack);
  }

  private PushAck getPlainAck(In in) {
    String kind = in.getString();
    if (!(readFields(in, kind) instanceof PushAck ack) || ack instanceof WithValues) {
      throw new IllegalArgumentException("'" + kind + "' is no plain push acknowledgement");
    }
    return ack;
  }

  private void putPush(Out out, PushGradient m) {
    out.putString(m.trainerId());
    out.putLong(m.step());
    out.putLong(m.baseVersion());
    out.putLong(m.membershipEpoch());
    out.putFloat(m.weight());
    out.putByte(m.precision().code());
    out.putFloats(m.values(), m.precision());
    out.putLong(m.generation());
    putMark(out, m.mark());
    putRef(out, m.replyTo());
    out.putByte(m.wanted() == null ? (byte) 0 : 1);
    if (m.wanted() != null) {
      out.putLong(m.wanted().minVersion());
      putAddress(out, m.wanted().replyBulk());
    }
  }

  private PushGradient getPush(In in) {
    String trainer = in.getString();
    long step = in.getLong();
    long base = in.getLong();
    long epoch = in.getLong();
    float weight = in.getFloat();
    WirePrecision precision = WirePrecision.ofCode(in.getByte());
    float[] values = in.getFloats(precision);
    long generation = in.getLong();
    TaskMark mark = getMark(in);
    ActorRef<StatusReply<PushAck>> replyTo = getRef(in);
    ValuesWanted wanted = in.getBoolean() ? new ValuesWanted(in.getLong(), getAddress(in)) : null;
    return new PushGradient(trainer, step, base, epoch, weight, values, generation, mark, replyTo, precision, wanted);
  }

  private static void putValuesHead(Out out, BlockValues m) {
    out.putString(m.parameter());
    out.putInt(m.index());
    out.putInt(m.offset());
    out.putLong(m.version());
  }

  private static void putAddress(Out out, BulkAddress address) {
    out.putByte(address == null ? (byte) 0 : 1);
    if (address != null) {
      out.putString(address.host());
      out.putInt(address.port());
    }
  }

  private static BulkAddress getAddress(In in) {
    return in.getBoolean() ? new BulkAddress(in.getString(), in.getInt()) : null;
  }

  private static void putStats(Out out, BlockStats m) {
    out.putString(m.entityId());
    out.putByte(m.initialised() ? (byte) 1 : 0);
    for (long v : new long[] {m.version(), m.updates(), m.pushes(), m.pulls(), m.duplicates(), m.rejectedStale(),
        m.rejectedNonFinite(), m.rejectedBadLength(), m.rejectedNotInitialised(), m.rejectedAhead(),
        m.rejectedMalformed(), m.skippedNonFinite(), m.pullTimeouts(), m.pendingStep()}) {
      out.putLong(v);
    }
    out.putStrings(m.waitingFor());
    out.putLong(m.membershipEpoch());
    out.putInt(m.pendingPulls());
    out.putLong(m.eventsReplayed());
    out.putLong(m.bulkPushes());
    out.putLong(m.bulkPulls());
    out.putLong(m.examplesApplied());
    out.putString(m.lastError());
    out.putLong(m.lastErrorAtMillis());
  }

  private static BlockStats getStats(In in) {
    String entityId = in.getString();
    boolean initialised = in.getBoolean();
    long[] v = new long[14];
    for (int i = 0; i < v.length; i++) v[i] = in.getLong();
    List<String> waitingFor = in.getStrings();
    long epoch = in.getLong();
    int pendingPulls = in.getInt();
    long replayed = in.getLong();
    long bulkPushes = in.getLong();
    long bulkPulls = in.getLong();
    long examplesApplied = in.getLong();
    return new BlockStats(entityId, initialised, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
        v[10], v[11], v[12], v[13], waitingFor, epoch, pendingPulls, replayed, bulkPushes, bulkPulls, examplesApplied,
        in.getString(), in.getLong());
  }
}
