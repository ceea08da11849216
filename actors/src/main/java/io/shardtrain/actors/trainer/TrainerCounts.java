package io.shardtrain.actors.trainer;

/**
 * What a trainer did, for {@link StepListener#onFinished}: the steps it completed (those of the
 * job's timeline: a rollback to a checkpoint takes back the steps after it, which are done again),
 * the pushes and pulls it started (one per block and step or pull round; their retries are not
 * counted) and the pushes blocks refused as stale.
 */
final class TrainerCounts {
  private long stepsDone;
  private long lastCompleted;
  private long pushes;
  private long pulls;
  private long stale;

  void pushStarted() {
    pushes++;
  }

  void pullStarted() {
    pulls++;
  }

  void stalePush() {
    stale++;
  }

  void stepCompleted(long step) {
    stepsDone++;
    lastCompleted = step;
  }

  /** The job went back to its checkpoint at {@code step}: the steps completed after it no longer count. */
  void rolledBackTo(long step) {
    stepsDone -= Math.max(0, lastCompleted - step);
    lastCompleted = Math.min(lastCompleted, step);
  }

  long stepsDone() {
    return stepsDone;
  }

  long pushes() {
    return pushes;
  }

  long pulls() {
    return pulls;
  }

  long stale() {
    return stale;
  }
}
