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
import akka.persistence.typed.javadsl.EffectBuilder;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.RetentionCriteria;
import akka.persistence.typed.javadsl.SignalHandler;
import io.shardtrain.actors.ps.BlockEvents.*;
import io.shardtrain.actors.ps.BlockProtocol.*;
import io.shardtrain.actors.ps.BlockState.Held;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.compute.NumericChecks;
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
    extends EventSourcedBehavior<Command, Event, BlockState> {

  /** The sharding type of parameter blocks. */
  public static final EntityTypeKey<Command> ENTITY_KEY = EntityTypeKey.create(Command.class, "ParameterBlock");
  /** The cluster role whose nodes host parameter blocks. */
  public static final String ROLE = "ps";

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
  private final BlockDurability durability;
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final TreeMap<Long, Pull> pendingPulls = new TreeMap<>();
  /** Pushes that came by letter and are not answered yet: where their reply letters go. */
  private final Map<ActorRef<?>, BulkAddress> letterReplies = new java.util.HashMap<>();
  private final PendingCaptures captures = new PendingCaptures();
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
    this.durability = BlockDurability.of(settings);
    this.context = context;
    this.timers = timers;
  }

  @Override
  public BlockState emptyState() {
    return new BlockState();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(settings.snapshotEvery(), 2).withDeleteEventsOnSnapshot();
  }

  @Override
  public SnapshotAdapter<BlockState> snapshotAdapter() {
    return new SnapshotAdapter<>() {
      @Override
      public Object toJournal(BlockState state) {
        return durability.snapshot(state);
      }

      @Override
      public BlockState fromJournal(Object from) {
        return ((BlockState) from).copy();
      }
    };
  }

  @Override
  public SignalHandler<BlockState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.class, (state, signal) -> {
          eventsReplayed = eventsHandled;
          afterChange(state);
        })
        .build();
  }

  @Override
  public CommandHandler<Command, Event, BlockState> commandHandler() {
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
  public EventHandler<BlockState, Event> eventHandler() {
    return (s, e) -> counted(s.apply(e));
  }

  private BlockState counted(BlockState s) {
    eventsHandled++;
    return s;
  }

  // ---------------------------------------------------------------------------------------------
  // Command handlers

  private Effect<Event, BlockState> onInitialize(BlockState state, Initialize cmd) {
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
    String refusal = durability.refusal(spec);
    if (refusal != null) return error(cmd.replyTo(), refusal);
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

  private Effect<Event, BlockState> onPush(BlockState state, PushGradient cmd) {
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
  private Effect<Event, BlockState> onLetterPush(BlockState state, LetterPush m) {
    bulkPushes++;
    letterReplies.put(m.push().replyTo(), m.replyBulk());
    return onPush(state, m.push());
  }

  private Effect<Event, BlockState> acked(ActorRef<StatusReply<PushAck>> replyTo, PushAck ack) {
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

  private Effect<Event, BlockState> onSyncPush(BlockState state, PushGradient cmd) {
    long v = state.version();
    String trainer = cmd.trainerId();
    if (durability.leftBehind(state, cmd)) return acked(cmd.replyTo(), new RolledBack(v));
    if (cmd.step() <= v || (cmd.step() == v + 1 && state.barrier().hasContributed(trainer))) {
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
    boolean completes = state.barrier().completedBy(trainer);
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

  private Effect<Event, BlockState> onAsyncPush(BlockState state, PushGradient cmd) {
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

  private Effect<Event, BlockState> onPull(BlockState state, Pull cmd) {
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

  private Effect<Event, BlockState> onPullTimedOut(BlockState state, PullTimedOut timeout) {
    Pull pull = pendingPulls.remove(timeout.pullId());
    if (pull != null) {
      pullTimeouts++;
      pull.replyTo().tell(StatusReply.error("block " + entityId + " did not reach version " + pull.minVersion()
          + " within " + settings.pullTimeout().toMillis() + " ms (it is at version " + state.version() + ")"));
    }
    return Effect().none();
  }

  private Effect<Event, BlockState> onUpdateMembership(BlockState state, UpdateMembership cmd) {
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
    if (state.isSync() && state.barrier().completeUnder(cmd.epoch(), members)) {
      events.add(new StepApplied(state.version() + 1));
    }
    return record(state, events).thenRun(s -> {
      afterChange(s);
      cmd.replyTo().tell(StatusReply.success(s.membershipEpoch()));
    });
  }

  private Effect<Event, BlockState> onGetStats(BlockState state, GetStats cmd) {
    boolean waiting = state.isWaiting();
    cmd.replyTo().tell(new BlockStats(entityId, state.isInitialised(), state.version(), state.updates(), pushes,
        duplicates, rejectedStale, rejectedNonFinite, rejectedBadLength, rejectedNotInitialised, rejectedAhead,
        rejectedMalformed, skippedNonFinite, pullTimeouts, waiting ? state.version() + 1 : -1,
        waiting ? state.barrier().missing() : List.of(), state.membershipEpoch(), pendingPulls.size(), eventsReplayed,
        bulkPushes, bulkPulls, state.examplesApplied()));
    return Effect().none();
  }

  private Effect<Event, BlockState> onHandOff(BlockState state) {
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

  private Effect<Event, BlockState> onBarrierCheck(BlockState state) {
    if (!state.isWaiting()) {
      timers.cancel(BARRIER_TIMER);
      return Effect().none();
    }
    context.getLog().warn("parameter block {} has waited {} ms for step {}: missing trainers {} of membership epoch {}"
            + " (contributed: {})", entityId, (System.nanoTime() - pendingSinceNanos) / 1_000_000,
        state.version() + 1, state.barrier().missing(), state.membershipEpoch(),
        state.barrier().contributors());
    return Effect().none();
  }

  // ---------------------------------------------------------------------------------------------

  /** Journals what the durability journals of {@code events}; it applies the rest to {@code state} itself. */
  private EffectBuilder<Event, BlockState> record(BlockState state, List<Event> events) {
    List<Event> journaled = durability.record(state, events, captures);
    return journaled.isEmpty() ? Effect().none() : Effect().persist(journaled);
  }

  private Effect<Event, BlockState> onCheckpoint(BlockState state, Checkpoint cmd) {
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
    captures.add(cmd);
    if (cmd.step() > state.version()) return Effect().none();
    return record(state, List.of()).thenRun(this::afterChange);
  }

  private Effect<Event, BlockState> onReadCheckpoint(BlockState state, ReadCheckpoint cmd) {
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

  private Effect<Event, BlockState> onRollBack(BlockState state, RollBack cmd) {
    if (!durability.rollsBack()) {
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
    for (Checkpoint c : captures.takeAll()) {
      c.replyTo().tell(StatusReply.error("block " + entityId + " rolled back to step " + cmd.step()));
    }
    return Effect().persist(new RolledBackTo(cmd.step(), cmd.generation())).thenRun(s -> {
      context.getLog().info("parameter block {} rolled back to its checkpoint at step {} (generation {})", entityId,
          cmd.step(), cmd.generation());
      afterChange(s);
      cmd.replyTo().tell(StatusReply.success(s.version()));
    });
  }

  /** Answers the checkpoint requests the version now satisfies. */
  private void answerCaptures(BlockState state) {
    if (captures.isEmpty()) return;
    for (Map.Entry<Long, List<Checkpoint>> e : captures.takeUpTo(state.version()).entrySet()) {
      long step = e.getKey();
      Held h = durability.captured(state, step, PendingCaptures.keepFrom(step, e.getValue()));
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
  private void afterChange(BlockState state) {
    // Captures first: their replies must not wait behind a pull answer that lets trainers move on.
    answerCaptures(state);
    answerPulls(state);
    boolean waiting = state.isWaiting();
    if (waiting && !timers.isTimerActive(BARRIER_TIMER)) {
      pendingSinceNanos = System.nanoTime();
      timers.startTimerWithFixedDelay(BARRIER_TIMER, BarrierCheck.INSTANCE, settings.barrierWarnAfter());
    } else if (!waiting) {
      timers.cancel(BARRIER_TIMER);
    }
  }

  private void answerPulls(BlockState state) {
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
  private void answer(BlockState state, Pull pull) {
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

  private <T> Effect<Event, BlockState> error(ActorRef<StatusReply<T>> replyTo, String message) {
    letterReplies.remove(replyTo);
    if (replyTo != null) replyTo.tell(StatusReply.error(message));
    return Effect().none();
  }
}
