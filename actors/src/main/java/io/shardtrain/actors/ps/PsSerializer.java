package io.shardtrain.actors.ps;

import akka.actor.ExtendedActorSystem;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.javadsl.Adapter;
import akka.pattern.StatusReply;
import akka.serialization.SerializerWithStringManifest;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.GetStats;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.Skipped;
import io.shardtrain.actors.ps.BlockProtocol.Stale;
import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import io.shardtrain.actors.ps.BlockProtocol.UpdateMembership;
import io.shardtrain.actors.ps.BlockState.Contribution;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.io.NotSerializableException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Binary Akka serializer for the parameter server: every command, reply, event and the snapshot
 * state of {@link ParameterBlock}. Floats are written little-endian in bulk, strings as UTF-8 with
 * a length, actor references through {@link ActorRefResolver}, an optional value after a presence
 * byte; every payload starts with a format version byte (format 1 payloads are still read). Malformed bytes fail with a {@link NotSerializableException} naming the manifest.
 */
public final class PsSerializer extends SerializerWithStringManifest {
  /** Unique among the system's serializers; 0-40 are Akka's own, 717001 is the tensor serializer. */
  public static final int IDENTIFIER = 717_002;
  /** Format 6 dropped the bulk failure count from stats (pushes by bulk reference are gone). */
  private static final byte FORMAT = 6;
  /** Format 5 added the block's own reference to values, and the letters. */
  private static final byte FORMAT_5 = 5;
  /** Format 4 added task marks to pushes, gradient events and the state. */
  private static final byte FORMAT_4 = 4;
  /**
   * Format 3 added the examples a sync block applied (state and stats), the rollback generation to
   * pushes, and held checkpoints to the state.
   */
  private static final byte FORMAT_3 = 3;
  /** Format 2 added bulk references and addresses to pushes, pulls and values, and bulk counters to stats. */
  private static final byte FORMAT_2 = 2;
  /** Formats 1 to 5 are still read, so old journals and snapshots stay readable. */
  private static final byte FORMAT_1 = 1;

  static final String INITIALIZE = "Initialize";
  static final String PUSH = "PushGradient";
  static final String PULL = "Pull";
  static final String MEMBERSHIP = "UpdateMembership";
  static final String GET_STATS = "GetStats";
  static final String APPLIED = "Applied";
  static final String ACCEPTED = "Accepted";
  static final String DUPLICATE = "Duplicate";
  static final String STALE = "Stale";
  static final String SKIPPED = "Skipped";
  static final String VALUES = "BlockValues";
  static final String STATS = "BlockStats";
  static final String INITIALIZED = "Initialized";
  static final String RECEIVED = "GradientReceived";
  static final String GRADIENT_SKIPPED = "GradientSkipped";
  static final String STEP_APPLIED = "StepApplied";
  static final String GRADIENT_APPLIED = "GradientApplied";
  static final String MEMBERSHIP_UPDATED = "MembershipUpdated";
  static final String STATE = "State";
  static final String CHECKPOINT = "Checkpoint";
  static final String READ_CHECKPOINT = "ReadCheckpoint";
  static final String ROLL_BACK = "RollBack";
  static final String CAPTURED = "Captured";
  static final String ROLLED_BACK = "RolledBack";
  static final String CHECKPOINT_TAKEN = "CheckpointTaken";
  static final String ROLLED_BACK_TO = "RolledBackTo";
  static final String GET_TASK_MARK = "GetTaskMark";
  static final String TASK_PROGRESS = "TaskProgress";
  static final String PUSH_LETTER = "PushLetter";
  static final String ACK_LETTER = "AckLetter";
  static final String PULL_LETTER = "PullLetter";
  static final String VALUES_LETTER = "ValuesLetter";

  private final ExtendedActorSystem system;
  private volatile ActorRefResolver resolver;

  public PsSerializer(ExtendedActorSystem system) {
    this.system = system;
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object o) {
    if (o instanceof Initialize) return INITIALIZE;
    if (o instanceof PushGradient) return PUSH;
    if (o instanceof Pull) return PULL;
    if (o instanceof UpdateMembership) return MEMBERSHIP;
    if (o instanceof GetStats) return GET_STATS;
    if (o instanceof Applied) return APPLIED;
    if (o instanceof Accepted) return ACCEPTED;
    if (o instanceof Duplicate) return DUPLICATE;
    if (o instanceof Stale) return STALE;
    if (o instanceof Skipped) return SKIPPED;
    if (o instanceof BlockValues) return VALUES;
    if (o instanceof BlockStats) return STATS;
    if (o instanceof Initialized) return INITIALIZED;
    if (o instanceof GradientReceived) return RECEIVED;
    if (o instanceof GradientSkipped) return GRADIENT_SKIPPED;
    if (o instanceof StepApplied) return STEP_APPLIED;
    if (o instanceof GradientApplied) return GRADIENT_APPLIED;
    if (o instanceof BlockProtocol.GetTaskMark) return GET_TASK_MARK;
    if (o instanceof BlockProtocol.TaskProgress) return TASK_PROGRESS;
    if (o instanceof MembershipUpdated) return MEMBERSHIP_UPDATED;
    if (o instanceof BlockState) return STATE;
    if (o instanceof BlockProtocol.Checkpoint) return CHECKPOINT;
    if (o instanceof BlockProtocol.ReadCheckpoint) return READ_CHECKPOINT;
    if (o instanceof BlockProtocol.RollBack) return ROLL_BACK;
    if (o instanceof BlockProtocol.Captured) return CAPTURED;
    if (o instanceof BlockProtocol.RolledBack) return ROLLED_BACK;
    if (o instanceof BlockEvents.CheckpointTaken) return CHECKPOINT_TAKEN;
    if (o instanceof BlockEvents.RolledBackTo) return ROLLED_BACK_TO;
    if (o instanceof BlockProtocol.PushLetter) return PUSH_LETTER;
    if (o instanceof BlockProtocol.AckLetter) return ACK_LETTER;
    if (o instanceof BlockProtocol.PullLetter) return PULL_LETTER;
    if (o instanceof BlockProtocol.ValuesLetter) return VALUES_LETTER;
    throw new IllegalArgumentException("PsSerializer cannot serialize " + o.getClass().getName());
  }

  @Override
  public byte[] toBinary(Object o) {
    Out out = new Out(64);
    out.putByte(FORMAT);
    if (o instanceof Initialize m) {
      putSpec(out, m.spec());
      out.putFloats(m.values());
      putRef(out, m.replyTo());
    } else if (o instanceof PushGradient m) {
      putPush(out, m);
    } else if (o instanceof BlockProtocol.PushLetter m) {
      putRef(out, m.block());
      putAddress(out, m.replyBulk());
      // The floats travel as the letter's frame payload.
      putPush(out, m.push().withValues(new float[0]));
    } else if (o instanceof BlockProtocol.PullLetter m) {
      putRef(out, m.block());
      out.putLong(m.pull().minVersion());
      putAddress(out, m.pull().replyBulk());
      putRef(out, m.pull().replyTo());
    } else if (o instanceof BlockProtocol.AckLetter m) {
      putRef(out, m.replyTo());
      out.putString(manifest(m.ack()));
      out.putLong(m.ack().version());
    } else if (o instanceof BlockProtocol.ValuesLetter m) {
      putRef(out, m.replyTo());
      putValuesHead(out, m.values());
      putAddress(out, m.values().node());
      putOptionalRef(out, m.values().block());
    } else if (o instanceof Pull m) {
      out.putLong(m.minVersion());
      putAddress(out, m.replyBulk());
      putRef(out, m.replyTo());
    } else if (o instanceof UpdateMembership m) {
      out.putLong(m.epoch());
      out.putStrings(m.trainers());
      putRef(out, m.replyTo());
    } else if (o instanceof GetStats m) {
      putRef(out, m.replyTo());
    } else if (o instanceof BlockProtocol.PushAck m) {
      out.putLong(m.version());
    } else if (o instanceof BlockValues m) {
      putValuesHead(out, m);
      putPayload(out, m.values());
      putAddress(out, m.node());
      putOptionalRef(out, m.block());
    } else if (o instanceof BlockStats m) {
      out.putString(m.entityId());
      out.putByte(m.initialised() ? (byte) 1 : 0);
      for (long v : new long[] {m.version(), m.updates(), m.pushes(), m.duplicates(), m.rejectedStale(),
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
    } else if (o instanceof Initialized m) {
      putSpec(out, m.spec());
      out.putFloats(m.values());
    } else if (o instanceof GradientReceived m) {
      out.putString(m.trainerId());
      out.putLong(m.step());
      out.putFloat(m.weight());
      out.putFloats(m.values());
      putMark(out, m.mark());
    } else if (o instanceof GradientSkipped m) {
      out.putString(m.trainerId());
      out.putLong(m.step());
      putMark(out, m.mark());
    } else if (o instanceof StepApplied m) {
      out.putLong(m.step());
    } else if (o instanceof GradientApplied m) {
      out.putString(m.trainerId());
      out.putLong(m.step());
      out.putFloats(m.values());
      putMark(out, m.mark());
    } else if (o instanceof MembershipUpdated m) {
      out.putLong(m.epoch());
      out.putStrings(m.trainers());
    } else if (o instanceof BlockState s) {
      putState(out, s);
    } else if (o instanceof BlockProtocol.Checkpoint m) {
      out.putLong(m.step());
      out.putLong(m.keepFrom());
      putRef(out, m.replyTo());
    } else if (o instanceof BlockProtocol.ReadCheckpoint m) {
      out.putLong(m.step());
      out.putInt(m.part());
      putRef(out, m.replyTo());
    } else if (o instanceof BlockProtocol.RollBack m) {
      out.putLong(m.step());
      out.putLong(m.generation());
      putRef(out, m.replyTo());
    } else if (o instanceof BlockProtocol.Captured m) {
      out.putString(m.entityId());
      out.putLong(m.step());
      out.putLong(m.updates());
      out.putInt(m.slots());
    } else if (o instanceof BlockEvents.CheckpointTaken m) {
      out.putLong(m.step());
      out.putLong(m.keepFrom());
      putHeld(out, m.values(), m.slots(), m.updates());
    } else if (o instanceof BlockEvents.RolledBackTo m) {
      out.putLong(m.step());
      out.putLong(m.generation());
    } else if (o instanceof BlockProtocol.GetTaskMark m) {
      out.putInt(m.epoch());
      out.putInt(m.task());
      putRef(out, m.replyTo());
    } else if (o instanceof BlockProtocol.TaskProgress m) {
      out.putLong(m.offset());
      out.putLong(m.step());
    } else {
      throw new IllegalArgumentException("PsSerializer cannot serialize " + o.getClass().getName());
    }
    return out.toArray();
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    try {
      In in = new In(bytes);
      byte format = in.getByte();
      if (format < FORMAT_1 || format > FORMAT) {
        throw new IllegalArgumentException("unknown format version " + format + " (this code reads " + FORMAT_1
            + " to " + FORMAT + ")");
      }
      Object result = read(in, manifest, format);
      if (in.buf.hasRemaining()) {
        throw new IllegalArgumentException(in.buf.remaining() + " trailing bytes");
      }
      return result;
    } catch (NotSerializableException e) {
      throw e;
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      String why = e instanceof BufferUnderflowException ? "truncated" : e.getMessage();
      NotSerializableException ex = new NotSerializableException(
          "cannot read a '" + manifest + "' of " + bytes.length + " bytes: " + why);
      ex.initCause(e);
      throw ex;
    }
  }

  private Object read(In in, String manifest, byte format) throws NotSerializableException {
    boolean v1 = format == FORMAT_1;
    switch (manifest) {
      case INITIALIZE:
        return new Initialize(getSpec(in), in.getFloats(), getRef(in));
      case PUSH:
        return getPush(in, format);
      case PUSH_LETTER: {
        ActorRef<BlockProtocol.Command> block = getRef(in);
        BulkAddress replyBulk = getAddress(in);
        return new BlockProtocol.PushLetter(block, replyBulk, getPush(in, format).withValues(null));
      }
      case PULL_LETTER: {
        ActorRef<BlockProtocol.Command> block = getRef(in);
        return new BlockProtocol.PullLetter(block, new Pull(in.getLong(), getAddress(in), getRef(in)));
      }
      case ACK_LETTER: {
        ActorRef<StatusReply<BlockProtocol.PushAck>> replyTo = getRef(in);
        String kind = in.getString();
        // The ack follows as it does on its own, under its own manifest.
        if (!(read(in, kind, format) instanceof BlockProtocol.PushAck ack)) {
          throw new IllegalArgumentException("'" + kind + "' is no push acknowledgement");
        }
        return new BlockProtocol.AckLetter(replyTo, ack);
      }
      case VALUES_LETTER: {
        ActorRef<StatusReply<BlockValues>> replyTo = getRef(in);
        String parameter = in.getString();
        int index = in.getInt();
        int offset = in.getInt();
        long version = in.getLong();
        BulkAddress node = getAddress(in);
        return new BlockProtocol.ValuesLetter(replyTo,
            new BlockValues(parameter, index, offset, version, null, node, getOptionalRef(in)));
      }
      case PULL:
        return v1 ? new Pull(in.getLong(), getRef(in)) : new Pull(in.getLong(), getAddress(in), getRef(in));
      case MEMBERSHIP:
        return new UpdateMembership(in.getLong(), in.getStrings(), getRef(in));
      case GET_STATS:
        return new GetStats(getRef(in));
      case APPLIED:
        return new Applied(in.getLong());
      case ACCEPTED:
        return new Accepted(in.getLong());
      case DUPLICATE:
        return new Duplicate(in.getLong());
      case STALE:
        return new Stale(in.getLong());
      case SKIPPED:
        return new Skipped(in.getLong());
      case VALUES: {
        String parameter = in.getString();
        int index = in.getInt();
        int offset = in.getInt();
        long version = in.getLong();
        if (v1) return new BlockValues(parameter, index, offset, version, in.getFloats());
        float[] values = getPayload(in, format);
        BulkAddress node = getAddress(in);
        return new BlockValues(parameter, index, offset, version, values, node,
            format >= FORMAT_5 ? getOptionalRef(in) : null);
      }
      case STATS: {
        String entityId = in.getString();
        boolean initialised = in.getBoolean();
        long[] v = new long[13];
        for (int i = 0; i < v.length; i++) v[i] = in.getLong();
        List<String> waitingFor = in.getStrings();
        long epoch = in.getLong();
        int pendingPulls = in.getInt();
        long replayed = in.getLong();
        long[] b = v1 ? new long[2] : new long[] {in.getLong(), in.getLong()};
        if (!v1 && format <= FORMAT_5) in.getLong(); // bulk failures, no longer counted
        long examples = format > FORMAT_2 ? in.getLong() : 0;
        return new BlockStats(entityId, initialised, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
            v[10], v[11], v[12], waitingFor, epoch, pendingPulls, replayed, b[0], b[1], examples);
      }
      case INITIALIZED:
        return new Initialized(getSpec(in), in.getFloats());
      case RECEIVED:
        return new GradientReceived(in.getString(), in.getLong(), in.getFloat(), in.getFloats(),
            format >= FORMAT_4 ? getMark(in) : null);
      case GRADIENT_SKIPPED:
        return new GradientSkipped(in.getString(), in.getLong(), format >= FORMAT_4 ? getMark(in) : null);
      case STEP_APPLIED:
        return new StepApplied(in.getLong());
      case GRADIENT_APPLIED:
        return new GradientApplied(in.getString(), in.getLong(), in.getFloats(), format >= FORMAT_4 ? getMark(in) : null);
      case MEMBERSHIP_UPDATED:
        return new MembershipUpdated(in.getLong(), in.getStrings());
      case STATE:
        return getState(in, format);
      case CHECKPOINT:
        return new BlockProtocol.Checkpoint(in.getLong(), in.getLong(), getRef(in));
      case READ_CHECKPOINT:
        return new BlockProtocol.ReadCheckpoint(in.getLong(), in.getInt(), getRef(in));
      case ROLL_BACK:
        return new BlockProtocol.RollBack(in.getLong(), in.getLong(), getRef(in));
      case CAPTURED:
        return new BlockProtocol.Captured(in.getString(), in.getLong(), in.getLong(), in.getInt());
      case ROLLED_BACK:
        return new BlockProtocol.RolledBack(in.getLong());
      case CHECKPOINT_TAKEN: {
        long step = in.getLong();
        long keepFrom = in.getLong();
        BlockState.Held h = getHeld(in);
        return new BlockEvents.CheckpointTaken(step, keepFrom, h.values(), h.slots(), h.updates());
      }
      case ROLLED_BACK_TO:
        return new BlockEvents.RolledBackTo(in.getLong(), in.getLong());
      case GET_TASK_MARK:
        return new BlockProtocol.GetTaskMark(in.getInt(), in.getInt(), getRef(in));
      case TASK_PROGRESS:
        return new BlockProtocol.TaskProgress(in.getLong(), in.getLong());
      default:
        throw new NotSerializableException("unknown manifest '" + manifest + "' for PsSerializer");
    }
  }

  // --- composite values

  private void putPush(Out out, PushGradient m) {
    out.putString(m.trainerId());
    out.putLong(m.step());
    out.putLong(m.baseVersion());
    out.putLong(m.membershipEpoch());
    out.putFloat(m.weight());
    putPayload(out, m.values());
    out.putLong(m.generation());
    putMark(out, m.mark());
    putRef(out, m.replyTo());
  }

  private PushGradient getPush(In in, byte format) {
    String trainer = in.getString();
    long step = in.getLong();
    long base = in.getLong();
    long epoch = in.getLong();
    float weight = in.getFloat();
    if (format == FORMAT_1) return new PushGradient(trainer, step, base, epoch, weight, in.getFloats(), getRef(in));
    float[] values = getPayload(in, format);
    long generation = format >= FORMAT_3 ? in.getLong() : 0;
    TaskMark mark = format >= FORMAT_4 ? getMark(in) : null;
    return new PushGradient(trainer, step, base, epoch, weight, values, generation, mark, getRef(in));
  }

  private static void putValuesHead(Out out, BlockValues m) {
    out.putString(m.parameter());
    out.putInt(m.index());
    out.putInt(m.offset());
    out.putLong(m.version());
  }

  /**
   * Floats after a kind byte: 0 says inline. Formats 2 to 5 also had kinds 1 and 2, a bulk
   * reference instead of the floats; only messages carried them, and no node sends them now.
   */
  private static void putPayload(Out out, float[] values) {
    out.putByte((byte) 0);
    out.putFloats(values);
  }

  private static float[] getPayload(In in, byte format) {
    byte kind = in.getByte();
    if (kind != 0) {
      throw new IllegalArgumentException("payload kind " + kind + " (a bulk reference, format " + format
          + ") is no longer read: the sending node runs an older version");
    }
    return in.getFloats();
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

  private static void putSpec(Out out, BlockSpec spec) {
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
  }

  private static BlockSpec getSpec(In in) {
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
    return new BlockSpec(parameter, index, offset, length, optimizer, schedule, lr, mode, in.getLong());
  }

  private static void putState(Out out, BlockState s) {
    out.putByte(s.spec == null ? (byte) 0 : 1);
    if (s.spec != null) {
      putSpec(out, s.spec);
      out.putFloats(s.values);
      float[][] slots = s.optimizerState.slots();
      out.putInt(slots.length);
      for (float[] slot : slots) out.putFloats(slot);
      out.putLong(s.optimizerState.updates());
    }
    out.putLong(s.version);
    out.putLong(s.membershipEpoch());
    out.putStrings(s.members());
    out.putInt(s.pending().size());
    for (Contribution c : s.pending()) {
      out.putString(c.trainerId());
      out.putFloat(c.weight());
      out.putFloats(c.values());
    }
    out.putInt(s.lastSteps.size());
    for (Map.Entry<String, Long> e : s.lastSteps.entrySet()) {
      out.putString(e.getKey());
      out.putLong(e.getValue());
    }
    out.putLong(s.examplesApplied);
    out.putInt(s.checkpoints.size());
    for (Map.Entry<Long, BlockState.Held> e : s.checkpoints.entrySet()) {
      out.putLong(e.getKey());
      putHeld(out, e.getValue().values(), e.getValue().slots(), e.getValue().updates());
    }
    out.putLong(s.generation);
    Map<Long, BlockProtocol.TaskProgress> marks = s.taskMarks();
    out.putInt(marks.size());
    for (Map.Entry<Long, BlockProtocol.TaskProgress> e : marks.entrySet()) {
      out.putLong(e.getKey());
      out.putLong(e.getValue().offset());
      out.putLong(e.getValue().step());
    }
  }

  /** An optional task mark: a presence byte, then epoch, task and offset. */
  private static void putMark(Out out, TaskMark m) {
    out.putByte(m == null ? (byte) 0 : 1);
    if (m == null) return;
    out.putInt(m.epoch());
    out.putInt(m.task());
    out.putLong(m.offset());
  }

  private static TaskMark getMark(In in) {
    return in.getBoolean() ? new TaskMark(in.getInt(), in.getInt(), in.getLong()) : null;
  }

  private static void putHeld(Out out, float[] values, float[][] slots, long updates) {
    out.putFloats(values);
    out.putInt(slots.length);
    for (float[] slot : slots) out.putFloats(slot);
    out.putLong(updates);
  }

  private static BlockState.Held getHeld(In in) {
    float[] values = in.getFloats();
    float[][] slots = new float[in.getCount(4)][];
    for (int i = 0; i < slots.length; i++) slots[i] = in.getFloats();
    return new BlockState.Held(values, slots, in.getLong());
  }

  private static BlockState getState(In in, byte format) {
    BlockSpec spec = null;
    float[] values = null;
    float[][] slots = null;
    long updates = 0;
    if (in.getBoolean()) {
      spec = getSpec(in);
      values = in.getFloats();
      slots = new float[in.getCount(4)][];
      for (int i = 0; i < slots.length; i++) slots[i] = in.getFloats();
      updates = in.getLong();
    }
    long version = in.getLong();
    long epoch = in.getLong();
    List<String> members = in.getStrings();
    int n = in.getCount(12);
    List<Contribution> pending = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      pending.add(new Contribution(in.getString(), in.getFloat(), in.getFloats()));
    }
    int m = in.getCount(12);
    Map<String, Long> lastSteps = new TreeMap<>();
    for (int i = 0; i < m; i++) lastSteps.put(in.getString(), in.getLong());
    // Older snapshots did not count examples (the count restarts at 0) and held no checkpoints.
    if (format < FORMAT_3) {
      return BlockState.restore(spec, values, slots, updates, version, epoch, members, pending, lastSteps, 0);
    }
    long examples = in.getLong();
    BlockState s = BlockState.restore(spec, values, slots, updates, version, epoch, members, pending, lastSteps, examples);
    int k = in.getCount(24);
    TreeMap<Long, BlockState.Held> checkpoints = new TreeMap<>();
    for (int i = 0; i < k; i++) checkpoints.put(in.getLong(), getHeld(in));
    BlockState.restore(s, checkpoints, in.getLong());
    if (format < FORMAT_4) return s;
    int n2 = in.getCount(24);
    Map<Long, BlockProtocol.TaskProgress> marks = new TreeMap<>();
    for (int i = 0; i < n2; i++) marks.put(in.getLong(), new BlockProtocol.TaskProgress(in.getLong(), in.getLong()));
    return BlockState.restoreMarks(s, marks);
  }

  private void putRef(Out out, ActorRef<?> ref) {
    out.putString(resolver().toSerializationFormat(ref));
  }

  private <T> ActorRef<T> getRef(In in) {
    return resolver().resolveActorRef(in.getString());
  }

  private void putOptionalRef(Out out, ActorRef<?> ref) {
    out.putByte(ref == null ? (byte) 0 : 1);
    if (ref != null) putRef(out, ref);
  }

  private <T> ActorRef<T> getOptionalRef(In in) {
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

  // --- little-endian primitives

  private static final class Out {
    private ByteBuffer buf;

    Out(int capacity) {
      buf = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    private void ensure(long extra) {
      if (buf.remaining() >= extra) return;
      long needed = (long) buf.position() + extra;
      if (needed > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("message too large: " + needed + " bytes");
      int capacity = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, 2L * buf.capacity()));
      ByteBuffer bigger = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
      buf.flip();
      bigger.put(buf);
      buf = bigger;
    }

    void putByte(byte b) {
      ensure(1);
      buf.put(b);
    }

    void putInt(int v) {
      ensure(4);
      buf.putInt(v);
    }

    void putLong(long v) {
      ensure(8);
      buf.putLong(v);
    }

    void putFloat(float v) {
      ensure(4);
      buf.putFloat(v);
    }

    void putString(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      ensure(4L + b.length);
      buf.putInt(b.length);
      buf.put(b);
    }

    void putStrings(List<String> list) {
      putInt(list.size());
      for (String s : list) putString(s);
    }

    void putFloats(float[] a) {
      ensure(4L + 4L * a.length);
      buf.putInt(a.length);
      buf.asFloatBuffer().put(a);
      buf.position(buf.position() + 4 * a.length);
    }

    byte[] toArray() {
      return Arrays.copyOf(buf.array(), buf.position());
    }
  }

  private static final class In {
    final ByteBuffer buf;

    In(byte[] bytes) {
      buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    byte getByte() {
      return buf.get();
    }

    boolean getBoolean() {
      byte b = buf.get();
      if (b != 0 && b != 1) throw new IllegalArgumentException("boolean byte " + b + " at " + (buf.position() - 1));
      return b == 1;
    }

    int getInt() {
      return buf.getInt();
    }

    long getLong() {
      return buf.getLong();
    }

    float getFloat() {
      return buf.getFloat();
    }

    /** A count of items of at least {@code minBytes} each, checked against what is left. */
    int getCount(int minBytes) {
      int n = buf.getInt();
      if (n < 0 || (long) n * minBytes > buf.remaining()) {
        throw new IllegalArgumentException("count " + n + " at " + (buf.position() - 4) + " exceeds the "
            + buf.remaining() + " bytes left");
      }
      return n;
    }

    String getString() {
      int n = getCount(1);
      byte[] b = new byte[n];
      buf.get(b);
      return new String(b, StandardCharsets.UTF_8);
    }

    List<String> getStrings() {
      int n = getCount(4);
      List<String> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) out.add(getString());
      return out;
    }

    float[] getFloats() {
      int n = getCount(4);
      float[] a = new float[n];
      buf.asFloatBuffer().get(a);
      buf.position(buf.position() + 4 * n);
      return a;
    }
  }
}
