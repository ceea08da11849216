package io.shardtrain.actors.trainer;

import io.shardtrain.actors.ps.BlockClient;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One pull of every block at version {@code minVersion} or later: which blocks have not answered
 * yet, and the oldest and newest version the answers carried (blocks one version apart after a
 * restart mean some closed a step without this trainer). Also whether the trainer was told to stop
 * meanwhile: it leaves once the round is done.
 */
final class PullRound {
  private final long minVersion;
  private final Set<String> missing;
  private long oldest = Long.MAX_VALUE;
  private long newest = Long.MIN_VALUE;
  private long doneAt;
  /** When the latest answer came in, and when blocks were last sent again ({@link System#nanoTime()}; 0: never). */
  private long lastArrival;
  private long sentAgainAt;
  private boolean stopRequested;

  PullRound(List<String> blocks, long minVersion) {
    if (blocks.isEmpty()) throw new IllegalArgumentException("a pull round needs at least one block");
    this.minVersion = minVersion;
    this.missing = new LinkedHashSet<>(blocks);
  }

  long minVersion() {
    return minVersion;
  }

  /** Whether {@code block}'s values are still to come in this round. */
  boolean awaits(String block) {
    return missing.contains(block);
  }

  /** Whether push {@code p} asked for values this round still waits for (they come with its ack). */
  boolean pulledBy(BlockClient.PushRequest p) {
    return p.wantsValues() && p.valuesFrom() == minVersion && awaits(p.block());
  }

  /**
   * {@code block} answered at {@code version}, its values written into the model; false (and nothing
   * recorded) when it was not awaited.
   */
  boolean received(String block, long version) {
    if (!missing.remove(block)) return false;
    oldest = Math.min(oldest, version);
    newest = Math.max(newest, version);
    lastArrival = System.nanoTime();
    if (missing.isEmpty()) doneAt = lastArrival;
    return true;
  }

  /**
   * The blocks still awaited, but for {@code skip}'s, once another block answered {@code after}
   * nanoseconds or more before {@code now} and nothing was sent again within {@code after}; empty
   * before any answer. A round is answered within moments (a sync round once the step is applied,
   * which every block does on the same pushes), so a block that lags the others that much has
   * lost the request on its way, as Cluster Sharding drops requests that meet a block while it
   * moves. A non-empty result counts as sent again at {@code now}.
   */
  List<String> overdue(long now, long after, Predicate<String> skip) {
    List<String> late = new ArrayList<>();
    if (lastArrival == 0 || now - Math.max(lastArrival, sentAgainAt) < after) return late;
    for (String block : missing) {
      if (!skip.test(block)) late.add(block);
    }
    if (!late.isEmpty()) sentAgainAt = now;
    return late;
  }

  boolean done() {
    return missing.isEmpty();
  }

  /** The oldest version pulled; only once the round is done. */
  long oldest() {
    requireDone();
    return oldest;
  }

  /** The newest version pulled; only once the round is done. */
  long newest() {
    requireDone();
    return newest;
  }

  /** When the last block's values came in ({@link System#nanoTime()}); only once the round is done. */
  long doneAt() {
    requireDone();
    return doneAt;
  }

  void requestStop() {
    stopRequested = true;
  }

  boolean stopRequested() {
    return stopRequested;
  }

  private void requireDone() {
    if (!done()) throw new IllegalStateException("pull round still waits for " + missing);
  }
}
