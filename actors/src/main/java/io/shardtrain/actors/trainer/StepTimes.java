package io.shardtrain.actors.trainer;

/**
 * When a step's parts ended, as {@link System#nanoTime()} readings: its compute started and ended
 * (both when the step without data began), its last push was acknowledged, and its last pulled
 * block was written into the model; how long of its compute the thread was on a core; and how
 * long the next step's forward ran ahead while this step waited, before its last push was
 * acknowledged ({@code aheadInPushWait}) and after ({@code aheadInPullWait}), {@code aheadCpuNanos}
 * of it on a core.
 */
record StepTimes(long computeStarted, long computed, long computeCpuNanos, long pushesAcked, long pullsDone,
    long aheadInPushWait, long aheadInPullWait, long aheadCpuNanos) {

  /** A step during which no forward ran ahead. */
  StepTimes(long computeStarted, long computed, long computeCpuNanos, long pushesAcked, long pullsDone) {
    this(computeStarted, computed, computeCpuNanos, pushesAcked, pullsDone, 0, 0, 0);
  }
}
