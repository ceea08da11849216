package io.shardtrain.compute.optim;

import java.util.List;

/**
 * The update rule of one parameter block: an optimizer and its learning-rate schedule, applied to
 * a block's values and {@link OptimizerState}. A parameter server is handed one per block, as
 * ps-lite hands its server an update handle, and calls it for every step it applies; the rule
 * knows nothing of how gradients arrive or are persisted.
 *
 * <p>Copy-on-write: the values passed in are never changed; an update returns a new array, so a
 * version's array may be shared by pulls and snapshots once published. The optimizer state (slots
 * and update count) advances in place. Deterministic: the same values, state and gradients in the
 * same order give the same floats, bit for bit, which is what lets a journal be replayed.
 */
public final class BlockUpdate {
  private final Optimizer optimizer;
  private final LearningRateSchedule schedule;

  public BlockUpdate(Optimizer optimizer, LearningRateSchedule schedule) {
    if (optimizer == null) throw new IllegalArgumentException("optimizer must not be null");
    if (schedule == null) throw new IllegalArgumentException("learning-rate schedule must not be null");
    this.optimizer = optimizer;
    this.schedule = schedule;
  }

  public Optimizer optimizer() {
    return optimizer;
  }

  public LearningRateSchedule schedule() {
    return schedule;
  }

  /** Fresh optimizer state for a block of {@code length} values. */
  public OptimizerState newState(int length) {
    return OptimizerState.create(optimizer, length);
  }

  /**
   * The values after one optimizer step on {@code gradient}, in a new array; {@code state}
   * advances by one update.
   */
  public float[] apply(float[] values, OptimizerState state, float[] gradient) {
    return apply(values, state, gradient, state.updates());
  }

  /**
   * The values after one optimizer step on {@code gradient} at the schedule's rate for position
   * {@code position} (rather than the update count: a block whose updates cover a varying number of
   * examples runs its schedule on the examples), in a new array; {@code state} advances by one update.
   */
  public float[] apply(float[] values, OptimizerState state, float[] gradient, long position) {
    float[] next = values.clone();
    state.step(optimizer, schedule.rate(position), next, gradient);
    return next;
  }

  /**
   * The values after one optimizer step on the weighted mean of {@code gradients}
   * ({@link #weightedMean}), in a new array; {@code values} itself, and no update counted, when
   * no gradient has a positive weight.
   */
  public float[] applyMean(float[] values, OptimizerState state, List<? extends WeightedGradient> gradients) {
    return applyMean(values, state, gradients, state.updates());
  }

  /** {@link #applyMean(float[], OptimizerState, List)} at the schedule's rate for {@code position}. */
  public float[] applyMean(float[] values, OptimizerState state, List<? extends WeightedGradient> gradients,
      long position) {
    float[] mean = weightedMean(values.length, gradients);
    return mean == null ? values : apply(values, state, mean, position);
  }

  /**
   * {@code sum(w_i * g_i) / sum(w_i)} over the gradients of positive weight, summed in list order
   * (float addition is not associative, so the order is part of the result); null when no
   * gradient has a positive weight. Gradients of weight 0 or less may have any length.
   */
  public static float[] weightedMean(int length, List<? extends WeightedGradient> gradients) {
    float total = 0f;
    int last = -1;
    for (int i = 0; i < gradients.size(); i++) {
      WeightedGradient c = gradients.get(i);
      if (c.weight() <= 0f) continue;
      if (c.values().length != length) {
        throw new IllegalArgumentException("gradient of length " + c.values().length + " in a mean of length "
            + length);
      }
      total += c.weight();
      last = i;
    }
    if (!(total > 0f)) return null;
    float[] mean = new float[length];
    for (int i = 0; i <= last; i++) {
      WeightedGradient c = gradients.get(i);
      if (c.weight() <= 0f) continue;
      float w = c.weight();
      float[] g = c.values();
      if (i < last) {
        for (int j = 0; j < length; j++) mean[j] += w * g[j];
      } else {
        // The last gradient's pass also divides: the same operations in the same order as a
        // separate pass would do, one pass over the mean fewer.
        for (int j = 0; j < length; j++) mean[j] = (mean[j] + w * g[j]) / total;
      }
    }
    return mean;
  }

  @Override
  public String toString() {
    return "BlockUpdate[" + optimizer + "]";
  }
}
