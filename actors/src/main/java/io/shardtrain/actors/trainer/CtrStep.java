package io.shardtrain.actors.trainer;

import io.shardtrain.actors.sparse.FmSparseStep;
import io.shardtrain.actors.transport.AnswerLag;
import io.shardtrain.compute.data.Batch;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One step of a {@link CtrTrainer}: which dense blocks have not acknowledged its push, whether the
 * table acknowledged its rows, the pull round of the dense part behind the pushes, and the next
 * batch with its rows fetched ahead ({@code next}, null when the task has no next batch). The next
 * step may start once this one is acknowledged everywhere, its pull round is done and the next
 * batch's rows have arrived.
 */
final class CtrStep {
  /** A batch read ahead: the reader's batch, its ids, and its rows once they arrived. */
  static final class Ahead {
    final Batch batch;
    final int[] ids;
    FmSparseStep.Fetched rows;
    /** The fetch failed and goes again once the step before is done (its buffers are then free). */
    boolean refetch;

    Ahead(Batch batch, int[] ids) {
      this.batch = batch;
      this.ids = ids;
    }
  }

  final long step;
  final int examples;
  final long offsetAfter;
  final float loss;
  final long computeNanos;
  final PullRound pulls;
  private final Set<String> unacked;
  private boolean rowsAcked;
  Ahead next;
  /** When the step's compute started and its pushes and fetch had left, and that work's CPU time. */
  private long computeStarted;
  private long computed;
  private long computeCpuNanos;
  /** When the last block or the table acknowledged the step. */
  private long acknowledgedAt;
  /** The blocks' and the table's acknowledgements, for when an unacknowledged push is due again. */
  private final AnswerLag acks = new AnswerLag();

  CtrStep(long step, int examples, long offsetAfter, float loss, long computeNanos, List<String> blocks,
      long pullVersion) {
    this.step = step;
    this.examples = examples;
    this.offsetAfter = offsetAfter;
    this.loss = loss;
    this.computeNanos = computeNanos;
    this.pulls = new PullRound(blocks, pullVersion);
    this.unacked = new LinkedHashSet<>(blocks);
  }

  /** The step's work on the trainer's thread ran from {@code started} to {@code ended}, {@code cpuNanos} of it on a core. */
  void computed(long started, long ended, long cpuNanos) {
    computeStarted = started;
    computed = ended;
    computeCpuNanos = cpuNanos;
  }

  /** The step's last acknowledgement arrived at {@code at}. */
  void acknowledgedAt(long at) {
    acknowledgedAt = at;
  }

  /** Its times, once {@link #readyForNext} at {@code ready}: whatever arrived last (values or rows) came then. */
  StepTimes times(long ready) {
    return new StepTimes(computeStarted, computed, computeCpuNanos, acknowledgedAt, ready);
  }

  boolean awaitsPush(String block) {
    return unacked.contains(block);
  }

  /** {@code block} acknowledged; true when that completed the step's acknowledgements. */
  boolean acked(String block) {
    if (!unacked.remove(block)) return false;
    acks.answered();
    return acknowledged();
  }

  /** The table acknowledged the rows; true when that completed the step's acknowledgements. */
  boolean rowsAcked() {
    if (rowsAcked) return false;
    rowsAcked = true;
    acks.answered();
    return acknowledged();
  }

  /** What of a step to send again: dense blocks' pushes, the rows' push, dense blocks' pulls. */
  record Late(List<String> pushes, boolean rows, List<String> pulls) {
    boolean isEmpty() {
      return pushes.isEmpty() && !rows && pulls.isEmpty();
    }

    /** For the log: "pushes to [b], the rows' push, pulls of [b]", the parts there are. */
    @Override
    public String toString() {
      List<String> parts = new ArrayList<>();
      if (!pushes.isEmpty()) parts.add("pushes to " + pushes);
      if (rows) parts.add("the rows' push");
      if (!pulls.isEmpty()) parts.add("pulls of " + pulls);
      return String.join(", ", parts);
    }
  }

  /**
   * What to send again at {@code now}, by {@link StepInFlight#overdue}'s rule: the pushes (dense
   * blocks', and the rows') not acknowledged while another was ({@link AnswerLag}), and the pulls
   * the round's other blocks outran.
   */
  Late overdue(long now, long after) {
    List<String> pushes = new ArrayList<>();
    boolean rows = false;
    if ((!unacked.isEmpty() || !rowsAcked) && acks.due(now, after)) {
      pushes.addAll(unacked);
      rows = !rowsAcked;
      acks.sentAgain(now);
    }
    return new Late(pushes, rows, pulls.overdue(now, after, unacked::contains));
  }

  /** Every block and the table acknowledged the step. */
  boolean acknowledged() {
    return rowsAcked && unacked.isEmpty();
  }

  /** Whether the next step may start: acknowledged, pulled, and the next batch's rows (if any) here. */
  boolean readyForNext() {
    return acknowledged() && pulls.done() && (next == null || next.rows != null);
  }
}
