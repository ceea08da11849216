package io.shardtrain.compute.optim;

/**
 * Layer-wise adaptive rate scaling (You, Gitman and Ginsburg 2017) with momentum.
 *
 * <p>{@code localLr = eta * ||w|| / (||g|| + weightDecay * ||w|| + eps)} (1 when either norm is 0),
 * {@code v = momentum * v + lr * localLr * (g + weightDecay * w)}, {@code w -= v}. One slot: v.
 *
 * <p>The trust ratio is computed over exactly the array given to {@link #apply}: the whole layer
 * parameter in single-process training, but only one block on the parameter server, where each
 * block then gets its own ratio. Give a parameter a single block when the per-layer ratio of the
 * paper matters. Whether biases and normalisation parameters get LARS at all is the caller's
 * choice (the paper excludes them).
 */
public final class Lars implements Optimizer {
  public static final float DEFAULT_TRUST_COEFFICIENT = 0.001f;

  private final float momentum;
  private final float trustCoefficient;
  private final float weightDecay;
  private final float eps;

  public Lars(float momentum, float trustCoefficient, float weightDecay, float eps) {
    this.momentum = Checks.decay("momentum", momentum);
    this.trustCoefficient = Checks.positive("trustCoefficient", trustCoefficient);
    this.weightDecay = Checks.nonNegative("weightDecay", weightDecay);
    this.eps = Checks.nonNegative("eps", eps);
  }

  @Override
  public String name() {
    return "lars";
  }

  @Override
  public int slotCount() {
    return 1;
  }

  @Override
  public void apply(float[] weights, float[] grad, float[][] slots, long step, float lr) {
    Checks.block(name(), weights, grad, slots, 1, step);
    float[] v = slots[0];
    // Norms in double: a block holds up to millions of squares.
    double wSquares = 0;
    double gSquares = 0;
    for (int i = 0; i < weights.length; i++) {
      wSquares += (double) weights[i] * weights[i];
      gSquares += (double) grad[i] * grad[i];
    }
    double wNorm = Math.sqrt(wSquares);
    double gNorm = Math.sqrt(gSquares);
    double localLr = wNorm > 0 && gNorm > 0
        ? trustCoefficient * wNorm / (gNorm + weightDecay * wNorm + eps)
        : 1.0;
    float scaled = (float) (lr * localLr);
    float mu = momentum;
    float wd = weightDecay;
    for (int i = 0; i < weights.length; i++) {
      float w = weights[i];
      float vi = mu * v[i] + scaled * (grad[i] + wd * w);
      v[i] = vi;
      weights[i] = w - vi;
    }
  }

  public float momentum() {
    return momentum;
  }

  public float trustCoefficient() {
    return trustCoefficient;
  }

  public float weightDecay() {
    return weightDecay;
  }

  public float eps() {
    return eps;
  }

  @Override
  public String toString() {
    return "Lars[momentum=" + momentum + ", trustCoefficient=" + trustCoefficient + ", weightDecay=" + weightDecay
        + ", eps=" + eps + "]";
  }
}
