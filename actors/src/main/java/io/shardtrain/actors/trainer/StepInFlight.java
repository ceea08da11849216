package io.shardtrain.actors.trainer;

import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.transport.AnswerLag;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The step a trainer is taking: what it pushes to each block until the block acknowledges it (a
 * retry sends the same values and weight again, under the same (trainer, step) key), and the pull
 * round of the values the next step computes on, with the next step's forward as far as that
 * round allows ({@link ForwardAhead}). A training step carries a batch of
 * {@code examples} from its lease; a step without data (the trainer only takes part in the sync
 * barrier) pushes nothing to every block.
 */
final class StepInFlight {
  /** What a block is sent for this step: a gradient slice weighted by its examples, or nothing (weight 0). */
  record PendingPush(float[] values, float weight) {}

  private static final PendingPush NOTHING = new PendingPush(new float[0], 0f);

  private final long step;
  private final int examples;
  /** The lease the batch came from; null for a step without data. */
  private final TaskLease lease;
  private final long offsetAfter;
  private final PullRound pulls;
  private final ForwardAhead ahead;
  private final Map<String, PendingPush> unacked = new LinkedHashMap<>();
  private float loss = Float.NaN;
  private long computeStarted;
  private long computed;
  private long computeCpu;
  private long pushesAcked;
  /** The step's acknowledgements, for when an unacknowledged push is due again. */
  private final AnswerLag acks = new AnswerLag();
  private boolean stopRequested;

  private StepInFlight(long step, int examples, TaskLease lease, long offsetAfter, PullRound pulls,
      ForwardAhead ahead) {
    this.step = step;
    this.examples = examples;
    this.lease = lease;
    this.offsetAfter = offsetAfter;
    this.pulls = pulls;
    this.ahead = ahead;
  }

  /** Step {@code step} on a batch of {@code examples} of {@code lease} that ends at reader offset {@code offsetAfter}. */
  static StepInFlight training(long step, int examples, TaskLease lease, long offsetAfter, PullRound pulls,
      ForwardAhead ahead) {
    if (examples < 1) throw new IllegalArgumentException("a training step needs examples, not " + examples);
    return new StepInFlight(step, examples, lease, offsetAfter, pulls, ahead);
  }

  /** Step {@code step} without data: the trainer pushes nothing, so the barrier does not wait for it. */
  static StepInFlight withoutData(long step, PullRound pulls, ForwardAhead ahead) {
    return new StepInFlight(step, 0, null, 0, pulls, ahead);
  }

  /**
   * Records this step's push to {@code block}: its gradient slice (made only when needed), or
   * nothing when the block holds this batch already (from the trainer that held the task before).
   */
  PendingPush gradient(String block, Supplier<float[]> slice) {
    if (lease == null) throw new IllegalStateException("step " + step + " has no data to push");
    return record(block, lease.holds(block, offsetAfter) ? NOTHING : new PendingPush(slice.get(), examples));
  }

  /** Records this step's empty push to {@code block}. */
  PendingPush nothing(String block) {
    return record(block, NOTHING);
  }

  private PendingPush record(String block, PendingPush push) {
    if (unacked.putIfAbsent(block, push) != null) {
      throw new IllegalStateException("step " + step + " pushes to " + block + " twice");
    }
    return push;
  }

  /** The push {@code block} has not acknowledged yet, to send again; null once it has. */
  PendingPush pending(String block) {
    return unacked.get(block);
  }

  boolean awaitsPush(String block) {
    return unacked.containsKey(block);
  }

  /** Some push of this step is not acknowledged yet. */
  boolean awaitsAnyPush() {
    return !unacked.isEmpty();
  }

  /** The task mark a push carries: the batch's, when the push carries the batch's gradient. */
  BlockProtocol.TaskMark markOf(PendingPush push) {
    return push.weight() > 0f && lease != null ? lease.mark(offsetAfter) : null;
  }

  /** {@code block} acknowledged its push; true when that was the step's last unacknowledged push. */
  boolean acked(String block) {
    if (unacked.remove(block) == null) return false;
    acks.answered();
    if (unacked.isEmpty()) pushesAcked = System.nanoTime();
    return unacked.isEmpty();
  }

  /**
   * The blocks to send this step's request again at {@code now}: the pushes not acknowledged
   * while another block's push was ({@link AnswerLag}, {@code after} nanoseconds), and the pulls
   * of acknowledged pushes that the round's other blocks have outrun ({@link PullRound#overdue}).
   * A push is acknowledged once its step is applied (sync with exact durability, on the same
   * pushes as the other blocks) or once it is recorded (async, or checkpoint durability).
   */
  List<String> overdue(long now, long after) {
    List<String> late = new ArrayList<>();
    if (!unacked.isEmpty() && acks.due(now, after)) {
      late.addAll(unacked.keySet());
      acks.sentAgain(now);
    }
    late.addAll(pulls.overdue(now, after, unacked::containsKey));
    return late;
  }

  /** Every push acknowledged and every block pulled. */
  boolean done() {
    return unacked.isEmpty() && pulls.done();
  }

  /**
   * Forward and backward ran from {@code started} to {@code ended} ({@link System#nanoTime()}), of
   * which the thread was on a core for {@code cpuNanos}.
   */
  void computed(float loss, long started, long ended, long cpuNanos) {
    this.loss = loss;
    this.computeStarted = started;
    this.computed = ended;
    this.computeCpu = cpuNanos;
    this.pushesAcked = ended;
  }

  /** When this step's parts ended, and the next step's forward run meanwhile; once it is {@link #done()}. */
  StepTimes times() {
    return new StepTimes(computeStarted, computed, computeCpu, pushesAcked, pulls.doneAt(), ahead.inPushWait(),
        ahead.inPullWait(), ahead.cpuNanos());
  }

  long step() {
    return step;
  }

  int examples() {
    return examples;
  }

  long offsetAfter() {
    return offsetAfter;
  }

  PullRound pulls() {
    return pulls;
  }

  /** The next step's forward, run while this step's pulls arrive. */
  ForwardAhead ahead() {
    return ahead;
  }

  float loss() {
    return loss;
  }

  long computeNanos() {
    return computed - computeStarted;
  }

  /** Leave once this step is done. */
  void requestStop() {
    stopRequested = true;
  }

  boolean stopRequested() {
    return stopRequested;
  }
}
