package io.shardtrain.compute.optim;

import java.util.Arrays;

/**
 * AdaGrad (Duchi et al. 2011) as in PyTorch, without learning-rate decay (use a schedule).
 *
 * <p>With {@code g' = g + weightDecay * w}: {@code s += g'^2}, {@code w -= lr * g' / (sqrt(s) + eps)}.
 * One slot: the accumulator s, which starts at {@code initialAccumulator} (see {@link #newSlots}).
 */
public final class AdaGrad extends ElementwiseOptimizer {
  private final float eps;
  private final float initialAccumulator;
  private final float weightDecay;

  public AdaGrad(float eps, float initialAccumulator, float weightDecay) {
    this.eps = Checks.nonNegative("eps", eps);
    this.initialAccumulator = Checks.nonNegative("initialAccumulator", initialAccumulator);
    this.weightDecay = Checks.nonNegative("weightDecay", weightDecay);
  }

  @Override
  public String name() {
    return "adagrad";
  }

  @Override
  public int slotCount() {
    return 1;
  }

  @Override
  public float[][] newSlots(int length) {
    float[][] slots = super.newSlots(length);
    Arrays.fill(slots[0], initialAccumulator);
    return slots;
  }

  @Override
  void update(float[] weights, float[] grad, float[][] slots, long step, float lr, int from, int to) {
    float[] s = slots[0];
    float wd = weightDecay;
    for (int i = from; i < to; i++) {
      float w = weights[i];
      float g = grad[i] + wd * w;
      float si = s[i] + g * g;
      s[i] = si;
      weights[i] = w - lr * g / ((float) Math.sqrt(si) + eps);
    }
  }

  public float eps() {
    return eps;
  }

  public float initialAccumulator() {
    return initialAccumulator;
  }

  public float weightDecay() {
    return weightDecay;
  }

  @Override
  public String toString() {
    return "AdaGrad[eps=" + eps + ", initialAccumulator=" + initialAccumulator + ", weightDecay=" + weightDecay + "]";
  }
}
