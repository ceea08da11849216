package io.shardtrain.actors.master;

import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobProtocol.TakeCheckpoint;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The master's checkpoints (sync jobs), one at a time: requests wait in arrival order behind the
 * running one, and a periodic checkpoint ({@code shardtrain.checkpoint.every-steps}) starts on a
 * tick when nothing runs, or as soon as the one before it committed. Not journaled: a request
 * waiting when the master stops is answered by the caller's timeout. A done job's last checkpoint
 * that failed is tried again after 1 s, then after twice as long each time, at most {@link
 * #MAX_RETRY_DELAY_NANOS} apart.
 */
final class CheckpointQueue {
  /** Starts taking a checkpoint for {@code request}, or a periodic one when it is null. */
  interface Starter {
    void start(MasterState s, TakeCheckpoint request);
  }

  private final long everySteps;
  /** Checkpoint durability: blocks journal nothing between checkpoints. */
  private final boolean checkpointDurability;
  private final Starter starter;
  private boolean running;
  /** The running checkpoint started once the job was done: it is of the job's last step. */
  private boolean runningOfDoneJob;
  /** A checkpoint of the done job's last step committed. */
  private boolean lastStepCommitted;
  private final List<TakeCheckpoint> waiting = new ArrayList<>();
  static final long FIRST_RETRY_DELAY_NANOS = 1_000_000_000L;
  static final long MAX_RETRY_DELAY_NANOS = 60_000_000_000L;
  private final LongSupplier nanoClock;
  /** Failed checkpoints of the done job's last step, in a row. */
  private int lastStepFailures;
  /** Not before this (of {@link #nanoClock}) is the done job's last step tried again. */
  private long retryAt;

  /** Rollbacks started so far (the master's), and how many had when the running checkpoint started. */
  private final LongSupplier rollbacksStarted;
  private long rollbacksAtStart = -1;

  /** The queue of a master whose rollbacks so far {@code rollbacksStarted} counts. */
  CheckpointQueue(long everySteps, boolean checkpointDurability, Starter starter, LongSupplier rollbacksStarted) {
    this(everySteps, checkpointDurability, starter, System::nanoTime, rollbacksStarted);
  }

  CheckpointQueue(long everySteps, boolean checkpointDurability, Starter starter, LongSupplier nanoClock,
      LongSupplier rollbacksStarted) {
    this.everySteps = everySteps;
    this.checkpointDurability = checkpointDurability;
    this.starter = starter;
    this.nanoClock = nanoClock;
    this.rollbacksStarted = rollbacksStarted;
  }

  /** Why no checkpoint of this job can be taken, or null when one can. */
  static String refusal(MasterState s) {
    if (s.job() == null) return "no job has been submitted; nothing to checkpoint";
    if (s.job().mode() == BlockSpec.Mode.ALLREDUCE) {
      return "job " + s.job().jobId() + " is all-reduce: its ring checkpoints itself every"
          + " shardtrain.trainer.checkpoint-every steps; save the model with save-model";
    }
    if (s.job().mode() != BlockSpec.Mode.SYNC) {
      return "job " + s.job().jobId() + " is async: checkpoints need sync mode"
          + " (one global step); save the model with save-model instead";
    }
    if (s.job().ctr() != null) {
      return "job " + s.job().jobId() + " trains a click-through model: a checkpoint holds the blocks, not its table's"
          + " rows and their optimizer state; save the model with save-model once the job is done or cancelled";
    }
    return null;
  }

  /** Queues an on-demand checkpoint; it starts now unless one is running. A job that has none is refused. */
  void request(MasterState s, TakeCheckpoint request) {
    String refusal = refusal(s);
    if (refusal != null) {
      request.replyTo().tell(StatusReply.error(refusal));
      return;
    }
    waiting.add(request);
    if (!running()) startNext(s);
  }

  /** Starts a periodic checkpoint when one is due; none while a rollback runs. */
  void tick(MasterState s, boolean rollingBack) {
    if (periodicDue(s, rollingBack)) startNext(s);
  }

  boolean periodicDue(MasterState s, boolean rollingBack) {
    if (everySteps <= 0 || running() || rollingBack || s.job() == null || !s.started() || s.done()
        || refusal(s) != null) {
      return false;
    }
    // The last step of a step-bounded job is checkpointed once, not again every tick until it is done.
    return !(s.job().steps() > 0 && s.checkpoint() != null && s.checkpoint().step() >= s.job().steps());
  }

  /**
   * Whether the done job's blocks may leave memory. Not while a checkpoint runs: a block holds what
   * it captured in memory until the master has read it. With checkpoint durability a block that
   * leaves keeps only what its last checkpoint captured, so the job's last step is checkpointed
   * first: this starts that checkpoint when none runs (and no rollback does) and says yes once one
   * that started after the job was done has committed. A job that cannot be checkpointed may go.
   */
  boolean mayRetire(MasterState s, boolean rollingBack) {
    if (running()) return false;
    if (!checkpointDurability || lastStepCommitted || refusal(s) != null) return true;
    if (!rollingBack && s.done() && (lastStepFailures == 0 || nanoClock.getAsLong() - retryAt >= 0)) startNext(s);
    return false;
  }

  /**
   * Whether a checkpoint is being taken. One that started before the latest rollback is given up:
   * it fails anyway, and its asks to the blocks of a lost node would hold every checkpoint after it
   * (the job's last step's included) for their whole timeout.
   */
  boolean running() {
    if (running && rollbacksStarted.getAsLong() != rollbacksAtStart) {
      running = false;
      rollbacksAtStart = -1;
    }
    return running;
  }

  /** The checkpoint started when {@code rollbacksAtStart} rollbacks had started finished; one given up is ignored. */
  void finished(long rollbacksAtStart, boolean committed) {
    if (rollbacksAtStart == this.rollbacksAtStart) finished(committed);
  }

  /** The running checkpoint finished: {@code committed}, or failed. */
  void finished(boolean committed) {
    running = false;
    rollbacksAtStart = -1;
    if (committed && runningOfDoneJob) lastStepCommitted = true;
    if (!committed && runningOfDoneJob) {
      lastStepFailures++;
      long delay = FIRST_RETRY_DELAY_NANOS << Math.min(lastStepFailures - 1, 6);
      retryAt = nanoClock.getAsLong() + Math.min(delay, MAX_RETRY_DELAY_NANOS);
    }
  }

  /** Starts the request that waited for the checkpoint just finished. */
  void next(MasterState s) {
    if (!waiting.isEmpty() && !running()) startNext(s);
  }

  /**
   * After a checkpoint committed: the request that waited, else the next periodic one at once, not
   * on the next tick, so that its step is asked for before the blocks pass it and a job whose
   * checkpoints take less than {@code every-steps} steps gets every multiple. (After a failure the
   * next periodic one waits for a tick.)
   */
  void nextAfterCommit(MasterState s, boolean rollingBack) {
    if (!waiting.isEmpty()) {
      next(s);
    } else {
      tick(s, rollingBack);
    }
  }

  /** The oldest request, else a periodic one. */
  private void startNext(MasterState s) {
    TakeCheckpoint request = waiting.isEmpty() ? null : waiting.remove(0);
    running = true;
    rollbacksAtStart = rollbacksStarted.getAsLong();
    runningOfDoneJob = s.done();
    starter.start(s, request);
  }
}
