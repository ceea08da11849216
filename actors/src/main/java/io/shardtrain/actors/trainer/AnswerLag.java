package io.shardtrain.actors.trainer;

/**
 * When a step's unanswered requests are due again: once some other request of the step was
 * answered at least {@code after} ago, and as long since they were last sent again, that wait
 * doubling with each resend (at most 16 times {@code after}). An answer that lags the step's others
 * that much was lost on its way (Cluster Sharding drops requests that meet a block while it moves);
 * one whose block is slow or gone is not sent again every {@code after}. Before any answer nothing
 * is due: the step may wait for another trainer. Times are {@link System#nanoTime()}'s.
 */
final class AnswerLag {
  private static final int MAX_DOUBLINGS = 4;

  private long lastAnswer;
  private long sentAgainAt;
  private int resends;

  /** One of the step's requests was answered now. */
  void answered() {
    lastAnswer = System.nanoTime();
  }

  /** Whether the step's unanswered requests are due again at {@code now}. */
  boolean due(long now, long after) {
    if (lastAnswer == 0) return false;
    return now - Math.max(lastAnswer, sentAgainAt) >= after << Math.min(resends, MAX_DOUBLINGS);
  }

  /** They were sent again at {@code now}. */
  void sentAgain(long now) {
    sentAgainAt = now;
    resends++;
  }
}
