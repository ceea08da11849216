package io.shardtrain.compute;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Finds NaN and infinite values. The parameter server calls this on every incoming gradient
 * before it touches a block, so one bad trainer cannot poison the parameters.
 */
public final class NumericChecks {
  private NumericChecks() {}

  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  /** Floats checked with vectors before looking whether they held a bad one; small, so finding it is cheap. */
  private static final int CHUNK = 1024;

  /** Index of the first NaN or infinite value in {@code values[from, from+length)}, or -1. */
  public static int firstNonFinite(float[] values, int from, int length) {
    int end = from + length;
    int i = from;
    // (v - v) is NaN for both NaN and +-Inf and 0 for every finite value, so a chunk's sum of them
    // is 0 exactly when the chunk is finite; a loop without an exit per value, which vectorizes.
    while (end - i >= CHUNK) {
      FloatVector sum = FloatVector.zero(SPECIES);
      for (int j = i, stop = i + CHUNK; j < stop; j += SPECIES.length()) {
        FloatVector v = FloatVector.fromArray(SPECIES, values, j);
        sum = sum.add(v.sub(v));
      }
      if (sum.reduceLanes(VectorOperators.ADD) != 0f) return scan(values, i, i + CHUNK);
      i += CHUNK;
    }
    return scan(values, i, end);
  }

  private static int scan(float[] values, int from, int end) {
    for (int i = from; i < end; i++) {
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
