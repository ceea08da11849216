package io.shardtrain.compute.metrics;

/**
 * Approximate AUC for scores in [0, 1] from per-bin counts of positives and negatives.
 *
 * <p>Counts add, so each worker fills its own histogram and the global metric is their
 * {@link #merge}, exactly as if one histogram had seen every example; {@link #positives()},
 * {@link #negatives()} and {@link #of} carry it over the wire. Scores falling into the same bin
 * count as ties, which is the trapezoid rule over the ROC points at the bin edges; with 10,000
 * bins the error against {@link Auc#exact} is typically well under 1e-3.
 */
public final class AucHistogram {
  private final long[] positives;
  private final long[] negatives;

  public AucHistogram(int bins) {
    if (bins <= 0) {
      throw new IllegalArgumentException("histogram needs at least one bin, not " + bins);
    }
    this.positives = new long[bins];
    this.negatives = new long[bins];
  }

  private AucHistogram(long[] positives, long[] negatives) {
    this.positives = positives;
    this.negatives = negatives;
  }

  /** A histogram from counts (copied); both arrays have the bin count as length. */
  public static AucHistogram of(long[] positives, long[] negatives) {
    if (positives == null || negatives == null) {
      throw new IllegalArgumentException("positive and negative counts must not be null");
    }
    if (positives.length != negatives.length || positives.length == 0) {
      throw new IllegalArgumentException("positive counts for " + positives.length
          + " bins and negative counts for " + negatives.length + " bins must be equal and non-empty");
    }
    for (int b = 0; b < positives.length; b++) {
      if (positives[b] < 0 || negatives[b] < 0) {
        throw new IllegalArgumentException("negative count in bin " + b + ": positives "
            + positives[b] + ", negatives " + negatives[b]);
      }
    }
    return new AucHistogram(positives.clone(), negatives.clone());
  }

  public int bins() {
    return positives.length;
  }

  /** Counts one example; {@code score} must be in [0, 1]. */
  public void add(float score, boolean positive) {
    int b = bin(score, -1);
    if (positive) positives[b]++; else negatives[b]++;
  }

  /** Counts a batch with 0/1 labels. Checks the whole batch before counting any of it. */
  public void add(float[] scores, float[] labels) {
    if (scores == null || labels == null) {
      throw new IllegalArgumentException("scores and labels must not be null");
    }
    if (scores.length != labels.length) {
      throw new IllegalArgumentException("scores of length " + scores.length
          + " and labels of length " + labels.length + " differ");
    }
    for (int i = 0; i < scores.length; i++) {
      bin(scores[i], i);
      Auc.checkLabel(labels[i], i);
    }
    for (int i = 0; i < scores.length; i++) {
      int b = bin(scores[i], i);
      if (labels[i] == 1f) positives[b]++; else negatives[b]++;
    }
  }

  /** Adds {@code other}'s counts to this histogram; the bin counts must match. */
  public void merge(AucHistogram other) {
    if (other.bins() != bins()) {
      throw new IllegalArgumentException("cannot merge a histogram of " + other.bins()
          + " bins into one of " + bins() + " bins");
    }
    for (int b = 0; b < positives.length; b++) {
      positives[b] += other.positives[b];
      negatives[b] += other.negatives[b];
    }
  }

  /** The AUC with same-bin pairs as ties; NaN until there is at least one of each class. */
  public double auc() {
    double pairs = 0;
    long negativesBelow = 0;
    long totalPositives = 0;
    for (int b = 0; b < positives.length; b++) {
      pairs += positives[b] * (negativesBelow + 0.5 * negatives[b]);
      negativesBelow += negatives[b];
      totalPositives += positives[b];
    }
    if (totalPositives == 0 || negativesBelow == 0) return Double.NaN;
    return pairs / ((double) totalPositives * negativesBelow);
  }

  /** A copy of the positive counts per bin. */
  public long[] positives() {
    return positives.clone();
  }

  /** A copy of the negative counts per bin. */
  public long[] negatives() {
    return negatives.clone();
  }

  /** Examples counted. */
  public long count() {
    long n = 0;
    for (int b = 0; b < positives.length; b++) {
      n += positives[b] + negatives[b];
    }
    return n;
  }

  private int bin(float score, int index) {
    if (!(score >= 0f && score <= 1f)) {
      throw new IllegalArgumentException("score " + score + (index >= 0 ? " at index " + index : "")
          + " is outside [0, 1]");
    }
    // score 1.0 belongs to the last bin, not one past it.
    return Math.min((int) (score * positives.length), positives.length - 1);
  }
}
