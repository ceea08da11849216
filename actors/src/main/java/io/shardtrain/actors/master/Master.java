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
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.Effect;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.RetentionCriteria;
import akka.persistence.typed.javadsl.SignalHandler;
import io.shardtrain.actors.CborSerializable;
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
 * {@code shardtrain.trainer.failure-timeout}, leaves the membership; its task goes back to the
 * pool at its last reported offset, so no sample of the epoch is skipped or trained twice by
 * all blocks. Every membership change is sent to every parameter block (and re-sent until each
 * acknowledges it).
 */
public final class Master extends EventSourcedBehavior<Master.Command, Master.Event, MasterState> {
  public static final String SINGLETON_NAME = "shardtrain-master";

  // ---- protocol ----
  public sealed interface Command extends CborSerializable {}

  /** Starts a job; a second submit of the same job id is acknowledged, another job is refused. */
  public record SubmitJob(JobSpec job, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** A trainer (new or restarted) joins; the reply says where it resumes. */
  public record RegisterTrainer(String trainerId, ActorRef<?> trainer, ActorRef<StatusReply<Registration>> replyTo)
      implements Command {}

  /** Asks for the trainer's current task, or the next one. */
  public record RequestTask(String trainerId, ActorRef<StatusReply<TaskReply>> replyTo) implements Command {}

  /** The reader offset within a leased task after a step that every block acknowledged. */
  public record ReportProgress(String trainerId, int epoch, int task, long offset, long step,
      ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * A trainer is alive: sent every third of {@code failure-timeout}, so one that waits at a barrier
   * for a dead peer is not taken for dead too.
   */
  public record Heartbeat(String trainerId) implements Command {}

  /** A trainer leaves on purpose (job done, or shutting down). */
  public record LeaveJob(String trainerId, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  public record GetStatus(ActorRef<JobStatus> replyTo) implements Command {}

  private record TrainerStopped(String trainerId) implements Command {}

  private enum Tick implements Command { INSTANCE }

  private record BlockAcked(String blockId, long epoch) implements Command {}

  // ---- replies ----
  /** {@code lastStep}: the last step this trainer reported, where an async trainer continues. */
  public record Registration(JobSpec job, long membershipEpoch, List<String> members, long lastStep)
      implements CborSerializable {}

  public sealed interface TaskReply extends CborSerializable {}

  /** Task {@code task} of epoch {@code epoch}: examples {@code [from, to)}, resume at {@code offset}. */
  public record Lease(int epoch, int task, int from, int to, long offset) implements TaskReply {}

  /** No task now: the job is done, or the remaining tasks are leased to others. */
  public record NoTask(boolean jobDone) implements TaskReply {}

  /**
   * The job has not started: it starts once its expected trainers are registered and every block
   * knows that membership, so the first sync step waits for all of them. Also the answer to a
   * trainer that joined a running job until every block knows it. Ask again shortly.
   */
  public record WaitForTrainers(int registered, int expected) implements TaskReply {}

  /** The job's progress; {@code job} is null until one is submitted. */
  public record JobStatus(String jobId, boolean submitted, boolean done, int epochsDone, long membershipEpoch,
      List<String> members, long examplesReported, List<String> leases, JobSpec job) implements CborSerializable {}

  // ---- events ----
  public sealed interface Event extends CborSerializable {}

  public record JobSubmitted(JobSpec job) implements Event {}

  public record TrainerJoined(String trainerId, ActorRef<?> trainer) implements Event {}

  public record TrainerLeft(String trainerId, String reason) implements Event {}

  public record TaskLeased(int epoch, int task, String trainerId) implements Event {}

  public record ProgressRecorded(int epoch, int task, long offset, String trainerId, long step) implements Event {}

  /** The expected trainers were registered and every block knew them: tasks are handed out from now on. */
  public record JobStarted(long membershipEpoch) implements Event {}

  // ---- behaviour ----
  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final MasterSettings settings;
  private final ActorRef<ShardingEnvelope<ParameterBlock.Command>> blocks;
  private final Map<String, Long> lastSeen = new HashMap<>();
  private final Map<String, Long> blockAcked = new HashMap<>();
  /**
   * Trainers that joined a running job, with their membership epoch: they get a task only once every
   * block knows that epoch, so no block closes their first step without them.
   */
  private final Map<String, Long> joining = new HashMap<>();

  /**
   * Starts (or finds) the singleton on this node's cluster and returns its proxy; membership
   * updates go to the parameter blocks through this node's shard region.
   */
  public static ActorRef<Command> initSingleton(ActorSystem<?> system) {
    MasterSettings settings = MasterSettings.create(system);
    ActorRef<ShardingEnvelope<ParameterBlock.Command>> blocks = ParameterBlock.init(system);
    return ClusterSingleton.get(system).init(
        SingletonActor.of(create(settings, blocks), SINGLETON_NAME)
            .withSettings(ClusterSingletonSettings.create(system).withRole("master")));
  }

  /** The master, sending membership updates to parameter blocks through {@code blocks}. */
  public static Behavior<Command> create(MasterSettings settings,
      ActorRef<ShardingEnvelope<ParameterBlock.Command>> blocks) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new Master(ctx, timers, settings, blocks)));
  }

  private Master(ActorContext<Command> context, TimerScheduler<Command> timers, MasterSettings settings,
      ActorRef<ShardingEnvelope<ParameterBlock.Command>> blocks) {
    super(PersistenceId.ofUniqueId("shardtrain-master"));
    this.context = context;
    this.timers = timers;
    this.settings = settings;
    this.blocks = blocks;
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
  public SignalHandler<MasterState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          long now = System.nanoTime();
          // Trainers learn the master moved when their next call fails or is delayed; watching
          // again here keeps departures detected on the new node.
          state.members().forEach((id, ref) -> {
            lastSeen.put(id, now);
            context.watchWith(ref, new TrainerStopped(id));
          });
          broadcastMembership(state);
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
        .onCommand(TrainerStopped.class, (s, c) -> leave(s, c.trainerId(), "its actor stopped"))
        .onCommand(GetStatus.class, (s, c) -> {
          c.replyTo().tell(s.status());
          return Effect().none();
        })
        .onCommand(Tick.class, this::onTick)
        .onCommand(BlockAcked.class, (s, c) -> {
          blockAcked.merge(c.blockId(), c.epoch(), Math::max);
          return Effect().none();
        })
        .build();
  }

  private Effect<Event, MasterState> onSubmit(MasterState s, SubmitJob c) {
    if (s.job() != null) {
      if (s.job().jobId().equals(c.job().jobId())) {
        c.replyTo().tell(StatusReply.ack());
        return Effect().none();
      }
      c.replyTo().tell(StatusReply.error("job '" + s.job().jobId() + "' is already running; '"
          + c.job().jobId() + "' was not started"));
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
    context.watchWith(c.trainer(), new TrainerStopped(c.trainerId()));
    ActorRef<?> known = s.members().get(c.trainerId());
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
          c.replyTo().tell(StatusReply.success(st.registration(c.trainerId())));
        });
  }

  private Effect<Event, MasterState> onRequestTask(MasterState s, RequestTask c) {
    if (!s.members().containsKey(c.trainerId())) {
      c.replyTo().tell(StatusReply.error("trainer " + c.trainerId() + " is not registered"));
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
    return Effect().none();
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
        replyTo -> new ShardingEnvelope<>(blockId, new ParameterBlock.UpdateMembership(epoch, members, replyTo)),
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
        .build();
  }
}
