package io.shardtrain.actors.master;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.ClusterEvent;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Subscribe;
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
import io.shardtrain.actors.job.CborSerializable;
import io.shardtrain.actors.job.JobProtocol.*;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.master.AskingBlocks.BlockAcked;
import io.shardtrain.actors.master.AskingBlocks.BlockRolledBack;
import io.shardtrain.actors.master.AskingBlocks.TaskMarkAnswered;
import io.shardtrain.actors.master.CheckpointStarter.CheckpointFinished;
import io.shardtrain.actors.master.CheckpointStarter.OffsetsAt;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

/**
 * The job's master: an event-sourced actor, one per job under the cluster's {@link JobDirectory}. It owns
 * the job, the data tasks of each epoch with their leases and reader offsets ({@link MasterState}),
 * and the trainer membership whose numbered epochs tell sync barriers whom to wait for. This class
 * routes the protocol ({@link io.shardtrain.actors.job.JobProtocol}) and journals its events; the
 * parts that are not journaled live beside it: {@link TrainerLiveness}, {@link MembershipBroadcast},
 * {@link TaskSettler}, {@link CheckpointQueue} with {@link CheckpointTaker}, and {@link Rollbacks}.
 *
 * <p>Each epoch is cut into one task per trainer: as many as the job asked for, or as many as
 * have joined when that is more (an epoch nobody has started yet is cut again when a trainer
 * joins, so a late trainer gets a share of the next epoch at the latest). A trainer leases a
 * task, reports its reader offset after every step whose pushes all blocks acknowledged, and gets
 * the next task when it is done; tasks of the next epoch are handed out while the last ones of
 * this epoch finish, so no trainer idles at an epoch boundary. A trainer that stops, or reports
 * nothing for {@code shardtrain.trainer.failure-timeout}, leaves the membership, and its task is
 * settled with the blocks before anyone leases it again.
 *
 * <p>Checkpoints (sync jobs): on {@link TakeCheckpoint}, and every
 * {@code shardtrain.checkpoint.every-steps} steps, every block captures its state at one step a
 * little ahead of them, the master adds its reader offsets at that step, writes the checkpoint
 * directory and commits it ({@link CheckpointCommitted}). With checkpoint durability a lost
 * {@code ps} node (or a restart of the master) rolls the whole job back to the committed
 * checkpoint ({@link RolledBackToCheckpoint}) and the trainers continue from there.
 */
public final class Master extends EventSourcedBehavior<Command, Master.Event, MasterState> {
  // ---- the master's own messages ----
  private record MemberRemoved(String address, boolean ps) implements Internal {}
  /** The actor {@code trainer} registered as {@code trainerId} stopped (or its node was removed). */
  private record TrainerStopped(String trainerId, ActorRef<TrainerNotice> trainer) implements Internal {}
  private enum Tick implements Internal { INSTANCE }

  // ---- events (journaled by class name: they stay nested here) ----
  public sealed interface Event extends CborSerializable {}
  /** {@code resumedFrom}: the checkpoint a resumed job starts from; null for a job from its start. */
  public record JobSubmitted(JobSpec job, ResumePoint resumedFrom) implements Event {}

  public record TrainerJoined(String trainerId, ActorRef<TrainerNotice> trainer) implements Event {}

  public record TrainerLeft(String trainerId, String reason) implements Event {}

  public record TaskLeased(int epoch, int task, String trainerId) implements Event {}

  /**
   * {@code trainerId} read the task up to {@code offset} by {@code step}; {@code earlier}: the
   * steps it reported with that one, oldest first (absent from events journaled one per step).
   */
  public record ProgressRecorded(int epoch, int task, long offset, String trainerId, long step,
      List<StepOffset> earlier) implements Event {
    public ProgressRecorded {
      earlier = earlier == null ? List.of() : List.copyOf(earlier);
    }
  }

  /** The expected trainers were registered and every block knew them: tasks are handed out from now on. */
  public record JobStarted(long membershipEpoch) implements Event {}

  /** The job was cancelled: done from now on, its trainers told to finish their step and leave. */
  public record JobCancelled() implements Event {}

  /** Every block holds its state at the checkpoint's step; the master's part is in the event. */
  public record CheckpointCommitted(MasterState.CommittedCheckpoint checkpoint) implements Event {}

  /**
   * Every block (all-reduce: the ring) answered for the task {@code trainerId} held when it left: all
   * hold its examples up to {@code offset} (of {@code step}); those in {@code skip} up to more.
   */
  public record TaskSettled(int epoch, int task, String trainerId, long offset, long step, Map<String, Long> skip)
      implements Event {}

  /** Every block went back to the checkpoint at {@code step} under {@code generation}; so do the offsets. */
  public record RolledBackToCheckpoint(long step, long generation, String reason) implements Event {}

  // ---- behaviour ----
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final MasterSettings settings;
  private final TrainerLiveness liveness;
  private final MembershipBroadcast membership;
  private final TaskSettler settler;
  private final Rollbacks rollbacks;
  private final CheckpointQueue checkpoints;
  private final TestAuc testAuc;
  private final ActorRef<Command> directory;

  /** The master, sending membership updates to parameter blocks through {@code blocks}; no periodic checkpoints. */
  public static Behavior<Command> create(MasterSettings settings,
      ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks) {
    return create(settings, CheckpointSettings.OFF, blocks);
  }

  /** The master with these checkpoint settings, of whichever job is submitted to it. */
  public static Behavior<Command> create(MasterSettings settings, CheckpointSettings checkpoints,
      ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks) {
    return create(null, settings, checkpoints, blocks, null);
  }

  /** The master of job {@code jobId}, which tells {@code directory} when the job is done. */
  static Behavior<Command> create(String jobId, MasterSettings settings, CheckpointSettings checkpoints,
      ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks, ActorRef<Command> directory) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      if (checkpoints.checkpointDurability()
          && "cluster".equals(ctx.getSystem().settings().config().getString("akka.actor.provider"))) {
        // A ps node that leaves takes the un-journaled steps of its blocks with it.
        ActorRef<ClusterEvent.MemberRemoved> removed = ctx.messageAdapter(ClusterEvent.MemberRemoved.class,
            e -> new MemberRemoved(e.member().address().toString(), e.member().hasRole(ParameterBlock.ROLE)));
        Cluster.get(ctx.getSystem()).subscriptions().tell(Subscribe.create(removed, ClusterEvent.MemberRemoved.class));
      }
      return new Master(jobId, ctx, timers, settings, checkpoints, blocks, directory);
    }));
  }

  private Master(String jobId, ActorContext<Command> context, TimerScheduler<Command> timers, MasterSettings settings,
      CheckpointSettings checkpointSettings, ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks,
      ActorRef<Command> directory) {
    super(persistenceId(jobId));
    this.directory = directory;
    this.context = context;
    this.timers = timers;
    this.settings = settings;
    CheckpointTaker taker = new CheckpointTaker(context.getSystem(), blocks, checkpointSettings, settings.askTimeout());
    BlockRequests asks = new AskingBlocks(context, blocks, settings.askTimeout());
    this.liveness = new TrainerLiveness(settings.failureTimeout());
    this.testAuc = new TestAuc(context.getLog(), settings.failureTimeout().toNanos());
    this.membership = new MembershipBroadcast(asks);
    this.settler = new TaskSettler(asks, context.getLog());
    this.rollbacks = new Rollbacks(asks, context.getLog(), checkpointSettings.checkpointDurability());
    this.checkpoints = new CheckpointQueue(checkpointSettings.everySteps(), checkpointSettings.checkpointDurability(),
        new CheckpointStarter(context, taker, checkpointSettings, rollbacks::started), rollbacks::started);
    timers.startTimerWithFixedDelay(Tick.INSTANCE, settings.tick());
  }

  /** Where the master of job {@code jobId} journals; null: a master outside a directory (tests). */
  static PersistenceId persistenceId(String jobId) {
    return PersistenceId.ofUniqueId(jobId == null ? "shardtrain-master" : "shardtrain-master|" + jobId);
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
    return MasterState.SNAPSHOT_ADAPTER;
  }

  @Override
  public SignalHandler<MasterState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          long now = System.nanoTime();
          // Trainers learn the master moved when their next call fails or is delayed; watching
          // again here keeps departures detected on the new node.
          state.members().forEach((id, ref) -> {
            liveness.heard(id, now);
            context.watchWith(ref, new TrainerStopped(id, ref));
          });
          membership.broadcast(state);
          settler.askMissing(state);
          // The master's node may have been a ps node too, or one left while no master ran.
          if (rollbacks.needed(state)) context.getSelf().tell(new RollBackToCheckpoint("the master restarted", -1, ""));
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
        .onCommand(CancelJob.class, this::onCancel)
        .onCommand(Heartbeat.class, only((s, c) -> {
          if (s.members().containsKey(c.trainerId())) liveness.heard(c.trainerId(), System.nanoTime());
        }))
        .onCommand(TrainerStopped.class, this::onTrainerStopped)
        .onCommand(GetStatus.class, only((s, c) -> c.replyTo().tell(s.status().withTestAuc(testAuc.auc(),
            testAuc.examples()).settledOnlyIf(membership.allKnow(s) && !checkpoints.running()))))
        .onCommand(RequestAucShare.class, only((s, c) -> c.replyTo().tell(StatusReply.success(
            testAuc.lease(s.job(), c.trainerId(), System.nanoTime())))))
        .onCommand(ReportAuc.class, only((s, c) -> testAuc.add(s.job(), c)))
        .onCommand(Tick.class, this::onTick)
        .onCommand(BlockAcked.class, only((s, c) -> membership.acked(c.blockId(), c.epoch())))
        .onCommand(TakeCheckpoint.class, only(checkpoints::request))
        .onCommand(OffsetsAt.class, only((s, c) -> CheckpointStarter.answer(s, c, timers, context.getLog())))
        .onCommand(CheckpointFinished.class, this::onCheckpointFinished)
        .onCommand(RollBackToCheckpoint.class, this::onRollBackRequest)
        .onCommand(MemberRemoved.class, only((s, c) -> {
          if (c.ps()) rollbacks.start(s, "ps node " + c.address() + " left");
        }))
        .onCommand(BlockRolledBack.class, this::onBlockRolledBack)
        .onCommand(TaskMarkAnswered.class, this::onTaskMarkAnswered)
        .onCommand(SettleFromRing.class, this::onSettleFromRing)
        .onCommand(RingCheckpointed.class, (s, c) -> RingResume.committed(s, c).map(k -> Effect()
            .persist(new CheckpointCommitted(k)).thenRun(st -> context.getLog().info(
                "ring checkpoint of job {} at step {} committed ({})", st.job().jobId(), k.step(), k.dir())))
            .orElseGet(() -> Effect().none()))
        .build();
  }

  /** Answers {@code replyTo} with {@code value}; nothing to persist. */
  private <T> Effect<Event, MasterState> answer(ActorRef<StatusReply<T>> replyTo, T value) {
    replyTo.tell(StatusReply.success(value));
    return Effect().none();
  }

  /** A command that persists nothing: {@code action} runs and that is all. */
  private <C> BiFunction<MasterState, C, Effect<Event, MasterState>> only(BiConsumer<MasterState, C> action) {
    return (s, c) -> {
      action.accept(s, c);
      return Effect().none();
    };
  }

  // ---- the job and its trainers ----

  private Effect<Event, MasterState> onSubmit(MasterState s, SubmitJob c) {
    if (s.job() != null) {
      if (s.job().equals(c.job())) return answer(c.replyTo(), Done.getInstance());
      if (s.job().jobId().equals(c.job().jobId())) {
        c.replyTo().tell(StatusReply.error("job '" + s.job().jobId() + "' runs with another spec; change its id to"
            + " submit a different job"));
        return Effect().none();
      }
      // The directory sends a master its own job only; a master of its own (tests) takes one job.
      c.replyTo().tell(StatusReply.error("this master runs job '" + s.job().jobId() + "'; '" + c.job().jobId()
          + "' was not started"));
      return Effect().none();
    }
    return Effect().persist(new JobSubmitted(c.job(), c.resumeFrom()))
        .thenRun(st -> {
          membership.broadcast(st);
          c.replyTo().tell(StatusReply.ack());
        });
  }

  private Effect<Event, MasterState> onRegister(MasterState s, RegisterTrainer c) {
    if (s.job() == null) {
      c.replyTo().tell(StatusReply.error("no job has been submitted yet"));
      return Effect().none();
    }
    liveness.heard(c.trainerId(), System.nanoTime());
    context.watchWith(c.trainer(), new TrainerStopped(c.trainerId(), c.trainer()));
    if (c.trainer().equals(s.members().get(c.trainerId()))) {
      c.replyTo().tell(StatusReply.success(s.registration(c.trainerId())));
      return Effect().none();
    }
    List<Event> joined = RingResume.joining(s, new TrainerJoined(c.trainerId(), c.trainer()));
    return Effect().persist(joined)
        .thenRun(st -> {
          context.getLog().info("trainer {} joined; membership epoch {} = {}{}", c.trainerId(),
              st.membershipEpoch(), st.members().keySet(), joined.size() > 1 ? "; " + joined.get(1) : "");
          if (st.started()) membership.joinedRunning(c.trainerId(), st.membershipEpoch());
          membership.broadcast(st);
          settler.askMissing(st);
          c.replyTo().tell(StatusReply.success(st.registration(c.trainerId())));
        });
  }

  private Effect<Event, MasterState> onRequestTask(MasterState s, RequestTask c) {
    if (!s.members().containsKey(c.trainerId())) return answer(c.replyTo(), new NotRegistered());
    liveness.heard(c.trainerId(), System.nanoTime());
    if (s.cancelled()) return answer(c.replyTo(), new NoTask(true));
    if (!s.started()) {
      int registered = s.members().size();
      int expected = s.job().trainers();
      c.replyTo().tell(StatusReply.success(new WaitForTrainers(registered, expected)));
      if (registered >= expected && membership.allKnow(MembershipBroadcast.barrier(s.job()), s.membershipEpoch())) {
        return Effect().persist(new JobStarted(s.membershipEpoch()));
      }
      return Effect().none();
    }
    if (!membership.mayLease(c.trainerId(), MembershipBroadcast.barrier(s.job()))) {
      return answer(c.replyTo(), new WaitForTrainers(s.members().size(), s.job().trainers()));
    }
    TaskState current = s.leaseOf(c.trainerId());
    if (current != null) return answer(c.replyTo(), s.lease(current));
    TaskState next = s.nextFreeTask();
    if (next == null) return answer(c.replyTo(), new NoTask(s.done()));
    return Effect().persist(new TaskLeased(next.epoch, next.index, c.trainerId()))
        .thenRun(st -> c.replyTo().tell(StatusReply.success(st.lease(st.task(next.epoch, next.index)))));
  }

  private Effect<Event, MasterState> onProgress(MasterState s, ReportProgress c) {
    liveness.heard(c.trainerId(), System.nanoTime());
    if (c.generation() != s.generation()) {
      c.replyTo().tell(StatusReply.error("progress of trainer " + c.trainerId() + " for step " + c.newest().step()
          + " belongs to generation " + c.generation() + "; the job rolled back to generation " + s.generation()));
      // The trainer missed the rollback notice (or it crossed this report): tell it again.
      if (c.generation() < s.generation()) Rollbacks.tell(s, c.trainerId());
      return Effect().none();
    }
    TaskState t = s.task(c.epoch(), c.task());
    if (t == null || !c.trainerId().equals(t.leasedTo)) {
      c.replyTo().tell(StatusReply.error("task " + c.epoch() + "/" + c.task() + " is not leased to " + c.trainerId()));
      return Effect().none();
    }
    String wrong = ReportedSteps.misreported(t, c.steps());
    if (wrong != null) {
      c.replyTo().tell(StatusReply.error(wrong));
      return Effect().none();
    }
    return Effect().persist(ReportedSteps.recorded(t, c)).thenRun(st -> c.replyTo().tell(StatusReply.ack()));
  }

  private Effect<Event, MasterState> onCancel(MasterState s, CancelJob c) {
    if (s.job() == null || s.done()) {
      c.replyTo().tell(StatusReply.error(s.job() == null ? "no job has been submitted yet; nothing to cancel"
          : "job '" + s.job().jobId() + "' " + (s.cancelled() ? "was cancelled already" : "has finished")));
      return Effect().none();
    }
    return Effect().persist(new JobCancelled()).thenRun(st -> {
      context.getLog().warn("job {} cancelled; its trainers {} finish their step and leave", st.job().jobId(),
          st.members().keySet());
      for (ActorRef<TrainerNotice> t : st.members().values()) t.tell(new TrainerNotice.Cancelled(st.job().jobId()));
      c.replyTo().tell(StatusReply.success(st.status()));
    });
  }

  private Effect<Event, MasterState> onTrainerStopped(MasterState s, TrainerStopped c) {
    // A killed trainer's node goes seconds after the kill, when its id may be back from a new node (which
    // stays). A done job's trainer stops after its LeaveJob, which the death watch may overtake: it left.
    if (!c.trainer().equals(s.members().get(c.trainerId()))) return Effect().none();
    return leave(s, c.trainerId(), s.done() ? null : "its actor stopped");
  }

  private Effect<Event, MasterState> onLeave(MasterState s, LeaveJob c) {
    Effect<Event, MasterState> e = leave(s, c.trainerId(), null);
    c.replyTo().tell(StatusReply.ack());
    return e;
  }

  /** {@code failure} says why a trainer was dropped; null when it left on its own. */
  private Effect<Event, MasterState> leave(MasterState s, String trainerId, String failure) {
    liveness.forget(trainerId);
    membership.left(trainerId);
    if (!s.members().containsKey(trainerId)) return Effect().none();
    Event left = new TrainerLeft(trainerId, failure == null ? "left the job" : failure);
    RolledBackToCheckpoint resume = RingResume.onLeaving(s, trainerId);
    return Effect().persist(resume == null ? List.of(left) : List.of(left, resume))
        .thenRun(st -> {
          if (resume != null) context.getLog().warn("job {} rolled back (generation {}): {}", st.job().jobId(),
              resume.generation(), resume.reason());
          if (failure == null) {
            context.getLog().info("trainer {} left the job; membership epoch {} = {}", trainerId,
                st.membershipEpoch(), st.members().keySet());
          } else {
            context.getLog().warn("trainer {} dropped: {}; membership epoch {} = {}", trainerId, failure,
                st.membershipEpoch(), st.members().keySet());
          }
          membership.broadcast(st);
          settler.askMissing(st);
        });
  }

  private Effect<Event, MasterState> onTick(MasterState s, Tick t) {
    boolean ended = s.done() && s.members().isEmpty() && checkpoints.mayRetire(s, rollbacks.running());
    if (ended && directory != null) directory.tell(new JobDirectory.JobEnded(s.job(), s.cancelled()));
    String overdue = s.done() ? null : liveness.overdue(s.members().keySet(), System.nanoTime());
    if (overdue != null) return leave(s, overdue, liveness.overdueReason());
    membership.resend(s);
    rollbacks.resend(s);
    settler.askMissing(s);
    checkpoints.tick(s, rollbacks.running());
    return Effect().none();
  }

  private Effect<Event, MasterState> onSettleFromRing(MasterState s, SettleFromRing c) {
    List<TaskSettled> settled = TaskSettler.fromRing(s, c);
    if (settled.isEmpty()) return Effect().none();
    return Effect().persist(List.<Event>copyOf(settled)).thenRun(st -> context.getLog().info(
        "ring epoch {} at step {} settled {}", c.membershipEpoch(), c.step(), settled));
  }

  private Effect<Event, MasterState> onTaskMarkAnswered(MasterState s, TaskMarkAnswered c) {
    TaskSettled settled = settler.answered(s, c.epoch(), c.task(), c.blockId(), c.generation(), c.progress(),
        c.failure());
    if (settled == null) return Effect().none();
    long reported = s.task(c.epoch(), c.task()).offset;
    return Effect().persist(settled).thenRun(st -> settler.logAhead(settled, reported));
  }

  // ---- checkpoints ----

  private Effect<Event, MasterState> onCheckpointFinished(MasterState s, CheckpointFinished c) {
    boolean crossedRollback = c.rollbacksAtStart() != rollbacks.started() || rollbacks.running();
    checkpoints.finished(c.rollbacksAtStart(), c.failure() == null && !crossedRollback);
    if (c.failure() != null || crossedRollback) {
      String why = c.failure() != null ? c.failure().getMessage() : "the job rolled back meanwhile";
      context.getLog().warn("checkpoint failed: {}", why);
      for (var r : c.replyTo()) r.tell(StatusReply.error("checkpoint failed: " + why));
      return Effect().none().thenRun(checkpoints::next);
    }
    if (s.checkpoint() != null && s.checkpoint().step() >= c.result().step()) {
      // Already committed (a job that is done checkpoints at its last step again): just answer.
      for (var r : c.replyTo()) {
        r.tell(StatusReply.success(new CheckpointWritten(s.job().jobId(), c.result().step(), c.result().dir())));
      }
      return Effect().none().thenRun(checkpoints::next);
    }
    return Effect().persist(new CheckpointCommitted(c.result())).thenRun(st -> {
      context.getLog().info("checkpoint of job {} at step {} committed ({})", st.job().jobId(), c.result().step(),
          c.result().dir());
      for (var r : c.replyTo()) {
        r.tell(StatusReply.success(new CheckpointWritten(st.job().jobId(), c.result().step(), c.result().dir())));
      }
      checkpoints.nextAfterCommit(st, rollbacks.running());
    });
  }

  // ---- rollback (checkpoint durability) ----

  private Effect<Event, MasterState> onRollBackRequest(MasterState s, RollBackToCheckpoint c) {
    // A trainer's request (generation >= 0) waits out a running rollback; one from an older
    // generation missed the notice and is told again.
    boolean fromTrainer = c.generation() >= 0;
    if (fromTrainer && rollbacks.running()) return Effect().none();
    if (fromTrainer && c.generation() < s.generation()) Rollbacks.tell(s, c.trainerId());
    else rollbacks.start(s, c.reason());
    return Effect().none();
  }

  private Effect<Event, MasterState> onBlockRolledBack(MasterState s, BlockRolledBack c) {
    RolledBackToCheckpoint rolledBack = rollbacks.answered(s, c.blockId(), c.generation(), c.failure());
    if (rolledBack == null) return Effect().none();
    settler.clear();
    return Effect().persist(rolledBack).thenRun(st -> {
      context.getLog().warn("job {} rolled back to step {} (generation {}); trainers continue from there",
          st.job().jobId(), rolledBack.step(), rolledBack.generation());
      for (String trainer : st.members().keySet()) Rollbacks.tell(st, trainer);
    });
  }

  @Override
  public EventHandler<MasterState, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(JobSubmitted.class, (s, e) -> s.submitted(e.job(), e.resumedFrom()))
        .onEvent(TrainerJoined.class, (s, e) -> s.joined(e.trainerId(), e.trainer()))
        .onEvent(TrainerLeft.class, (s, e) -> s.left(e.trainerId()))
        .onEvent(TaskLeased.class, (s, e) -> s.leased(e.epoch(), e.task(), e.trainerId()))
        .onEvent(JobStarted.class, (s, e) -> s.started(e.membershipEpoch()))
        .onEvent(JobCancelled.class, (s, e) -> s.cancel())
        .onEvent(ProgressRecorded.class, (s, e) -> s.progressed(e.epoch(), e.task(), e.trainerId(),
            ReportedSteps.all(e)))
        .onEvent(CheckpointCommitted.class, (s, e) -> s.checkpointCommitted(e.checkpoint()))
        .onEvent(RolledBackToCheckpoint.class, (s, e) -> s.rolledBack(e.step(), e.generation()))
        .onEvent(TaskSettled.class, (s, e) -> s.settled(e.epoch(), e.task(), e.trainerId(), e.offset(), e.step(),
            e.skip()))
        .build();
  }
}
