package io.shardtrain.actors.trainer;

import java.util.OptionalLong;

/**
 * The trainer's progress reports to the master: which one was sent last, whether it is still
 * unanswered, and whether the master answered the one before. A sync step waits for its report
 * only while the master answers, so a master that is moving does not stall training; one answer
 * makes the trainer wait again.
 */
final class ProgressReports {
  private OptionalLong lastSent = OptionalLong.empty();
  private boolean inFlight;
  private boolean masterAnswers = true;

  void sent(long step) {
    lastSent = OptionalLong.of(step);
    inFlight = true;
  }

  /**
   * The master answered (or, {@code timedOut}, did not answer in time) the report of {@code step};
   * false, and nothing changes, when that is not the last report sent.
   */
  boolean answered(long step, boolean timedOut) {
    if (lastSent.isEmpty() || lastSent.getAsLong() != step) return false;
    inFlight = false;
    masterAnswers = !timedOut;
    return true;
  }

  /** Whether the step that is done must wait for the report in flight before the next step pushes. */
  boolean mustWait() {
    return inFlight && masterAnswers;
  }

  boolean masterAnswers() {
    return masterAnswers;
  }

  /** After a rollback: the reports in flight belong to the abandoned steps. */
  void reset() {
    inFlight = false;
    masterAnswers = true;
  }
}
