package io.shardtrain.compute.optim;

import io.shardtrain.compute.RowSlices;

/**
 * The optimizer state of one parameter block: its slot arrays and how many updates it has had.
 *
 * <p>The update count drives Adam's bias correction and the learning-rate schedule, so in async
 * training each block decays on its own count and needs no global step. Not thread-safe: the
 * owner (one shard entity, or one training thread) serializes access.
 */
public final class OptimizerState {
  private final int length;
  private final float[][] slots;
  private long updates;

  private OptimizerState(int length, float[][] slots, long updates) {
    this.length = length;
    this.slots = slots;
    this.updates = updates;
  }

  /** Fresh state for a block of {@code length} values, no updates applied yet. */
  public static OptimizerState create(Optimizer optimizer, int length) {
    if (length < 0) {
      throw new IllegalArgumentException("block length must be >= 0, not " + length);
    }
    return new OptimizerState(length, optimizer.newSlots(length), 0L);
  }

  /**
   * State rebuilt from existing arrays (a snapshot), wrapped without copying. Every slot must
   * have {@code length} values.
   */
  public static OptimizerState of(int length, float[][] slots, long updates) {
    if (length < 0) {
      throw new IllegalArgumentException("block length must be >= 0, not " + length);
    }
    if (slots == null) {
      throw new IllegalArgumentException("slots must not be null");
    }
    for (int s = 0; s < slots.length; s++) {
      if (slots[s] == null || slots[s].length != length) {
        throw new IllegalArgumentException("slot " + s + " of length "
            + (slots[s] == null ? "null" : String.valueOf(slots[s].length))
            + " does not match block length " + length);
      }
    }
    if (updates < 0) {
      throw new IllegalArgumentException("update count must be >= 0, not " + updates);
    }
    return new OptimizerState(length, slots, updates);
  }

  /** The block length this state is for. */
  public int length() {
    return length;
  }

  /** The live slot arrays (not copies). */
  public float[][] slots() {
    return slots;
  }

  /** Updates applied so far. */
  public long updates() {
    return updates;
  }

  /**
   * Applies one update: the rate is {@code schedule.rate(updates())} (the count before this
   * update), the optimizer sees {@code step = updates() + 1}, and the count advances only when
   * the update succeeded.
   */
  public void step(Optimizer optimizer, LearningRateSchedule schedule, float[] weights, float[] grad) {
    step(optimizer, schedule.rate(updates), weights, grad);
  }

  /** Applies one update at learning rate {@code rate}; otherwise as {@link #step(Optimizer, LearningRateSchedule, float[], float[])}. */
  public void step(Optimizer optimizer, float rate, float[] weights, float[] grad) {
    checkLength(weights);
    long next = updates + 1;
    optimizer.apply(weights, grad, slots, next, rate);
    updates = next;
  }

  /**
   * Applies one update at learning rate {@code rate} to a block laid out as rows of
   * {@code columns} values, in the row ranges {@code slices} hands out, possibly on several threads
   * at once ({@code Backend::forEachRowSlice} runs each where the layer's weight gradient computed
   * those rows). The same values as {@link #step(Optimizer, float, float[], float[])}; an optimizer
   * that is not {@link Optimizer#elementwise() element-wise}, or a single row, is updated whole on
   * the caller.
   */
  public void step(Optimizer optimizer, float rate, float[] weights, float[] grad, int columns, RowSlices slices) {
    if (!optimizer.elementwise() || weights == null || columns < 1 || weights.length <= columns
        || weights.length % columns != 0) {
      step(optimizer, rate, weights, grad);
      return;
    }
    checkLength(weights);
    long next = updates + 1;
    // Checked before the first slice, so bad input changes no value.
    Checks.block(optimizer.name(), weights, grad, slots, optimizer.slotCount(), next);
    slices.forEach(weights.length / columns, columns,
        (from, to) -> optimizer.applyRange(weights, grad, slots, next, rate, from * columns, to * columns));
    updates = next;
  }

  private void checkLength(float[] weights) {
    if (weights == null || weights.length != length) {
      throw new IllegalArgumentException("weights of length "
          + (weights == null ? "null" : String.valueOf(weights.length))
          + " do not match optimizer state for length " + length);
    }
  }

  /** A deep copy, e.g. for a snapshot taken while updates go on. */
  public OptimizerState copy() {
    float[][] c = new float[slots.length][];
    for (int s = 0; s < slots.length; s++) {
      c[s] = slots[s].clone();
    }
    return new OptimizerState(length, c, updates);
  }

  @Override
  public String toString() {
    return "OptimizerState[length=" + length + ", slots=" + slots.length + ", updates=" + updates + "]";
  }
}
