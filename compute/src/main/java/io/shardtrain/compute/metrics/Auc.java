package io.shardtrain.compute.metrics;

import java.util.Arrays;

/**
 * Exact area under the ROC curve: the probability that a random positive scores above a random
 * negative, ties counting one half (the Mann-Whitney statistic). O(n log n) by one primitive sort.
 * For metrics merged across workers use {@link AucHistogram}.
 */
public final class Auc {
  private Auc() {}

  /**
   * The AUC of {@code scores} against 0/1 {@code labels}; NaN when all labels are the same class
   * (the AUC is undefined then, and an evaluation batch may legitimately be one-class).
   */
  public static double exact(float[] scores, float[] labels) {
    if (scores == null || labels == null) {
      throw new IllegalArgumentException("scores and labels must not be null");
    }
    if (scores.length != labels.length) {
      throw new IllegalArgumentException("scores of length " + scores.length
          + " and labels of length " + labels.length + " differ");
    }
    int n = scores.length;
    // Sort (score, index) pairs packed into longs: high half an int that orders like the float,
    // low half the index. Avoids boxing a comparator sort over millions of examples.
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      float s = scores[i];
      if (Float.isNaN(s)) {
        throw new IllegalArgumentException("score at index " + i + " is NaN");
      }
      checkLabel(labels[i], i);
      keys[i] = ((long) sortableBits(s) << 32) | i;
    }
    Arrays.sort(keys);
    double pairs = 0;   // positive-over-negative pairs, ties as 1/2
    long negativesBelow = 0;
    long positives = 0;
    int i = 0;
    while (i < n) {
      int high = (int) (keys[i] >>> 32);
      long pos = 0;
      long neg = 0;
      int j = i;
      while (j < n && (int) (keys[j] >>> 32) == high) {
        if (labels[(int) keys[j]] == 1f) pos++; else neg++;
        j++;
      }
      pairs += pos * (negativesBelow + 0.5 * neg);
      negativesBelow += neg;
      positives += pos;
      i = j;
    }
    long negatives = negativesBelow;
    if (positives == 0 || negatives == 0) return Double.NaN;
    return pairs / ((double) positives * negatives);
  }

  /** An int whose signed order is the float's numeric order; -0 and +0 map to the same value. */
  private static int sortableBits(float f) {
    int bits = Float.floatToIntBits(f == 0f ? 0f : f);
    return bits ^ ((bits >> 31) & 0x7fffffff);
  }

  static void checkLabel(float label, int index) {
    if (label != 0f && label != 1f) {
      throw new IllegalArgumentException("label " + label + " at index " + index + " is not 0 or 1");
    }
  }
}
