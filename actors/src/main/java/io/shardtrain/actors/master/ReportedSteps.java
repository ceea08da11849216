package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol.ReportProgress;
import io.shardtrain.actors.job.JobProtocol.StepOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * A trainer's progress report as the master checks and journals it: the steps it names, each with
 * the task's offset after it, become one {@link Master.ProgressRecorded}, without the steps whose
 * offset the master has already (a report sent again after its answer was lost).
 */
final class ReportedSteps {
  private ReportedSteps() {}

  /**
   * Why a report of {@code steps} for task {@code t} cannot be recorded, or null: the last offset
   * must lie between the task's and its end, and each step come after the one before it, at an
   * offset no lower.
   */
  static String misreported(TaskState t, List<StepOffset> steps) {
    StepOffset newest = steps.get(steps.size() - 1);
    if (newest.offset() < t.offset || newest.offset() > t.length()) {
      return "offset " + newest.offset() + " of task " + t.epoch + "/" + t.index + " is outside [" + t.offset + ", "
          + t.length() + "]";
    }
    for (int i = 1; i < steps.size(); i++) {
      StepOffset a = steps.get(i - 1);
      StepOffset b = steps.get(i);
      if (b.step() <= a.step() || b.offset() < a.offset()) {
        return "steps of task " + t.epoch + "/" + t.index + " out of order: " + steps;
      }
    }
    return null;
  }

  /** The event of report {@code c} on task {@code t}: its newest step, and those before it past the task's offset. */
  static Master.ProgressRecorded recorded(TaskState t, ReportProgress c) {
    List<StepOffset> steps = c.steps();
    List<StepOffset> earlier = steps.subList(0, steps.size() - 1).stream().filter(x -> x.offset() > t.offset).toList();
    StepOffset newest = c.newest();
    return new Master.ProgressRecorded(c.epoch(), c.task(), newest.offset(), c.trainerId(), newest.step(), earlier);
  }

  /** Every step of {@code e}, oldest first. */
  static List<StepOffset> all(Master.ProgressRecorded e) {
    List<StepOffset> all = new ArrayList<>(e.earlier());
    all.add(new StepOffset(e.step(), e.offset()));
    return all;
  }
}
