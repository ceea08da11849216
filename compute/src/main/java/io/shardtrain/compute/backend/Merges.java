package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A computed block added into C with beta, {@code C = block + beta * C}: a micro-kernel's tile
 * ({@link VectorGemm}, {@link ShallowGemm}) or a product computed as its transpose
 * ({@link TransposedGemm}, the narrow products). Beta 0 and 1 take their own loops: with 0 C is
 * not read (a NaN left in it does not survive), with 1 (every depth block after a product's
 * first) the block is added without a multiply.
 */
final class Merges {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  private static final int NR = VectorGemm.NR;

  private Merges() {}

  /**
   * {@code rows} rows of C, {@code ldc} apart from {@code cOff}, each set to the bias: where a product
   * with beta 1 then starts, so that the bias is added first, as one thread adds it.
   */
  static void biasRows(float[] bias, int n, int rows, float[] c, int cOff, int ldc) {
    for (int i = 0; i < rows; i++) System.arraycopy(bias, 0, c, cOff + i * ldc, n);
  }

  /**
   * {@code C = t^T + beta * C} for an m x n C, t's rows {@code ldt} apart: C row by row, down t's
   * columns, with {@link #vector}'s roundings. With beta 0 (an input gradient) four rows of C
   * at a time, so that each line of t read serves four stores before the next.
   */
  static void transposed(float[] t, int ldt, int m, int n, float[] c, int cOff, int ldc, float beta) {
    int rows = 0;
    if (beta == 0f) {
      for (; rows + 4 <= m; rows += 4) {
        int c0 = cOff + rows * ldc, c1 = c0 + ldc, c2 = c1 + ldc, c3 = c2 + ldc;
        for (int j = 0, ti = rows; j < n; j++, ti += ldt) {
          c[c0 + j] = t[ti];
          c[c1 + j] = t[ti + 1];
          c[c2 + j] = t[ti + 2];
          c[c3 + j] = t[ti + 3];
        }
      }
    }
    for (int i = rows; i < m; i++) {
      int ci = cOff + i * ldc;
      if (beta == 0f) {
        for (int j = 0, ti = i; j < n; j++, ti += ldt) c[ci + j] = t[ti];
      } else if (beta == 1f) {
        for (int j = 0, ti = i; j < n; j++, ti += ldt) c[ci + j] = t[ti] + c[ci + j];
      } else {
        for (int j = 0, ti = i; j < n; j++, ti += ldt) c[ci + j] = Math.fma(c[ci + j], beta, t[ti]);
      }
    }
  }

  /** A full mr x {@link VectorGemm#NR} tile into C at {@code co}, a vector at a time. */
  static void fullTile(float[] tile, int mr, float[] c, int co, int ldc, float beta) {
    for (int r = 0, t = 0, ci = co; r < mr; r++, t += NR, ci += ldc) {
      vector(tile, t, beta, c, ci);
      vector(tile, t + VL, beta, c, ci + VL);
    }
  }

  /** One vector of a tile, from {@code from}, into C at {@code at}: {@code C = tile + beta * C}. */
  static void vector(float[] tile, int from, float beta, float[] c, int at) {
    FloatVector v = FloatVector.fromArray(SPECIES, tile, from);
    if (beta == 0f) {
      v.intoArray(c, at);
    } else if (beta == 1f) {
      v.add(FloatVector.fromArray(SPECIES, c, at)).intoArray(c, at);
    } else {
      FloatVector.fromArray(SPECIES, c, at).fma(FloatVector.broadcast(SPECIES, beta), v).intoArray(c, at);
    }
  }

  /** The first {@code mr} rows and {@code nr} columns of a tile into C at {@code co}: an edge tile. */
  static void tile(float[] tile, int mr, int nr, float[] c, int co, int ldc, float beta) {
    for (int r = 0; r < mr; r++) {
      int t = r * NR;
      int ci = co + r * ldc;
      if (beta == 0f) {
        System.arraycopy(tile, t, c, ci, nr);
      } else if (beta == 1f) {
        for (int j = 0; j < nr; j++) c[ci + j] += tile[t + j];
      } else {
        for (int j = 0; j < nr; j++) c[ci + j] = tile[t + j] + beta * c[ci + j];
      }
    }
  }
}
