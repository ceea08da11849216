package io.shardtrain.actors.sparse;

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
import akka.actor.typed.PostStop;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.RecoveryCompleted;
import akka.persistence.typed.SnapshotAdapter;
import akka.persistence.typed.SnapshotSelectionCriteria;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.Effect;
import akka.persistence.typed.javadsl.EffectBuilder;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.Recovery;
import akka.persistence.typed.javadsl.SignalHandler;
import io.shardtrain.actors.metrics.NodeMetrics;
import io.shardtrain.actors.metrics.SparseMeters;
import io.shardtrain.actors.sharding.IdleWatch;
import io.shardtrain.actors.sharding.Passivation;
import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseEvents.MembershipUpdated;
import io.shardtrain.actors.sparse.SparseEvents.ShardHeader;
import io.shardtrain.actors.sparse.SparseEvents.ShardInitialized;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotBegun;
import io.shardtrain.actors.sparse.SparseProtocol.Accepted;
import io.shardtrain.actors.sparse.SparseProtocol.Applied;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.GetStats;
import io.shardtrain.actors.sparse.SparseProtocol.HandOff;
import io.shardtrain.actors.sparse.SparseProtocol.Leave;
import io.shardtrain.actors.sparse.SparseProtocol.InitShard;
import io.shardtrain.actors.sparse.SparseProtocol.MembershipInForce;
import io.shardtrain.actors.sparse.SparseProtocol.Problem;
import io.shardtrain.actors.sparse.SparseProtocol.PullRows;
import io.shardtrain.actors.sparse.SparseProtocol.PullTimedOut;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.actors.sparse.SparseProtocol.PushRows;
import io.shardtrain.actors.sparse.SparseProtocol.Refused;
import io.shardtrain.actors.sparse.SparseProtocol.ShardReady;
import io.shardtrain.actors.sparse.SparseProtocol.ShardStats;
import io.shardtrain.actors.sparse.SparseProtocol.TakeSnapshot;
import io.shardtrain.actors.sparse.SparseProtocol.UpdateMembership;
import io.shardtrain.actors.sparse.SparseProtocol.WriteChunks;
import io.shardtrain.compute.sparse.RowIds;
import io.shardtrain.persistence.journal.JournalEraser;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard of a sparse table: a Cluster Sharding entity on role {@code ps} (entity id
 * {@code table/shard}) holding the rows whose ids hash to it ({@link TableSpec#shardOf}), event
 * sourced. The actor routes and persists; the rows, admission and expiry are
 * {@link io.shardtrain.compute.sparse.SparseTable}, the decisions {@link ShardRules}, the state
 * {@link ShardState}.
 *
 * <p>SYNC: pushes for step {@code v+1} are held in memory until every trainer of the membership
 * pushed (an empty push counts); then the weighted mean of their rows
 * ({@link io.shardtrain.compute.sparse.RowGradientSum}: a row several trainers carried gets one
 * optimizer apply of their summed gradient) is journaled as {@link SparseEvents.StepCommitted}
 * parts, with the rows the step leaves expired, in one atomic write, and only then are the step's
 * pushes acknowledged. ASYNC: each push is journaled and applied at once. Either way a duplicate
 * (trainer, step) is acknowledged as {@link SparseProtocol.Duplicate} without being applied, and a
 * bad request is answered with a {@link Refused} naming its problem and changes nothing. Admission
 * counts are rebuilt by replaying the steps (each carries its rows' sightings); evictions are
 * journaled as {@link SparseEvents.RowsExpired}.
 *
 * <p>SNAPSHOTS are chunked so that no snapshot and no event exceeds
 * {@code shardtrain.sparse.max-event-bytes}: every {@code snapshot-every} events the shard
 * journals a {@link SnapshotBegun}, which makes Akka save the snapshot, and the snapshot store gets
 * only the shard's small {@link ShardHeader}. Right after it the shard journals, in one atomic
 * write, its rows and admission counters as {@link SparseEvents.RowsSaved} and
 * {@link SparseEvents.SketchSaved} chunks and a {@link SparseEvents.SnapshotCompleted}, stashing
 * every other command meanwhile, so the chunks hold exactly the state of the header. A recovery
 * loads the header and replays the chunks (and the events after them) onto it. If the shard died
 * between the header and its chunks, the recovery finds the header's rows missing and starts again
 * from the snapshot before it ({@code fallbackBelow}). So once a snapshot is whole, the events up to
 * the snapshot before it, and the snapshots older than that one, are deleted: the journal holds at
 * most two snapshots' rows and the events since the older one.
 */
public final class SparseShard extends EventSourcedBehavior<Command, Event, ShardState> {

  /** The sharding type of sparse table shards. */
  public static final EntityTypeKey<Command> ENTITY_KEY = EntityTypeKey.create(Command.class, "SparseShard");
  /** The cluster role whose nodes host them. */
  public static final String ROLE = "ps";
  /** Bounds only how long a failed deletion of old events goes unreported. */
  private static final Duration TRIM_TIMEOUT = Duration.ofMinutes(1);
  private static final Logger LOG = LoggerFactory.getLogger(SparseShard.class);

  /** Starts sharding of sparse shards on nodes with role {@value #ROLE}; returns the shard region. */
  public static ActorRef<ShardingEnvelope<Command>> init(ActorSystem<?> system) {
    SparseSettings settings = SparseSettings.create(system);
    return ClusterSharding.get(system).init(
        Entity.of(ENTITY_KEY, ctx -> Passivation.onRetire(create(ctx.getEntityId(), settings), Command.class,
            SparseProtocol.Retire.class, ctx.getShard())).withRole(ROLE)
            .withStopMessage(HandOff.INSTANCE));
  }

  /** A reference to shard {@code entityId} ({@code table/shard}) through sharding. */
  public static EntityRef<Command> entityRef(ActorSystem<?> system, String entityId) {
    return ClusterSharding.get(system).entityRefFor(ENTITY_KEY, entityId);
  }

  /** The behavior of shard {@code entityId}, persisted as {@code SparseShard|entityId}. */
  public static Behavior<Command> create(String entityId, SparseSettings settings) {
    if (entityId == null || entityId.isBlank()) throw new IllegalArgumentException("shard entity id must not be blank");
    if (settings == null) throw new IllegalArgumentException("sparse settings must not be null");
    // Survives restarts: a recovery that found a snapshot without its chunks sets it and fails; the
    // restart below builds a new behavior, whose recovery reads it (the persistence runtime's own
    // restart after a journal failure would recover the same way again).
    AtomicLong fallbackBelow = new AtomicLong(Long.MAX_VALUE);
    return Behaviors.supervise(Behaviors.<Command>setup(ctx -> Behaviors.<Command>withTimers(timers ->
            new SparseShard(entityId, settings, ctx, timers, fallbackBelow))))
        .onFailure(IllegalStateException.class,
            SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(10), 0.2));
  }

  private final String entityId;
  private final SparseSettings settings;
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final AtomicLong fallbackBelow;
  private final ShardRules rules;
  private final SparseMeters meters;
  /** Sync pushes of the pending step, acknowledged once it is applied. */
  private final List<ActorRef<PushReply>> held = new ArrayList<>();
  private final Map<Long, PullRows> pulls = new LinkedHashMap<>();
  private final RowsExport export = new RowsExport();
  private long nextPullId;
  private long pushes;
  private long duplicates;
  private long refused;
  private long snapshots;
  private long eventsHandled;
  private long eventsReplayed;
  private long replayStart;
  private long sinceSnapshot;
  private boolean chunking;
  /** Recovery found a snapshot without its rows: this behavior must not answer anything, only fail on {@code Recover}. */
  private boolean broken;
  private final IdleWatch<Command> idle;

  private SparseShard(String entityId, SparseSettings settings, ActorContext<Command> context,
      TimerScheduler<Command> timers, AtomicLong fallbackBelow) {
    super(PersistenceId.of(ENTITY_KEY.name(), entityId),
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(10), 0.2));
    this.entityId = entityId;
    this.settings = settings;
    this.context = context;
    this.timers = timers;
    this.fallbackBelow = fallbackBelow;
    this.rules = new ShardRules(entityId, settings);
    this.meters = NodeMetrics.get(context.getSystem()).sparseShard(entityId);
    this.idle = new IdleWatch<>(context, timers, settings.idlePassivation(), SparseProtocol.IdleCheck.INSTANCE,
        new SparseProtocol.Retire());
  }

  @Override
  public ShardState emptyState() {
    // Asked for when a recovery starts.
    replayStart = eventsHandled;
    return new ShardState();
  }

  @Override
  public Recovery recovery() {
    long below = fallbackBelow.get();
    return below == Long.MAX_VALUE ? super.recovery()
        : Recovery.withSnapshotSelectionCriteria(SnapshotSelectionCriteria.latest().withMaxSequenceNr(below - 1));
  }

  @Override
  public boolean shouldSnapshot(ShardState state, Event event, long sequenceNr) {
    return event instanceof SnapshotBegun;
  }

  @Override
  public SnapshotAdapter<ShardState> snapshotAdapter() {
    return new SnapshotAdapter<>() {
      @Override
      public Object toJournal(ShardState state) {
        return state.header();
      }

      @Override
      public ShardState fromJournal(Object from) {
        return ShardState.fromHeader((ShardHeader) from);
      }
    };
  }

  @Override
  public SignalHandler<ShardState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.class, (state, signal) -> {
          // After a journal failure the persistence runtime restarts this same object: what it held
          // in memory belonged to the failed run (held pushes and waiting pulls ask again).
          chunking = false;
          sinceSnapshot = 0;
          held.clear();
          for (Long id : pulls.keySet()) timers.cancel("pull-" + id);
          pulls.clear();
          if (state.restoring() >= 0) {
            // The snapshot's chunks never made it to the journal: the next command fails the actor, and
            // the restart recovers from the snapshot before it.
            fallbackBelow.set(state.sequenceNr);
            broken = true;
            context.getSelf().tell(SparseProtocol.Recover.INSTANCE);
          }
          eventsReplayed = eventsHandled - replayStart;
          afterChange(state);
        })
        // Its rows leave this node's memory with it (a hand-off, a passivation), and its series the export.
        .onSignal(PostStop.class, (state, signal) -> NodeMetrics.get(context.getSystem()).closeSparseShard(entityId))
        .build();
  }

  @Override
  public EventHandler<ShardState, Event> eventHandler() {
    return (state, event) -> {
      eventsHandled++;
      ShardState next = state.apply(event);
      meters.rows(next.isInitialised() ? next.table.store().size() : 0);
      return next;
    };
  }

  @Override
  public CommandHandler<Command, Event, ShardState> commandHandler() {
    return idle.hearing(newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(cmd -> broken && cmd instanceof SparseProtocol.Recover, (state, cmd) -> {
          // Thrown from a command, not from recovery, so the persistence runtime does not restart it
          // with the same recovery; the supervisor of create() builds a new behavior instead.
          throw new IllegalStateException("shard " + entityId + ": snapshot " + state.restoring() + " at sequence number "
              + state.sequenceNr + " has no rows in the journal; recovering from the snapshot before it");
        })
        .onCommand(cmd -> broken, (state, cmd) -> {
          // The mailbox outlives the restart, this behavior's stash does not: the next incarnation answers it.
          context.getSelf().tell(cmd);
          return Effect().none();
        })
        .onCommand(SparseProtocol.Recover.class, (state, r) -> Effect().none())
        .onCommand(WriteChunks.class, (state, w) -> onWriteChunks(state))
        .onCommand(GetStats.class, (state, cmd) -> Effect().reply(cmd.replyTo(), stats(state)))
        .onCommand(cmd -> chunking, (state, cmd) -> Effect().stash())
        .onCommand(InitShard.class, this::onInit)
        .onCommand(PushRows.class, this::onPush)
        .onCommand(PullRows.class, this::onPull)
        .onCommand(SparseProtocol.ExportRows.class, this::onExport)
        .onCommand(SparseProtocol.LoadRows.class, this::onLoad)
        .onCommand(UpdateMembership.class, this::onUpdateMembership)
        .onCommand(PullTimedOut.class, this::onPullTimedOut)
        .onCommand(TakeSnapshot.class, (state, t) -> onTakeSnapshot(state))
        .onCommand(Leave.class, (state, h) -> onHandOff(state))
        .onCommand(SparseProtocol.IdleCheck.class, (state, c) -> Effect().none().thenRun(s -> idle.check()))
        .build());
  }

  private Effect<Event, ShardState> onInit(ShardState state, InitShard cmd) {
    Refused bad = rules.initRefusal(state, cmd);
    if (bad != null) return Effect().reply(cmd.replyTo(), bad);
    if (state.isInitialised()) return Effect().reply(cmd.replyTo(), new ShardReady(state.version));
    return persist(List.of(new ShardInitialized(cmd.spec(), cmd.shard())))
        .thenRun(s -> cmd.replyTo().tell(new ShardReady(s.version)));
  }

  private Effect<Event, ShardState> onPush(ShardState state, PushRows cmd) {
    pushes++;
    ShardRules.PushOutcome outcome = rules.push(state, cmd);
    if (outcome.refused() != null) {
      refused++;
      return Effect().reply(cmd.replyTo(), outcome.refused());
    }
    if (!outcome.takesPart()) {
      if (outcome.reply().apply(0) instanceof SparseProtocol.Duplicate) duplicates++;
      return Effect().none().thenRun(s -> cmd.replyTo().tell(outcome.reply().apply(s.version)));
    }
    if (!state.isSync()) {
      return persist(rules.applyAsync(state, cmd)).thenRun(s -> {
        cmd.replyTo().tell(new Applied(s.version));
        afterChange(s);
      });
    }
    state.addPending(new ShardState.Contribution(cmd.trainerId(), cmd.weight(), cmd.ids(), cmd.grads()));
    if (!state.completeUnder(state.epoch, state.members)) {
      held.add(cmd.replyTo());
      return Effect().none();
    }
    return commit(state, cmd.replyTo());
  }

  /** Journals the pending step, then acknowledges its pushes ({@code completer} as the one that applied it). */
  private EffectBuilder<Event, ShardState> commit(ShardState state, ActorRef<PushReply> completer) {
    List<ActorRef<PushReply>> acks = new ArrayList<>(held);
    held.clear();
    return persist(rules.commit(state)).thenRun(s -> {
      for (ActorRef<PushReply> a : acks) a.tell(new Accepted(s.version));
      if (completer != null) completer.tell(new Applied(s.version));
      afterChange(s);
    });
  }

  private Effect<Event, ShardState> onPull(ShardState state, PullRows cmd) {
    Refused bad = rules.idsRefusal(state, cmd.ids(), "pull of " + (cmd.ids() == null ? 0 : cmd.ids().length) + " rows");
    if (bad != null) return Effect().reply(cmd.replyTo(), bad);
    if (cmd.minVersion() <= state.version) return Effect().reply(cmd.replyTo(), rows(state, cmd.ids()));
    long id = nextPullId++;
    pulls.put(id, cmd);
    timers.startSingleTimer("pull-" + id, new PullTimedOut(id), settings.pullTimeout());
    return Effect().none();
  }

  private Effect<Event, ShardState> onExport(ShardState state, SparseProtocol.ExportRows cmd) {
    if (!state.isInitialised()) {
      return Effect().reply(cmd.replyTo(), new Refused(Problem.NOT_INITIALISED, entityId + " is not initialised"));
    }
    RowsExport.Page p = export.page(state.table, state.version, cmd.afterId(), cmd.limit());
    return Effect().reply(cmd.replyTo(), new SparseProtocol.RowsPage(state.shard, state.version, p.ids(), p.values(),
        p.more()));
  }

  private Effect<Event, ShardState> onLoad(ShardState state, SparseProtocol.LoadRows cmd) {
    Refused bad = rules.loadRefusal(state, cmd);
    if (bad != null) return Effect().reply(cmd.replyTo(), bad);
    return persist(rules.load(state, cmd))
        .thenRun(s -> cmd.replyTo().tell(new SparseProtocol.RowsStored(s.table.store().size())));
  }

  private Effect<Event, ShardState> onPullTimedOut(ShardState state, PullTimedOut t) {
    PullRows pull = pulls.remove(t.pullId());
    if (pull != null) {
      pull.replyTo().tell(new Refused(Problem.TIMED_OUT, "shard " + entityId + " did not reach version "
          + pull.minVersion() + " within " + settings.pullTimeout().toMillis() + " ms (it is at " + state.version + ")"));
    }
    return Effect().none();
  }

  private Effect<Event, ShardState> onUpdateMembership(ShardState state, UpdateMembership cmd) {
    if (cmd.trainers() == null || cmd.trainers().stream().anyMatch(t -> t == null || t.isBlank())) {
      return Effect().reply(cmd.replyTo(), new Refused(Problem.MALFORMED, "membership epoch " + cmd.epoch()
          + " for shard " + entityId + " needs a list of non-blank trainer ids"));
    }
    if (cmd.epoch() <= state.epoch) return Effect().reply(cmd.replyTo(), new MembershipInForce(state.epoch));
    List<String> members = List.copyOf(new LinkedHashSet<>(cmd.trainers()));
    List<Event> events = new ArrayList<>(List.of(new MembershipUpdated(cmd.epoch(), members)));
    boolean completes = state.isInitialised() && state.isSync() && state.completeUnder(cmd.epoch(), members);
    EffectBuilder<Event, ShardState> effect;
    if (completes) {
      // The new membership's event first: the step it completes is applied under it.
      List<ActorRef<PushReply>> acks = new ArrayList<>(held);
      held.clear();
      events.addAll(rules.commit(state));
      effect = persist(events).thenRun(s -> {
        for (ActorRef<PushReply> a : acks) a.tell(new Accepted(s.version));
      });
    } else {
      effect = persist(events);
    }
    return effect.thenRun(s -> {
      cmd.replyTo().tell(new MembershipInForce(s.epoch));
      afterChange(s);
    });
  }

  private Effect<Event, ShardState> onTakeSnapshot(ShardState state) {
    if (!state.isInitialised() || sinceSnapshot < settings.snapshotEvery()) return Effect().none();
    long generation = state.generation + 1;
    // Akka saves the snapshot (the header) right after this event; the rows follow before anything else.
    return Effect().persist(new SnapshotBegun(generation, lastSequenceNumber(context) + 1)).thenRun(s -> {
      chunking = true;
      context.getSelf().tell(WriteChunks.INSTANCE);
    });
  }

  private Effect<Event, ShardState> onWriteChunks(ShardState state) {
    if (!chunking) return Effect().none();
    long previous = state.completedSequenceNr;
    return Effect().persist(rules.snapshotChunks(state, state.generation)).thenRun(s -> {
      chunking = false;
      sinceSnapshot = 0;
      // This snapshot is whole: a later recovery may start from it.
      fallbackBelow.set(Long.MAX_VALUE);
      snapshots++;
      if (previous > 0) trim(previous);
    }).thenUnstashAll();
  }

  /**
   * Deletes the events up to the snapshot before the one just made whole, and the snapshots before
   * that one: a recovery starts from the newest snapshot, or from the one before it when the
   * newest has no rows, so nothing else is read again, and the journal stays bounded.
   */
  private void trim(long sequenceNr) {
    String pid = persistenceId().id();
    JournalEraser.trim(context.getSystem(), pid, sequenceNr, TRIM_TIMEOUT).whenComplete((done, failure) -> {
      if (failure != null) {
        LOG.warn("shard {}: events up to {} not deleted ({})", entityId, sequenceNr, failure.getMessage());
      }
    });
  }

  private Effect<Event, ShardState> onHandOff(ShardState state) {
    // Nothing acknowledged is lost; held pushes and waiting pulls ask again and find the shard's next home.
    Refused moving = new Refused(Problem.MOVING, "shard " + entityId + " is moving to another node; ask again");
    for (ActorRef<PushReply> a : held) a.tell(moving);
    held.clear();
    for (PullRows p : pulls.values()) p.replyTo().tell(moving);
    pulls.clear();
    return Effect().stop();
  }

  private EffectBuilder<Event, ShardState> persist(List<Event> events) {
    sinceSnapshot += events.size();
    if (sinceSnapshot >= settings.snapshotEvery()) context.getSelf().tell(TakeSnapshot.INSTANCE);
    return Effect().persist(events);
  }

  /** After a change: answer the pulls the version now satisfies; watch for idleness while no trainer takes part. */
  private void afterChange(ShardState state) {
    idle.watch(state.isInitialised() && state.epoch > 0 && state.members.isEmpty());
    Iterator<Map.Entry<Long, PullRows>> it = pulls.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Long, PullRows> e = it.next();
      if (e.getValue().minVersion() <= state.version) {
        it.remove();
        timers.cancel("pull-" + e.getKey());
        e.getValue().replyTo().tell(rows(state, e.getValue().ids()));
      }
    }
  }

  /** The rows of {@code ids}, each once, in the order first asked. */
  private static SparseProtocol.Rows rows(ShardState state, long[] ids) {
    long[] unique = RowIds.distinct(ids);
    int dim = state.spec.dim();
    float[] values = new float[unique.length * dim];
    for (int k = 0; k < unique.length; k++) state.table.read(unique[k], values, k * dim);
    return new SparseProtocol.Rows(state.spec.name(), state.shard, state.version, unique, values);
  }

  private ShardStats stats(ShardState s) {
    boolean init = s.isInitialised();
    return new ShardStats(entityId, init, s.version, init ? s.table.store().size() : 0,
        init ? s.table.store().bytesAllocated() : 0, s.rowsCreated, s.rowsNotAdmitted, s.rowsExpired, pushes,
        duplicates, refused, s.pending.isEmpty() ? -1 : s.version + 1, init && s.isSync() ? s.missing() : List.of(),
        s.epoch, snapshots, eventsReplayed);
  }
}
