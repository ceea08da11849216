package io.shardtrain.actors.master;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/** One data task: the range {@code [from, to)} of one epoch, its reader offset and who holds it. */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY,
    getterVisibility = JsonAutoDetect.Visibility.NONE, isGetterVisibility = JsonAutoDetect.Visibility.NONE)
final class TaskState {
  /** Reports a task keeps when no checkpoint commits (a checkpoint reads offsets a few steps back). */
  static final int MAX_HISTORY = 256;

  int epoch;
  int index;
  int from;
  int to;
  long offset;
  String leasedTo;
  /**
   * The trainer whose lease was dropped before the master could know how far the blocks got
   * with this task (it may have pushed steps it never reported); null when settled. A settling
   * task is leased to nobody until every block answered ({@link Master.TaskSettled}).
   */
  String settlingFor;
  /** Blocks that already hold this task's examples up to an offset beyond {@link #offset}. */
  TreeMap<String, Long> skip = new TreeMap<>();
  boolean finished;
  /** The step whose report finished the task. */
  long finishedAtStep;
  /** (step, offset) reports after {@link #floorStep}, in arrival order (a trainer reports its steps in order). */
  List<long[]> history = new ArrayList<>();
  /** The offset as of step {@link #floorStep}: where the history starts. */
  long floorOffset;
  long floorStep;

  /** The reader offset after step {@code step}; the floor offset for a step the history no longer holds. */
  long offsetAt(long step) {
    long o = floorOffset;
    for (long[] h : history) {
      if (h[0] <= step) o = Math.max(o, h[1]);
    }
    return o;
  }

  void record(long step, long newOffset) {
    history.add(new long[] {step, newOffset});
    // Bounded even when no checkpoint ever commits; a checkpoint reads offsets a few steps back.
    while (history.size() > MAX_HISTORY) {
      long[] oldest = history.remove(0);
      floorStep = Math.max(floorStep, oldest[0]);
      floorOffset = Math.max(floorOffset, oldest[1]);
    }
  }

  /** Folds the history up to {@code step} into the floor. */
  void compact(long step) {
    floorOffset = offsetAt(step);
    floorStep = Math.max(floorStep, step);
    history.removeIf(h -> h[0] <= step);
  }

  TaskState() {}

  TaskState(int epoch, int index, int from, int to) {
    this.epoch = epoch;
    this.index = index;
    this.from = from;
    this.to = to;
  }

  int length() {
    return to - from;
  }

  boolean untouched() {
    return leasedTo == null && offset == 0 && !finished && settlingFor == null && skip.isEmpty();
  }

  TaskState copy() {
    TaskState c = new TaskState(epoch, index, from, to);
    c.offset = offset;
    c.leasedTo = leasedTo;
    c.settlingFor = settlingFor;
    c.skip = new TreeMap<>(skip);
    c.finished = finished;
    c.finishedAtStep = finishedAtStep;
    for (long[] h : history) c.history.add(h.clone());
    c.floorOffset = floorOffset;
    c.floorStep = floorStep;
    return c;
  }
}
