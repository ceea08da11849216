package io.shardtrain.actors.ps;

import akka.actor.NoSerializationVerificationNeeded;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.sharding.typed.javadsl.Entity;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.sharding.typed.javadsl.EntityTypeKey;
import akka.pattern.StatusReply;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.RecoveryCompleted;
import akka.persistence.typed.SnapshotAdapter;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.Effect;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.RetentionCriteria;
import akka.persistence.typed.javadsl.SignalHandler;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.compute.NumericChecks;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerState;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One parameter block: a Cluster Sharding entity on role {@code ps} that owns a slice of one
 * parameter (values, optimizer slots, update count, version) and applies trainers' gradients to it.
 *
 * <p>SYNC: version {@code v} counts the steps applied. Pushes for step {@code v+1} are journaled as
 * they arrive (so nothing acknowledged is lost) and, once every trainer of the current membership
 * has contributed, one {@link StepApplied} applies their weighted mean through the block's
 * optimizer. ASYNC: each push is journaled and applied at once, optionally refused when its base
 * version is too stale. Either way the learning-rate schedule runs on the block's own update count,
 * replaying the journal through the same optimizer rebuilds the state bit for bit, a duplicate
 * (trainer, step) is acknowledged without being applied again, and a malformed command gets an
 * error reply and changes nothing. {@link Pull} waits for a version and is answered from memory.
 *
 * <p>CHECKPOINTS (sync): {@link Checkpoint} captures values, slots and update count at exactly one
 * version (when the block applies that step, or at once if it is there), so the master can read
 * every block at one step. With checkpoint durability ({@code shardtrain.ps.durability}) gradients
 * and steps are applied in memory only and the captures ({@link CheckpointTaken}) are what the
 * journal holds, so a recovery lands on the newest capture; {@link RollBack} returns to a held
 * capture under a new generation, and pushes of older generations are refused as {@link RolledBack}.
 */
public final class ParameterBlock
    extends EventSourcedBehavior<ParameterBlock.Command, ParameterBlock.Event, ParameterBlock.State> {

  /** The sharding type of parameter blocks. */
  public static final EntityTypeKey<Command> ENTITY_KEY = EntityTypeKey.create(Command.class, "ParameterBlock");
  /** The cluster role whose nodes host parameter blocks. */
  public static final String ROLE = "ps";

  // ---------------------------------------------------------------------------------------------
  // Protocol

  /** What a parameter block accepts. */
  public sealed interface Command {}

  /** Sets the block's spec and initial values; idempotent for the same spec. Replies with the version. */
  public record Initialize(BlockSpec spec, float[] values, ActorRef<StatusReply<Long>> replyTo) implements Command {}

  /** A node's bulk channel address ({@link BulkTransport#address()}). */
  public record BulkAddress(String host, int port) {
    public BulkAddress {
      if (host == null || host.isBlank()) throw new IllegalArgumentException("bulk address needs a host");
      if (port < 1 || port > 65535) throw new IllegalArgumentException("bulk port must be in 1..65535, got " + port);
    }

    public static BulkAddress of(InetSocketAddress a) {
      return new BulkAddress(a.getHostString(), a.getPort());
    }

    public InetSocketAddress socketAddress() {
      return new InetSocketAddress(host, port);
    }

    @Override
    public String toString() {
      return host + ":" + port;
    }
  }

  /**
   * A trainer's gradient for this block at {@code step}, computed on parameters of
   * {@code baseVersion}; {@code weight} is the number of examples behind it (sync mean weight).
   * {@code values} pass to the block, which journals them as they are: a sender in the same JVM
   * must not change the array afterwards ({@code values} is null only inside a {@link PushLetter},
   * whose frame carries the floats).
   * {@code mark} says which examples are behind it (null: not said, as for a benchmark's pushes).
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
      ActorRef<StatusReply<PushAck>> replyTo) implements Command {

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

    /** This push with {@code floats} as its values (what a {@link PushLetter} opens to). */
    public PushGradient withValues(float[] floats) {
      return new PushGradient(trainerId, step, baseVersion, membershipEpoch, weight, floats, generation, mark,
          replyTo);
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
   * address, a block on another node whose bulk channel is on replies by a {@link ValuesLetter}
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

  /** The block holds its checkpoint at {@code step}: {@code slots} optimizer slots after {@code updates} updates. */
  public record Captured(String entityId, long step, long updates, int slots) {}

  /**
   * Cluster Sharding moves this block (a rebalance, or its node leaves): the block answers its
   * waiting pulls with an error, so their trainers ask again at once and reach it on its new node
   * instead of waiting out their pull timeout, and stops. Sent by the local shard, never remote.
   */
  public enum HandOff implements Command, NoSerializationVerificationNeeded { INSTANCE }

  private record PullTimedOut(long pullId) implements Command {}

  private enum BarrierCheck implements Command { INSTANCE }

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
   * The block's values at {@code version}; read-only: in the block's own JVM the array is the one
   * the block holds for that version, so a receiver copies it before changing it. {@code values}
   * is null only inside a {@link ValuesLetter}, whose frame carries the floats. {@code node} is the
   * bulk address of the block's node and {@code block} the block's own actor, when the pull asked
   * for bulk and the node has it on (where to send this block's gradients by letter), else null.
   */
  public record BlockValues(String parameter, int index, int offset, long version, float[] values,
      BulkAddress node, ActorRef<Command> block) {

    /** Values inline, no bulk address. */
    public BlockValues(String parameter, int index, int offset, long version, float[] values) {
      this(parameter, index, offset, version, values, null, null);
    }

    /** These values with {@code floats} as their values (what a {@link ValuesLetter} opens to). */
    public BlockValues withValues(float[] floats) {
      return new BlockValues(parameter, index, offset, version, floats, node, block);
    }
  }

  /**
   * A push sent straight to the block's actor ({@code block}, from {@link BlockValues#block()}) over
   * the bulk channel, its gradient as the frame's floats; the block acknowledges with an
   * {@link AckLetter} to {@code replyBulk}. A block that moved never gets it: the letter bounces
   * (an error reply at once) and the sender pushes through sharding again.
   */
  public record PushLetter(ActorRef<Command> block, BulkAddress replyBulk, PushGradient push)
      implements BulkTransport.Letter {
    public PushLetter {
      if (block == null || replyBulk == null || push == null) {
        throw new IllegalArgumentException("a push letter needs the block, the reply address and the push");
      }
    }

    @Override
    public ActorRef<?> recipient() {
      return block;
    }

    @Override
    public Object open(float[] values) {
      return new LetterPush(push.withValues(values), replyBulk);
    }

    @Override
    public void bounce(String reason) {
      push.replyTo().tell(StatusReply.error("push letter for step " + push.step() + " not delivered: " + reason));
    }
  }

  /**
   * A pull sent straight to the block's actor over the bulk channel (no floats); {@code pull} must
   * name the puller's bulk address, where the values come back as a {@link ValuesLetter}.
   */
  public record PullLetter(ActorRef<Command> block, Pull pull) implements BulkTransport.Letter {
    public PullLetter {
      if (block == null || pull == null || pull.replyBulk() == null) {
        throw new IllegalArgumentException("a pull letter needs the block and a pull with a bulk reply address");
      }
    }

    @Override
    public ActorRef<?> recipient() {
      return block;
    }

    @Override
    public Object open(float[] values) {
      return pull;
    }

    @Override
    public void bounce(String reason) {
      pull.replyTo().tell(StatusReply.error("pull letter for version " + pull.minVersion() + " not delivered: "
          + reason));
    }
  }

  /** A {@link PushLetter} opened on the block's node. */
  record LetterPush(PushGradient push, BulkAddress replyBulk) implements Command, NoSerializationVerificationNeeded {}

  /** A block's success reply to a {@link PushLetter}, by letter too (no floats). */
  public record AckLetter(ActorRef<StatusReply<PushAck>> replyTo, PushAck ack) implements BulkTransport.Letter {
    @Override
    public ActorRef<?> recipient() {
      return replyTo;
    }

    @Override
    public Object open(float[] values) {
      return StatusReply.success(ack);
    }
  }

  /** A block's reply to a {@link Pull} with a bulk address: the values are the frame's floats. */
  public record ValuesLetter(ActorRef<StatusReply<BlockValues>> replyTo, BlockValues values)
      implements BulkTransport.Letter {
    @Override
    public ActorRef<?> recipient() {
      return replyTo;
    }

    @Override
    public Object open(float[] floats) {
      return StatusReply.success(values.withValues(floats));
    }
  }

  /**
   * A block's counters since its entity (re)started, and its barrier. {@code pendingStep} is the
   * sync step that has contributions but is not applied yet (-1 if none), {@code waitingFor} the
   * trainers of the membership that have not contributed to it. {@code eventsReplayed} is how many
   * events the last recovery replayed on top of its snapshot. {@code bulkPushes} and
   * {@code bulkPulls} count pushes and pull replies that went by bulk letter.
   * {@code examplesApplied}: sync, the examples behind the steps applied so far (the sum of their
   * contributions' weights; kept in the snapshot, so it survives a move); 0 in async mode.
   */
  public record BlockStats(
      String entityId,
      boolean initialised,
      long version,
      long updates,
      long pushes,
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
      long examplesApplied) {
    public BlockStats {
      waitingFor = List.copyOf(waitingFor);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Events

  /** What the journal records. */
  public sealed interface Event {}

  /** The block got its spec and initial values. */
  public record Initialized(BlockSpec spec, float[] values) implements Event {}

  /**
   * Sync: a trainer's gradient for the pending step, kept until the barrier completes; {@code mark}
   * (nullable) names the examples behind it.
   */
  public record GradientReceived(String trainerId, long step, float weight, float[] values, TaskMark mark)
      implements Event {
    public GradientReceived(String trainerId, long step, float weight, float[] values) {
      this(trainerId, step, weight, values, null);
    }
  }

  /** Sync: a trainer's non-finite gradient for the pending step was skipped; it counts for the barrier. */
  public record GradientSkipped(String trainerId, long step, TaskMark mark) implements Event {
    public GradientSkipped(String trainerId, long step) {
      this(trainerId, step, null);
    }
  }

  /** Sync: the barrier of {@code step} completed and the weighted mean was applied. */
  public record StepApplied(long step) implements Event {}

  /** Async: a trainer's gradient was applied; {@code mark} (nullable) names the examples behind it. */
  public record GradientApplied(String trainerId, long step, float[] values, TaskMark mark) implements Event {
    public GradientApplied(String trainerId, long step, float[] values) {
      this(trainerId, step, values, null);
    }
  }

  /** The trainers sync steps wait for, from membership {@code epoch} on. */
  public record MembershipUpdated(long epoch, List<String> trainers) implements Event {
    public MembershipUpdated {
      trainers = List.copyOf(trainers);
    }
  }

  /**
   * The block's values, slots and update count at version {@code step}, kept as a checkpoint;
   * held checkpoints older than {@code keepFrom} are dropped. In checkpoint durability this is what
   * the journal holds instead of gradients, so replay lands on the newest checkpoint.
   */
  public record CheckpointTaken(long step, long keepFrom, float[] values, float[][] slots, long updates)
      implements Event {}

  /** Checkpoint durability: the block went back to its checkpoint at {@code step}; pushes of older generations are refused. */
  public record RolledBackTo(long step, long generation) implements Event {}

  // ---------------------------------------------------------------------------------------------
  // State

  /** A sync contribution to the pending step; weight 0 and no values when it was skipped. */
  public record Contribution(String trainerId, float weight, float[] values) {}

  /** A held checkpoint: values, optimizer slots and update count at one version. Arrays are never mutated. */
  public record Held(float[] values, float[][] slots, long updates) {}

  /**
   * The block's state, owned by the entity. {@code values} is copy-on-write: an update writes a new
   * array, so the array of a version never changes once published and pulls and snapshots of that
   * version share it (one copy per update, not one per pull). The optimizer slots change in place,
   * so snapshots copy them (the snapshot store serializes asynchronously).
   */
  public static final class State {
    BlockSpec spec;
    float[] values;
    OptimizerState optimizerState;
    long version;
    long membershipEpoch;
    List<String> members = new ArrayList<>();
    List<Contribution> pending = new ArrayList<>();
    TreeMap<String, Long> lastSteps = new TreeMap<>();
    /** Per data task ({@link #taskKey}), how far its examples reached this block. */
    TreeMap<Long, TaskProgress> taskMarks = new TreeMap<>();
    long examplesApplied;
    TreeMap<Long, Held> checkpoints = new TreeMap<>();
    long generation;
    private Optimizer optimizer;
    private LearningRateSchedule schedule;

    State() {}

    static State restore(BlockSpec spec, float[] values, float[][] slots, long updates, long version,
        long membershipEpoch, List<String> members, List<Contribution> pending, Map<String, Long> lastSteps,
        long examplesApplied) {
      State s = new State();
      s.spec = spec;
      if (spec != null) {
        if (values.length != spec.length()) {
          throw new IllegalArgumentException("state of block " + spec.entityId() + " has " + values.length
              + " values, its spec says " + spec.length());
        }
        s.values = values;
        s.optimizerState = OptimizerState.of(spec.length(), slots, updates);
      }
      s.version = version;
      s.membershipEpoch = membershipEpoch;
      s.members = new ArrayList<>(members);
      s.pending = new ArrayList<>(pending);
      s.lastSteps = new TreeMap<>(lastSteps);
      s.examplesApplied = examplesApplied;
      return s;
    }

    /** {@link #restore} plus the held checkpoints and the rollback generation. */
    static State restore(State s, Map<Long, Held> checkpoints, long generation) {
      s.checkpoints = new TreeMap<>(checkpoints);
      s.generation = generation;
      return s;
    }

    /** {@link #restore} plus the task marks (by {@link #taskKey}). */
    static State restoreMarks(State s, Map<Long, TaskProgress> marks) {
      s.taskMarks = new TreeMap<>(marks);
      return s;
    }

    static long taskKey(int epoch, int task) {
      return ((long) epoch << 32) | (task & 0xFFFFFFFFL);
    }

    public boolean isInitialised() {
      return spec != null;
    }

    /** The spec, or null before {@link Initialize}. */
    public BlockSpec spec() {
      return spec;
    }

    public long version() {
      return version;
    }

    /** Optimizer updates applied (differs from the sync version only when a whole step was skipped). */
    public long updates() {
      return optimizerState == null ? 0 : optimizerState.updates();
    }

    public long membershipEpoch() {
      return membershipEpoch;
    }

    public List<String> members() {
      return List.copyOf(members);
    }

    /** A copy of the values (empty before initialisation). */
    public float[] values() {
      return values == null ? new float[0] : values.clone();
    }

    /** A deep copy of the optimizer slots. */
    public float[][] slots() {
      return optimizerState == null ? new float[0][] : optimizerState.copy().slots();
    }

    /** The sync contributions to the pending step, in arrival order. */
    public List<Contribution> pending() {
      return List.copyOf(pending);
    }

    /** Sync: the examples behind the applied steps (the sum of their contributions' weights). */
    public long examplesApplied() {
      return examplesApplied;
    }

    /** How far the examples of task {@code task} of epoch {@code epoch} reached this block. */
    public TaskProgress taskProgress(int epoch, int task) {
      return taskMarks.getOrDefault(taskKey(epoch, task), new TaskProgress(0, 0));
    }

    /** The task marks by {@link #taskKey}, a copy. */
    TreeMap<Long, TaskProgress> taskMarks() {
      return new TreeMap<>(taskMarks);
    }

    /** Per trainer, the last step it pushed that the block accepted. */
    public Map<String, Long> lastSteps() {
      return new TreeMap<>(lastSteps);
    }

    /** The versions of the held checkpoints, oldest first. */
    public List<Long> checkpointSteps() {
      return List.copyOf(checkpoints.keySet());
    }

    /** The held checkpoint at {@code step}, or null. */
    public Held checkpoint(long step) {
      return checkpoints.get(step);
    }

    /** Pushes of an older generation than this are refused (it counts rollbacks). */
    public long generation() {
      return generation;
    }

    /** A deep copy; the values and contribution arrays are never mutated, so they are shared. */
    public State copy() {
      State c = new State();
      c.spec = spec;
      c.values = values;
      c.optimizerState = optimizerState == null ? null : optimizerState.copy();
      c.version = version;
      c.membershipEpoch = membershipEpoch;
      c.members = new ArrayList<>(members);
      c.pending = new ArrayList<>(pending);
      c.lastSteps = new TreeMap<>(lastSteps);
      c.taskMarks = taskMarks();
      c.examplesApplied = examplesApplied;
      c.checkpoints = new TreeMap<>(checkpoints);
      c.generation = generation;
      return c;
    }

    /**
     * Checkpoint durability's snapshot: the newest held checkpoint as the live state, since the
     * steps applied after it were never journaled and a recovery must land on a checkpoint.
     */
    State asOfNewestCheckpoint() {
      State c = copy();
      if (checkpoints.isEmpty()) return c;
      Map.Entry<Long, Held> newest = checkpoints.lastEntry();
      c.restoreCheckpoint(newest.getKey(), newest.getValue(), true);
      return c;
    }

    /** Values, slots, updates and version from {@code h}; {@code dropPending}: also forget the contributions held. */
    private void restoreCheckpoint(long step, Held h, boolean dropPending) {
      values = h.values(); // copy-on-write: never changed in place
      float[][] slots = new float[h.slots().length][];
      for (int i = 0; i < slots.length; i++) slots[i] = h.slots()[i].clone();
      optimizerState = OptimizerState.of(spec.length(), slots, h.updates());
      version = step;
      if (dropPending) {
        pending = new ArrayList<>();
        lastSteps = new TreeMap<>();
        // The master's reader offsets go back to the checkpoint's too.
        taskMarks = new TreeMap<>();
      }
    }

    /** The live values (shared: copy-on-write), a copy of the slots, and the update count. */
    Held capture() {
      return new Held(values, optimizerState.copy().slots(), optimizerState.updates());
    }

    boolean isSync() {
      return spec != null && spec.mode() == BlockSpec.Mode.SYNC;
    }

    boolean hasContributed(String trainerId) {
      for (Contribution c : pending) {
        if (c.trainerId().equals(trainerId)) return true;
      }
      return false;
    }

    /** Members of the current membership that have not contributed to the pending step. */
    List<String> missing(String alsoContributed) {
      List<String> out = new ArrayList<>();
      for (String m : members) {
        if (!m.equals(alsoContributed) && !hasContributed(m)) out.add(m);
      }
      return out;
    }

    /**
     * Whether the pending step (plus a contribution of {@code extra}, if not null) is complete
     * under {@code memberSet}: a membership was received and all its trainers contributed.
     */
    boolean barrierComplete(long epoch, List<String> memberSet, String extra) {
      if (epoch <= 0 || (pending.isEmpty() && extra == null)) return false;
      for (String m : memberSet) {
        if (!m.equals(extra) && !hasContributed(m)) return false;
      }
      return true;
    }

    // Event handlers: deterministic, so replay rebuilds the same floats.

    State onInitialized(Initialized e) {
      spec = e.spec();
      // Copy-on-write: the event's array is never changed, so the state may share it.
      values = e.values();
      optimizerState = OptimizerState.create(optimizer(), spec.length());
      version = 0;
      examplesApplied = 0;
      pending.clear();
      lastSteps.clear();
      taskMarks.clear();
      checkpoints.clear();
      // The initial values are checkpoint 0: a job that fails before its first checkpoint rolls back to them.
      if (spec.mode() == BlockSpec.Mode.SYNC) checkpoints.put(0L, capture());
      return this;
    }

    State onGradientReceived(GradientReceived e) {
      pending.add(new Contribution(e.trainerId(), e.weight(), e.values()));
      lastSteps.put(e.trainerId(), e.step());
      mark(e.mark(), e.step());
      return this;
    }

    State onGradientSkipped(GradientSkipped e) {
      pending.add(new Contribution(e.trainerId(), 0f, new float[0]));
      lastSteps.put(e.trainerId(), e.step());
      // Dropped by policy, but done with: the trainer moves past these examples.
      mark(e.mark(), e.step());
      return this;
    }

    /**
     * Records how far a task's examples reached this block. Marks of epochs two or more before
     * {@code m}'s are dropped: the master opens an epoch only once the one two before it finished.
     */
    private void mark(TaskMark m, long step) {
      if (m == null) return;
      long key = taskKey(m.epoch(), m.task());
      TaskProgress old = taskMarks.get(key);
      if (old == null || m.offset() > old.offset()) taskMarks.put(key, new TaskProgress(m.offset(), step));
      taskMarks.headMap(taskKey(m.epoch() - 1, 0)).clear();
    }

    State onStepApplied(StepApplied e) {
      float[] mean = new float[spec.length()];
      float total = 0f;
      // Arrival order = journal order, so the sum replays bit for bit.
      for (Contribution c : pending) {
        if (c.weight() <= 0f) continue;
        float w = c.weight();
        float[] g = c.values();
        total += w;
        examplesApplied += Math.round(w);
        for (int j = 0; j < mean.length; j++) {
          mean[j] += w * g[j];
        }
      }
      if (total > 0f) {
        for (int j = 0; j < mean.length; j++) {
          mean[j] /= total;
        }
        values = stepped(mean);
      }
      version = e.step();
      pending.clear();
      return this;
    }

    State onGradientApplied(GradientApplied e) {
      values = stepped(e.values());
      version++;
      lastSteps.put(e.trainerId(), e.step());
      mark(e.mark(), e.step());
      return this;
    }

    /** The values after one optimizer step on {@code gradient}, in a new array (copy-on-write). */
    private float[] stepped(float[] gradient) {
      float[] next = values.clone();
      optimizerState.step(optimizer(), schedule(), next, gradient);
      return next;
    }

    State onMembershipUpdated(MembershipUpdated e) {
      membershipEpoch = e.epoch();
      members = new ArrayList<>(e.trainers());
      return this;
    }

    State onCheckpointTaken(CheckpointTaken e) {
      Held h = new Held(e.values(), e.slots(), e.updates());
      checkpoints.headMap(e.keepFrom()).clear();
      checkpoints.put(e.step(), h);
      // Live: the same values (captured from them), and contributions to the next step stay. Replay:
      // the journal holds no gradients, so this is where the block resumes.
      restoreCheckpoint(e.step(), h, false);
      return this;
    }

    State onRolledBackTo(RolledBackTo e) {
      Held h = checkpoints.get(e.step());
      if (h == null) throw new IllegalStateException("rollback to step " + e.step() + " without its checkpoint");
      checkpoints.tailMap(e.step(), false).clear();
      restoreCheckpoint(e.step(), h, true);
      generation = e.generation();
      return this;
    }

    /** Applies {@code e} directly, as the event handler would (for what checkpoint durability does not journal). */
    State apply(Event e) {
      if (e instanceof GradientReceived g) return onGradientReceived(g);
      if (e instanceof GradientSkipped g) return onGradientSkipped(g);
      if (e instanceof StepApplied a) return onStepApplied(a);
      if (e instanceof GradientApplied a) return onGradientApplied(a);
      if (e instanceof MembershipUpdated m) return onMembershipUpdated(m);
      throw new IllegalArgumentException("not applied in memory: " + e);
    }

    private Optimizer optimizer() {
      if (optimizer == null) optimizer = spec.optimizer().create();
      return optimizer;
    }

    private LearningRateSchedule schedule() {
      if (schedule == null) schedule = spec.schedule();
      return schedule;
    }

    @Override
    public String toString() {
      return "ParameterBlock.State[" + (spec == null ? "uninitialised" : spec.entityId()) + ", version=" + version
          + ", updates=" + updates() + ", epoch=" + membershipEpoch + ", pending=" + pending.size() + "]";
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Entity

  /** Starts sharding of parameter blocks on nodes with role {@value #ROLE}; returns the shard region. */
  public static ActorRef<ShardingEnvelope<Command>> init(ActorSystem<?> system) {
    PsSettings settings = PsSettings.create(system);
    return ClusterSharding.get(system).init(
        Entity.of(ENTITY_KEY, ctx -> create(ctx.getEntityId(), settings)).withRole(ROLE)
            .withStopMessage(HandOff.INSTANCE));
  }

  /** A reference to the block {@code entityId} ({@code parameter#index}) through sharding. */
  public static EntityRef<Command> entityRef(ActorSystem<?> system, String entityId) {
    return ClusterSharding.get(system).entityRefFor(ENTITY_KEY, entityId);
  }

  /** The behavior of block {@code entityId}, persisted as {@code ParameterBlock|entityId}. */
  public static Behavior<Command> create(String entityId, PsSettings settings) {
    if (entityId == null || entityId.isBlank()) {
      throw new IllegalArgumentException("parameter block entity id must not be blank");
    }
    if (settings == null) throw new IllegalArgumentException("parameter server settings must not be null");
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new ParameterBlock(entityId, settings, ctx, timers)));
  }

  private static final String BARRIER_TIMER = "barrier-warn";

  private final String entityId;
  private final PsSettings settings;
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final TreeMap<Long, Pull> pendingPulls = new TreeMap<>();
  /** Pushes that came by letter and are not answered yet: where their reply letters go. */
  private final Map<ActorRef<?>, BulkAddress> letterReplies = new java.util.HashMap<>();
  /** Checkpoint requests for versions the block has not reached yet, by version. */
  private final TreeMap<Long, List<Checkpoint>> pendingCaptures = new TreeMap<>();
  private long nextPullId;
  private long pendingSinceNanos;
  private long eventsHandled;
  private long eventsReplayed;
  private long pushes;
  private long duplicates;
  private long rejectedStale;
  private long rejectedNonFinite;
  private long rejectedBadLength;
  private long rejectedNotInitialised;
  private long rejectedAhead;
  private long rejectedMalformed;
  private long skippedNonFinite;
  private long pullTimeouts;
  private long bulkPushes;
  private long bulkPulls;
  private BulkTransport bulk;
  /** This node's bulk address, once the channel is up; it never changes. */
  private BulkAddress bulkAddress;

  private ParameterBlock(String entityId, PsSettings settings, ActorContext<Command> context,
      TimerScheduler<Command> timers) {
    super(PersistenceId.of(ENTITY_KEY.name(), entityId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(10), 0.2));
    this.entityId = entityId;
    this.settings = settings;
    this.context = context;
    this.timers = timers;
  }

  @Override
  public State emptyState() {
    return new State();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(settings.snapshotEvery(), 2).withDeleteEventsOnSnapshot();
  }

  @Override
  public SnapshotAdapter<State> snapshotAdapter() {
    return new SnapshotAdapter<>() {
      @Override
      public Object toJournal(State state) {
        // The store serializes later, while this entity keeps mutating its live state.
        if (settings.checkpointDurability()) return state.asOfNewestCheckpoint();
        State c = state.copy();
        // Exact durability rebuilds everything from the journal; checkpoints there are only read out.
        c.checkpoints.clear();
        return c;
      }

      @Override
      public State fromJournal(Object from) {
        return ((State) from).copy();
      }
    };
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.class, (state, signal) -> {
          eventsReplayed = eventsHandled;
          afterChange(state);
        })
        .build();
  }

  @Override
  public CommandHandler<Command, Event, State> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(Initialize.class, this::onInitialize)
        .onCommand(PushGradient.class, this::onPush)
        .onCommand(LetterPush.class, this::onLetterPush)
        .onCommand(Pull.class, this::onPull)
        .onCommand(UpdateMembership.class, this::onUpdateMembership)
        .onCommand(GetStats.class, this::onGetStats)
        .onCommand(PullTimedOut.class, this::onPullTimedOut)
        .onCommand(BarrierCheck.class, (state, check) -> onBarrierCheck(state))
        .onCommand(HandOff.class, (state, h) -> onHandOff(state))
        .onCommand(Checkpoint.class, this::onCheckpoint)
        .onCommand(ReadCheckpoint.class, this::onReadCheckpoint)
        .onCommand(RollBack.class, this::onRollBack)
        .onCommand(GetTaskMark.class, (state, cmd) ->
            Effect().reply(cmd.replyTo(), StatusReply.success(state.taskProgress(cmd.epoch(), cmd.task()))))
        .build();
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(Initialized.class, (s, e) -> counted(s.onInitialized(e)))
        .onEvent(GradientReceived.class, (s, e) -> counted(s.onGradientReceived(e)))
        .onEvent(GradientSkipped.class, (s, e) -> counted(s.onGradientSkipped(e)))
        .onEvent(StepApplied.class, (s, e) -> counted(s.onStepApplied(e)))
        .onEvent(GradientApplied.class, (s, e) -> counted(s.onGradientApplied(e)))
        .onEvent(MembershipUpdated.class, (s, e) -> counted(s.onMembershipUpdated(e)))
        .onEvent(CheckpointTaken.class, (s, e) -> counted(s.onCheckpointTaken(e)))
        .onEvent(RolledBackTo.class, (s, e) -> counted(s.onRolledBackTo(e)))
        .build();
  }

  private State counted(State s) {
    eventsHandled++;
    return s;
  }

  // ---------------------------------------------------------------------------------------------
  // Command handlers

  private Effect<Event, State> onInitialize(State state, Initialize cmd) {
    BlockSpec spec = cmd.spec();
    if (spec == null || cmd.values() == null) {
      return error(cmd.replyTo(), "Initialize of block " + entityId + " needs a spec and values");
    }
    if (!spec.entityId().equals(entityId)) {
      return error(cmd.replyTo(), "Initialize for block " + spec.entityId() + " was sent to block " + entityId);
    }
    if (cmd.values().length != spec.length()) {
      return error(cmd.replyTo(), "Initialize of block " + entityId + ": " + cmd.values().length
          + " values, the spec says length " + spec.length());
    }
    int bad = NumericChecks.firstNonFinite(cmd.values());
    if (bad >= 0) {
      return error(cmd.replyTo(), "Initialize of block " + entityId + ": non-finite initial value "
          + cmd.values()[bad] + " at index " + bad);
    }
    if (settings.checkpointDurability() && spec.mode() != BlockSpec.Mode.SYNC) {
      return error(cmd.replyTo(), "block " + entityId + ": checkpoint durability needs sync mode (async blocks"
          + " have no global step to roll back to); use shardtrain.ps.durability = exact");
    }
    if (state.isInitialised()) {
      if (state.spec().equals(spec)) {
        return Effect().reply(cmd.replyTo(), StatusReply.success(state.version()));
      }
      return error(cmd.replyTo(), "block " + entityId + " is already initialised with " + state.spec()
          + "; refusing a different spec " + spec);
    }
    return Effect().persist(new Initialized(spec, cmd.values().clone()))
        .thenRun(s -> cmd.replyTo().tell(StatusReply.success(s.version())));
  }

  private Effect<Event, State> onPush(State state, PushGradient cmd) {
    pushes++;
    ActorRef<StatusReply<PushAck>> replyTo = cmd.replyTo();
    if (!state.isInitialised()) {
      rejectedNotInitialised++;
      return error(replyTo, "block " + entityId + " is not initialised; push of trainer " + cmd.trainerId()
          + " for step " + cmd.step() + " refused");
    }
    if (cmd.trainerId() == null || cmd.trainerId().isBlank()) {
      rejectedMalformed++;
      return error(replyTo, "push to block " + entityId + " has a blank trainer id");
    }
    if (cmd.step() < 1) {
      rejectedMalformed++;
      return error(replyTo, "push of trainer " + cmd.trainerId() + " to block " + entityId + ": step must be >= 1, not "
          + cmd.step());
    }
    int length = state.spec().length();
    if (isIdle(cmd)) {
      // Sync: a trainer with no data for this step still takes part in the barrier, contributing
      // nothing. Async: nothing to apply (the block already has the batch's examples).
      if (state.isSync()) return onSyncPush(state, cmd);
      return acked(replyTo, new Duplicate(state.version()));
    }
    if (cmd.values() == null || cmd.values().length != length) {
      rejectedBadLength++;
      return error(replyTo, "gradient of length " + (cmd.values() == null ? "null" : cmd.values().length)
          + " from trainer " + cmd.trainerId() + " does not match block " + entityId + " of length " + length);
    }
    return state.isSync() ? onSyncPush(state, cmd) : onAsyncPush(state, cmd);
  }

  /** A push that came by letter: handled as any push, answered by letter. */
  private Effect<Event, State> onLetterPush(State state, LetterPush m) {
    bulkPushes++;
    letterReplies.put(m.push().replyTo(), m.replyBulk());
    return onPush(state, m.push());
  }

  private Effect<Event, State> acked(ActorRef<StatusReply<PushAck>> replyTo, PushAck ack) {
    return Effect().none().thenRun(s -> ack(replyTo, ack));
  }

  /** Answers a push: by letter when it came by letter, else as a message. */
  private void ack(ActorRef<StatusReply<PushAck>> replyTo, PushAck ack) {
    BulkAddress to = letterReplies.remove(replyTo);
    if (to == null) {
      replyTo.tell(StatusReply.success(ack));
      return;
    }
    bulk().sendLetter(to.socketAddress(), new AckLetter(replyTo, ack), NO_FLOATS, 0, 0)
        .whenComplete((done, failure) -> {
          // The sender's node may be gone; if not, the message finds it over Artery.
          if (failure != null) replyTo.tell(StatusReply.success(ack));
        });
  }

  private static final float[] NO_FLOATS = new float[0];

  private Effect<Event, State> onSyncPush(State state, PushGradient cmd) {
    long v = state.version();
    String trainer = cmd.trainerId();
    if (settings.checkpointDurability() && (cmd.generation() < state.generation() || cmd.step() > v + 1)) {
      // The abandoned timeline, or a block that recovered its last checkpoint before the master's
      // rollback reached the trainer: not an error, the trainer waits for the rollback.
      return acked(cmd.replyTo(), new RolledBack(v));
    }
    if (cmd.step() <= v || (cmd.step() == v + 1 && state.hasContributed(trainer))) {
      duplicates++;
      return acked(cmd.replyTo(), new Duplicate(v));
    }
    if (cmd.step() > v + 1) {
      rejectedAhead++;
      return error(cmd.replyTo(), "push of trainer " + trainer + " for step " + cmd.step() + " is ahead of block "
          + entityId + " at version " + v + " (it expects step " + (v + 1) + ")");
    }
    if (!isIdle(cmd) && (!(cmd.weight() > 0f) || Float.isInfinite(cmd.weight()))) {
      rejectedMalformed++;
      return error(cmd.replyTo(), "push of trainer " + trainer + " for step " + cmd.step() + " to block " + entityId
          + ": weight must be a finite number > 0, not " + cmd.weight());
    }
    Event received;
    boolean skipped = false;
    int bad = NumericChecks.firstNonFinite(cmd.values());
    if (bad >= 0) {
      if (settings.nonFinite() == PsSettings.NonFinitePolicy.REJECT) {
        rejectedNonFinite++;
        return error(cmd.replyTo(), nonFiniteMessage(cmd, bad));
      }
      skippedNonFinite++;
      skipped = true;
      // Recorded, so the barrier does not wait for a trainer whose gradient was dropped.
      received = new GradientSkipped(trainer, cmd.step(), cmd.mark());
    } else {
      received = new GradientReceived(trainer, cmd.step(), cmd.weight(), cmd.values(), cmd.mark());
    }
    boolean completes = state.barrierComplete(state.membershipEpoch(), state.members, trainer);
    List<Event> events = completes ? List.of(received, new StepApplied(cmd.step())) : List.of(received);
    boolean wasSkipped = skipped;
    return record(state, events).thenRun(s -> {
      afterChange(s);
      PushAck ack = wasSkipped ? new Skipped(s.version()) : completes ? new Applied(s.version()) : new Accepted(s.version());
      ack(cmd.replyTo(), ack);
    });
  }

  /** An empty, zero-weight sync push: the trainer had no data for this step. */
  private static boolean isIdle(PushGradient cmd) {
    return cmd.weight() == 0f && cmd.values() != null && cmd.values().length == 0;
  }

  private Effect<Event, State> onAsyncPush(State state, PushGradient cmd) {
    long v = state.version();
    String trainer = cmd.trainerId();
    Long last = state.lastSteps.get(trainer);
    if (last != null && cmd.step() <= last) {
      duplicates++;
      return acked(cmd.replyTo(), new Duplicate(v));
    }
    if (cmd.baseVersion() < 0 || cmd.baseVersion() > v) {
      rejectedAhead++;
      return error(cmd.replyTo(), "push of trainer " + trainer + " for step " + cmd.step() + ": base version "
          + cmd.baseVersion() + " is not one block " + entityId + " has had (its version is " + v + ")");
    }
    long maxStaleness = state.spec().maxStaleness();
    if (maxStaleness >= 0 && v - cmd.baseVersion() > maxStaleness) {
      rejectedStale++;
      return acked(cmd.replyTo(), new Stale(v));
    }
    int bad = NumericChecks.firstNonFinite(cmd.values());
    if (bad >= 0) {
      if (settings.nonFinite() == PsSettings.NonFinitePolicy.REJECT) {
        rejectedNonFinite++;
        return error(cmd.replyTo(), nonFiniteMessage(cmd, bad));
      }
      skippedNonFinite++;
      return acked(cmd.replyTo(), new Skipped(v));
    }
    return record(state, List.of(new GradientApplied(trainer, cmd.step(), cmd.values(), cmd.mark()))).thenRun(s -> {
      answerPulls(s);
      ack(cmd.replyTo(), new Applied(s.version()));
    });
  }

  private String nonFiniteMessage(PushGradient cmd, int index) {
    return "gradient of trainer " + cmd.trainerId() + " for step " + cmd.step() + " to block " + entityId
        + " has a non-finite value " + cmd.values()[index] + " at index " + index;
  }

  private Effect<Event, State> onPull(State state, Pull cmd) {
    if (!state.isInitialised()) {
      rejectedNotInitialised++;
      return error(cmd.replyTo(), "block " + entityId + " is not initialised; pull for version " + cmd.minVersion()
          + " refused");
    }
    if (cmd.minVersion() <= state.version()) {
      return Effect().none().thenRun(s -> answer(s, cmd));
    }
    long id = nextPullId++;
    pendingPulls.put(id, cmd);
    timers.startSingleTimer(pullTimerKey(id), new PullTimedOut(id), settings.pullTimeout());
    return Effect().none();
  }

  private Effect<Event, State> onPullTimedOut(State state, PullTimedOut timeout) {
    Pull pull = pendingPulls.remove(timeout.pullId());
    if (pull != null) {
      pullTimeouts++;
      pull.replyTo().tell(StatusReply.error("block " + entityId + " did not reach version " + pull.minVersion()
          + " within " + settings.pullTimeout().toMillis() + " ms (it is at version " + state.version() + ")"));
    }
    return Effect().none();
  }

  private Effect<Event, State> onUpdateMembership(State state, UpdateMembership cmd) {
    if (cmd.trainers() == null) {
      return error(cmd.replyTo(), "membership epoch " + cmd.epoch() + " for block " + entityId + " has no trainer list");
    }
    Set<String> unique = new LinkedHashSet<>();
    for (String t : cmd.trainers()) {
      if (t == null || t.isBlank()) {
        return error(cmd.replyTo(), "membership epoch " + cmd.epoch() + " for block " + entityId
            + " holds a blank trainer id");
      }
      unique.add(t);
    }
    if (cmd.epoch() <= state.membershipEpoch()) {
      // An older or repeated epoch: the master's newer word is already in force.
      return Effect().reply(cmd.replyTo(), StatusReply.success(state.membershipEpoch()));
    }
    List<String> members = List.copyOf(unique);
    List<Event> events = new ArrayList<>();
    events.add(new MembershipUpdated(cmd.epoch(), members));
    if (state.isSync() && state.barrierComplete(cmd.epoch(), members, null)) {
      events.add(new StepApplied(state.version() + 1));
    }
    return record(state, events).thenRun(s -> {
      afterChange(s);
      cmd.replyTo().tell(StatusReply.success(s.membershipEpoch()));
    });
  }

  private Effect<Event, State> onGetStats(State state, GetStats cmd) {
    boolean waiting = state.isSync() && !state.pending.isEmpty();
    cmd.replyTo().tell(new BlockStats(entityId, state.isInitialised(), state.version(), state.updates(), pushes,
        duplicates, rejectedStale, rejectedNonFinite, rejectedBadLength, rejectedNotInitialised, rejectedAhead,
        rejectedMalformed, skippedNonFinite, pullTimeouts, waiting ? state.version() + 1 : -1,
        waiting ? state.missing(null) : List.of(), state.membershipEpoch(), pendingPulls.size(), eventsReplayed,
        bulkPushes, bulkPulls, state.examplesApplied()));
    return Effect().none();
  }

  private Effect<Event, State> onHandOff(State state) {
    // Everything acknowledged is journaled already; only the waiting pulls live in memory.
    for (Map.Entry<Long, Pull> e : pendingPulls.entrySet()) {
      timers.cancel(pullTimerKey(e.getKey()));
      e.getValue().replyTo().tell(StatusReply.error("block " + entityId + " is moving to another node (at version "
          + state.version() + "); pull version " + e.getValue().minVersion() + " again"));
    }
    context.getLog().info("parameter block {} hands off at version {}; {} waiting pulls told to ask again",
        entityId, state.version(), pendingPulls.size());
    pendingPulls.clear();
    return Effect().stop();
  }

  private Effect<Event, State> onBarrierCheck(State state) {
    if (!state.isSync() || state.pending.isEmpty()) {
      timers.cancel(BARRIER_TIMER);
      return Effect().none();
    }
    List<String> contributed = new ArrayList<>();
    for (Contribution c : state.pending) contributed.add(c.trainerId());
    context.getLog().warn("parameter block {} has waited {} ms for step {}: missing trainers {} of membership epoch {}"
            + " (contributed: {})", entityId, (System.nanoTime() - pendingSinceNanos) / 1_000_000,
        state.version() + 1, state.missing(null), state.membershipEpoch(), contributed);
    return Effect().none();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Records {@code events}. Exact durability journals them all. Checkpoint durability journals
   * only memberships; gradients and steps are applied to the live state at once, and when that
   * reaches a version a checkpoint waits for, the capture is what gets journaled.
   */
  private akka.persistence.typed.javadsl.EffectBuilder<Event, State> record(State state, List<Event> events) {
    if (!settings.checkpointDurability()) return Effect().persist(events);
    List<Event> journaled = new ArrayList<>();
    for (Event e : events) {
      if (e instanceof MembershipUpdated) {
        journaled.add(e);
      } else {
        state.apply(e);
      }
    }
    if (pendingCaptures.containsKey(state.version())) journaled.add(checkpointTaken(state));
    return journaled.isEmpty() ? Effect().none() : Effect().persist(journaled);
  }

  private CheckpointTaken checkpointTaken(State state) {
    Held h = state.capture();
    long keepFrom = 0;
    for (Checkpoint c : pendingCaptures.getOrDefault(state.version(), List.of())) keepFrom = Math.max(keepFrom, c.keepFrom());
    return new CheckpointTaken(state.version(), Math.min(keepFrom, state.version()), h.values(), h.slots(), h.updates());
  }

  private Effect<Event, State> onCheckpoint(State state, Checkpoint cmd) {
    if (!state.isInitialised()) {
      return error(cmd.replyTo(), "block " + entityId + " is not initialised; no checkpoint at step " + cmd.step());
    }
    if (!state.isSync()) {
      return error(cmd.replyTo(), "block " + entityId + " is async: checkpoints need sync mode (one global step)");
    }
    if (cmd.step() < state.version()) {
      return error(cmd.replyTo(), "block " + entityId + " is at version " + state.version() + ", past checkpoint step "
          + cmd.step());
    }
    pendingCaptures.computeIfAbsent(cmd.step(), k -> new ArrayList<>()).add(cmd);
    if (cmd.step() > state.version()) return Effect().none();
    if (settings.checkpointDurability()) {
      return Effect().persist(checkpointTaken(state)).thenRun(this::afterChange);
    }
    afterChange(state);
    return Effect().none();
  }

  private Effect<Event, State> onReadCheckpoint(State state, ReadCheckpoint cmd) {
    Held h = state.checkpoint(cmd.step());
    if (h == null) {
      return error(cmd.replyTo(), "block " + entityId + " holds no checkpoint at step " + cmd.step() + " (it holds "
          + state.checkpointSteps() + ")");
    }
    if (cmd.part() < 0 || cmd.part() > h.slots().length) {
      return error(cmd.replyTo(), "checkpoint part " + cmd.part() + " of block " + entityId + ": there are values (0)"
          + " and " + h.slots().length + " optimizer slots");
    }
    float[] v = cmd.part() == 0 ? h.values() : h.slots()[cmd.part() - 1];
    BlockSpec spec = state.spec();
    return Effect().reply(cmd.replyTo(),
        StatusReply.success(new BlockValues(spec.parameter(), spec.index(), spec.offset(), cmd.step(), v.clone())));
  }

  private Effect<Event, State> onRollBack(State state, RollBack cmd) {
    if (!settings.checkpointDurability()) {
      return error(cmd.replyTo(), "block " + entityId + " has exact durability; it never rolls back");
    }
    if (state.checkpoint(cmd.step()) == null) {
      return error(cmd.replyTo(), "block " + entityId + " cannot roll back to step " + cmd.step()
          + ": it holds checkpoints " + state.checkpointSteps());
    }
    if (cmd.generation() <= state.generation()) {
      // A repeated rollback (the master re-sends until every block answered): already done.
      return Effect().reply(cmd.replyTo(), StatusReply.success(state.version()));
    }
    // Captures waiting for versions of the abandoned timeline will never be answered from it.
    for (List<Checkpoint> waiting : pendingCaptures.values()) {
      for (Checkpoint c : waiting) {
        c.replyTo().tell(StatusReply.error("block " + entityId + " rolled back to step " + cmd.step()));
      }
    }
    pendingCaptures.clear();
    return Effect().persist(new RolledBackTo(cmd.step(), cmd.generation())).thenRun(s -> {
      context.getLog().info("parameter block {} rolled back to its checkpoint at step {} (generation {})", entityId,
          cmd.step(), cmd.generation());
      afterChange(s);
      cmd.replyTo().tell(StatusReply.success(s.version()));
    });
  }

  /** Answers the checkpoint requests the version now satisfies (exact durability captures here). */
  private void answerCaptures(State state) {
    if (pendingCaptures.isEmpty()) return;
    Iterator<Map.Entry<Long, List<Checkpoint>>> it = pendingCaptures.headMap(state.version(), true).entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Long, List<Checkpoint>> e = it.next();
      long step = e.getKey();
      it.remove();
      if (step == state.version() && !settings.checkpointDurability()) {
        long keepFrom = 0;
        for (Checkpoint c : e.getValue()) keepFrom = Math.max(keepFrom, c.keepFrom());
        state.checkpoints.headMap(Math.min(keepFrom, step)).clear();
        state.checkpoints.put(step, state.capture());
      }
      Held h = state.checkpoint(step);
      for (Checkpoint c : e.getValue()) {
        if (h == null) {
          c.replyTo().tell(StatusReply.error("block " + entityId + " passed step " + step + " without capturing it"
              + " (it is at version " + state.version() + ")"));
        } else {
          c.replyTo().tell(StatusReply.success(new Captured(entityId, step, h.updates(), h.slots().length)));
        }
      }
    }
  }

  /** After a persisted change: answer pulls the version now satisfies, and arm or stop the barrier timer. */
  private void afterChange(State state) {
    // Captures first: their replies must not wait behind a pull answer that lets trainers move on.
    answerCaptures(state);
    answerPulls(state);
    boolean waiting = state.isSync() && !state.pending.isEmpty();
    if (waiting && !timers.isTimerActive(BARRIER_TIMER)) {
      pendingSinceNanos = System.nanoTime();
      timers.startTimerWithFixedDelay(BARRIER_TIMER, BarrierCheck.INSTANCE, settings.barrierWarnAfter());
    } else if (!waiting) {
      timers.cancel(BARRIER_TIMER);
    }
  }

  private void answerPulls(State state) {
    if (pendingPulls.isEmpty()) return;
    Iterator<Map.Entry<Long, Pull>> it = pendingPulls.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Long, Pull> e = it.next();
      if (e.getValue().minVersion() <= state.version()) {
        it.remove();
        timers.cancel(pullTimerKey(e.getKey()));
        answer(state, e.getValue());
      }
    }
  }

  private static String pullTimerKey(long id) {
    return "pull-" + id;
  }

  /**
   * Answers {@code pull}: inline, or, when the pull gave a bulk address of another node and this
   * node's bulk channel carries payloads of this size, as a {@link ValuesLetter} sent there. Either
   * way the version's own array, which no update changes (copy-on-write). With a bulk address the
   * reply names this block's actor, so the puller can push to it by letter.
   */
  private void answer(State state, Pull pull) {
    BlockSpec spec = state.spec();
    float[] values = state.values;
    BulkAddress to = pull.replyBulk();
    ActorRef<StatusReply<BlockValues>> replyTo = pull.replyTo();
    if (to == null || !bulk().isEnabled()) {
      replyTo.tell(StatusReply.success(
          new BlockValues(spec.parameter(), spec.index(), spec.offset(), state.version(), values)));
      return;
    }
    BulkAddress node = bulkAddress();
    BlockValues reply = new BlockValues(spec.parameter(), spec.index(), spec.offset(), state.version(), values,
        node, context.getSelf());
    if (to.equals(node) || !bulk().settings().carries(values.length)) {
      replyTo.tell(StatusReply.success(reply));
      return;
    }
    bulkPulls++;
    org.slf4j.Logger log = context.getSystem().log();
    String block = entityId;
    bulk().sendLetter(to.socketAddress(), new ValuesLetter(replyTo, reply.withValues(null)), values, 0, values.length)
        .whenComplete((done, failure) -> {
          if (failure == null) return;
          log.warn("block {}: values of version {} to {} failed: {}", block, reply.version(), to, failure.getMessage());
          replyTo.tell(StatusReply.error(BULK_REPLY_FAILED + failure.getMessage()));
        });
  }

  /** How the error reply to a pull whose values could not be sent by bulk begins; the puller pulls inline. */
  public static final String BULK_REPLY_FAILED = "bulk reply failed: ";

  private BulkTransport bulk() {
    // Started on first use: blocks that only ever see inline traffic open no socket.
    if (bulk == null) bulk = BulkTransport.get(context.getSystem());
    return bulk;
  }

  /** Where this node's bulk channel takes payloads; only while it is enabled. */
  private BulkAddress bulkAddress() {
    if (bulkAddress == null) bulkAddress = BulkAddress.of(bulk().address());
    return bulkAddress;
  }

  private <T> Effect<Event, State> error(ActorRef<StatusReply<T>> replyTo, String message) {
    letterReplies.remove(replyTo);
    if (replyTo != null) replyTo.tell(StatusReply.error(message));
    return Effect().none();
  }
}
