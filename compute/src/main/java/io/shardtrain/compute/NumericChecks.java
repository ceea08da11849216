package io.shardtrain.compute;

/**
 * Finds NaN and infinite values. The parameter server calls this on every incoming gradient
 * before it touches a block, so one bad trainer cannot poison the parameters.
 */
public final class NumericChecks {
  private NumericChecks() {}

  /** Index of the first NaN or infinite value in {@code values[from, from+length)}, or -1. */
  public static int firstNonFinite(float[] values, int from, int length) {
    int end = from + length;
    for (int i = from; i < end; i++) {
      // (v - v) is NaN for both NaN and +-Inf, and 0 for every finite value.
      float v = values[i];
      if (v - v != 0f) return i;
    }
    return -1;
  }

  public static int firstNonFinite(float[] values) {
    return firstNonFinite(values, 0, values.length);
  }

  public static boolean allFinite(float[] values) {
    return firstNonFinite(values) < 0;
  }

  /** Throws {@link IllegalArgumentException} naming what and where, when a value is not finite. */
  public static void requireFinite(String what, float[] values) {
    int i = firstNonFinite(values);
    if (i >= 0) {
      throw new IllegalArgumentException(what + " has a non-finite value " + values[i] + " at index " + i);
    }
  }
}
