package io.shardtrain.compute.metrics;

/**
 * Mean binary cross-entropy of predicted probabilities, the usual CTR metric. Probabilities are
 * clipped to {@code [EPS, 1 - EPS]} so a confident wrong prediction costs about 16.1, not infinity.
 */
public final class LogLoss {
  /** The clipping margin. */
  public static final double EPS = 1e-7;

  private LogLoss() {}

  /**
   * {@code mean(-(y * ln p + (1 - y) * ln(1 - p)))} with p clipped; labels in [0, 1] (soft labels
   * allowed), probabilities in [0, 1].
   */
  public static double binary(float[] probs, float[] labels) {
    if (probs == null || labels == null) {
      throw new IllegalArgumentException("probs and labels must not be null");
    }
    if (probs.length != labels.length) {
      throw new IllegalArgumentException("probs of length " + probs.length
          + " and labels of length " + labels.length + " differ");
    }
    if (probs.length == 0) {
      throw new IllegalArgumentException("log loss of zero examples is undefined");
    }
    double sum = 0;
    for (int i = 0; i < probs.length; i++) {
      float p = probs[i];
      float y = labels[i];
      if (!(p >= 0f && p <= 1f)) {
        throw new IllegalArgumentException("probability " + p + " at index " + i + " is outside [0, 1]");
      }
      if (!(y >= 0f && y <= 1f)) {
        throw new IllegalArgumentException("label " + y + " at index " + i + " is outside [0, 1]");
      }
      double q = Math.min(Math.max(p, EPS), 1 - EPS);
      sum -= y * Math.log(q) + (1 - (double) y) * Math.log(1 - q);
    }
    return sum / probs.length;
  }
}
