package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.BehaviorBuilder;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockClient;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.sparse.FmSparseStep;
import io.shardtrain.actors.sparse.SparseClient;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.metrics.AucHistogram;
import io.shardtrain.compute.nn.FactorizationMachine;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A trainer of a click-through job ({@link JobSpec#ctr()}): a factorization machine whose dense part
 * lives in the job's parameter blocks and whose id rows live in the job's sparse table. It leases
 * tasks and reports progress as a {@link Trainer} does ({@link MasterLink}, {@link ProgressReports}).
 *
 * <p>A step computes on its batch's rows (fetched while the step before ran) and the dense values,
 * then pushes the dense gradient to every block, each with the block's pull right behind it, and
 * one summed gradient per distinct row to the table ({@link FmSparseStep}). Sync: right after the
 * pushes it reads the next batch and fetches its rows; the pulls and the fetch ask for the version
 * this step makes, which blocks and shards answer once every trainer's push of it is applied; a
 * trainer without data takes part with empty pushes of weight 0. Async: the next batch's rows are
 * fetched before the step computes, at whatever version the shards hold (so they may miss this
 * step's own update), and pulls ask for the latest values.
 * The step counts as done once every block and shard acknowledged it, and its reader offset goes to
 * the master as a Trainer's does. At the end of the job it asks the master for shares of the test
 * set, predicts each on the final values and sends its AUC histogram, until no share is left; the
 * master merges them into the job's test AUC (a share of a trainer that died goes to another).
 *
 * <p>Not here yet: rollbacks to checkpoints (a click-through job fails on one: its table is not
 * checkpointed), registering again after the master dropped a live trainer (it fails instead),
 * and the forward pass run ahead of the dense pull.
 */
public final class CtrTrainer {

  /** What a click-through trainer needs: its data (the whole training and test sets; the master leases shares). */
  public record Setup(String trainerId, ActorRef<JobProtocol.Command> master, CtrDataset train, CtrDataset test,
      TrainerSettings settings, StepListener listener) {}

  /** The trainer's own messages. */
  sealed interface Message extends Trainer.Internal
      permits RowsFetched, RowsPushed, ShareLeased, Evaluated, RetryPush, Tick {}

  /** The rows of step {@code step}'s batch arrived, or their fetch failed. */
  record RowsFetched(long step, FmSparseStep.Fetched rows, Throwable failure) implements Message {}

  /** The table acknowledged step {@code step}'s rows, or the push failed. */
  record RowsPushed(long step, Throwable failure) implements Message {}

  /** The master's answer to which share of the test set to predict (share -1: none left), or its failure. */
  record ShareLeased(JobProtocol.AucShareLease lease, Throwable failure) implements Message {}

  /** Share {@code share}'s AUC histogram, or why it could not be computed. */
  record Evaluated(int share, AucHistogram histogram, Throwable failure) implements Message {}

  /** Send step {@code step}'s push to {@code block} again (null: to the table). */
  record RetryPush(long step, String block) implements Message {}

  enum Tick implements Message { HEARTBEAT, REGISTER, TASK, ANSWERS }

  private final ActorContext<Trainer.Command> context;
  private final TimerScheduler<Trainer.Command> timers;
  private final Setup setup;
  private final String id;
  private final Dataset trainView;
  private final MasterLink master;
  private final CtrBlocks blocks;
  private final ProgressReports reports = new ProgressReports();
  private final TrainerCounts counts = new TrainerCounts();
  private final TrainerProfile profile;
  private boolean stopRequested;

  public static Behavior<Trainer.Command> create(Setup setup) {
    return StopOnShutdown.around(Behaviors.intercept(() -> new ReportFailure(setup.trainerId(), setup.master(),
        setup.listener()), Behaviors.setup(ctx -> Behaviors.withTimers(
            timers -> new CtrTrainer(ctx, timers, MeteredSteps.around(setup, ctx.getSystem())).register()))));
  }

  private CtrTrainer(ActorContext<Trainer.Command> context, TimerScheduler<Trainer.Command> timers, Setup setup) {
    this.context = context;
    this.timers = timers;
    this.setup = setup;
    this.id = setup.trainerId();
    this.trainView = setup.train().asDataset();
    this.master = new MasterLink(context, id, setup.master(), setup.settings());
    this.profile = new TrainerProfile(MeteredSteps.meters(context.getSystem(), id));
    this.blocks = new CtrBlocks(new BlockClient<>(context, id, setup.settings().askTimeout(),
        setup.settings().pullTimeout(), BlockExchange.PushAnswer::new, BlockExchange.PullAnswer::new), counts);
  }

  /** What the registration said, and the machine built from it. */
  private record Session(JobSpec job, long membershipEpoch, long lastStep, long generation, FmSparseStep rows,
      float[] dense, List<BlockSlice> layout) {
    boolean sync() {
      return job.mode().lockstep();
    }

    boolean pastLastStep(long step) {
      return job.steps() > 0 && step >= job.steps();
    }
  }

  // ---- registering and the first pull ----

  private Behavior<Trainer.Command> register() {
    master.register();
    return Behaviors.receive(Trainer.Command.class)
        .onMessage(MasterLink.Registered.class, m -> {
          if (m.failure() != null) {
            context.getLog().info("trainer {}: master not ready ({}), retrying", id, m.failure().getMessage());
            timers.startSingleTimer(Tick.REGISTER, setup.settings().retryDelay());
            return Behaviors.same();
          }
          JobSpec job = m.job();
          if (job.ctr() == null) return fail(null, "job " + job.jobId() + " trains an MLP; start a Trainer for it");
          long mine = setup.train().fingerprint();
          if (job.ctr().dataFingerprint() != mine) {
            return fail(null, "job " + job.jobId() + " was planned on training data with fingerprint "
                + Long.toHexString(job.ctr().dataFingerprint()) + "; this trainer's " + setup.train().size()
                + " examples have " + Long.toHexString(mine) + " (another file, seed or shardtrain.train.ctr setting)");
          }
          FactorizationMachine fm = job.ctr().machine();
          Session s = new Session(job, m.membershipEpoch(), m.lastStep(), m.generation(), new FmSparseStep(fm,
              new SparseClient(context.getSystem(), job.table(), id, setup.settings().askTimeout(),
                  setup.settings().resendAfter())), new float[fm.denseSize()], job.denseLayout());
          timers.startTimerWithFixedDelay(Tick.HEARTBEAT, setup.settings().heartbeatInterval());
          timers.startTimerWithFixedDelay(Tick.ANSWERS, setup.settings().lateAnswersInterval());
          return pullThen(s, 0, round -> nextStep(s, s.sync() ? round.oldest() : s.lastStep(), null));
        })
        .onMessageEquals(Tick.REGISTER, () -> {
          master.register();
          return Behaviors.same();
        })
        .onMessageEquals(Trainer.Stop.INSTANCE, () -> finish(null, "stopped"))
        .onAnyMessage(m -> Behaviors.same())
        .build();
  }

  private Behavior<Trainer.Command> pullThen(Session s, long minVersion,
      Function<PullRound, Behavior<Trainer.Command>> then) {
    PullRound round = new PullRound(s.job().blocks(), minVersion);
    for (String block : s.job().blocks()) blocks.pull(block, minVersion, s.generation());
    return phase(s, Behaviors.receive(Trainer.Command.class)
        .onMessage(BlockExchange.PullAnswer.class, m -> blocks.pulled(s.dense(), round, m)
            && round.done() ? then.apply(round) : Behaviors.same())
        .onMessageEquals(Tick.ANSWERS, () -> {
          List<String> late = blocks.sendOverdueAgain(round, s.generation(), setup.settings().resendAfter());
          if (!late.isEmpty()) context.getLog().info("trainer {}: pulled {} again (version >= {})", id, late, minVersion);
          return Behaviors.same();
        }));
  }

  // ---- leasing ----

  /** After {@code step}: train on {@code task}'s next batch (read ahead in {@code ahead}), or ask for a task. */
  private Behavior<Trainer.Command> nextStep(Session s, long step, Task task) {
    if (stopRequested) return leave(s, step, "stopped", false);
    if (s.pastLastStep(step)) return leave(s, step, "reached step " + s.job().steps(), true);
    if (task != null && task.ahead != null) return compute(s, step, task);
    return afterReports(s, () -> {
      master.requestTask(s.generation());
      return phase(s, Behaviors.receive(Trainer.Command.class)
          .onMessage(MasterLink.TaskAnswered.class, m -> taskAnswered(s, step, m.answer()))
          .onMessageEquals(Tick.TASK, () -> nextStep(s, step, null)));
    });
  }

  private Behavior<Trainer.Command> taskAnswered(Session s, long step, MasterLink.TaskAnswer answer) {
    if (answer instanceof MasterLink.Leased l) {
      Task task = new Task(l.lease(), l.lease().openReader(trainView, s.job().batch(), s.job().seed()));
      task.readAhead(s, setup.train(), s.job().batch());
      if (task.ahead == null) return nextStep(s, step, null);
      fetch(s, step + 1, task.ahead, step);
      return awaitRows(s, step, task);
    }
    if (answer instanceof MasterLink.NoTask n) {
      if (n.jobDone()) return leave(s, step, "job done", true);
      if (s.sync()) return idle(s, step);
    } else if (answer instanceof MasterLink.Forgotten) {
      return fail(s, "the master no longer knows trainer " + id + " (dropped while alive)");
    } else if (answer instanceof MasterLink.Unanswered u) {
      context.getLog().warn("trainer {}: task request failed ({}), retrying", id, u.failure().getMessage());
    }
    timers.startSingleTimer(Tick.TASK, setup.settings().retryDelay());
    return Behaviors.same();
  }

  /** A leased task and its reader; {@code ahead}: its next batch, read and its rows fetched (null: none left). */
  private static final class Task {
    final TaskLease lease;
    final BatchReader reader;
    CtrStep.Ahead ahead;

    Task(TaskLease lease, BatchReader reader) {
      this.lease = lease;
      this.reader = reader;
    }

    void readAhead(Session s, CtrDataset train, int batchSize) {
      if (reader.epochDone()) {
        ahead = null;
        return;
      }
      Batch b = reader.next(lease.batchLimit(reader.position().offset(), batchSize));
      int[] ids = new int[b.size() * train.fields()];
      train.copyIds(b.indices(), 0, b.size(), ids);
      ahead = new CtrStep.Ahead(b, ids);
    }
  }

  private void fetch(Session s, long step, CtrStep.Ahead ahead, long minVersion) {
    ahead.refetch = false;
    pipe(s.rows().fetch(ahead.ids, ahead.batch.size(), s.sync() ? minVersion : 0),
        (rows, failure) -> new RowsFetched(step, rows, failure));
  }

  /** The first batch of a task: waits for its rows. */
  private Behavior<Trainer.Command> awaitRows(Session s, long step, Task task) {
    return phase(s, Behaviors.receive(Trainer.Command.class)
        .onMessage(RowsFetched.class, m -> {
          if (m.step() != step + 1 || task.ahead == null) return Behaviors.same();
          if (m.failure() != null) {
            context.getLog().warn("trainer {}: rows of step {} not fetched ({}), again", id, m.step(),
                m.failure().getMessage());
            fetch(s, step + 1, task.ahead, step);
            return Behaviors.same();
          }
          task.ahead.rows = m.rows();
          return compute(s, step, task);
        }));
  }

  // ---- stepping ----

  /** Step {@code previous + 1} on the batch read ahead, whose rows are here. */
  private Behavior<Trainer.Command> compute(Session s, long previous, Task task) {
    long step = previous + 1;
    CtrStep.Ahead mine = task.ahead;
    Batch b = mine.batch;
    long offsetAfter = b.positionAfter().offset();
    // Async: the next batch's rows are asked for before this step computes (any version will do, so
    // the fetch overlaps this step's pushes); sync: after the pushes, for the version this step makes.
    if (!s.sync()) readAheadAndFetch(s, task, step);
    long cpu = BlockExchange.cpuTime();
    long started = System.nanoTime();
    float[] denseGrad = new float[s.dense().length];
    float loss = (float) mine.rows.compute(b.features(), b.targets(), s.dense(), denseGrad);
    long computeNanos = System.nanoTime() - started;
    if (!Float.isFinite(loss)) {
      return fail(s, "training diverged at step " + step + " (loss " + loss + "); lower the learning rates");
    }
    // A block holding this batch already got it from the trainer that had the task before.
    boolean held = task.lease.holds(s.job().blocks().get(0), offsetAfter);
    CtrStep st = new CtrStep(step, held ? 0 : b.size(), offsetAfter, loss, computeNanos, s.job().blocks(),
        s.sync() ? step : 0);
    for (BlockSlice slice : s.layout()) {
      float[] g = held ? new float[0] : Arrays.copyOfRange(denseGrad, slice.offset(), slice.offset() + slice.length());
      blocks.push(slice.entityId(), step, s.membershipEpoch(), held ? 0f : b.size(), g, s.generation(),
          held ? null : task.lease.mark(offsetAfter), st.pulls.minVersion());
    }
    pushRows(s, st, held ? null : mine.rows);
    if (s.sync()) readAheadAndFetch(s, task, step);
    st.next = task.ahead;
    st.computed(started, System.nanoTime(), BlockExchange.cpuTime() - cpu);
    return stepping(s, task, st, mine.rows);
  }

  /** Reads the batch after {@code step} and fetches its rows; none when the task or the step budget is used up. */
  private void readAheadAndFetch(Session s, Task task, long step) {
    task.readAhead(s, setup.train(), s.job().batch());
    if (task.ahead != null && !s.pastLastStep(step)) fetch(s, step + 1, task.ahead, step);
    else task.ahead = null;
  }

  /** A sync step without data: empty pushes of weight 0, so the barriers do not wait for this trainer. */
  private Behavior<Trainer.Command> idle(Session s, long previous) {
    long step = previous + 1;
    CtrStep st = new CtrStep(step, 0, 0, Float.NaN, 0, s.job().blocks(), step);
    long now = System.nanoTime();
    st.computed(now, now, 0);
    for (String block : s.job().blocks()) {
      blocks.push(block, step, s.membershipEpoch(), 0f, new float[0], s.generation(), null, step);
    }
    pushRows(s, st, null);
    return stepping(s, null, st, null);
  }

  private void pushRows(Session s, CtrStep st, FmSparseStep.Fetched rows) {
    CompletionStage<?> pushed = rows == null ? s.rows().pushNothing(st.step, st.step - 1)
        : rows.push(st.step, rows.version());
    pipe(pushed, (r, failure) -> new RowsPushed(st.step, failure));
  }

  private Behavior<Trainer.Command> stepping(Session s, Task task, CtrStep st, FmSparseStep.Fetched rows) {
    return phase(s, Behaviors.receive(Trainer.Command.class)
        .onMessage(BlockExchange.PushAnswer.class, m -> {
          if (m.step() != st.step || !st.awaitsPush(m.block())) return Behaviors.same();
          CtrBlocks.Outcome o = blocks.pushed(m);
          if (o == CtrBlocks.Outcome.RETRY) {
            timers.startSingleTimer("push-" + m.block(), new RetryPush(st.step, m.block()),
                setup.settings().retryDelay());
            return Behaviors.same();
          }
          if (o == CtrBlocks.Outcome.REFUSED) {
            return fail(s, "block " + m.block() + " refused step " + st.step + ": " + blocks.refusal());
          }
          if (o == CtrBlocks.Outcome.BOUNCED) return Behaviors.same();
          boolean brought = blocks.pulledWithAck(s.dense(), st.pulls, m);
          if (st.acked(m.block())) return acknowledged(s, task, st);
          return brought ? next(s, task, st) : Behaviors.same();
        })
        .onMessage(RowsPushed.class, m -> {
          if (m.step() != st.step) return Behaviors.same();
          if (m.failure() instanceof SparseClient.ShardRefused r) return fail(s, r.getMessage());
          if (m.failure() != null) {
            context.getLog().warn("trainer {}: rows of step {} not acknowledged ({}), sending again", id, st.step,
                m.failure().getMessage());
            timers.startSingleTimer("push-rows", new RetryPush(st.step, null), setup.settings().retryDelay());
            return Behaviors.same();
          }
          return st.rowsAcked() ? acknowledged(s, task, st) : Behaviors.same();
        })
        .onMessageEquals(Tick.ANSWERS, () -> {
          CtrStep.Late late = blocks.sendOverdueAgain(st, s.generation(), setup.settings().resendAfter(),
              () -> pushRows(s, st, st.examples > 0 ? rows : null));
          if (late != null) context.getLog().info("trainer {}: step {}: no answer to {} while the step's others"
              + " answered; sent again", id, st.step, late);
          return Behaviors.same();
        })
        .onMessage(RetryPush.class, m -> {
          if (m.step() != st.step) return Behaviors.same();
          if (m.block() == null) pushRows(s, st, st.examples > 0 ? rows : null);
          else blocks.resend(m.block(), st.step);
          return Behaviors.same();
        })
        .onMessage(BlockExchange.PullAnswer.class, m -> blocks.pulled(s.dense(), st.pulls, m)
            ? next(s, task, st) : Behaviors.same())
        .onMessage(RowsFetched.class, m -> {
          if (st.next == null || m.step() != st.step + 1) return Behaviors.same();
          if (m.failure() != null) {
            context.getLog().warn("trainer {}: rows of step {} not fetched ({}), again", id, m.step(),
                m.failure().getMessage());
            st.next.refetch = true;
            return next(s, task, st);
          }
          st.next.rows = m.rows();
          return next(s, task, st);
        }));
  }

  /** Every block and shard has the step: report it, then go on when the rest is here. */
  private Behavior<Trainer.Command> acknowledged(Session s, Task task, CtrStep st) {
    st.acknowledgedAt(System.nanoTime());
    counts.stepCompleted(st.step);
    if (st.examples > 0) {
      reports.completed(task.lease.epoch(), task.lease.task(), st.step, st.offsetAfter);
      sendReport(s);
      setup.listener().onStep(id, st.step, st.loss, st.examples, st.computeNanos);
    }
    return next(s, task, st);
  }

  private Behavior<Trainer.Command> next(Session s, Task task, CtrStep st) {
    if (st.next != null && st.next.refetch && st.acknowledged()) fetch(s, st.step + 1, st.next, st.step);
    if (!st.readyForNext()) return Behaviors.same();
    long now = System.nanoTime();
    profile.completed(st.times(now), now);
    return nextStep(s, st.step, task);
  }

  // ---- reporting and leaving ----

  private void sendReport(Session s) {
    ProgressReports.Report r = reports.next();
    if (r != null) master.reportProgress(r, s.generation());
  }

  private void reportAnswered(Session s, MasterLink.Reported m) {
    if (!reports.answered(m.id(), m.timedOut())) return;
    if (m.failure() != null) {
      context.getLog().warn("trainer {}: progress report up to step {} not recorded ({})", id, m.step(),
          m.failure().getMessage());
    }
    sendReport(s);
  }

  /** Runs {@code then} once the master answered every report (it leases by the offsets reported). */
  private Behavior<Trainer.Command> afterReports(Session s, Supplier<Behavior<Trainer.Command>> then) {
    if (reports.allAnswered()) return then.get();
    sendReport(s);
    return phase(s, Behaviors.receive(Trainer.Command.class)
        .onMessage(MasterLink.Reported.class, m -> {
          reportAnswered(s, m);
          return reports.allAnswered() ? then.get() : Behaviors.same();
        }));
  }

  /**
   * Leaves after step {@code step}; {@code evaluate}: first predict shares of the test set on the
   * values of that step (sync) or the latest (async), as many as the master hands this trainer.
   */
  private Behavior<Trainer.Command> leave(Session s, long step, String why, boolean evaluate) {
    if (!evaluate || setup.test() == null || setup.test().size() == 0) {
      return afterReports(s, () -> finish(s, why));
    }
    long version = s.sync() ? step : 0;
    return pullThen(s, version, round -> evaluating(s, step, version, why));
  }

  private Behavior<Trainer.Command> evaluating(Session s, long step, long version, String why) {
    master.requestAucShare(ShareLeased::new);
    CtrDataset test = setup.test();
    return phase(s, Behaviors.receive(Trainer.Command.class)
        .onMessage(ShareLeased.class, m -> {
          if (m.failure() != null || m.lease().share() < 0) {
            if (m.failure() != null) {
              context.getLog().warn("trainer {}: no AUC share ({})", id, m.failure().getMessage());
            }
            return afterReports(s, () -> finish(s, why));
          }
          int k = m.lease().share();
          int from = (int) ((long) test.size() * k / m.lease().of());
          int to = (int) ((long) test.size() * (k + 1) / m.lease().of());
          int f = test.fields();
          int d = test.denseDim();
          pipe(s.rows().evaluate(Arrays.copyOfRange(test.ids(), from * f, to * f),
              Arrays.copyOfRange(test.dense(), from * d, to * d), Arrays.copyOfRange(test.labels(), from, to),
              to - from, s.dense(), s.job().ctr().aucBins(), version, 4096), (h, failure) -> new Evaluated(k, h, failure));
          return Behaviors.same();
        })
        .onMessage(Evaluated.class, m -> {
          if (m.failure() != null) {
            context.getLog().warn("trainer {}: AUC share {} not predicted ({})", id, m.share(), m.failure().getMessage());
            return afterReports(s, () -> finish(s, why));
          }
          master.reportAuc(m.share(), step, m.histogram());
          return evaluating(s, step, version, why);
        }));
  }

  private Behavior<Trainer.Command> finish(Session s, String why) {
    context.getLog().info("trainer {} finished after {} steps: {}", id, counts.stepsDone(), why);
    Behavior<Trainer.Command> leaving = master.leaveAndStop();
    if (s != null) setup.listener().onSparseTraffic(id, s.rows().pullBytesPerExample(), s.rows().pushBytesPerExample());
    setup.listener().onProfile(id, profile.profile());
    setup.listener().onFinished(id, counts.stepsDone(), counts.pushes(), counts.pulls(), counts.stale());
    return leaving;
  }

  private Behavior<Trainer.Command> fail(Session s, String why) {
    context.getLog().error("trainer {} failed: {}", id, why);
    Behavior<Trainer.Command> leaving = master.leaveAndStop();
    setup.listener().onFailed(id, why);
    return leaving;
  }

  // ---- in every phase ----

  private Behavior<Trainer.Command> phase(Session s, BehaviorBuilder<Trainer.Command> own) {
    return own
        .onMessageEquals(Tick.HEARTBEAT, () -> {
          master.heartbeat();
          return Behaviors.same();
        })
        .onMessage(MasterLink.Reported.class, m -> {
          reportAnswered(s, m);
          return Behaviors.same();
        })
        .onMessageEquals(Trainer.Stop.INSTANCE, () -> {
          stopRequested = true;
          return Behaviors.same();
        })
        .onMessage(Trainer.Notice.class, n -> n.rollBack() != null && n.rollBack().generation() > s.generation()
            ? fail(s, "the job rolled back to a checkpoint; a click-through job's table is not checkpointed")
            : Behaviors.same())
        .onAnyMessage(m -> Behaviors.same())
        .build();
  }

  private <T> void pipe(CompletionStage<T> stage, BiFunction<T, Throwable, Message> message) {
    ActorRef<Trainer.Command> self = context.getSelf();
    stage.whenComplete((value, failure) -> self.tell(message.apply(value, failure)));
  }
}
