package io.shardtrain.compute.optim;

/**
 * Adam (Kingma and Ba 2014) and, with {@code decoupled}, AdamW (Loshchilov and Hutter 2017),
 * as in PyTorch.
 *
 * <p>{@code m = beta1 * m + (1 - beta1) * g}, {@code v = beta2 * v + (1 - beta2) * g^2},
 * {@code w -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)} where t is the block's
 * 1-based update count. Weight decay is either an L2 term added to g ({@code decoupled} false) or
 * a separate shrink {@code w *= 1 - lr * weightDecay} before the Adam step (AdamW). Two slots:
 * m and v.
 */
public final class Adam extends ElementwiseOptimizer {
  private final float beta1;
  private final float beta2;
  private final float eps;
  private final float weightDecay;
  private final boolean decoupled;

  public Adam(float beta1, float beta2, float eps, float weightDecay, boolean decoupled) {
    this.beta1 = Checks.decay("beta1", beta1);
    this.beta2 = Checks.decay("beta2", beta2);
    this.eps = Checks.nonNegative("eps", eps);
    this.weightDecay = Checks.nonNegative("weightDecay", weightDecay);
    this.decoupled = decoupled;
  }

  @Override
  public String name() {
    return decoupled ? "adamw" : "adam";
  }

  @Override
  public int slotCount() {
    return 2;
  }

  @Override
  void update(float[] weights, float[] grad, float[][] slots, long step, float lr, int from, int to) {
    float[] m = slots[0];
    float[] v = slots[1];
    // Bias corrections in double: beta^t underflows gracefully and 1 - beta2^t is tiny early on.
    double correction1 = 1.0 - Math.pow(beta1, step);
    double correction2 = 1.0 - Math.pow(beta2, step);
    float stepSize = (float) (lr / correction1);
    float sqrtCorrection2 = (float) Math.sqrt(correction2);
    float b1 = beta1;
    float b2 = beta2;
    float oneMinusB1 = 1f - b1;
    float oneMinusB2 = 1f - b2;
    float l2 = decoupled ? 0f : weightDecay;
    float shrink = decoupled ? 1f - lr * weightDecay : 1f;
    for (int i = from; i < to; i++) {
      float w = weights[i] * shrink;
      float g = grad[i] + l2 * weights[i];
      float mi = b1 * m[i] + oneMinusB1 * g;
      float vi = b2 * v[i] + oneMinusB2 * g * g;
      m[i] = mi;
      v[i] = vi;
      float denom = (float) Math.sqrt(vi) / sqrtCorrection2 + eps;
      weights[i] = w - stepSize * mi / denom;
    }
  }

  public float beta1() {
    return beta1;
  }

  public float beta2() {
    return beta2;
  }

  public float eps() {
    return eps;
  }

  public float weightDecay() {
    return weightDecay;
  }

  public boolean decoupled() {
    return decoupled;
  }

  @Override
  public String toString() {
    return "Adam[beta1=" + beta1 + ", beta2=" + beta2 + ", eps=" + eps + ", weightDecay=" + weightDecay
        + ", decoupled=" + decoupled + "]";
  }
}
