package io.shardtrain.actors.transport;

import java.util.function.LongSupplier;

/**
 * When a group's unanswered requests (a step's pushes or pulls, a batch's row fetches across
 * table shards) are due again: once some other request of the group was answered at least
 * {@code after} ago, and as long since they were last sent again, that wait doubling with each
 * resend (at most 16 times {@code after}). An answer that lags the group's others that much was
 * lost on its way (Cluster Sharding drops requests that meet an entity while it moves); one whose
 * entity is slow or gone is not sent again every {@code after}. Before any answer nothing is due:
 * the group may wait for another trainer. Times are nanoseconds of one clock, {@link System#nanoTime()}'s
 * unless given.
 */
public final class AnswerLag {
  private static final int MAX_DOUBLINGS = 4;

  private final LongSupplier clock;
  private boolean answered;
  private long lastAnswer;
  private long sentAgainAt;
  private int resends;

  public AnswerLag() {
    this(System::nanoTime);
  }

  /** The same, reading the time of an answer from {@code clock}. */
  public AnswerLag(LongSupplier clock) {
    this.clock = clock;
  }

  /** One of the group's requests was answered now. */
  public void answered() {
    answered = true;
    lastAnswer = clock.getAsLong();
  }

  /** Whether the group's unanswered requests are due again at {@code now}. */
  public boolean due(long now, long after) {
    if (!answered) return false;
    long since = resends == 0 ? lastAnswer : Math.max(lastAnswer, sentAgainAt);
    return now - since >= after << Math.min(resends, MAX_DOUBLINGS);
  }

  /** They were sent again at {@code now}. */
  public void sentAgain(long now) {
    sentAgainAt = now;
    resends++;
  }
}
