package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockProtocol.Checkpoint;
import java.util.List;
import java.util.NavigableMap;

/**
 * Checkpoint requests waiting for the version they name, by version. Held in memory by the block's
 * actor: a request lost with it is asked again by the master.
 */
final class PendingCaptures {
  private final ByVersion<Checkpoint> byStep = new ByVersion<>();

  void add(Checkpoint request) {
    byStep.add(request.step(), request);
  }

  boolean isEmpty() {
    return byStep.isEmpty();
  }

  /** Whether a request waits for {@code step}. */
  boolean waitsAt(long step) {
    return !byStep.at(step).isEmpty();
  }

  /** The oldest held checkpoint to keep when capturing {@code step} for the requests waiting there. */
  long keepFrom(long step) {
    return keepFrom(step, byStep.at(step));
  }

  /** The greatest {@code keepFrom} of {@code requests}, at most {@code step}: the capture itself is always kept. */
  static long keepFrom(long step, List<Checkpoint> requests) {
    long keepFrom = 0;
    for (Checkpoint c : requests) keepFrom = Math.max(keepFrom, c.keepFrom());
    return Math.min(keepFrom, step);
  }

  /** Removes and returns the requests for versions up to {@code version}, oldest first. */
  NavigableMap<Long, List<Checkpoint>> takeUpTo(long version) {
    return byStep.takeUpTo(version);
  }

  /** Removes and returns every waiting request. */
  List<Checkpoint> takeAll() {
    return byStep.takeAll();
  }
}
