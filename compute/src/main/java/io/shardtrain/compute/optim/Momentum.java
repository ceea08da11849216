package io.shardtrain.compute.optim;

/**
 * SGD with heavy-ball or Nesterov momentum, with PyTorch's semantics (no dampening).
 *
 * <p>With {@code g' = g + weightDecay * w}: {@code v = momentum * v + g'}; the update is
 * {@code v}, or {@code g' + momentum * v} for Nesterov; {@code w -= lr * update}. One slot: the
 * velocity {@code v}.
 */
public final class Momentum extends ElementwiseOptimizer {
  private final float momentum;
  private final boolean nesterov;
  private final float weightDecay;

  public Momentum(float momentum, boolean nesterov, float weightDecay) {
    this.momentum = Checks.decay("momentum", momentum);
    if (nesterov && momentum == 0f) {
      throw new IllegalArgumentException("Nesterov momentum needs momentum > 0");
    }
    this.nesterov = nesterov;
    this.weightDecay = Checks.nonNegative("weightDecay", weightDecay);
  }

  @Override
  public String name() {
    return nesterov ? "nesterov" : "momentum";
  }

  @Override
  public int slotCount() {
    return 1;
  }

  @Override
  void update(float[] weights, float[] grad, float[][] slots, long step, float lr, int from, int to) {
    float[] v = slots[0];
    float mu = momentum;
    float wd = weightDecay;
    for (int i = from; i < to; i++) {
      float w = weights[i];
      float g = grad[i] + wd * w;
      float vi = mu * v[i] + g;
      v[i] = vi;
      float update = nesterov ? g + mu * vi : vi;
      weights[i] = w - lr * update;
    }
  }

  public float momentum() {
    return momentum;
  }

  public boolean nesterov() {
    return nesterov;
  }

  public float weightDecay() {
    return weightDecay;
  }

  @Override
  public String toString() {
    return "Momentum[momentum=" + momentum + ", nesterov=" + nesterov + ", weightDecay=" + weightDecay + "]";
  }
}
