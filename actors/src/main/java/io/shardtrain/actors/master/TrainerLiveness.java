package io.shardtrain.actors.master;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * When the master last heard from each trainer (a registration, task request, progress report or
 * heartbeat): a member silent for longer than {@code shardtrain.trainer.failure-timeout} is
 * overdue, and the master drops it. Not journaled: a recovered master starts every member's clock
 * anew.
 */
final class TrainerLiveness {
  private final Duration failureTimeout;
  private final Map<String, Long> lastSeen = new HashMap<>();

  TrainerLiveness(Duration failureTimeout) {
    this.failureTimeout = failureTimeout;
  }

  void heard(String trainerId, long nowNanos) {
    lastSeen.put(trainerId, nowNanos);
  }

  void forget(String trainerId) {
    lastSeen.remove(trainerId);
  }

  /** The first of {@code members} not heard from within the failure timeout, or null; one never heard from is not. */
  String overdue(Iterable<String> members, long nowNanos) {
    long timeout = failureTimeout.toNanos();
    for (String id : members) {
      Long seen = lastSeen.get(id);
      if (seen != null && nowNanos - seen > timeout) return id;
    }
    return null;
  }

  /** Why an overdue trainer is dropped. */
  String overdueReason() {
    return "no report for " + failureTimeout.toSeconds() + " s";
  }
}
