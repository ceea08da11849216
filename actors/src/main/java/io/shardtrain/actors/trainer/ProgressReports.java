package io.shardtrain.actors.trainer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The trainer's progress reports to the master, batched: at most one report is in flight; the steps
 * completed meanwhile wait, and go together in the next report once the master answered. A report
 * names each of its steps with the reader offset after it (the master reads a checkpoint's offsets
 * off them), all of one task. Nothing here ever makes a step wait: the trainer waits for the
 * master's answers only before it asks for another task or leaves ({@link #allAnswered}).
 */
final class ProgressReports {
  /**
   * The most steps of one task kept for one report: the master keeps no longer a history of a
   * task's offsets, and a report stays small while the master is away for long.
   */
  static final int MAX_STEPS = 256;

  /** After step {@code step}, task {@code task} of epoch {@code epoch} was read up to {@code offset}. */
  record Step(int epoch, int task, long step, long offset) {
    boolean sameTask(Step other) {
      return epoch == other.epoch && task == other.task;
    }
  }

  /** One report: steps of one task, oldest first; {@code id} tells its answer apart. */
  record Report(long id, List<Step> steps) {
    Report {
      steps = List.copyOf(steps);
    }

    Step newest() {
      return steps.get(steps.size() - 1);
    }
  }

  /** Completed steps not yet in a report, oldest first. */
  private final List<Step> unsent = new ArrayList<>();
  private Report inFlight;
  private long lastId;
  private boolean masterAnswers = true;

  /** Every block acknowledged {@code step}, after which task {@code epoch}/{@code task} was read up to {@code offset}. */
  void completed(int epoch, int task, long step, long offset) {
    unsent.add(new Step(epoch, task, step, offset));
    trim();
  }

  /**
   * The report to send now, which is then in flight: the steps not reported yet, up to the first of
   * another task; null while a report is in flight or when there is nothing to report.
   */
  Report next() {
    if (inFlight != null || unsent.isEmpty()) return null;
    Step first = unsent.get(0);
    int n = 1;
    while (n < unsent.size() && unsent.get(n).sameTask(first)) n++;
    List<Step> steps = unsent.subList(0, n);
    inFlight = new Report(++lastId, steps);
    steps.clear();
    return inFlight;
  }

  /**
   * The master answered (or, {@code timedOut}, did not answer in time) report {@code id}; false,
   * and nothing changes, when that is not the report in flight. A report without an answer may not
   * have been recorded: its steps go out again with the next one. A refused one is not sent again.
   */
  boolean answered(long id, boolean timedOut) {
    if (inFlight == null || inFlight.id() != id) return false;
    if (timedOut) {
      unsent.addAll(0, inFlight.steps());
      trim();
    }
    inFlight = null;
    masterAnswers = !timedOut;
    return true;
  }

  /** Whether the master answered every report and none waits to be sent. */
  boolean allAnswered() {
    return inFlight == null && unsent.isEmpty();
  }

  /** Whether the last report answered was answered in time (true before the first). */
  boolean masterAnswers() {
    return masterAnswers;
  }

  /** After a rollback: the steps reported or waiting belong to the abandoned timeline. */
  void reset() {
    unsent.clear();
    inFlight = null;
    masterAnswers = true;
  }

  /** Keeps the newest {@link #MAX_STEPS} steps of each task: a later offset covers the earlier ones. */
  private void trim() {
    if (unsent.size() <= MAX_STEPS) return;
    Map<List<Integer>, Integer> kept = new HashMap<>();
    for (int i = unsent.size() - 1; i >= 0; i--) {
      Step s = unsent.get(i);
      if (kept.merge(List.of(s.epoch(), s.task()), 1, Integer::sum) > MAX_STEPS) unsent.remove(i);
    }
  }
}
