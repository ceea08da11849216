package io.shardtrain.actors.trainer;

/**
 * Where a trainer's time went over the steps it completed ({@link StepListener#onProfile}): from the
 * start of its first step's compute to the end of its last step, split into parts that never
 * overlap, so they add up to the wall time.
 *
 * <ul>
 *   <li><b>compute</b>: forward and backward, with the gradient pushes and pulls they start, and
 *       the next step's forward layers that ran while this step waited for its pulls (each as
 *       soon as its blocks' values were in); of it, {@code computeCpuNanos} with the trainer's
 *       thread on a core (the rest it waited for one, which on a machine with more busy threads
 *       than cores can be most of it). Pushes and pulls leave during backward, so part of their
 *       time is hidden in compute and shows in no wait;
 *   <li><b>push wait</b>: from the end of compute until the last block acknowledged its push,
 *       less the next step's forward that ran meanwhile;
 *   <li><b>pull wait</b>: from the last ack until the last block's values were written into the
 *       model (nothing when they came first), less the next step's forward that ran meanwhile.
 *       Each block's pull leaves right behind its push, so pulls are in flight during backward
 *       and the push wait too; counted from the last ack, this is the time the step waited for
 *       pulls alone, which in sync mode is the barrier: the other trainers' pushes, the update
 *       and the values' way back;
 *   <li><b>master wait</b>: from then until the step was complete, a sync trainer waiting for the
 *       master to record its progress report;
 *   <li><b>other</b>: the rest, between steps: reading the next batch, leasing a task, pulls after a
 *       rollback, steps given up in one.
 * </ul>
 *
 * Nanoseconds; a profile of several trainers ({@link #plus}) adds their wall times too.
 */
public record StepProfile(long steps, long wallNanos, long computeNanos, long pushWaitNanos, long pullWaitNanos,
    long masterWaitNanos, long computeCpuNanos) {

  /** The parts, in the order of a step. */
  public enum Part { COMPUTE, PUSH_WAIT, PULL_WAIT, MASTER_WAIT, OTHER }

  public static final StepProfile EMPTY = new StepProfile(0, 0, 0, 0, 0, 0, 0);

  public StepProfile {
    if (steps < 0 || computeNanos < 0 || pushWaitNanos < 0 || pullWaitNanos < 0 || masterWaitNanos < 0
        || wallNanos < computeNanos + pushWaitNanos + pullWaitNanos + masterWaitNanos
        || computeCpuNanos < 0 || computeCpuNanos > computeNanos) {
      throw new IllegalArgumentException("not a profile: " + steps + " steps, wall " + wallNanos + " ns, parts "
          + computeNanos + " (" + computeCpuNanos + " on CPU), " + pushWaitNanos + ", " + pullWaitNanos + ", "
          + masterWaitNanos + " ns");
    }
  }

  /** The wall time not in the other parts. */
  public long otherNanos() {
    return wallNanos - computeNanos - pushWaitNanos - pullWaitNanos - masterWaitNanos;
  }

  public long nanos(Part part) {
    switch (part) {
      case COMPUTE:
        return computeNanos;
      case PUSH_WAIT:
        return pushWaitNanos;
      case PULL_WAIT:
        return pullWaitNanos;
      case MASTER_WAIT:
        return masterWaitNanos;
      default:
        return otherNanos();
    }
  }

  /** {@code part}'s mean per step in milliseconds; 0 without steps. */
  public double millisPerStep(Part part) {
    return steps == 0 ? 0 : nanos(part) / 1e6 / steps;
  }

  /** The compute time on a core per step in milliseconds; 0 without steps. */
  public double computeCpuMillisPerStep() {
    return steps == 0 ? 0 : computeCpuNanos / 1e6 / steps;
  }

  /** The wall time per step in milliseconds; 0 without steps. */
  public double wallMillisPerStep() {
    return steps == 0 ? 0 : wallNanos / 1e6 / steps;
  }

  /** {@code part}'s share of the wall time, 0 to 1; 0 without wall time. */
  public double share(Part part) {
    return wallNanos == 0 ? 0 : (double) nanos(part) / wallNanos;
  }

  /** Both profiles together: steps, wall times and parts added. */
  public StepProfile plus(StepProfile o) {
    return new StepProfile(steps + o.steps, wallNanos + o.wallNanos, computeNanos + o.computeNanos,
        pushWaitNanos + o.pushWaitNanos, pullWaitNanos + o.pullWaitNanos, masterWaitNanos + o.masterWaitNanos,
        computeCpuNanos + o.computeCpuNanos);
  }
}
