package io.shardtrain.actors.master;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.Terminated;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.cluster.typed.ClusterSingleton;
import akka.cluster.typed.ClusterSingletonSettings;
import akka.cluster.typed.SingletonActor;
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
import io.shardtrain.actors.CborSerializable;
import io.shardtrain.actors.job.JobProtocol.*;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The job's master: a cluster singleton (role {@code master}) and an event-sourced actor. It owns
 * the job, the data tasks of each epoch with their leases and reader offsets, and the trainer
 * membership whose numbered epochs tell sync barriers whom to wait for.
 *
 * <p>Each epoch is cut into one task per trainer: as many as the job asked for, or as many as
 * have joined when that is more (an epoch nobody has started yet is cut again when a trainer
 * joins, so a late trainer gets a share of the next epoch at the latest). A trainer leases a
 * task, reports its reader offset after every step whose pushes all blocks acknowledged, and gets
 * the next task when it is done; tasks of the next epoch are handed out while the last ones of
 * this epoch finish, so no trainer idles at an epoch boundary. A trainer that stops, or reports nothing for
 * {@code shardtrain.trainer.failure-timeout}, leaves the membership. Every membership change is
 * sent to every parameter block (and re-sent until each acknowledges it).
 *
 * <p>A departed trainer's task is settled before anyone leases it again: it may have pushed a
 * step after the last offset it reported, to some blocks or to all. Every push names its task and
 * reader offset ({@link BlockProtocol.TaskMark}), so the master asks every block how far it holds
 * the task ({@link BlockProtocol.GetTaskMark}): the offset all blocks hold becomes the task's
 * offset, and the lease tells the next trainer which blocks already hold the examples after it, so
 * it pushes nothing to those for them. No example of the task is skipped or applied twice by any
 * block.
 *
 * <p>Checkpoints (sync jobs): on {@link TakeCheckpoint}, and every
 * {@code shardtrain.checkpoint.every-steps} steps, a {@link CheckpointTaker} has every block capture
 * its state at one step a little ahead of them, adds the reader offsets at that step and writes
 * the checkpoint directory; the master then commits it ({@link CheckpointCommitted}). With
 * checkpoint durability the blocks journal only those captures, so when a {@code ps} node leaves
 * the cluster (or the master itself restarts) the whole job rolls back: every block returns to the
 * committed checkpoint under a new generation, then the master resets its offsets to the
 * checkpoint's ({@link RolledBackToCheckpoint}) and tells every trainer to continue from there.
 */
public final class Master extends EventSourcedBehavior<Command, Master.Event, MasterState> {
  public static final String SINGLETON_NAME = "shardtrain-master";

  // ---- the master's own messages ----
  /** The master's state at a checkpoint's step, once every trainer reported that step (or at the deadline). */
  private record OffsetsAt(long step, String dir, long deadlineNanos,
      ActorRef<StatusReply<MasterState.CommittedCheckpoint>> replyTo) implements Internal {}

  private record CheckpointFinished(MasterState.CommittedCheckpoint result, Throwable failure, long rollbacksAtStart,
      List<ActorRef<StatusReply<CheckpointWritten>>> replyTo) implements Internal {}

  private record BlockRolledBack(String blockId, long generation, Throwable failure) implements Internal {}

  private record MemberRemoved(String address, boolean ps) implements Internal {}

  /** The actor {@code trainer} registered as {@code trainerId} stopped (or its node was removed). */
  private record TrainerStopped(String trainerId, ActorRef<TrainerNotice> trainer) implements Internal {}

  private enum Tick implements Internal { INSTANCE }

  private record BlockAcked(String blockId, long epoch) implements Internal {}

  /** A block's answer (or failure) to how far it holds a settling task, in rollback generation {@code generation}. */
  private record TaskMarkAnswered(int epoch, int task, String blockId, long generation,
      BlockProtocol.TaskProgress progress, Throwable failure) implements Internal {}


  // ---- events ----
  public sealed interface Event extends CborSerializable {}

  public record JobSubmitted(JobSpec job) implements Event {}

  public record TrainerJoined(String trainerId, ActorRef<TrainerNotice> trainer) implements Event {}

  public record TrainerLeft(String trainerId, String reason) implements Event {}

  public record TaskLeased(int epoch, int task, String trainerId) implements Event {}

  public record ProgressRecorded(int epoch, int task, long offset, String trainerId, long step) implements Event {}

  /** The expected trainers were registered and every block knew them: tasks are handed out from now on. */
  public record JobStarted(long membershipEpoch) implements Event {}

  /** Every block holds its state at the checkpoint's step; the master's part is in the event. */
  public record CheckpointCommitted(MasterState.CommittedCheckpoint checkpoint) implements Event {}

  /**
   * Every block answered for the task {@code trainerId} held when it left: all hold its examples up
   * to {@code offset} (pushed at {@code step}); the blocks in {@code skip} hold them up to more.
   */
  public record TaskSettled(int epoch, int task, String trainerId, long offset, long step, Map<String, Long> skip)
      implements Event {}

  /** Every block went back to the checkpoint at {@code step} under {@code generation}; so do the offsets. */
  public record RolledBackToCheckpoint(long step, long generation, String reason) implements Event {}

  // ---- behaviour ----
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final MasterSettings settings;
  private final ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks;
  private final Map<String, Long> lastSeen = new HashMap<>();
  private final Map<String, Long> blockAcked = new HashMap<>();
  /**
   * Trainers that joined a running job, with their membership epoch: they get a task only once every
   * block knows that epoch, so no block closes their first step without them.
   */
  private final Map<String, Long> joining = new HashMap<>();
  private final CheckpointSettings checkpoints;
  private final CheckpointTaker taker;
  private boolean checkpointRunning;
  private final List<TakeCheckpoint> checkpointRequests = new ArrayList<>();
  /** Rollbacks started by this incarnation; a checkpoint taken across one is not committed. */
  private long rollbacksStarted;
  /** The rollback in progress: its generation (0: none), target step, reason and the blocks that did it. */
  private long rollbackGeneration;
  private long rollbackStep;
  private String rollbackReason;
  private final java.util.Set<String> rolledBack = new java.util.HashSet<>();
  /** Blocks asked to roll back whose answer is still out: the tick re-asks only after a failure. */
  private final java.util.Set<String> rollbackAsked = new java.util.HashSet<>();
  /** Settling tasks ("epoch/task"): the blocks' answers so far, and the blocks whose answer is out. */
  private final Map<String, Map<String, BlockProtocol.TaskProgress>> settleAnswers = new HashMap<>();
  private final java.util.Set<String> settleAsked = new java.util.HashSet<>();

  /**
   * Starts (or finds) the singleton on this node's cluster and returns its proxy; membership
   * updates go to the parameter blocks through this node's shard region.
   */
  public static ActorRef<Command> initSingleton(ActorSystem<?> system) {
    MasterSettings settings = MasterSettings.create(system);
    CheckpointSettings checkpoints = CheckpointSettings.create(system);
    ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks = ParameterBlock.init(system);
    return ClusterSingleton.get(system).init(
        SingletonActor.of(create(settings, checkpoints, blocks), SINGLETON_NAME)
            .withSettings(ClusterSingletonSettings.create(system).withRole("master")));
  }

  /** The master, sending membership updates to parameter blocks through {@code blocks}; no periodic checkpoints. */
  public static Behavior<Command> create(MasterSettings settings,
      ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks) {
    return create(settings, CheckpointSettings.OFF, blocks);
  }

  /** The master with these checkpoint settings. */
  public static Behavior<Command> create(MasterSettings settings, CheckpointSettings checkpoints,
      ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      if (checkpoints.checkpointDurability()
          && "cluster".equals(ctx.getSystem().settings().config().getString("akka.actor.provider"))) {
        // A ps node that leaves takes the un-journaled steps of its blocks with it.
        ActorRef<akka.cluster.ClusterEvent.MemberRemoved> removed = ctx.messageAdapter(
            akka.cluster.ClusterEvent.MemberRemoved.class,
            e -> new MemberRemoved(e.member().address().toString(), e.member().hasRole(ParameterBlock.ROLE)));
        akka.cluster.typed.Cluster.get(ctx.getSystem()).subscriptions()
            .tell(akka.cluster.typed.Subscribe.create(removed, akka.cluster.ClusterEvent.MemberRemoved.class));
      }
      return new Master(ctx, timers, settings, checkpoints, blocks);
    }));
  }

  private Master(ActorContext<Command> context, TimerScheduler<Command> timers, MasterSettings settings,
      CheckpointSettings checkpoints, ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks) {
    super(PersistenceId.ofUniqueId("shardtrain-master"));
    this.context = context;
    this.timers = timers;
    this.settings = settings;
    this.checkpoints = checkpoints;
    this.blocks = blocks;
    this.taker = new CheckpointTaker(context.getSystem(), blocks, checkpoints, settings.askTimeout());
    timers.startTimerWithFixedDelay(Tick.INSTANCE, settings.tick());
  }

  @Override
  public MasterState emptyState() {
    return new MasterState();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(settings.snapshotEvery(), 2).withDeleteEventsOnSnapshot();
  }

  @Override
  public SnapshotAdapter<MasterState> snapshotAdapter() {
    return new SnapshotAdapter<>() {
      @Override
      public Object toJournal(MasterState state) {
        // The store may serialize, or keep, the snapshot after this state has applied later events.
        return state.copy();
      }

      @Override
      public MasterState fromJournal(Object from) {
        // A store that kept the object would otherwise see recovery replay events into it.
        return ((MasterState) from).copy();
      }
    };
  }

  @Override
  public SignalHandler<MasterState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          long now = System.nanoTime();
          // Trainers learn the master moved when their next call fails or is delayed; watching
          // again here keeps departures detected on the new node.
          state.members().forEach((id, ref) -> {
            lastSeen.put(id, now);
            context.watchWith(ref, new TrainerStopped(id, ref));
          });
          broadcastMembership(state);
          settle(state);
          // The master's node may have been a ps node too, or one left while no master ran.
          if (checkpoints.checkpointDurability() && needsRollback(state)) {
            context.getSelf().tell(new RollBackToCheckpoint("the master restarted", -1, ""));
          }
        })
        .build();
  }

  @Override
  public CommandHandler<Command, Event, MasterState> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(SubmitJob.class, this::onSubmit)
        .onCommand(RegisterTrainer.class, this::onRegister)
        .onCommand(RequestTask.class, this::onRequestTask)
        .onCommand(ReportProgress.class, this::onProgress)
        .onCommand(LeaveJob.class, this::onLeave)
        .onCommand(Heartbeat.class, (s, c) -> {
          if (s.members().containsKey(c.trainerId())) lastSeen.put(c.trainerId(), System.nanoTime());
          return Effect().none();
        })
        .onCommand(TrainerStopped.class, this::onTrainerStopped)
        .onCommand(GetStatus.class, (s, c) -> {
          c.replyTo().tell(s.status());
          return Effect().none();
        })
        .onCommand(Tick.class, this::onTick)
        .onCommand(BlockAcked.class, (s, c) -> {
          blockAcked.merge(c.blockId(), c.epoch(), Math::max);
          return Effect().none();
        })
        .onCommand(TakeCheckpoint.class, this::onTakeCheckpoint)
        .onCommand(OffsetsAt.class, this::onOffsetsAt)
        .onCommand(CheckpointFinished.class, this::onCheckpointFinished)
        .onCommand(RollBackToCheckpoint.class, this::onRollBackRequest)
        .onCommand(MemberRemoved.class, (s, c) -> c.ps() ? startRollback(s, "ps node " + c.address() + " left")
            : Effect().none())
        .onCommand(BlockRolledBack.class, this::onBlockRolledBack)
        .onCommand(TaskMarkAnswered.class, this::onTaskMarkAnswered)
        .build();
  }

  private Effect<Event, MasterState> onSubmit(MasterState s, SubmitJob c) {
    if (s.job() != null) {
      if (s.job().jobId().equals(c.job().jobId())) {
        c.replyTo().tell(StatusReply.ack());
        return Effect().none();
      }
      c.replyTo().tell(StatusReply.error(s.done()
          ? "job '" + s.job().jobId() + "' has finished and its blocks are in this journal; '" + c.job().jobId()
              + "' was not started: one journal holds one job, so start the next job's nodes on a fresh database"
              + " (docs/OPERATIONS.md)"
          : "job '" + s.job().jobId() + "' is already running; '" + c.job().jobId() + "' was not started"));
      return Effect().none();
    }
    return Effect().persist(new JobSubmitted(c.job()))
        .thenRun(st -> {
          broadcastMembership(st);
          c.replyTo().tell(StatusReply.ack());
        });
  }

  private Effect<Event, MasterState> onRegister(MasterState s, RegisterTrainer c) {
    if (s.job() == null) {
      c.replyTo().tell(StatusReply.error("no job has been submitted yet"));
      return Effect().none();
    }
    lastSeen.put(c.trainerId(), System.nanoTime());
    context.watchWith(c.trainer(), new TrainerStopped(c.trainerId(), c.trainer()));
    ActorRef<TrainerNotice> known = s.members().get(c.trainerId());
    if (c.trainer().equals(known)) {
      c.replyTo().tell(StatusReply.success(s.registration(c.trainerId())));
      return Effect().none();
    }
    return Effect().persist(new TrainerJoined(c.trainerId(), c.trainer()))
        .thenRun(st -> {
          context.getLog().info("trainer {} joined; membership epoch {} = {}", c.trainerId(),
              st.membershipEpoch(), st.members().keySet());
          if (st.started()) joining.put(c.trainerId(), st.membershipEpoch());
          broadcastMembership(st);
          settle(st);
          c.replyTo().tell(StatusReply.success(st.registration(c.trainerId())));
        });
  }

  private Effect<Event, MasterState> onRequestTask(MasterState s, RequestTask c) {
    if (!s.members().containsKey(c.trainerId())) {
      c.replyTo().tell(StatusReply.success(new NotRegistered()));
      return Effect().none();
    }
    lastSeen.put(c.trainerId(), System.nanoTime());
    if (!s.started()) {
      int registered = s.members().size();
      int expected = s.job().trainers();
      c.replyTo().tell(StatusReply.success(new WaitForTrainers(registered, expected)));
      if (registered >= expected && allBlocksKnow(s, s.membershipEpoch())) {
        return Effect().persist(new JobStarted(s.membershipEpoch()));
      }
      return Effect().none();
    }
    Long joinedAt = joining.get(c.trainerId());
    if (joinedAt != null) {
      if (!allBlocksKnow(s, joinedAt)) {
        c.replyTo().tell(StatusReply.success(new WaitForTrainers(s.members().size(), s.job().trainers())));
        return Effect().none();
      }
      joining.remove(c.trainerId());
    }
    MasterState.TaskState current = s.leaseOf(c.trainerId());
    if (current != null) {
      c.replyTo().tell(StatusReply.success(s.lease(current)));
      return Effect().none();
    }
    MasterState.TaskState next = s.nextFreeTask();
    if (next == null) {
      c.replyTo().tell(StatusReply.success(new NoTask(s.done())));
      return Effect().none();
    }
    return Effect().persist(new TaskLeased(next.epoch, next.index, c.trainerId()))
        .thenRun(st -> c.replyTo().tell(StatusReply.success(st.lease(st.task(next.epoch, next.index)))));
  }

  private Effect<Event, MasterState> onProgress(MasterState s, ReportProgress c) {
    lastSeen.put(c.trainerId(), System.nanoTime());
    if (c.generation() != s.generation()) {
      c.replyTo().tell(StatusReply.error("progress of trainer " + c.trainerId() + " for step " + c.step()
          + " belongs to generation " + c.generation() + "; the job rolled back to generation " + s.generation()));
      // The trainer missed the rollback notice (or it crossed this report): tell it again.
      if (c.generation() < s.generation()) tellRollback(s, c.trainerId());
      return Effect().none();
    }
    MasterState.TaskState t = s.task(c.epoch(), c.task());
    if (t == null || !c.trainerId().equals(t.leasedTo)) {
      c.replyTo().tell(StatusReply.error("task " + c.epoch() + "/" + c.task() + " is not leased to " + c.trainerId()));
      return Effect().none();
    }
    int length = t.to - t.from;
    if (c.offset() < t.offset || c.offset() > length) {
      c.replyTo().tell(StatusReply.error("offset " + c.offset() + " of task " + c.epoch() + "/" + c.task()
          + " is outside [" + t.offset + ", " + length + "]"));
      return Effect().none();
    }
    return Effect().persist(new ProgressRecorded(c.epoch(), c.task(), c.offset(), c.trainerId(), c.step()))
        .thenRun(st -> c.replyTo().tell(StatusReply.ack()));
  }

  private Effect<Event, MasterState> onTrainerStopped(MasterState s, TrainerStopped c) {
    // The node of a killed trainer is removed some seconds after the kill; by then the same
    // trainer id may have registered again from a new node, which must stay.
    if (!c.trainer().equals(s.members().get(c.trainerId()))) return Effect().none();
    return leave(s, c.trainerId(), "its actor stopped");
  }

  private Effect<Event, MasterState> onLeave(MasterState s, LeaveJob c) {
    Effect<Event, MasterState> e = leave(s, c.trainerId(), null);
    c.replyTo().tell(StatusReply.ack());
    return e;
  }

  /** {@code failure} says why a trainer was dropped; null when it left on its own. */
  private Effect<Event, MasterState> leave(MasterState s, String trainerId, String failure) {
    lastSeen.remove(trainerId);
    joining.remove(trainerId);
    if (!s.members().containsKey(trainerId)) return Effect().none();
    return Effect().persist(new TrainerLeft(trainerId, failure == null ? "left the job" : failure))
        .thenRun(st -> {
          if (failure == null) {
            context.getLog().info("trainer {} left the job; membership epoch {} = {}", trainerId,
                st.membershipEpoch(), st.members().keySet());
          } else {
            context.getLog().warn("trainer {} dropped: {}; membership epoch {} = {}", trainerId, failure,
                st.membershipEpoch(), st.members().keySet());
          }
          broadcastMembership(st);
          settle(st);
        });
  }

  private Effect<Event, MasterState> onTick(MasterState s, Tick t) {
    long now = System.nanoTime();
    long timeout = settings.failureTimeout().toNanos();
    for (String id : new ArrayList<>(s.members().keySet())) {
      Long seen = lastSeen.get(id);
      if (seen != null && now - seen > timeout && !s.done()) {
        return leave(s, id, "no report for " + settings.failureTimeout().toSeconds() + " s");
      }
    }
    resendMembership(s);
    resendRollback(s);
    settle(s);
    maybePeriodicCheckpoint(s);
    return Effect().none();
  }

  // ---- settling a departed trainer's task ----

  private static String taskKey(int epoch, int task) {
    return epoch + "/" + task;
  }

  /** Asks every block that has not answered, and is not being asked, how far it holds each settling task. */
  private void settle(MasterState s) {
    if (s.job() == null) return;
    for (MasterState.TaskState t : s.settling()) {
      String key = taskKey(t.epoch, t.index);
      Map<String, BlockProtocol.TaskProgress> answers = settleAnswers.computeIfAbsent(key, k -> new HashMap<>());
      for (String block : s.job().blocks()) {
        if (answers.containsKey(block) || !settleAsked.add(key + " " + block)) continue;
        int epoch = t.epoch;
        int task = t.index;
        long generation = s.generation();
        context.askWithStatus(BlockProtocol.TaskProgress.class, blocks, settings.askTimeout(),
            replyTo -> new ShardingEnvelope<>(block, new BlockProtocol.GetTaskMark(epoch, task, replyTo)),
            (p, failure) -> new TaskMarkAnswered(epoch, task, block, generation, p, failure));
      }
    }
  }

  private Effect<Event, MasterState> onTaskMarkAnswered(MasterState s, TaskMarkAnswered c) {
    String key = taskKey(c.epoch(), c.task());
    settleAsked.remove(key + " " + c.blockId());
    MasterState.TaskState t = s.task(c.epoch(), c.task());
    if (c.generation() != s.generation() || t == null || t.settlingFor == null) return Effect().none();
    if (c.failure() != null) {
      // Asked again by the next tick: a block of a lost node answers once sharding restarted it.
      context.getLog().info("task {}: block {} did not say how far it got ({})", key, c.blockId(),
          c.failure().getMessage());
      return Effect().none();
    }
    Map<String, BlockProtocol.TaskProgress> answers = settleAnswers.computeIfAbsent(key, k -> new HashMap<>());
    answers.put(c.blockId(), c.progress());
    if (!answers.keySet().containsAll(s.job().blocks())) return Effect().none();
    // Each block holds the task up to the reported offset or its own mark, whichever is further.
    Map<String, Long> held = new java.util.TreeMap<>();
    long offset = Long.MAX_VALUE;
    for (String block : s.job().blocks()) {
      long at = Math.min(t.length(), Math.max(t.offset, answers.get(block).offset()));
      held.put(block, at);
      offset = Math.min(offset, at);
    }
    long step = 0;
    Map<String, Long> skip = new java.util.TreeMap<>();
    for (String block : s.job().blocks()) {
      long at = held.get(block);
      if (at > offset) skip.put(block, at);
      if (at == offset && offset > t.offset) step = Math.max(step, answers.get(block).step());
    }
    settleAnswers.remove(key);
    TaskSettled settled = new TaskSettled(c.epoch(), c.task(), t.settlingFor, offset, step, skip);
    long reported = t.offset;
    return Effect().persist(settled).thenRun(st -> {
      if (settled.offset() > reported || !skip.isEmpty()) {
        context.getLog().warn("task {} of trainer {}: every block holds it up to offset {} (reported: {}){}", key,
            settled.trainerId(), settled.offset(), reported,
            skip.isEmpty() ? "" : "; blocks ahead, not pushed to again: " + skip);
      }
    });
  }

  // ---- checkpoints ----

  private Effect<Event, MasterState> onTakeCheckpoint(MasterState s, TakeCheckpoint c) {
    if (s.job() == null) {
      c.replyTo().tell(StatusReply.error("no job has been submitted; nothing to checkpoint"));
      return Effect().none();
    }
    if (s.job().mode() != io.shardtrain.actors.ps.BlockSpec.Mode.SYNC) {
      c.replyTo().tell(StatusReply.error("job " + s.job().jobId() + " is async: checkpoints need sync mode"
          + " (one global step); save the model with save-model instead"));
      return Effect().none();
    }
    checkpointRequests.add(c);
    if (!checkpointRunning) startCheckpoint(s);
    return Effect().none();
  }

  private void maybePeriodicCheckpoint(MasterState s) {
    if (checkpoints.everySteps() <= 0 || checkpointRunning || rollbackGeneration != 0 || s.job() == null
        || !s.started() || s.done() || s.job().mode() != io.shardtrain.actors.ps.BlockSpec.Mode.SYNC) {
      return;
    }
    // The last step of a step-bounded job is checkpointed once, not again every tick until it is done.
    if (s.job().steps() > 0 && s.checkpoint() != null && s.checkpoint().step() >= s.job().steps()) return;
    startCheckpoint(s);
  }

  /** Starts the next checkpoint: the oldest on-demand request, else a periodic one. */
  private void startCheckpoint(MasterState s) {
    TakeCheckpoint request = checkpointRequests.isEmpty() ? null : checkpointRequests.remove(0);
    boolean periodic = request == null;
    java.nio.file.Path dir = request == null || request.dir() == null || request.dir().isBlank() ? null
        : java.nio.file.Path.of(request.dir());
    long keepFrom = s.checkpoint() == null ? 0 : s.checkpoint().step();
    ActorRef<Command> self = context.getSelf();
    Duration timeout = checkpoints.timeout();
    var stage = taker.take(s.job(), periodic && checkpoints.everySteps() > 0, s.done(), keepFrom, dir,
        step -> akka.actor.typed.javadsl.AskPattern.<Command, StatusReply<MasterState.CommittedCheckpoint>>ask(self,
                r -> new OffsetsAt(step, "", System.nanoTime() + timeout.toNanos() / 2, r),
                timeout, context.getSystem().scheduler())
            .thenApply(StatusReply::getValue));
    checkpointRunning = true;
    long rollbacks = rollbacksStarted;
    List<ActorRef<StatusReply<CheckpointWritten>>> replyTo = request == null ? List.of() : List.of(request.replyTo());
    context.pipeToSelf(stage, (result, failure) -> new CheckpointFinished(result, failure, rollbacks, replyTo));
  }

  private Effect<Event, MasterState> onOffsetsAt(MasterState s, OffsetsAt c) {
    if (s.done() || s.allReportedUpTo(c.step()) || System.nanoTime() > c.deadlineNanos()) {
      if (!s.done() && !s.allReportedUpTo(c.step())) {
        context.getLog().warn("checkpoint at step {}: not every trainer reported that step; offsets as reported",
            c.step());
      }
      c.replyTo().tell(StatusReply.success(s.checkpointAt(c.step(), c.dir())));
    } else {
      // Progress reports trail the blocks by a moment: ask again shortly.
      timers.startSingleTimer("offsets-" + c.step(), c, Duration.ofMillis(100));
    }
    return Effect().none();
  }

  private Effect<Event, MasterState> onCheckpointFinished(MasterState s, CheckpointFinished c) {
    checkpointRunning = false;
    boolean crossedRollback = c.rollbacksAtStart() != rollbacksStarted || rollbackGeneration != 0;
    if (c.failure() != null || crossedRollback) {
      String why = c.failure() != null ? c.failure().getMessage() : "the job rolled back meanwhile";
      context.getLog().warn("checkpoint failed: {}", why);
      for (var r : c.replyTo()) r.tell(StatusReply.error("checkpoint failed: " + why));
      return Effect().none().thenRun(this::nextRequest);
    }
    if (s.checkpoint() != null && s.checkpoint().step() >= c.result().step()) {
      // Already committed (a job that is done checkpoints at its last step again): just answer.
      for (var r : c.replyTo()) {
        r.tell(StatusReply.success(new CheckpointWritten(s.job().jobId(), c.result().step(), c.result().dir())));
      }
      return Effect().none().thenRun(this::nextRequest);
    }
    return Effect().persist(new CheckpointCommitted(c.result())).thenRun(st -> {
      context.getLog().info("checkpoint of job {} at step {} committed ({})", st.job().jobId(), c.result().step(),
          c.result().dir());
      for (var r : c.replyTo()) {
        r.tell(StatusReply.success(new CheckpointWritten(st.job().jobId(), c.result().step(), c.result().dir())));
      }
      nextRequest(st);
    });
  }

  /** Starts the on-demand checkpoint that waited for the one just finished. */
  private void nextRequest(MasterState s) {
    if (!checkpointRequests.isEmpty() && !checkpointRunning) startCheckpoint(s);
  }

  // ---- rollback (checkpoint durability) ----

  private boolean needsRollback(MasterState s) {
    return s.job() != null && s.started() && !s.done() && s.job().mode() == io.shardtrain.actors.ps.BlockSpec.Mode.SYNC;
  }

  private Effect<Event, MasterState> startRollback(MasterState s, String reason) {
    if (!checkpoints.checkpointDurability() || !needsRollback(s)) return Effect().none();
    rollbacksStarted++;
    // A second loss during a rollback starts it over under a newer generation: blocks that
    // recovered from the journal meanwhile must roll back again.
    rollbackGeneration = Math.max(s.generation(), rollbackGeneration) + 1;
    rollbackStep = s.checkpoint() == null ? 0 : s.checkpoint().step();
    rollbackReason = reason;
    rolledBack.clear();
    rollbackAsked.clear();
    context.getLog().warn("{}: rolling job {} back to its checkpoint at step {} (generation {})", reason,
        s.job().jobId(), rollbackStep, rollbackGeneration);
    for (String block : s.job().blocks()) sendRollback(block);
    return Effect().none();
  }

  private Effect<Event, MasterState> onRollBackRequest(MasterState s, RollBackToCheckpoint c) {
    if (c.generation() < 0) return startRollback(s, c.reason());
    if (rollbackGeneration != 0) return Effect().none();
    if (c.generation() < s.generation()) {
      tellRollback(s, c.trainerId());
      return Effect().none();
    }
    return startRollback(s, c.reason());
  }

  private void resendRollback(MasterState s) {
    if (rollbackGeneration == 0 || s.job() == null) return;
    for (String block : s.job().blocks()) {
      if (!rolledBack.contains(block) && !rollbackAsked.contains(block)) sendRollback(block);
    }
  }

  private void sendRollback(String blockId) {
    long generation = rollbackGeneration;
    long step = rollbackStep;
    rollbackAsked.add(blockId);
    context.askWithStatus(Long.class, blocks, settings.askTimeout(),
        replyTo -> new ShardingEnvelope<>(blockId, new BlockProtocol.RollBack(step, generation, replyTo)),
        (ok, failure) -> new BlockRolledBack(blockId, generation, failure));
  }

  private Effect<Event, MasterState> onBlockRolledBack(MasterState s, BlockRolledBack c) {
    if (c.generation() != rollbackGeneration) return Effect().none();
    rollbackAsked.remove(c.blockId());
    if (c.failure() != null) {
      // Re-sent by the next tick: a block of the lost node answers once sharding restarted it.
      context.getLog().info("rollback of block {}: {}", c.blockId(), c.failure().getMessage());
      return Effect().none();
    }
    rolledBack.add(c.blockId());
    if (rolledBack.size() < s.job().blocks().size()) return Effect().none();
    long generation = rollbackGeneration;
    long step = rollbackStep;
    String reason = rollbackReason;
    rollbackGeneration = 0;
    settleAnswers.clear();
    return Effect().persist(new RolledBackToCheckpoint(step, generation, reason)).thenRun(st -> {
      context.getLog().warn("job {} rolled back to step {} (generation {}); trainers continue from there",
          st.job().jobId(), step, generation);
      for (String trainer : st.members().keySet()) tellRollback(st, trainer);
    });
  }

  private void tellRollback(MasterState s, String trainerId) {
    ActorRef<TrainerNotice> ref = s.members().get(trainerId);
    if (ref == null) return;
    long step = s.checkpoint() == null ? 0 : s.checkpoint().step();
    ref.tell(new TrainerNotice.RollBack(step, s.generation()));
  }

  private boolean allBlocksKnow(MasterState s, long epoch) {
    for (String block : s.job().blocks()) {
      if (blockAcked.getOrDefault(block, -1L) < epoch) return false;
    }
    return true;
  }

  private void broadcastMembership(MasterState s) {
    if (s.job() == null) return;
    for (String block : s.job().blocks()) sendMembership(s, block);
  }

  private void resendMembership(MasterState s) {
    if (s.job() == null) return;
    for (String block : s.job().blocks()) {
      if (blockAcked.getOrDefault(block, -1L) < s.membershipEpoch()) sendMembership(s, block);
    }
  }

  private void sendMembership(MasterState s, String blockId) {
    long epoch = s.membershipEpoch();
    List<String> members = List.copyOf(s.members().keySet());
    // A lost update is re-sent by the next tick until the block acknowledges this epoch.
    context.askWithStatus(Long.class, blocks, settings.askTimeout(),
        replyTo -> new ShardingEnvelope<>(blockId, new BlockProtocol.UpdateMembership(epoch, members, replyTo)),
        (ok, failure) -> new BlockAcked(blockId, failure == null ? epoch : -1L));
  }

  @Override
  public EventHandler<MasterState, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(JobSubmitted.class, (s, e) -> s.submitted(e.job()))
        .onEvent(TrainerJoined.class, (s, e) -> s.joined(e.trainerId(), e.trainer()))
        .onEvent(TrainerLeft.class, (s, e) -> s.left(e.trainerId()))
        .onEvent(TaskLeased.class, (s, e) -> s.leased(e.epoch(), e.task(), e.trainerId()))
        .onEvent(JobStarted.class, (s, e) -> s.started(e.membershipEpoch()))
        .onEvent(ProgressRecorded.class, (s, e) -> s.progressed(e.epoch(), e.task(), e.offset(), e.trainerId(), e.step()))
        .onEvent(CheckpointCommitted.class, (s, e) -> s.checkpointCommitted(e.checkpoint()))
        .onEvent(RolledBackToCheckpoint.class, (s, e) -> s.rolledBack(e.step(), e.generation()))
        .onEvent(TaskSettled.class, (s, e) -> s.settled(e.epoch(), e.task(), e.trainerId(), e.offset(), e.step(),
            e.skip()))
        .build();
  }
}
