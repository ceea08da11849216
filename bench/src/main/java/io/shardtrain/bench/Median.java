package io.shardtrain.bench;

import java.util.Arrays;

/** The median the benchmarks report: the middle value, or the mean of the two middle ones. */
public final class Median {
  private Median() {}

  /** The median of the first {@code count} values of {@code sorted}, which are in ascending order. */
  public static double ofSorted(double[] sorted, int count) {
    if (count < 1 || count > sorted.length) {
      throw new IllegalArgumentException("a median of " + count + " of " + sorted.length + " values");
    }
    return count % 2 == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
  }

  /** The median of {@code values}, which it leaves as they are. */
  public static double of(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return ofSorted(sorted, sorted.length);
  }

  /** The median of {@code values}, which it leaves as they are. */
  public static double of(long[] values) {
    return of(Arrays.stream(values).asDoubleStream().toArray());
  }
}
