package io.shardtrain.actors.trainer;

import io.shardtrain.actors.metrics.TrainerMeters;

/**
 * Adds up a trainer's completed steps into a {@link StepProfile}. Steps follow one another, so the
 * parts of each lie between its compute start and its completion and never overlap another step's;
 * what lies between steps, or in a step given up (a rollback), is left to the wall time. The next
 * step's forward, run while a step waited for its pulls, is compute of the step it ran in: taken
 * out of that step's push or pull wait, so the parts still add up to the wall time. Each step's
 * parts also go to the trainer's meters as it completes.
 */
final class TrainerProfile {
  private final TrainerMeters meters;
  private long steps;
  private long firstStart;
  private long lastEnd;
  private long compute;
  private long computeCpu;
  private long pushWait;
  private long pullWait;
  private long masterWait;

  TrainerProfile(TrainerMeters meters) {
    this.meters = meters;
  }

  /** A profile whose steps go to no meters. */
  TrainerProfile() {
    this(TrainerMeters.none());
  }

  /** A step with {@code times} was complete at {@code completed} (after its master wait, if any). */
  void completed(StepTimes times, long completed) {
    // Each part starts where the one before ended, so together they span the step exactly.
    long computed = times.computed();
    long acked = Math.max(computed, times.pushesAcked());
    long pulled = Math.max(acked, times.pullsDone());
    long end = Math.max(pulled, completed);
    // The forward ran ahead within the waits it is taken out of; the clamps only guard against clock reads.
    long aheadInPush = Math.min(Math.max(0, times.aheadInPushWait()), acked - computed);
    long aheadInPull = Math.min(Math.max(0, times.aheadInPullWait()), pulled - acked);
    long stepCompute = computed - times.computeStarted() + aheadInPush + aheadInPull;
    if (steps == 0) firstStart = times.computeStarted();
    steps++;
    lastEnd = end;
    compute += stepCompute;
    // Two clocks, read a moment apart: the CPU time is never more than the compute it is part of.
    computeCpu += Math.min(Math.max(0, times.computeCpuNanos()) + Math.max(0, times.aheadCpuNanos()), stepCompute);
    long stepPushWait = acked - computed - aheadInPush;
    long stepPullWait = pulled - acked - aheadInPull;
    pushWait += stepPushWait;
    pullWait += stepPullWait;
    masterWait += end - pulled;
    meters.step(stepCompute, stepPushWait, stepPullWait, end - pulled);
  }

  StepProfile profile() {
    return steps == 0 ? StepProfile.EMPTY
        : new StepProfile(steps, lastEnd - firstStart, compute, pushWait, pullWait, masterWait, computeCpu);
  }
}
