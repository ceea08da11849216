package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.BehaviorBuilder;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.job.TrainerNotice.RollBack;
import io.shardtrain.actors.ps.BlockClient;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.Dataset;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A trainer: leases data tasks from the master ({@link JobProtocol}), computes gradients on its
 * backend, pushes each block's gradient as soon as backward produced it (last layer first, so
 * communication overlaps the rest of backward) with the block's pull right behind it, and runs the
 * next step's forward layer by layer as the pulled values arrive.
 *
 * <p>Sync mode: step t is computed on the parameters of version t-1; the block answers the pull
 * for version t the moment it applied the step. A trainer without data for a step takes part in
 * the barrier with an empty, zero-weight push. Async mode: pushes are applied as they arrive and
 * the trainer pulls the latest values after every step. All-reduce mode: the trainers average
 * their gradients among themselves and each applies the step to its own replica
 * ({@link RingStepping}). Every push names the task and the reader offset after its batch, so the
 * master can settle a task whose trainer died after pushing steps it could not report.
 *
 * <p>After every block acknowledged a step the trainer reports its reader offset, so whoever takes
 * the task over resumes there. Reports never hold a step up: one is in flight at a time, and the
 * steps completed meanwhile go together in the next ({@link ProgressReports}); the trainer waits
 * for the master's answers only before it asks for another task and before it leaves. A
 * (re)started trainer registers, pulls the latest parameters, and pulls again once the master
 * leases it a task; blocks one version apart mean some closed a step without it, so it takes part
 * in that step with no data. It sends the master a heartbeat every third of
 * {@code failure-timeout}, so waiting at a barrier is not taken for death. Failed pushes and pulls
 * are retried under the same (trainer, step) key, which blocks treat as idempotent. Compute runs
 * inside the actor, so trainers belong on a dispatcher of their own.
 *
 * <p>Checkpoint durability: on the master's rollback ({@link RollBack}) the trainer drops its step
 * in flight, takes the new generation (which its pushes and reports carry from then on), pulls the
 * checkpoint's parameters and leases its task again at the checkpoint's reader offset. The
 * {@link BlockClient} reaches the blocks, the {@link MasterLink} the master.
 *
 * <p>Phases, each a behaviour: <i>registering</i> &rarr; <i>pulling</i> every block's latest
 * values &rarr; <i>leasing</i> a task &rarr; (the first answer after a registration or rollback:
 * <i>pulling</i> again) &rarr; <i>stepping</i> (compute, push, pull) &rarr; the next step, or,
 * once the task is read, <i>reporting</i> &rarr; <i>leasing</i>. A rollback goes back to
 * <i>pulling</i> from any phase; a master that forgot the trainer sends it back to
 * <i>registering</i>; a stop ends it between steps, after the master answered the reports still
 * out (or one got no answer in time).
 */
public final class Trainer {

  public sealed interface Command permits Stop, Notice, Internal, Ring {}

  /** Stop after the current step and leave the job. */
  public enum Stop implements Command { INSTANCE }

  /**
   * What the master tells this trainer unasked ({@link TrainerNotice}: a rollback to a checkpoint),
   * through the adapter the trainer registers with.
   */
  record Notice(TrainerNotice notice) implements Command {
    RollBack rollBack() {
      return notice instanceof RollBack r ? r : null;
    }
  }

  /** The trainer's own messages: answers to what its pieces asked, and its timers. */
  sealed interface Internal extends Command permits MasterLink.Registered, MasterLink.TaskAnswered,
      MasterLink.Reported, MasterLink.Left, BlockExchange.PushAnswer, BlockExchange.PullAnswer, Retry, Tick,
      RetryPush, RingLink.Listed, RingStepping.Members, ReplicaPublishing.Published, RingStepping.StallCheck,
      RingStepping.DeparturesWaited, CtrTrainer.Message {}

  /** What the other members of an all-reduce ring send ({@link RingLink}). */
  sealed interface Ring extends Command permits RingLink.Hello, RingLink.ChunkArrived, RingLink.Sync,
      RingLink.TransferPart, RingLink.TransferEnd, RingLink.LeavesAfter, RingLink.AppliedUpTo {}

  private enum Retry implements Internal { REGISTER, NEXT_STEP }

  /** The heartbeat to the master; a look for requests the step's other answers show lost ({@code resend-after}). */
  private enum Tick implements Internal { HEARTBEAT, ANSWERS }

  /** Send the still unacknowledged push of {@code step} to {@code block} again. */
  private record RetryPush(long generation, String block, long step) implements Internal {}

  /** What a trainer needs from the outside world; one per trainer. */
  public record Setup(String trainerId, ActorRef<JobProtocol.Command> master, Dataset train, Dataset test,
      Supplier<Backend> backend, TrainerSettings settings, StepListener listener) {}

  /** A leased task and the reader over its examples. */
  record Task(TaskLease lease, BatchReader reader) {}

  private static final BooleanSupplier NO_STOP = () -> false;

  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final Setup setup;
  private final String id;
  private final MasterLink master;
  private final BlockExchange blocks;
  private final ProgressReports reports = new ProgressReports();
  private final TrainerCounts counts = new TrainerCounts();
  private final TrainerProfile profile;
  private final RingStepping ring;

  public static Behavior<Command> create(Setup setup) {
    return StopOnShutdown.around(Behaviors.intercept(() -> ReportFailure.of(setup), Behaviors.setup(ctx ->
        Behaviors.withTimers(timers -> new Trainer(ctx, timers, MeteredSteps.around(setup, ctx.getSystem())).register()))));
  }

  private Trainer(ActorContext<Command> context, TimerScheduler<Command> timers, Setup setup) {
    this.context = context;
    this.timers = timers;
    this.setup = setup;
    this.id = setup.trainerId();
    this.profile = new TrainerProfile(MeteredSteps.meters(context.getSystem(), id));
    this.master = new MasterLink(context, id, setup.master(), setup.settings());
    this.blocks = new BlockExchange(context, id, setup.settings(), counts);
    this.ring = new RingStepping(this, context, setup, blocks, counts, profile, reports);
  }

  // ---- registering ----

  /** The first registration: the job, and with it the model, is not known yet. */
  private Behavior<Command> register() {
    master.register();
    return Behaviors.receive(Command.class)
        .onMessage(MasterLink.Registered.class, m -> {
          if (m.failure() != null) return registrationFailed(m);
          TrainerModel model = TrainerModel.build(id, m.job(), setup.backend());
          startTimers();
          return rejoin(new Session(m.job(), model, m.membershipEpoch(), m.lastStep(), m.generation()));
        })
        .onMessageEquals(Retry.REGISTER, this::registerAgain)
        .onMessageEquals(Stop.INSTANCE, () -> finish(null, "stopped"))
        // A rollback notice before the job is known: the registration's generation is the newer word.
        .onAnyMessage(m -> Behaviors.same())
        .build();
  }

  /** Registering again: the master no longer knows this trainer (it was dropped while alive). */
  private Behavior<Command> registering(Session s) {
    return phase(s, NO_STOP, Behaviors.receive(Command.class)
        .onMessage(MasterLink.Registered.class, m -> m.failure() != null ? registrationFailed(m)
            : rejoin(new Session(m.job(), s.model(), m.membershipEpoch(), m.lastStep(),
                Math.max(s.generation(), m.generation()))))
        .onMessageEquals(Retry.REGISTER, this::registerAgain)
        .onMessageEquals(Stop.INSTANCE, () -> finish(s.model(), "stopped"))
        .onMessage(Notice.class, n -> {
          RollBack r = n.rollBack();
          if (r == null || r.generation() <= s.generation()) return Behaviors.same();
          // The registration's answer starts the pull of the checkpoint's parameters.
          takeBackStepsAfter(r);
          return registering(s.withGeneration(r.generation()));
        }));
  }

  private Behavior<Command> registerAgain() {
    master.register();
    return Behaviors.same();
  }

  private Behavior<Command> registrationFailed(MasterLink.Registered m) {
    context.getLog().info("trainer {}: master not ready ({}), retrying", id, m.failure().getMessage());
    timers.startSingleTimer(Retry.REGISTER, setup.settings().retryDelay());
    return Behaviors.same();
  }

  // ---- pulling the latest parameters ----

  /** After a registration or a rollback: pull the latest parameters, then ask for a task. */
  private Behavior<Command> rejoin(Session s) {
    return pulling(s, blocks.pullAll(s, 0), round -> round.stopRequested() ? leave(s, "stopped")
        : nextStep(s, s.lockstep() ? round.oldest() : s.lastStep(), null, true));
  }

  /**
   * The first task answer after a rejoin: every block knows this trainer now, so pull again.
   * Sync: the next step is the one after the oldest block's version; blocks a version ahead closed
   * that step without this trainer, which takes part in it with no data so that every block
   * applies its first batch. Async: steps only key a trainer's pushes; continue after its last
   * reported step.
   */
  private Behavior<Command> resume(Session s, Task task) {
    return pulling(s, blocks.pullAll(s, 0), round -> {
      long step = s.lockstep() ? round.oldest() : s.lastStep();
      if (task != null) {
        TaskLease l = task.lease();
        context.getLog().info("trainer {} resumes task {}/{} at offset {} after step {} (parameters pulled at version {})",
            id, l.epoch(), l.task(), l.offset(), step, round.oldest());
        setup.listener().onResumed(id, l.epoch(), l.task(), l.offset(), step, round.oldest());
      }
      if (s.lockstep() && round.newest() > round.oldest()) return idle(s, task, step, round.stopRequested());
      return round.stopRequested() ? leave(s, "stopped") : nextStep(s, step, task, false);
    });
  }

  private Behavior<Command> pulling(Session s, PullRound round, Function<PullRound, Behavior<Command>> then) {
    return phase(s, round::stopRequested, Behaviors.receive(Command.class)
        .onMessage(BlockExchange.PullAnswer.class, m -> blocks.pulled(s, round, m) && round.done() ? then.apply(round)
            : Behaviors.same())
        .onMessageEquals(Tick.ANSWERS, () -> staying(() -> blocks.sendOverdueAgain(s, round)))
        .onMessageEquals(Stop.INSTANCE, () -> staying(round::requestStop)));
  }

  // ---- leasing a task ----

  /** After {@code step}: compute the next one on {@code task}, or ask the master for a task (null: none held). */
  private Behavior<Command> nextStep(Session s, long step, Task task, boolean firstTask) {
    return nextStep(s, step, task, firstTask, null);
  }

  /** The same, with the next step's forward begun on {@code task}'s next batch ({@code ahead}; null: not begun). */
  private Behavior<Command> nextStep(Session s, long step, Task task, boolean firstTask, ForwardAhead ahead) {
    // Sync: the step is the job's (the blocks' version); async: this trainer's, kept by the master.
    // Either way a restarted trainer stops at the job's step count, not that many steps later.
    long steps = s.job().steps();
    if (steps > 0 && step >= steps) return leave(s, "reached step " + steps);
    if (task != null) return compute(s, task, step, ahead);
    return afterReports(s, () -> {
      master.requestTask(s.generation());
      return leasing(s, step, firstTask);
    });
  }

  /** Waiting for a task; {@code firstTask}: the first answer since a rejoin, which pulls again. */
  private Behavior<Command> leasing(Session s, long step, boolean firstTask) {
    return phase(s, NO_STOP, Behaviors.receive(Command.class)
        .onMessage(MasterLink.TaskAnswered.class, m -> m.generation() != s.generation() ? Behaviors.same()
            : taskAnswered(s, step, firstTask, m.answer()))
        .onMessageEquals(Retry.NEXT_STEP, () -> nextStep(s, step, null, firstTask))
        .onMessageEquals(Stop.INSTANCE, () -> leave(s, "stopped")));
  }

  private Behavior<Command> taskAnswered(Session s, long step, boolean firstTask, MasterLink.TaskAnswer answer) {
    if (answer instanceof MasterLink.Leased l) {
      Task task = new Task(l.lease(), l.lease().openReader(setup.train(), s.job().batch(), s.job().seed()));
      return firstTask ? resume(s, task) : compute(s, task, step, null);
    }
    if (answer instanceof MasterLink.NoTask n) {
      if (n.jobDone()) return s.allReduce() ? ring.step(s, null, step, false, true) : leave(s, "job done");
      if (firstTask) return resume(s, null);
      if (s.lockstep()) return idle(s, null, step, false);
      return askForTaskLater();
    }
    if (answer instanceof MasterLink.Forgotten) {
      // Dropped while alive (a pause longer than the failure timeout): join again like a restart.
      context.getLog().warn("trainer {}: the master no longer knows it; registering again", id);
      master.register();
      return registering(s);
    }
    if (answer instanceof MasterLink.Waiting w) {
      context.getLog().info("trainer {}: waiting for the job to start ({} of {} trainers)", id, w.registered(),
          w.expected());
    } else {
      context.getLog().warn("trainer {}: task request failed ({}), retrying", id,
          ((MasterLink.Unanswered) answer).failure().getMessage());
    }
    return askForTaskLater();
  }

  private Behavior<Command> askForTaskLater() {
    timers.startSingleTimer(Retry.NEXT_STEP, setup.settings().retryDelay());
    return Behaviors.same();
  }

  // ---- stepping ----

  private Behavior<Command> compute(Session s, Task task, long previousStep, ForwardAhead ahead) {
    if (s.allReduce()) return ring.step(s, task, previousStep, true, false);
    return stepping(s, task, blocks.train(s, task.lease(), task.reader(), previousStep, ahead));
  }

  /** A sync step without data, so the barrier does not wait for this trainer. */
  private Behavior<Command> idle(Session s, Task task, long previousStep, boolean stopRequested) {
    if (s.allReduce()) return ring.step(s, task, previousStep, false, stopRequested);
    StepInFlight st = blocks.withoutData(s, previousStep);
    if (stopRequested) st.requestStop();
    return stepping(s, task, st);
  }

  private Behavior<Command> stepping(Session s, Task task, StepInFlight st) {
    return phase(s, st::stopRequested, Behaviors.receive(Command.class)
        .onMessage(BlockExchange.PushAnswer.class, m -> pushed(s, task, st, m))
        .onMessage(RetryPush.class, m -> {
          if (m.generation() == s.generation() && m.step() == st.step() && st.awaitsPush(m.block())) {
            blocks.resendPush(s, st, m.block());
          }
          return Behaviors.same();
        })
        .onMessage(BlockExchange.PullAnswer.class,
            m -> blocks.pulled(s, st.pulls(), m) ? arrived(s, task, st, m.block()) : Behaviors.same())
        .onMessageEquals(Tick.ANSWERS, () -> staying(() -> blocks.sendOverdueAgain(s, st)))
        .onMessageEquals(Stop.INSTANCE, () -> staying(st::requestStop)));
  }

  private Behavior<Command> pushed(Session s, Task task, StepInFlight st, BlockExchange.PushAnswer m) {
    // A late answer to an abandoned step.
    if (m.generation() != s.generation() || m.step() != st.step() || !st.awaitsPush(m.block())) {
      return Behaviors.same();
    }
    BlockClient.Result<BlockProtocol.PushAck> r = blocks.pushOutcome(m);
    switch (r.delivery()) {
      case BOUNCED:
        context.getLog().info("trainer {}: push of step {} to {} bounced ({}), sent again", id, m.step(), m.block(),
            r.reason());
        return Behaviors.same();
      case TIMED_OUT:
        context.getLog().warn("trainer {}: push of step {} to {} failed ({}), retrying", id, m.step(), m.block(),
            r.reason());
        // After a pause: a block whose node just died answers nothing until sharding moved it.
        retryPushLater(s, m);
        return Behaviors.same();
      case REFUSED:
        return fail(s.model(), "block " + m.block() + " refused step " + m.step() + ": " + r.reason());
      default:
        break;
    }
    if (r.value() instanceof BlockProtocol.RolledBack rolledBack) {
      // The block went back to a checkpoint; the master's RollBack says where to continue. A block
      // that merely moved (and recovered its newest checkpoint) needs the master to start one.
      master.rollBackToCheckpoint("block " + m.block() + " is at version " + rolledBack.version()
          + ", behind step " + m.step(), s.generation());
      retryPushLater(s, m);
      return Behaviors.same();
    }
    if (r.value() instanceof BlockProtocol.Stale) counts.stalePush();
    boolean brought = blocks.pulledWithAck(s, st, m);
    // Every block has this step: report its offset, with the steps before it not reported yet.
    if (st.acked(m.block()) && st.examples() > 0) {
      reports.completed(task.lease().epoch(), task.lease().task(), st.step(), st.offsetAfter());
      sendReport(s);
    }
    return brought ? arrived(s, task, st, m.block()) : st.done() ? completed(s, task, st) : Behaviors.same();
  }

  /**
   * {@code block}'s values for the next step came in: the step is done, or the next step's forward
   * runs through the layers that now have all their blocks, when that step is sure to train on
   * {@code task}'s next batch: the same conditions as {@link #completed}'s, with the batch read
   * ahead counted as not read (a stop or rollback that comes after drops it with the reader).
   */
  private Behavior<Command> arrived(Session s, Task task, StepInFlight st, String block) {
    if (st.done()) return completed(s, task, st);
    st.ahead().arrived(block);
    long steps = s.job().steps();
    boolean sureOfTheBatch = task != null && !st.stopRequested() && (steps <= 0 || st.step() < steps)
        && (st.ahead().begun() || !task.reader().epochDone());
    if (!st.pulls().done() && sureOfTheBatch) blocks.forwardAhead(s, st, task.lease(), task.reader());
    return Behaviors.same();
  }

  private void retryPushLater(Session s, BlockExchange.PushAnswer m) {
    timers.startSingleTimer("push-" + m.block(), new RetryPush(s.generation(), m.block(), m.step()),
        setup.settings().retryDelay());
  }

  private Behavior<Command> completed(Session s, Task task, StepInFlight st) {
    counts.stepCompleted(st.step());
    profile.completed(st.times(), System.nanoTime());
    if (st.examples() > 0) setup.listener().onStep(id, st.step(), st.loss(), st.examples(), st.computeNanos());
    if (st.stopRequested()) return leave(s, "stopped");
    ForwardAhead ahead = st.ahead().begun() ? st.ahead() : null;
    boolean taskLeft = task != null && (ahead != null || !task.reader().epochDone());
    return nextStep(s, st.step(), taskLeft ? task : null, false, ahead);
  }

  /** After an all-reduce step ({@link RingStepping}): leave ({@code why} non-null) or take the next. */
  Behavior<Command> ringStepDone(Session s, Task task, long step, String why) {
    if (why != null) return leave(s, why);
    return nextStep(s, step, task != null && !task.reader().epochDone() ? task : null, false);
  }

  // ---- reporting ----

  /** Sends the steps not reported yet, unless a report is in flight: its answer sends them. */
  void sendReport(Session s) {
    ProgressReports.Report r = reports.next();
    if (r != null) master.reportProgress(r, s.generation());
  }

  /**
   * Takes in the master's answer to a progress report and sends the steps completed meanwhile;
   * true when it answers the report in flight.
   */
  private boolean reportAnswered(Session s, MasterLink.Reported m) {
    boolean answeredBefore = reports.masterAnswers();
    if (!reports.answered(m.id(), m.timedOut())) return false;
    if (m.timedOut() && answeredBefore) {
      context.getLog().warn("trainer {}: progress report up to step {} got no answer ({}); training on and sending"
          + " it again with the steps after it", id, m.step(), m.failure().getMessage());
    } else if (!m.timedOut() && m.failure() != null) {
      context.getLog().warn("trainer {}: progress report up to step {} refused: {}", id, m.step(),
          m.failure().getMessage());
    }
    sendReport(s);
    return true;
  }

  /**
   * Before asking for a task: the master leases a trainer its unfinished task again, so it must
   * have recorded where the task this trainer just read ended. Waits (retrying reports that got no
   * answer) only when reports are still out, once per task.
   */
  private Behavior<Command> afterReports(Session s, Supplier<Behavior<Command>> then) {
    if (reports.allAnswered()) return then.get();
    sendReport(s);
    return phase(s, NO_STOP, Behaviors.receive(Command.class)
        .onMessage(MasterLink.Reported.class, m -> reportAnswered(s, m) && reports.allAnswered() ? then.get()
            : Behaviors.same())
        .onMessageEquals(Stop.INSTANCE, () -> leave(s, "stopped")));
  }

  /**
   * Leaves once the master answered every report, so what it says of the job (examples, steps,
   * done) is complete when the trainer is gone; or at once when a report got no answer in time:
   * the master then settles the task with the blocks, which hold every step this trainer pushed.
   */
  private Behavior<Command> leave(Session s, String why) {
    if (s.allReduce() && !ring.left()) return ring.leave(s, () -> leave(s, why));
    if (reports.allAnswered()) return finish(s.model(), why);
    sendReport(s);
    return phase(s, () -> true, Behaviors.receive(Command.class)
        .onMessage(MasterLink.Reported.class, m -> reportAnswered(s, m) && (reports.allAnswered() || m.timedOut())
            ? finish(s.model(), why) : Behaviors.same())
        .onMessageEquals(Stop.INSTANCE, Behaviors::same));
  }

  // ---- in every phase once the job is known ----

  /** The phase's own handlers, then heartbeats, report answers and rollbacks, which any phase takes. */
  Behavior<Command> phase(Session s, BooleanSupplier stopRequested, BehaviorBuilder<Command> own) {
    return ring.between(own)
        .onMessageEquals(Tick.HEARTBEAT, () -> staying(master::heartbeat))
        .onMessage(MasterLink.Reported.class, m -> staying(() -> reportAnswered(s, m)))
        .onMessage(Notice.class, n -> n.rollBack() == null ? ring.noticed(n.notice())
            : n.rollBack().generation() > s.generation() ? rollBack(s, n.rollBack(), stopRequested.getAsBoolean())
            : Behaviors.same())
        // Late answers of an earlier phase or an abandoned step, and timers that outlived theirs.
        .onAnyMessage(m -> Behaviors.same())
        .build();
  }

  /** Runs {@code action} and stays in the phase. */
  private static Behavior<Command> staying(Runnable action) {
    action.run();
    return Behaviors.same();
  }

  private void startTimers() {
    timers.startTimerWithFixedDelay(Tick.HEARTBEAT, setup.settings().heartbeatInterval());
    timers.startTimerWithFixedDelay(Tick.ANSWERS, setup.settings().lateAnswersInterval());
  }

  private Behavior<Command> rollBack(Session s, RollBack r, boolean stopRequested) {
    context.getLog().warn("trainer {}: the job rolled back to step {} (generation {}); continuing from there", id,
        r.step(), r.generation());
    timers.cancelAll();
    startTimers();
    takeBackStepsAfter(r);
    if (stopRequested) return finish(s.model(), "stopped");
    // As after a registration: pull the checkpoint's parameters, then lease the task at its offset.
    return rejoin(s.withGeneration(r.generation()));
  }

  /** The steps after the checkpoint are done again, and reports in flight belong to the abandoned ones. */
  private void takeBackStepsAfter(RollBack r) {
    counts.rolledBackTo(r.step());
    reports.reset();
    blocks.rolledBack();
  }

  // ---- leaving ----

  /** Leaves the job; {@code model} null: the job was not known yet. */
  private Behavior<Command> finish(TrainerModel model, String why) {
    context.getLog().info("trainer {} finished after {} steps: {}", id, counts.stepsDone(), why);
    Behavior<Command> leaving = master.leaveAndStop();
    setup.listener().onProfile(id, profile.profile());
    setup.listener().onFinished(id, counts.stepsDone(), counts.pushes(), counts.pulls(), counts.stale());
    if (model != null) model.close();
    return leaving;
  }

  private Behavior<Command> fail(TrainerModel model, String why) {
    context.getLog().error("trainer {} failed: {}", id, why);
    Behavior<Command> leaving = master.leaveAndStop();
    setup.listener().onFailed(id, why);
    model.close();
    return leaving;
  }
}
