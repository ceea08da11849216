package io.shardtrain.actors.ps;

import akka.actor.NoSerializationVerificationNeeded;
import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.WirePrecision;
import java.util.List;

/** The messages a {@link ParameterBlock} accepts and answers with. */
public final class BlockProtocol {
  private BlockProtocol() {}

  /** What a parameter block accepts. */
  public sealed interface Command {}

  /** Sets the block's spec and initial values; idempotent for the same spec. Replies with the version. */
  public record Initialize(BlockSpec spec, float[] values, ActorRef<StatusReply<Long>> replyTo) implements Command {}

  /**
   * Initialises the block as a resumed job's: at version {@code state.step()} with its values,
   * optimizer slots, update count and examples applied (a sync checkpoint's), held as the checkpoint
   * a rollback returns to. Idempotent like {@link Initialize}; replies with the version.
   */
  public record Resume(BlockEvents.Resumed state, ActorRef<StatusReply<Long>> replyTo) implements Command {}

  /**
   * A trainer's gradient for this block at {@code step}, computed on parameters of
   * {@code baseVersion}; {@code weight} is the number of examples behind it (sync mean weight).
   * {@code values} pass to the block, which journals them as they are: a sender in the same JVM
   * must not change the array afterwards ({@code values} is null only inside a {@link BlockLetters.PushLetter},
   * whose frame carries the floats).
   * {@code mark} says which examples are behind it (null: not said, as for a benchmark's pushes).
   * {@code precision} is how {@code values} travel to another node; the block only ever sees them
   * decoded to fp32. A bf16 push's sender rounds its values to bf16 first (with error feedback), so
   * a block in the same JVM, which gets the array itself, applies the same values as a remote one.
   * {@code wanted}: the block's values the sender wants with the acknowledgement (a pull that
   * travels with the push, saving a request and a reply), or null for the acknowledgement alone.
   */
  public record PushGradient(
      String trainerId,
      long step,
      long baseVersion,
      long membershipEpoch,
      float weight,
      float[] values,
      long generation,
      TaskMark mark,
      ActorRef<StatusReply<PushAck>> replyTo,
      WirePrecision precision,
      ValuesWanted wanted) implements Command {

    public PushGradient {
      if (precision == null) throw new IllegalArgumentException("a push needs a wire precision");
    }

    /** A push acknowledged without values. */
    public PushGradient(String trainerId, long step, long baseVersion, long membershipEpoch, float weight,
        float[] values, long generation, TaskMark mark, ActorRef<StatusReply<PushAck>> replyTo,
        WirePrecision precision) {
      this(trainerId, step, baseVersion, membershipEpoch, weight, values, generation, mark, replyTo, precision, null);
    }

    /** A push whose values travel as fp32. */
    public PushGradient(String trainerId, long step, long baseVersion, long membershipEpoch, float weight,
        float[] values, long generation, TaskMark mark, ActorRef<StatusReply<PushAck>> replyTo) {
      this(trainerId, step, baseVersion, membershipEpoch, weight, values, generation, mark, replyTo,
          WirePrecision.FP32);
    }

    /** A push without a task mark. */
    public PushGradient(String trainerId, long step, long baseVersion, long membershipEpoch, float weight,
        float[] values, long generation, ActorRef<StatusReply<PushAck>> replyTo) {
      this(trainerId, step, baseVersion, membershipEpoch, weight, values, generation, null, replyTo);
    }

    /** A push of generation 0 (no rollback yet), without a task mark. */
    public PushGradient(String trainerId, long step, long baseVersion, long membershipEpoch, float weight,
        float[] values, ActorRef<StatusReply<PushAck>> replyTo) {
      this(trainerId, step, baseVersion, membershipEpoch, weight, values, 0, replyTo);
    }

    /** This push with {@code floats} as its values (what a {@link BlockLetters.PushLetter} opens to). */
    public PushGradient withValues(float[] floats) {
      return new PushGradient(trainerId, step, baseVersion, membershipEpoch, weight, floats, generation, mark,
          replyTo, precision, wanted);
    }
  }

  /**
   * A pull that travels with a push: the block's values at version {@code minVersion} or later
   * come back with the acknowledgement ({@link WithValues}) when the block is there by the time it
   * acknowledges (a sync push under exact durability is acknowledged once its step is applied, an
   * async one once journaled); otherwise the acknowledgement comes alone and the sender pulls.
   * {@code replyBulk} is the sender's bulk address, as a {@link Pull}'s (null: none).
   */
  public record ValuesWanted(long minVersion, BulkAddress replyBulk) {
    public ValuesWanted {
      if (minVersion < 0) throw new IllegalArgumentException("wanted version must be >= 0, not " + minVersion);
    }
  }

  /**
   * All-reduce mode: a replica's values of this block after step {@code step} of ring epoch
   * {@code ringEpoch} (the membership epoch its ring was formed in), which had {@code examples}
   * examples applied in all; the block keeps them as its version {@code step}, for pulls
   * (evaluation, save, a trainer that joins) and recovery. An older step, or the same step from the
   * same or an older ring, is answered with the block's version and changes nothing: members of one
   * ring publish the same bits, but a ring re-formed after a member died redoes the step without
   * that member's batch, and its values are the ones the survivors go on from. Answers the block's
   * version.
   */
  public record Publish(String trainerId, long step, long ringEpoch, long examples, float[] values,
      ActorRef<StatusReply<Long>> replyTo) implements Command {
    /** This publication with {@code floats} as its values (what a {@link BlockLetters.PublishLetter} opens to). */
    public Publish withValues(float[] floats) {
      return new Publish(trainerId, step, ringEpoch, examples, floats, replyTo);
    }
  }

  /**
   * The examples behind a push: data task {@code task} of epoch {@code epoch} up to reader offset
   * {@code offset} (a trainer reads a task in order, so the push's batch ends there and every
   * example before it went out in its earlier pushes).
   */
  public record TaskMark(int epoch, int task, long offset) {
    public TaskMark {
      if (epoch < 0 || task < 0 || offset < 1) {
        throw new IllegalArgumentException("task mark needs epoch >= 0, task >= 0 and offset >= 1, not " + epoch
            + "/" + task + "@" + offset);
      }
    }
  }

  /**
   * How far this block has the examples of task {@code task} of epoch {@code epoch}: the master
   * asks every block when the task's trainer left before reporting its last steps.
   */
  public record GetTaskMark(int epoch, int task, ActorRef<StatusReply<TaskProgress>> replyTo) implements Command {}

  /**
   * The answer to {@link GetTaskMark}: the block holds the task's examples up to {@code offset}
   * (0: none), the last of them pushed at {@code step} (0: none).
   */
  public record TaskProgress(long offset, long step) {}

  /**
   * The block's values once its version is at least {@code minVersion}. With a {@code replyBulk}
   * address, a block on another node whose bulk channel is on replies by a {@link BlockLetters.ValuesLetter}
   * sent there.
   */
  public record Pull(long minVersion, BulkAddress replyBulk, ActorRef<StatusReply<BlockValues>> replyTo)
      implements Command {

    /** A pull answered inline. */
    public Pull(long minVersion, ActorRef<StatusReply<BlockValues>> replyTo) {
      this(minVersion, null, replyTo);
    }
  }

  /** The trainers a sync step waits for, as of membership {@code epoch}; replies with the epoch in force. */
  public record UpdateMembership(long epoch, List<String> trainers, ActorRef<StatusReply<Long>> replyTo)
      implements Command {
    public UpdateMembership {
      trainers = trainers == null ? null : List.copyOf(trainers);
    }
  }

  /** Counters and the barrier's state, for inspection. */
  public record GetStats(ActorRef<BlockStats> replyTo) implements Command {}

  /**
   * Sync: capture values, optimizer slots and update count at version {@code step}: at once when
   * the block is there, else the moment it applies that step (an error if it is already past it).
   * Checkpoints older than {@code keepFrom} are dropped. Checkpoint durability journals the capture.
   */
  public record Checkpoint(long step, long keepFrom, ActorRef<StatusReply<Captured>> replyTo) implements Command {}

  /** Part {@code part} of the held checkpoint at {@code step}: 0 = values, k >= 1 = optimizer slot k-1. */
  public record ReadCheckpoint(long step, int part, ActorRef<StatusReply<BlockValues>> replyTo) implements Command {}

  /**
   * Checkpoint durability: return to the held checkpoint at {@code step}, and from now on accept
   * pushes of {@code generation} or later only (older ones belong to the abandoned timeline).
   * Replies with the version.
   */
  public record RollBack(long step, long generation, ActorRef<StatusReply<Long>> replyTo) implements Command {}

  /**
   * The block holds its checkpoint at {@code step}: {@code slots} optimizer slots after {@code updates}
   * updates, which applied {@code examples} examples.
   */
  public record Captured(String entityId, long step, long updates, int slots, long examples) {}

  /**
   * Cluster Sharding moves this block (a rebalance, or its node leaves): the block answers its
   * waiting pulls with an error, so their trainers ask again at once and reach it on its new node
   * instead of waiting out their pull timeout, and stops. Sent by the local shard, never remote.
   */
  public enum HandOff implements Leave, NoSerializationVerificationNeeded { INSTANCE }

  /** The block leaves this node's memory as on a hand-off; it recovers where it is next asked for. */
  public sealed interface Leave extends Command permits HandOff, Retire {}

  /**
   * The block's job finished: the block passivates (sharding's own passivation is off, since a
   * sync block must not leave in the middle of a step).
   */
  public record Retire() implements Leave {}

  record PullTimedOut(long pullId) implements Command {}

  enum BarrierCheck implements Command { INSTANCE }

  /** Whether a block no trainer takes part in heard nothing for {@code shardtrain.ps.idle-passivation}. */
  enum IdleCheck implements Command { INSTANCE }

  /** Journal the async pushes that arrived while the last write was in flight, as one write. */
  enum WriteGroup implements Command { INSTANCE }

  /** How a block acknowledged a push; {@code version} is the block's version after it. */
  public sealed interface PushAck {
    long version();
  }

  /** The gradient (and, in sync mode, the step it completed) was applied. */
  public record Applied(long version) implements PushAck {}

  /** Sync: the gradient is journaled and waits for the step's other trainers. */
  public record Accepted(long version) implements PushAck {}

  /** This (trainer, step) was already received; nothing was applied again. */
  public record Duplicate(long version) implements PushAck {}

  /** Async: the gradient's base version lags the block by more than the staleness bound; not applied. */
  public record Stale(long version) implements PushAck {}

  /** The gradient held NaN or an infinity and the policy is {@code skip}: not applied, counted. */
  public record Skipped(long version) implements PushAck {}

  /**
   * Checkpoint durability: the push is of a generation before the block's last rollback, or is
   * ahead of a block that recovered an older checkpoint; not applied. The master's rollback tells
   * the trainer where to continue.
   */
  public record RolledBack(long version) implements PushAck {}

  /**
   * {@code ack}, with the block's {@code values} at the acknowledged version, which a push's
   * {@link ValuesWanted} asked for; read-only, as a pull's.
   */
  public record WithValues(PushAck ack, BlockValues values) implements PushAck {
    public WithValues {
      if (ack == null || values == null || ack instanceof WithValues) {
        throw new IllegalArgumentException("values go with one plain acknowledgement");
      }
      if (values.version() != ack.version()) {
        throw new IllegalArgumentException("values of version " + values.version() + " with an acknowledgement of "
            + ack.version());
      }
    }

    @Override
    public long version() {
      return ack.version();
    }
  }

  /**
   * The block's values at {@code version}; read-only: in the block's own JVM the array is the one
   * the block holds for that version, so a receiver copies it before changing it. {@code values}
   * is null only inside a {@link BlockLetters.ValuesLetter}, whose frame carries the floats. {@code node} is the
   * bulk address of the block's node and {@code block} the block's own actor, when the pull asked
   * for bulk and the node has it on (where to send this block's gradients by letter), else null.
   */
  public record BlockValues(String parameter, int index, int offset, long version, float[] values,
      BulkAddress node, ActorRef<Command> block) {

    /** Values inline, no bulk address. */
    public BlockValues(String parameter, int index, int offset, long version, float[] values) {
      this(parameter, index, offset, version, values, null, null);
    }

    /** These values with {@code floats} as their values (what a {@link BlockLetters.ValuesLetter} opens to). */
    public BlockValues withValues(float[] floats) {
      return new BlockValues(parameter, index, offset, version, floats, node, block);
    }

    /** These values without the block's route (as answered where a letter could not go). */
    public BlockValues withoutRoute() {
      return new BlockValues(parameter, index, offset, version, values);
    }
  }

  /** A {@link BlockLetters.PushLetter} opened on the block's node; sealing keeps it beside the other commands. */
  record LetterPush(PushGradient push, BulkAddress replyBulk) implements Command, NoSerializationVerificationNeeded {}

  /**
   * A block's counters since its entity (re)started, and its barrier. {@code pendingStep} is the
   * sync step that has contributions but is not applied yet (-1 if none), {@code waitingFor} the
   * trainers of the membership that have not contributed to it. {@code pulls}: the pull requests
   * it received (a pull that travels with a push is not one). {@code pendingPulls}: the pulls
   * waiting for a version, those that travel with a held push ({@link ValuesWanted}) included.
   * {@code eventsReplayed} is how many
   * events the last recovery replayed on top of its snapshot. {@code bulkPushes} and
   * {@code bulkPulls} count pushes and replies with values (to pulls and to pushes) that went by bulk letter.
   * {@code examplesApplied}: the examples behind the updates applied so far (the sum of their
   * pushes' weights; kept in the snapshot, so it survives a move). {@code lastError}: the last error
   * the block answered a command with (a refused push or pull, a pull that timed out), "" if none,
   * at {@code lastErrorAtMillis} (epoch milliseconds, 0 if none).
   */
  public record BlockStats(
      String entityId,
      boolean initialised,
      long version,
      long updates,
      long pushes,
      long pulls,
      long duplicates,
      long rejectedStale,
      long rejectedNonFinite,
      long rejectedBadLength,
      long rejectedNotInitialised,
      long rejectedAhead,
      long rejectedMalformed,
      long skippedNonFinite,
      long pullTimeouts,
      long pendingStep,
      List<String> waitingFor,
      long membershipEpoch,
      int pendingPulls,
      long eventsReplayed,
      long bulkPushes,
      long bulkPulls,
      long examplesApplied,
      String lastError,
      long lastErrorAtMillis) {
    public BlockStats {
      waitingFor = List.copyOf(waitingFor);
      lastError = lastError == null ? "" : lastError;
    }
  }

}
