package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The rectifier over ranges of arrays: {@code max(x, 0)} forward, and backward the gradient where
 * the rectifier's output is positive. As a product's last pass ({@link Backend#gemmBiasRelu},
 * {@link Backend#gemmReluBackward}) an instance is applied to each part of C by the thread that
 * computed it, while that part is still in the thread's cache: with two compute threads a separate
 * pass on the caller read the other core's half of C and took three to four times as long as on
 * one thread (docs/BENCHMARKS.md, session 34).
 */
final class Rectifier {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();

  /** {@code C = max(C, 0)}. */
  static final Rectifier FORWARD = new Rectifier(null);

  /** The rectifier's output the backward pass gates by, laid out as C; null forward. */
  private final float[] gate;

  private Rectifier(float[] gate) {
    this.gate = gate;
  }

  /** {@code C = C where gate > 0, else 0}; {@code gate} has C's layout (its row stride too). */
  static Rectifier gatedBy(float[] gate) {
    return new Rectifier(gate);
  }

  /** Applies this pass to rows {@code [rowFrom, rowTo)}, columns {@code [colFrom, colTo)} of C. */
  void apply(float[] c, int ldc, int rowFrom, int rowTo, int colFrom, int colTo) {
    if (colFrom == 0 && colTo == ldc) {
      // Whole rows: one run, so the vector loop's remainder comes once, not once a row.
      run(c, rowFrom * ldc, rowTo * ldc);
      return;
    }
    for (int i = rowFrom; i < rowTo; i++) {
      int row = i * ldc;
      run(c, row + colFrom, row + colTo);
    }
  }

  private void run(float[] c, int from, int to) {
    if (gate == null) {
      max(c, c, from, to);
    } else {
      gate(gate, c, c, from, to);
    }
  }

  /** {@code out[i] = max(x[i], 0)} for i in {@code [from, to)}. */
  static void max(float[] x, float[] out, int from, int to) {
    int i = from;
    for (int bound = from + SPECIES.loopBound(to - from); i < bound; i += VL) {
      FloatVector.fromArray(SPECIES, x, i).max(0f).intoArray(out, i);
    }
    for (; i < to; i++) out[i] = Math.max(x[i], 0f);
  }

  /** {@code out[i] = g[i] where y[i] > 0, else 0} for i in {@code [from, to)}, y the rectifier's output. */
  static void gate(float[] y, float[] g, float[] out, int from, int to) {
    // A select on the sign, not a branch: half the activations are zero, at random, so a branch
    // mispredicts on every other element.
    int i = from;
    for (int bound = from + SPECIES.loopBound(to - from); i < bound; i += VL) {
      VectorMask<Float> on = FloatVector.fromArray(SPECIES, y, i).compare(VectorOperators.GT, 0f);
      FloatVector.zero(SPECIES).blend(FloatVector.fromArray(SPECIES, g, i), on).intoArray(out, i);
    }
    for (; i < to; i++) out[i] = y[i] > 0f ? g[i] : 0f;
  }
}
