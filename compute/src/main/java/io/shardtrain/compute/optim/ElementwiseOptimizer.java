package io.shardtrain.compute.optim;

/**
 * An optimizer whose update of a value reads only that value, its gradient and its slots: it
 * checks the block once and updates any range of it ({@link #applyRange}), so a block can be
 * updated in parts on several threads.
 */
abstract class ElementwiseOptimizer implements Optimizer {

  @Override
  public final boolean elementwise() {
    return true;
  }

  @Override
  public final void apply(float[] weights, float[] grad, float[][] slots, long step, float lr) {
    Checks.block(name(), weights, grad, slots, slotCount(), step);
    update(weights, grad, slots, step, lr, 0, weights.length);
  }

  @Override
  public final void applyRange(float[] weights, float[] grad, float[][] slots, long step, float lr, int from,
      int to) {
    Checks.block(name(), weights, grad, slots, slotCount(), step);
    Checks.range(name(), weights.length, from, to);
    update(weights, grad, slots, step, lr, from, to);
  }

  /** Updates the values {@code [from, to)}; the arguments are checked. */
  abstract void update(float[] weights, float[] grad, float[][] slots, long step, float lr, int from, int to);
}
