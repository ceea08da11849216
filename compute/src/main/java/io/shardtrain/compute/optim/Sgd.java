package io.shardtrain.compute.optim;

/**
 * Plain stochastic gradient descent: {@code w -= lr * (g + weightDecay * w)}, the weight decay
 * being an L2 penalty folded into the gradient as in PyTorch. No state.
 */
public final class Sgd extends ElementwiseOptimizer {
  private final float weightDecay;

  public Sgd(float weightDecay) {
    this.weightDecay = Checks.nonNegative("weightDecay", weightDecay);
  }

  public Sgd() {
    this(0f);
  }

  @Override
  public String name() {
    return "sgd";
  }

  @Override
  public int slotCount() {
    return 0;
  }

  @Override
  void update(float[] weights, float[] grad, float[][] slots, long step, float lr, int from, int to) {
    float wd = weightDecay;
    for (int i = from; i < to; i++) {
      float w = weights[i];
      weights[i] = w - lr * (grad[i] + wd * w);
    }
  }

  public float weightDecay() {
    return weightDecay;
  }

  @Override
  public String toString() {
    return "Sgd[weightDecay=" + weightDecay + "]";
  }
}
