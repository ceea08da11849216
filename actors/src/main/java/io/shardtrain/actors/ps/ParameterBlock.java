package io.shardtrain.actors.ps;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
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
import io.shardtrain.actors.metrics.BlockMeters;
import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.ReplicaPublished;
import io.shardtrain.actors.ps.BlockEvents.RolledBackTo;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockProtocol.BarrierCheck;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Captured;
import io.shardtrain.actors.ps.BlockProtocol.Checkpoint;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.GetStats;
import io.shardtrain.actors.ps.BlockProtocol.GetTaskMark;
import io.shardtrain.actors.ps.BlockProtocol.IdleCheck;
import io.shardtrain.actors.ps.BlockProtocol.Leave;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.LetterPush;
import io.shardtrain.actors.ps.BlockProtocol.Publish;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PullTimedOut;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.ReadCheckpoint;
import io.shardtrain.actors.ps.BlockProtocol.RollBack;
import io.shardtrain.actors.ps.BlockProtocol.RolledBack;
import io.shardtrain.actors.ps.BlockProtocol.UpdateMembership;
import io.shardtrain.actors.ps.BlockProtocol.WriteGroup;
import io.shardtrain.actors.ps.BlockState.Held;
import io.shardtrain.actors.sharding.IdleWatch;
import io.shardtrain.actors.sharding.Passivation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * One parameter block: a Cluster Sharding entity on role {@code ps} that owns a slice of one
 * parameter (values, optimizer slots, update count, version) and applies trainers' gradients to it.
 * The actor routes commands and decides what to persist; the state ({@link BlockState}, its
 * {@link SyncBarrier}), the math ({@link io.shardtrain.compute.optim.BlockUpdate}) and what gets
 * journaled ({@link BlockDurability}, chosen once from the settings) live apart from it.
 *
 * <p>SYNC: version {@code v} counts the steps applied. Pushes for step {@code v+1} are held in
 * memory until every trainer of the current membership has contributed; their weighted mean is
 * applied and journaled once ({@link StepCommitted}), and only then are the pushes acknowledged (a
 * block that moves journals the contributions it holds first). ASYNC: each push is journaled and
 * applied at once, optionally refused when its base is too stale. Replaying the journal rebuilds the
 * state bit for bit, a duplicate (trainer, step) is acknowledged without being applied again, and a
 * malformed command gets an error reply and changes nothing. {@link Pull} waits for a version.
 *
 * <p>CHECKPOINTS (sync): {@link Checkpoint} captures values, slots and update count at exactly one
 * version (when the block applies that step, or at once if it is there), so the master can read
 * every block at one step. With checkpoint durability ({@code shardtrain.ps.durability}) gradients
 * and steps are applied in memory only and the captures ({@link CheckpointTaken}) are what the
 * journal holds, so a recovery lands on the newest capture; {@link RollBack} returns to a held
 * capture under a new generation, and pushes of older generations are refused as {@link RolledBack}.
 */
public final class ParameterBlock extends EventSourcedBehavior<Command, Event, BlockState> {

  /** The sharding type of parameter blocks. */
  public static final EntityTypeKey<Command> ENTITY_KEY = EntityTypeKey.create(Command.class, "ParameterBlock");
  /** The cluster role whose nodes host parameter blocks. */
  public static final String ROLE = "ps";

  /** Starts sharding of parameter blocks on nodes with role {@value #ROLE}; returns the shard region. */
  public static ActorRef<ShardingEnvelope<Command>> init(ActorSystem<?> system) {
    PsSettings settings = PsSettings.create(system);
    return ClusterSharding.get(system).init(
        Entity.of(ENTITY_KEY, ctx -> Passivation.onRetire(create(ctx.getEntityId(), settings), Command.class,
            BlockProtocol.Retire.class, ctx.getShard())).withRole(ROLE)
            .withStopMessage(BlockProtocol.HandOff.INSTANCE));
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
  private final BlockCounters counters;
  private final BlockReplies replies;
  private final BlockRules rules;
  private final PendingPulls pulls = new PendingPulls();
  private final PendingCaptures captures = new PendingCaptures();
  /** Sync pushes acknowledged once their step is applied, by step. */
  private final ByVersion<PendingAck> heldAcks = new ByVersion<>();
  private final GroupCommit unwritten = new GroupCommit();
  private final IdleWatch<Command> idle;
  /** Async: a group write just ended, so pushes wait for the {@link WriteGroup} that follows it. */
  private boolean grouping;
  private long pendingSinceNanos;

  private ParameterBlock(String entityId, PsSettings settings, ActorContext<Command> context,
      TimerScheduler<Command> timers) {
    super(PersistenceId.of(ENTITY_KEY.name(), entityId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(10), 0.2));
    this.entityId = entityId;
    this.settings = settings;
    this.durability = BlockDurability.of(settings);
    this.context = context;
    this.timers = timers;
    this.counters = new BlockCounters(BlockMeters.of(context.getSystem(), entityId));
    this.replies = new BlockReplies(context, entityId, counters);
    this.rules = new BlockRules(entityId, settings, durability, counters);
    // Under checkpoint durability leaving memory would drop the steps since the last checkpoint.
    this.idle = new IdleWatch<>(context, timers, durability.rollsBack() ? Duration.ZERO : settings.idlePassivation(),
        IdleCheck.INSTANCE, new BlockProtocol.Retire());
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
    return durability.snapshotAdapter();
  }

  @Override
  public SignalHandler<BlockState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.class, (state, signal) -> {
          // A journal failure restarts this same object; pushes waiting for a write were never acknowledged.
          unwritten.take();
          grouping = false;
          counters.eventsReplayed = counters.eventsHandled;
          afterChange(state);
        })
        .onSignal(PostStop.class, (state, signal) -> counters.meters.close())
        .build();
  }

  @Override
  public CommandHandler<Command, Event, BlockState> commandHandler() {
    return idle.hearing(newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(Initialize.class, (s, c) -> initialize(s, rules.initializeRefusal(s, c),
            () -> new Initialized(c.spec(), c.values().clone()), c.replyTo()))
        .onCommand(BlockProtocol.Resume.class, (s, c) -> initialize(s, rules.resumeRefusal(s, c), c::state, c.replyTo()))
        .onCommand(PushGradient.class, this::onPush)
        .onCommand(LetterPush.class, (state, m) -> onPush(state, replies.opened(m)))
        .onCommand(Pull.class, this::onPull)
        .onCommand(Publish.class, this::onPublish)
        .onCommand(UpdateMembership.class, this::onUpdateMembership)
        .onCommand(GetStats.class, (state, cmd) ->
            Effect().reply(cmd.replyTo(), counters.stats(entityId, state, waitingPulls())))
        .onCommand(PullTimedOut.class, this::onPullTimedOut)
        .onCommand(BarrierCheck.class, (state, check) -> onBarrierCheck(state))
        .onCommand(Leave.class, (state, h) -> onHandOff(state))
        .onCommand(Checkpoint.class, this::onCheckpoint)
        .onCommand(ReadCheckpoint.class, this::onReadCheckpoint)
        .onCommand(RollBack.class, this::onRollBack)
        .onCommand(WriteGroup.class, (state, w) -> onWriteGroup(state))
        // Pushes accepted before the question count: the master settles a task with the answer.
        .onCommand(GetTaskMark.class, (state, cmd) -> writeGroup(state).thenRun(s ->
            cmd.replyTo().tell(StatusReply.success(s.taskProgress(cmd.epoch(), cmd.task())))))
        .onCommand(IdleCheck.class, (state, check) -> Effect().none().thenRun(s -> idle.check()))
        .build());
  }

  @Override
  public EventHandler<BlockState, Event> eventHandler() {
    return counters::handled;
  }

  // ---------------------------------------------------------------------------------------------
  // Initialize and pushes

  /** Persists the {@code initialized} event unless refused; an initialised block answers its version. */
  private Effect<Event, BlockState> initialize(BlockState state, String refused,
      java.util.function.Supplier<Event> initialized, ActorRef<StatusReply<Long>> replyTo) {
    if (refused != null) return error(replyTo, refused);
    if (state.isInitialised()) return Effect().reply(replyTo, StatusReply.success(state.version()));
    return Effect().persist(initialized.get()).thenRun(s -> replyTo.tell(StatusReply.success(s.version())));
  }

  private Effect<Event, BlockState> onPush(BlockState state, PushGradient cmd) {
    BlockRules.PushOutcome outcome = rules.push(state, cmd, unwritten);
    if (outcome.error() != null) return error(cmd.replyTo(), outcome.error());
    if (outcome.events().isEmpty()) return Effect().none().thenRun(s -> acknowledge(s, cmd, outcome.ack()));
    if (!state.isSync()) {
      unwritten.add((GradientApplied) outcome.events().get(0),
          new PendingAck(cmd.replyTo(), outcome.ack(), cmd.wanted()));
      // Idle: write at once. Right after a write: wait for the group that arrived during it.
      return grouping ? Effect().none() : writeGroup(state);
    }
    return record(state, outcome.events()).thenRun(s -> {
      afterChange(s);
      acknowledge(s, cmd, outcome.ack());
    });
  }

  /**
   * Group commit of async pushes: pushes that arrive while a write is in flight are stashed by the
   * persistence runtime and handed in again right after it, before anything else in the mailbox; so
   * a {@link WriteGroup} sent to itself when a write ends finds them all in {@link #unwritten} and
   * journals them in one write. When it finds none the block is idle and the next push is written
   * at once.
   */
  private Effect<Event, BlockState> onWriteGroup(BlockState state) {
    grouping = false;
    return writeGroup(state);
  }

  /** Journals and applies the unwritten pushes in one write, then acknowledges them; nothing when none wait. */
  private EffectBuilder<Event, BlockState> writeGroup(BlockState state) {
    if (unwritten.isEmpty()) return Effect().none();
    List<GroupCommit.Waiting> group = unwritten.take();
    List<Event> events = GroupCommit.events(group);
    grouping = true;
    return record(state, events).thenRun(s -> {
      afterChange(s);
      for (GroupCommit.Waiting w : group) send(w.ack(), s);
      context.getSelf().tell(WriteGroup.INSTANCE);
    });
  }

  /**
   * Acknowledges {@code cmd} with {@code ack} of the version reached (null: held for a group's write),
   * unless the durability acknowledges a sync push with its step and that step is not applied yet.
   */
  private void acknowledge(BlockState s, PushGradient cmd, LongFunction<PushAck> ack) {
    if (ack == null) return;
    PendingAck pending = new PendingAck(cmd.replyTo(), ack, cmd.wanted());
    if (durability.acksWithStep() && s.isSync() && cmd.step() > s.version()) {
      heldAcks.add(cmd.step(), pending);
    } else {
      send(pending, s);
    }
  }

  private Effect<Event, BlockState> onPublish(BlockState state, Publish cmd) {
    String refused = rules.publishRefusal(state, cmd);
    if (refused != null) return error(cmd.replyTo(), refused);
    if (!state.takes(cmd)) return Effect().reply(cmd.replyTo(), StatusReply.success(state.version()));
    return record(state, List.of(new ReplicaPublished(cmd.step(), cmd.ringEpoch(), cmd.examples(), cmd.values()))).thenRun(s -> {
      afterChange(s);
      cmd.replyTo().tell(StatusReply.success(s.version()));
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Pulls, membership, hand-off and the barrier's warning

  private Effect<Event, BlockState> onPull(BlockState state, Pull cmd) {
    counters.pulls++;
    String refused = rules.pullRefusal(state, cmd);
    if (refused != null) return error(cmd.replyTo(), refused);
    if (cmd.minVersion() <= state.version()) {
      return Effect().none().thenRun(s -> replies.answer(s, cmd));
    }
    long id = pulls.add(cmd);
    timers.startSingleTimer(pullTimerKey(id), new PullTimedOut(id), settings.pullTimeout());
    return Effect().none();
  }

  private Effect<Event, BlockState> onPullTimedOut(BlockState state, PullTimedOut timeout) {
    Pull pull = pulls.remove(timeout.pullId());
    if (pull != null) {
      counters.pullTimeouts++;
      replies.error(pull.replyTo(), "block " + entityId + " did not reach version " + pull.minVersion()
          + " within " + settings.pullTimeout().toMillis() + " ms (it is at version " + state.version() + ")");
    }
    return Effect().none();
  }

  private Effect<Event, BlockState> onUpdateMembership(BlockState state, UpdateMembership cmd) {
    String refused = rules.membershipRefusal(cmd);
    if (refused != null) return error(cmd.replyTo(), refused);
    if (cmd.epoch() <= state.membershipEpoch()) {
      // An older or repeated epoch: the master's newer word is already in force.
      return Effect().reply(cmd.replyTo(), StatusReply.success(state.membershipEpoch()));
    }
    List<String> members = List.copyOf(new LinkedHashSet<>(cmd.trainers()));
    List<Event> events = new ArrayList<>();
    events.add(new MembershipUpdated(cmd.epoch(), members));
    boolean completes = state.isSync() && state.barrier().completeUnder(cmd.epoch(), members);
    if (completes) events.add(new StepApplied(state.version() + 1));
    // The master reads the task marks of trainers that left; the contributions held in memory that
    // those marks count must then survive this block's failure, so they are journaled with it.
    List<Event> journaled = durability.acksWithStep() && !completes ? state.pendingEvents() : new ArrayList<>();
    journaled.addAll(durability.record(state, events, captures));
    return persist(journaled).thenRun(s -> {
      afterChange(s);
      cmd.replyTo().tell(StatusReply.success(s.membershipEpoch()));
    });
  }

  private Effect<Event, BlockState> onHandOff(BlockState state) {
    // Everything acknowledged is journaled already. The contributions to the pending step are
    // journaled now (a replay takes each trainer's once), so the block's next home has them and
    // their pushes are acknowledged instead of sent again. The waiting pulls are told to ask again.
    List<Event> kept = durability.acksWithStep() ? state.pendingEvents() : new ArrayList<>();
    List<GroupCommit.Waiting> group = unwritten.take();
    kept.addAll(GroupCommit.events(group));
    Map<Long, Pull> waiting = pulls.takeAll();
    counters.meters.waitingFor(List.of());
    for (Map.Entry<Long, Pull> e : waiting.entrySet()) {
      timers.cancel(pullTimerKey(e.getKey()));
      e.getValue().replyTo().tell(StatusReply.error("block " + entityId + " is moving to another node (at version "
          + state.version() + "); pull version " + e.getValue().minVersion() + " again"));
    }
    context.getLog().info("parameter block {} hands off at version {}; {} waiting pulls told to ask again, {}"
        + " contributions to the pending step journaled", entityId, state.version(), waiting.size(), kept.size());
    if (kept.isEmpty()) return Effect().stop();
    return Effect().persist(kept).thenRun(s -> {
      for (PendingAck a : heldAcks.takeAll()) send(a, s);
      for (GroupCommit.Waiting w : group) send(w.ack(), s);
    }).thenStop();
  }

  private Effect<Event, BlockState> onBarrierCheck(BlockState state) {
    if (!state.isWaiting()) {
      timers.cancel(BARRIER_TIMER);
      return Effect().none();
    }
    context.getLog().warn("parameter block {} has waited {} ms for step {}: missing trainers {} of membership epoch {}"
            + " (contributed: {})", entityId, (System.nanoTime() - pendingSinceNanos) / 1_000_000,
        state.version() + 1, state.barrier().missing(), state.membershipEpoch(), state.barrier().contributors());
    return Effect().none();
  }

  // ---------------------------------------------------------------------------------------------
  // Checkpoints

  private Effect<Event, BlockState> onCheckpoint(BlockState state, Checkpoint cmd) {
    String refused = rules.checkpointRefusal(state, cmd);
    if (refused != null) return error(cmd.replyTo(), refused);
    captures.add(cmd);
    if (cmd.step() > state.version()) return Effect().none();
    return record(state, List.of()).thenRun(this::afterChange);
  }

  private Effect<Event, BlockState> onReadCheckpoint(BlockState state, ReadCheckpoint cmd) {
    String refused = rules.readRefusal(state, cmd);
    if (refused != null) return error(cmd.replyTo(), refused);
    Held h = state.checkpoint(cmd.step());
    float[] v = cmd.part() == 0 ? h.values() : h.slots()[cmd.part() - 1];
    BlockSpec spec = state.spec();
    return Effect().reply(cmd.replyTo(),
        StatusReply.success(new BlockValues(spec.parameter(), spec.index(), spec.offset(), cmd.step(), v.clone())));
  }

  private Effect<Event, BlockState> onRollBack(BlockState state, RollBack cmd) {
    String refused = rules.rollBackRefusal(state, cmd);
    if (refused != null) return error(cmd.replyTo(), refused);
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
          c.replyTo().tell(StatusReply.success(new Captured(entityId, step, h.updates(), h.slots().length, h.examples())));
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** Journals what the durability journals of {@code events}; it applies the rest to {@code state} itself. */
  private EffectBuilder<Event, BlockState> record(BlockState state, List<Event> events) {
    long version = state.version();
    long start = System.nanoTime();
    List<Event> journaled = durability.record(state, events, captures);
    // Checkpoint durability applies steps here rather than in the event handler.
    if (state.version() > version) counters.meters.applied(System.nanoTime() - start);
    return persist(journaled);
  }

  private EffectBuilder<Event, BlockState> persist(List<Event> events) {
    if (events.isEmpty()) return Effect().none();
    long start = System.nanoTime();
    return Effect().persist(events).thenRun(s -> counters.meters.journaled(System.nanoTime() - start));
  }

  /** After a change: answer captures and pulls the version now satisfies, and arm or stop the barrier timer. */
  private void afterChange(BlockState state) {
    // Captures first: their replies must not wait behind a pull answer that lets trainers move on.
    answerCaptures(state);
    for (List<PendingAck> reached : heldAcks.takeUpTo(state.version()).values()) {
      for (PendingAck a : reached) send(a, state);
    }
    answerPulls(state);
    boolean waiting = state.isWaiting();
    if (waiting && !timers.isTimerActive(BARRIER_TIMER)) {
      pendingSinceNanos = System.nanoTime();
      timers.startTimerWithFixedDelay(BARRIER_TIMER, BarrierCheck.INSTANCE, settings.barrierWarnAfter());
    } else if (!waiting) {
      if (timers.isTimerActive(BARRIER_TIMER)) counters.meters.barrierClosed(System.nanoTime() - pendingSinceNanos);
      timers.cancel(BARRIER_TIMER);
    }
    counters.meters.waitingFor(waiting ? state.barrier().missing() : List.of());
    idle.watch(state.isInitialised() && state.barrier().unused());
  }

  private void answerPulls(BlockState state) {
    for (Map.Entry<Long, Pull> e : pulls.takeReached(state.version()).entrySet()) {
      timers.cancel(pullTimerKey(e.getKey()));
      replies.answer(state, e.getValue());
    }
  }

  /** Sends {@code a} with the version {@code state} is at, and its values when they were asked for and are there. */
  private void send(PendingAck a, BlockState state) {
    replies.ack(a.replyTo(), a.ack().apply(state.version()), a.wanted(), state);
  }

  /** Pulls waiting for a version: on their own, or travelling with a sync push held for its step. */
  private int waitingPulls() {
    return pulls.size() + heldAcks.count(PendingAck::wantsValues);
  }

  private static String pullTimerKey(long id) {
    return "pull-" + id;
  }

  private <T> Effect<Event, BlockState> error(ActorRef<StatusReply<T>> replyTo, String message) {
    replies.error(replyTo, message);
    return Effect().none();
  }
}
