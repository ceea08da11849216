package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParamShape;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.data.ReaderPosition;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A trainer: leases data tasks from the master, computes gradients on its backend, pushes
 * each block's gradient as soon as backward has produced it (last layer first, so communication
 * overlaps the rest of backward), and pulls the parameters of the next step.
 *
 * <p>Sync mode: step t is computed on the parameters of version t-1; right after the pushes the
 * trainer asks every block for version t, and each block answers the moment it has applied the
 * step, so the next parameters arrive block by block while others are still being applied. A
 * trainer without data for a step (the others still finish their tasks) takes part in the
 * barrier with an empty, zero-weight push. Async mode: pushes are applied as they arrive and the
 * trainer pulls the latest values after every step.
 *
 * <p>Every push names the task and the reader offset after its batch, so when a trainer dies after
 * pushing steps it could not report, the master learns from the blocks how far each got; a lease
 * may then name blocks that already hold the task's next examples, and the trainer pushes nothing
 * to those for them ({@link JobProtocol.Lease#skip()}).
 *
 * <p>After all blocks acknowledged a step the trainer reports its reader offset, so a restarted
 * trainer, or another one taking over the task, resumes exactly there. In sync mode the next step's
 * pushes wait until the master has recorded that offset (the report travels while the barrier
 * completes), so a trainer that dies leaves at most one batch applied by some blocks and not
 * recorded (which the master settles with the blocks, above); while the master does not answer (it
 * is moving) the trainer trains on without waiting.
 * A (re)started trainer registers, and once the master leases it a task (after every block knows
 * it) pulls the latest parameters; blocks one version apart mean some closed a step without it, so
 * it takes part in that step with no data and starts reading at the next. It sends the master a
 * heartbeat every third of {@code failure-timeout}, so waiting at a barrier is not taken for
 * death. Pushes and pulls that time out are retried with the same (trainer, step) key, which
 * blocks treat as idempotent. Compute runs inside the actor, so trainers belong on a dispatcher
 * of their own.
 *
 * <p>Checkpoint durability: when the master rolls the job back to a checkpoint ({@link TrainerNotice.RollBack}),
 * the trainer drops its step in flight, takes the new generation (which its pushes and progress
 * reports carry from then on), pulls the checkpoint's parameters and leases its task again at the
 * checkpoint's reader offset. A block that refuses a push as {@code RolledBack} is waited out: the
 * master's rollback notice follows.
 *
 * <p>With the bulk channel on ({@code shardtrain.transport.bulk.enabled}), gradient slices and
 * pulled values of at least {@code min-floats} floats travel over it and only small control
 * messages over Artery. Every pull reply names the bulk address of the block's node; gradients go
 * inline until it is known, when the block is on this node, and for the retry of any bulk push
 * or pull that failed (a block that moved, or a node with the channel off).
 */
public final class Trainer extends AbstractBehavior<Trainer.Command> {

  public sealed interface Command {}

  /** Stop after the current step and leave the job. */
  public enum Stop implements Command { INSTANCE }

  /** A notice from the master, through the adapter this trainer registered with. */
  private record Notice(TrainerNotice notice) implements Command {}

  private record Registered(JobProtocol.Registration registration, Throwable failure) implements Command {}

  // Replies carry the generation they were asked in: after a rollback, older ones are dropped.

  private record TaskAnswer(long generation, JobProtocol.TaskReply reply, Throwable failure) implements Command {}

  private record PushDone(long generation, String blockId, long step, boolean byLetter, BlockProtocol.PushAck ack,
      Throwable failure) implements Command {}

  private record PullDone(long generation, String blockId, long minVersion, BlockProtocol.BlockValues values,
      Throwable failure) implements Command {}

  private record ProgressDone(long step, Throwable failure) implements Command {}

  private enum Retry implements Command { REGISTER, NEXT_STEP }

  private enum SendHeartbeat implements Command { INSTANCE }

  /** Send the still unacknowledged push of {@code step} to {@code blockId} again. */
  private record RetryPush(long generation, String blockId, long step) implements Command {}

  /** A block's actor and the bulk address of its node. */
  private record LetterRoute(BulkAddress node, ActorRef<BlockProtocol.Command> block) {}

  /** What a trainer needs from the outside world; one per trainer. */
  public record Setup(String trainerId, ActorRef<JobProtocol.Command> master, Dataset train, Dataset test,
      Supplier<Backend> backend, TrainerSettings settings, StepListener listener) {}

  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final Setup setup;
  private final ClusterSharding sharding;
  /** This node's bulk channel, or null when it is off. */
  private final BulkTransport bulk;
  private final BulkAddress selfBulk;
  /**
   * Per block, where its letters go, from its last bulk pull reply; absent: push and pull through
   * Cluster Sharding, inline.
   */
  private final Map<String, LetterRoute> routes = new HashMap<>();
  private static final float[] NO_FLOATS = new float[0];

  private JobSpec job;
  private long membershipEpoch;
  private Mlp model;
  private Backend backend;
  /** Forward and backward: the model itself on the CPU, a resident copy on a GPU. */
  private GradientStep gradientStep;
  private List<BlockSlice> layout;
  private Map<String, Parameter> paramsByName;
  private Map<String, List<BlockSlice>> blocksByParam;

  /** The step being computed or awaited; version {@code step - 1} is what it is computed on. */
  private long step;
  private long baseVersion;
  private final Map<String, Long> blockVersion = new HashMap<>();
  private JobProtocol.Lease lease;
  private BatchReader reader;
  private Tensor x;
  private int pendingPushes;
  private int pendingPulls;
  private final Map<String, float[]> unacked = new HashMap<>();
  private long pulledMinVersion;
  /** The newest version the (re)start pull saw; above {@code baseVersion}, some block is a step ahead. */
  private long maxPulledVersion;
  /** Registered, but not yet pulled since the master confirmed every block knows this trainer. */
  private boolean freshPull;
  private boolean reportInFlight;
  private long reportStep;
  /** Whether the last progress report was answered; only then does a sync step wait for its report. */
  private boolean masterAnswers = true;
  private boolean waitingForReport;
  private long resumeStep;
  private long stepsDone;
  /** The last step whose pushes and pulls all completed. */
  private long lastCompleted;
  /** The job's rollback generation as this trainer knows it. */
  private long generation;
  private float lastLoss = Float.NaN;
  private int lastBatch;
  private long computeNanos;
  private ReaderPosition positionAfterStep;
  private boolean stopping;
  private long pushes;
  private long pulls;
  private long stale;

  public static Behavior<Command> create(Setup setup) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new Trainer(ctx, timers, setup)));
  }

  private Trainer(ActorContext<Command> context, TimerScheduler<Command> timers, Setup setup) {
    super(context);
    this.context = context;
    this.timers = timers;
    this.setup = setup;
    this.sharding = ClusterSharding.get(context.getSystem());
    BulkTransport transport = BulkTransport.get(context.getSystem());
    this.bulk = transport.isEnabled() ? transport : null;
    this.selfBulk = bulk == null ? null : BulkAddress.of(bulk.address());
    register();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Registered.class, this::onRegistered)
        .onMessage(TaskAnswer.class, this::onTask)
        .onMessage(PushDone.class, this::onPushDone)
        .onMessage(RetryPush.class, this::onRetryPush)
        .onMessage(PullDone.class, this::onPullDone)
        .onMessage(ProgressDone.class, this::onProgressDone)
        .onMessageEquals(SendHeartbeat.INSTANCE, () -> {
          setup.master().tell(new JobProtocol.Heartbeat(setup.trainerId()));
          return this;
        })
        .onMessageEquals(Retry.REGISTER, () -> {
          register();
          return this;
        })
        .onMessageEquals(Retry.NEXT_STEP, () -> nextStep())
        .onMessage(Notice.class, n -> n.notice() instanceof TrainerNotice.RollBack r ? onRollBack(r) : this)
        .onMessageEquals(Stop.INSTANCE, () -> {
          stopping = true;
          return pendingPushes == 0 && pendingPulls == 0 ? finish("stopped") : this;
        })
        .build();
  }

  // ---- registration ----

  private void register() {
    ActorRef<TrainerNotice> notices = context.messageAdapter(TrainerNotice.class, Notice::new);
    context.askWithStatus(JobProtocol.Registration.class, setup.master(), setup.settings().askTimeout(),
        replyTo -> new JobProtocol.RegisterTrainer(setup.trainerId(), notices, replyTo),
        Registered::new);
  }

  private Behavior<Command> onRegistered(Registered m) {
    if (m.failure() != null) {
      context.getLog().info("trainer {}: master not ready ({}), retrying", setup.trainerId(), m.failure().getMessage());
      timers.startSingleTimer(Retry.REGISTER, setup.settings().retryDelay());
      return this;
    }
    boolean first = job == null;
    job = m.registration().job();
    membershipEpoch = m.registration().membershipEpoch();
    resumeStep = m.registration().lastStep();
    generation = Math.max(generation, m.registration().generation());
    if (first) {
      buildModel();
      timers.startTimerWithFixedDelay(SendHeartbeat.INSTANCE, setup.settings().heartbeatInterval());
    }
    // A (re)started trainer pulls the latest parameters before its first step, and again once the
    // master confirms every block knows it (its first task).
    freshPull = true;
    step = 0;
    pullAll(0);
    return this;
  }

  private void buildModel() {
    backend = setup.backend().get();
    model = job.newModel(backend);
    gradientStep = GradientStep.of(model, job.batch());
    paramsByName = new HashMap<>();
    List<ParamShape> shapes = new ArrayList<>();
    for (Parameter p : model.parameters()) {
      paramsByName.put(p.name(), p);
      shapes.add(new ParamShape(p.name(), p.size()));
    }
    layout = BlockLayout.of(shapes, job.blockSize());
    List<String> ids = layout.stream().map(BlockSlice::entityId).toList();
    if (!ids.equals(job.blocks())) {
      throw new IllegalStateException("trainer " + setup.trainerId() + ": the model's blocks " + ids
          + " differ from the job's " + job.blocks());
    }
    blocksByParam = new HashMap<>();
    for (BlockSlice s : layout) blocksByParam.computeIfAbsent(s.parameter(), k -> new ArrayList<>()).add(s);
  }

  // ---- the step loop ----

  private Behavior<Command> nextStep() {
    if (stopping) return finish("stopped");
    // Sync: the step is the job's (the blocks' version); async: this trainer's, kept by the master.
    // Either way a restarted trainer stops at the job's step count, not that many steps later.
    if (job.steps() > 0 && step >= job.steps()) return finish("reached step " + job.steps());
    if (reader == null) {
      long g = generation;
      context.askWithStatus(JobProtocol.TaskReply.class, setup.master(), setup.settings().askTimeout(),
          replyTo -> new JobProtocol.RequestTask(setup.trainerId(), replyTo), (r, f) -> new TaskAnswer(g, r, f));
      return this;
    }
    return computeStep();
  }

  private Behavior<Command> onTask(TaskAnswer m) {
    if (m.generation() != generation) return this;
    if (m.failure() != null) {
      context.getLog().warn("trainer {}: task request failed ({}), retrying", setup.trainerId(), m.failure().getMessage());
      timers.startSingleTimer(Retry.NEXT_STEP, setup.settings().retryDelay());
      return this;
    }
    if (m.reply() instanceof JobProtocol.NotRegistered) {
      // Dropped while alive (a pause longer than the failure timeout): join again like a restart.
      context.getLog().warn("trainer {}: the master no longer knows it; registering again", setup.trainerId());
      lease = null;
      register();
      return this;
    }
    if (m.reply() instanceof JobProtocol.Lease l) {
      lease = l;
      reader = new BatchReader(setup.train(), l.from(), l.to(), job.batch(), job.seed() * 1_000_003L + l.task(),
          true, false, new ReaderPosition(l.epoch(), l.offset()));
      if (freshPull) return pullBeforeFirstStep();
      return computeStep();
    }
    if (m.reply() instanceof JobProtocol.WaitForTrainers w) {
      context.getLog().info("trainer {}: waiting for the job to start ({} of {} trainers)", setup.trainerId(),
          w.registered(), w.expected());
      timers.startSingleTimer(Retry.NEXT_STEP, setup.settings().retryDelay());
      return this;
    }
    JobProtocol.NoTask none = (JobProtocol.NoTask) m.reply();
    if (none.jobDone()) return finish("job done");
    if (freshPull) return pullBeforeFirstStep();
    if (job.mode() == BlockSpec.Mode.SYNC) return idleStep();
    timers.startSingleTimer(Retry.NEXT_STEP, setup.settings().retryDelay());
    return this;
  }

  /** Every block knows this trainer now: pull the latest parameters, then take the first step. */
  private Behavior<Command> pullBeforeFirstStep() {
    freshPull = false;
    step = 0;
    pullAll(0);
    return this;
  }

  private Behavior<Command> computeStep() {
    // A batch ends where a block that already holds examples of this task stops holding them.
    long at = reader.position().offset();
    long limit = job.batch();
    for (long held : lease.skip().values()) {
      if (held > at) limit = Math.min(limit, held - at);
    }
    Batch b = reader.next((int) limit);
    long t0 = System.nanoTime();
    if (x == null || x.rows() != b.size()) x = Tensor.zeros(b.size(), job.inputDim());
    System.arraycopy(b.features(), 0, x.data(), 0, b.size() * job.inputDim());
    step = step + 1;
    lastBatch = b.size();
    positionAfterStep = b.positionAfter();
    // Pushes leave while backward is still running for the lower layers.
    lastLoss = gradientStep.forwardBackward(x, b.labels(), p -> push(p, b.size()));
    computeNanos = System.nanoTime() - t0;
    pullAll(job.mode() == BlockSpec.Mode.SYNC ? step : 0);
    return this;
  }

  private Behavior<Command> idleStep() {
    step = step + 1;
    lastBatch = 0;
    positionAfterStep = null;
    computeNanos = 0;
    for (BlockSlice s : layout) sendPush(s.entityId(), new float[0], 0f, false);
    pullAll(step);
    return this;
  }

  private void push(Parameter p, int weight) {
    float[] grad = p.grad().data();
    for (BlockSlice s : blocksByParam.get(p.name())) {
      if (lease.skip().getOrDefault(s.entityId(), 0L) >= positionAfterStep.offset()) {
        // The block has this batch already (from the trainer that held the task before).
        sendPush(s.entityId(), new float[0], 0f, false);
        continue;
      }
      float[] slice = new float[s.length()];
      System.arraycopy(grad, s.offset(), slice, 0, s.length());
      sendPush(s.entityId(), slice, weight, true);
    }
  }

  private void sendPush(String blockId, float[] values, float weight, boolean allowBulk) {
    pendingPushes++;
    pushes++;
    unacked.put(blockId, values);
    long s = step;
    long base = blockVersion.getOrDefault(blockId, baseVersion);
    long epoch = membershipEpoch;
    long g = generation;
    BlockProtocol.TaskMark mark = weight > 0f && lease != null
        ? new BlockProtocol.TaskMark(lease.epoch(), lease.task(), positionAfterStep.offset()) : null;
    if (allowBulk && pushByLetter(blockId, values, s, base, epoch, weight, g, mark)) return;
    EntityRef<BlockProtocol.Command> ref = sharding.entityRefFor(ParameterBlock.ENTITY_KEY, blockId);
    context.askWithStatus(BlockProtocol.PushAck.class, ref, setup.settings().askTimeout(),
        replyTo -> new BlockProtocol.PushGradient(setup.trainerId(), s, base, epoch, weight, values, g,
            mark, replyTo),
        (ack, failure) -> new PushDone(g, blockId, s, false, ack, failure));
  }

  /**
   * Pushes straight to the block's actor, the gradient and the push in one bulk frame, when a bulk
   * reply named that actor; false when the push has to go through sharding instead.
   */
  private boolean pushByLetter(String blockId, float[] values, long s, long base, long epoch, float weight, long g,
      BlockProtocol.TaskMark mark) {
    LetterRoute route = routes.get(blockId);
    if (bulk == null || route == null || !bulk.settings().carries(values.length)) return false;
    context.pipeToSelf(
        bulk.<BlockProtocol.PushAck>askWithStatus(route.node().socketAddress(),
            replyTo -> new BlockProtocol.PushLetter(route.block(), selfBulk, new BlockProtocol.PushGradient(
                setup.trainerId(), s, base, epoch, weight, null, g, mark, replyTo)),
            values, 0, values.length, setup.settings().askTimeout()),
        (ack, failure) -> new PushDone(g, blockId, s, true, ack, failure));
    return true;
  }

  private Behavior<Command> onRetryPush(RetryPush r) {
    if (r.generation() != generation || r.step() != step || !unacked.containsKey(r.blockId())) return this;
    float[] values = unacked.get(r.blockId());
    pendingPushes--;
    pushes--;
    sendPush(r.blockId(), values, values.length == 0 ? 0f : lastBatch, true);
    return this;
  }

  private Behavior<Command> onPushDone(PushDone m) {
    if (m.generation() != generation || m.step() != step) return this; // a late answer to a retried push
    if (m.failure() != null) {
      if (m.byLetter()) {
        // The block's actor may have stopped (it moved), or its node may be gone.
        context.getLog().info("trainer {}: push letter of step {} to {} failed ({}), retrying through sharding",
            setup.trainerId(), m.step(), m.blockId(), m.failure().getMessage());
        routes.remove(m.blockId());
        float[] values = unacked.get(m.blockId());
        pendingPushes--;
        pushes--;
        sendPush(m.blockId(), values, values.length == 0 ? 0f : lastBatch, false);
        return this;
      }
      if (isRetryable(m.failure())) {
        context.getLog().warn("trainer {}: push of step {} to {} failed ({}), retrying", setup.trainerId(),
            m.step(), m.blockId(), m.failure().getMessage());
        // After a pause: a block whose node just died answers nothing until sharding moved it.
        timers.startSingleTimer("push-" + m.blockId(), new RetryPush(generation, m.blockId(), m.step()),
            setup.settings().retryDelay());
        return this;
      }
      return fail("block " + m.blockId() + " refused step " + m.step() + ": " + m.failure().getMessage());
    }
    if (m.ack() instanceof BlockProtocol.RolledBack r) {
      // The block went back to a checkpoint; the master's RollBack says where to continue. A block
      // that merely moved (and recovered its newest checkpoint) needs the master to start one.
      setup.master().tell(new JobProtocol.RollBackToCheckpoint("block " + m.blockId() + " is at version " + r.version()
          + ", behind step " + m.step(), generation, setup.trainerId()));
      timers.startSingleTimer("push-" + m.blockId(), new RetryPush(generation, m.blockId(), m.step()),
          setup.settings().retryDelay());
      return this;
    }
    if (m.ack() instanceof BlockProtocol.Stale) stale++;
    unacked.remove(m.blockId());
    pendingPushes--;
    // Every block has this step: report the offset while the barrier completes.
    if (pendingPushes == 0 && lastBatch > 0) reportProgress();
    return maybeStepDone();
  }

  private void pullAll(long minVersion) {
    pulledMinVersion = minVersion;
    for (BlockSlice s : layout) sendPull(s.entityId(), minVersion, true);
  }

  private void sendPull(String blockId, long minVersion, boolean allowBulk) {
    pendingPulls++;
    pulls++;
    BulkAddress replyBulk = allowBulk ? selfBulk : null;
    long g = generation;
    LetterRoute route = routes.get(blockId);
    if (replyBulk != null && bulk != null && route != null) {
      // Straight to the block's actor; a failure sends the retry through sharding.
      context.pipeToSelf(
          bulk.<BlockProtocol.BlockValues>askWithStatus(route.node().socketAddress(),
              replyTo -> new BlockProtocol.PullLetter(route.block(),
                  new BlockProtocol.Pull(minVersion, replyBulk, replyTo)),
              NO_FLOATS, 0, 0, setup.settings().pullTimeout()),
          (v, failure) -> new PullDone(g, blockId, minVersion, v, failure));
      return;
    }
    EntityRef<BlockProtocol.Command> ref = sharding.entityRefFor(ParameterBlock.ENTITY_KEY, blockId);
    context.askWithStatus(BlockProtocol.BlockValues.class, ref, setup.settings().pullTimeout(),
        replyTo -> new BlockProtocol.Pull(minVersion, replyBulk, replyTo),
        (v, failure) -> new PullDone(g, blockId, minVersion, v, failure));
  }

  private Behavior<Command> onPullDone(PullDone m) {
    if (m.generation() != generation || m.minVersion() != pulledMinVersion) return this;
    if (m.failure() != null) {
      // Values the block could not send by bulk come inline next time.
      boolean bulkFailed = String.valueOf(m.failure().getMessage()).startsWith(ParameterBlock.BULK_REPLY_FAILED);
      routes.remove(m.blockId());
      context.getLog().warn("trainer {}: pull of {} (version >= {}) failed ({}), retrying{}", setup.trainerId(),
          m.blockId(), m.minVersion(), m.failure().getMessage(), bulkFailed ? " inline" : "");
      pendingPulls--;
      pulls--;
      sendPull(m.blockId(), m.minVersion(), !bulkFailed);
      return this;
    }
    return pulled(m.blockId(), m.values());
  }

  private Behavior<Command> pulled(String blockId, BlockProtocol.BlockValues v) {
    if (v.node() != null && v.block() != null && !v.node().equals(selfBulk)) {
      routes.put(blockId, new LetterRoute(v.node(), v.block()));
    } else {
      routes.remove(blockId);
    }
    Parameter p = paramsByName.get(v.parameter());
    System.arraycopy(v.values(), 0, p.value().data(), v.offset(), v.values().length);
    blockVersion.put(blockId, v.version());
    if (step == 0) {
      // First pull after (re)registration: continue from the oldest block's version.
      boolean firstReply = pendingPulls == layout.size();
      baseVersion = firstReply ? v.version() : Math.min(baseVersion, v.version());
      maxPulledVersion = firstReply ? v.version() : Math.max(maxPulledVersion, v.version());
    } else {
      baseVersion = Math.max(baseVersion, v.version());
    }
    pendingPulls--;
    return maybeStepDone();
  }

  private Behavior<Command> maybeStepDone() {
    if (pendingPushes > 0 || pendingPulls > 0) return this;
    boolean sync = job.mode() == BlockSpec.Mode.SYNC;
    if (step == 0) {
      // Registered and pulled. Sync: the next step is the one after the oldest block's version.
      // Async: steps only key a trainer's pushes, so continue after its last reported step.
      step = sync ? baseVersion : resumeStep;
      if (freshPull) return nextStep();
      if (lease != null) {
        context.getLog().info("trainer {} resumes task {}/{} at offset {} after step {} (parameters pulled at version {})",
            setup.trainerId(), lease.epoch(), lease.task(), lease.offset(), step, baseVersion);
        setup.listener().onResumed(setup.trainerId(), lease.epoch(), lease.task(), lease.offset(), step, baseVersion);
      }
      // Some blocks closed step baseVersion + 1 without this trainer: take part in it with no data,
      // so that every block applies this trainer's first batch.
      if (sync && maxPulledVersion > baseVersion) return idleStep();
      return nextStep();
    }
    if (sync && reportInFlight && masterAnswers) {
      // The next pushes wait until the master recorded this step's offset.
      waitingForReport = true;
      return this;
    }
    stepsDone++;
    lastCompleted = step;
    if (lastBatch > 0) setup.listener().onStep(setup.trainerId(), step, lastLoss, lastBatch, computeNanos);
    if (reader != null && reader.epochDone()) {
      reader = null;
      lease = null;
    }
    return nextStep();
  }

  private void reportProgress() {
    JobProtocol.Lease l = lease;
    long offset = positionAfterStep.offset();
    long s = step;
    long g = generation;
    reportInFlight = true;
    reportStep = s;
    context.askWithStatus(akka.Done.class, setup.master(), setup.settings().askTimeout(),
        replyTo -> new JobProtocol.ReportProgress(setup.trainerId(), l.epoch(), l.task(), offset, s, g, replyTo),
        (done, failure) -> new ProgressDone(s, failure));
  }

  private Behavior<Command> onProgressDone(ProgressDone m) {
    if (m.step() != reportStep) return this;
    reportInFlight = false;
    if (isRetryable(m.failure())) {
      if (masterAnswers) {
        context.getLog().warn("trainer {}: progress report of step {} got no answer ({}); training on without"
            + " waiting for reports until the master answers again", setup.trainerId(), m.step(),
            m.failure().getMessage());
      }
      masterAnswers = false;
    } else {
      if (m.failure() != null) {
        context.getLog().warn("trainer {}: progress report of step {} refused: {}", setup.trainerId(), m.step(),
            m.failure().getMessage());
      }
      masterAnswers = true;
    }
    if (!waitingForReport) return this;
    waitingForReport = false;
    return maybeStepDone();
  }

  private Behavior<Command> onRollBack(TrainerNotice.RollBack r) {
    if (r.generation() <= generation || job == null) return this;
    context.getLog().warn("trainer {}: the job rolled back to step {} (generation {}); continuing from there",
        setup.trainerId(), r.step(), r.generation());
    generation = r.generation();
    timers.cancelAll();
    timers.startTimerWithFixedDelay(SendHeartbeat.INSTANCE, setup.settings().heartbeatInterval());
    reportInFlight = false;
    waitingForReport = false;
    masterAnswers = true;
    maxPulledVersion = 0;
    // As after a registration: pull now, and again once the master leased a task.
    freshPull = true;
    // The steps after the checkpoint are done again.
    stepsDone -= Math.max(0, lastCompleted - r.step());
    lastCompleted = Math.min(lastCompleted, r.step());
    pendingPushes = 0;
    pendingPulls = 0;
    unacked.clear();
    reader = null;
    lease = null;
    if (stopping) return finish("stopped");
    // As after registration: pull the checkpoint's parameters, then lease at its reader offset.
    step = 0;
    pullAll(0);
    return this;
  }

  private Behavior<Command> finish(String why) {
    context.getLog().info("trainer {} finished after {} steps: {}", setup.trainerId(), stepsDone, why);
    setup.master().tell(new JobProtocol.LeaveJob(setup.trainerId(), context.getSystem().ignoreRef()));
    setup.listener().onFinished(setup.trainerId(), stepsDone, pushes, pulls, stale);
    closeCompute();
    return Behaviors.stopped();
  }

  private Behavior<Command> fail(String why) {
    context.getLog().error("trainer {} failed: {}", setup.trainerId(), why);
    setup.master().tell(new JobProtocol.LeaveJob(setup.trainerId(), context.getSystem().ignoreRef()));
    setup.listener().onFailed(setup.trainerId(), why);
    closeCompute();
    return Behaviors.stopped();
  }

  private void closeCompute() {
    if (gradientStep != null) gradientStep.close();
    if (backend != null) backend.close();
  }

  private static boolean isRetryable(Throwable t) {
    return t instanceof java.util.concurrent.TimeoutException;
  }
}
