package io.shardtrain.actors.trainer;

import io.shardtrain.actors.ps.BlockClient;
import io.shardtrain.actors.transport.AnswerLag;
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
  /** The round's answers, for when a block whose values are still to come is due again. */
  private final AnswerLag arrivals = new AnswerLag();
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
    arrivals.answered();
    if (missing.isEmpty()) doneAt = System.nanoTime();
    return true;
  }

  /**
   * The blocks still awaited, but for {@code skip}'s, when they are due again at {@code now}
   * ({@link AnswerLag}, {@code after} nanoseconds): a round is answered within moments (a sync
   * round once the step is applied, which every block does on the same pushes), so a block that
   * lags the others that much lost the request on its way. A non-empty result counts as sent again.
   */
  List<String> overdue(long now, long after, Predicate<String> skip) {
    List<String> late = new ArrayList<>();
    if (!arrivals.due(now, after)) return late;
    for (String block : missing) {
      if (!skip.test(block)) late.add(block);
    }
    if (!late.isEmpty()) arrivals.sentAgain(now);
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
