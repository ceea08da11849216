package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A product of few output columns (one logit, two classes, or B stored transposed) whose rows of A
 * are contiguous, as dot products of A's rows with op(B)'s columns, vectorized along k. Every lane
 * does useful work whatever the number of columns, where {@link RowGemm}'s rows of C leave lanes
 * idle (15 of 16 for one logit) and need a broadcast per FMA. The price is op(B)'s columns as
 * contiguous rows: a transposed copy of an untransposed B, which for 10 classes costs about what
 * RowGemm's 6 idle lanes do, so {@link VectorGemm} keeps those on RowGemm.
 *
 * <p>A block of C is four rows by five columns (twenty accumulators; per vector of k, nine loads
 * for twenty FMAs), or eight rows by two columns when at most two columns are left. A block past
 * C's last row or column repeats the last one and stores nothing for it. The accumulators' lanes
 * are summed in scalar code: JDK 17's lane reduction adds the lanes one after another, and its
 * shuffles and blends, which a tree of vector adds would need, do not compile to single
 * instructions here (docs/BENCHMARKS.md, session 52).
 */
final class DotGemm {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  /** Floats of scratch {@link #gemm} needs in the workspace's tile: the larger block's twenty accumulators. */
  static final int SCRATCH = 20 * VL;

  private DotGemm() {}

  /** {@code C = alpha * A op(B) + beta * C} for a C of few columns. */
  static void gemm(GemmWorkspace ws, boolean transB, int m, int n, int k, float alpha,
      float[] a, int aOff, int lda, float[] b, int bOff, int ldb, float beta, float[] c, int cOff, int ldc) {
    // op(B)'s columns as rows: B as stored when transposed, else a copy in the workspace (n x k, small as n is).
    float[] bt = b;
    int btOff = bOff, ldbt = ldb;
    if (!transB) {
      bt = ws.transposed(n * k);
      btOff = 0;
      ldbt = k;
      ScalarGemm.transpose(b, bOff, ldb, k, n, bt);
    }
    float[] sums = ws.tile;
    int kv = SPECIES.loopBound(k);
    for (int j = 0; j < n; ) {
      int cols = n - j >= 3 ? 5 : 2;
      int rows = cols == 5 ? 4 : 8;
      for (int i = 0; i < m; i += rows) {
        if (cols == 5) {
          fourByFive(a, aOff, lda, m, i, bt, btOff, ldbt, n, j, kv, sums);
        } else {
          eightByTwo(a, aOff, lda, m, i, bt, btOff, ldbt, n, j, kv, sums);
        }
        for (int q = 0; q < cols && j + q < n; q++) {
          int bq = btOff + (j + q) * ldbt;
          for (int r = 0; r < rows && i + r < m; r++) {
            int ar = aOff + (i + r) * lda;
            float d = laneSum(sums, (q * rows + r) * VL);
            for (int p = kv; p < k; p++) d += a[ar + p] * bt[bq + p];
            int at = cOff + (i + r) * ldc + j + q;
            c[at] = beta == 0f ? alpha * d : alpha * d + beta * c[at];
          }
        }
      }
      j += cols;
    }
  }

  /** Where row {@code first + r} of a matrix of {@code count} rows starts; past the last, the last. */
  private static int rowAt(int off, int ld, int count, int first, int r) {
    return off + Math.min(first + r, count - 1) * ld;
  }

  private static float laneSum(float[] s, int o) {
    float t = 0f;
    for (int q = 0; q < VL; q += 4) t += (s[o + q] + s[o + q + 1]) + (s[o + q + 2] + s[o + q + 3]);
    return t;
  }

  /**
   * The first {@code kv} products of rows {@code i..i+3} of A (an {@code m}-row matrix) with
   * columns {@code j..j+4} of op(B) ({@code n} columns, stored as rows of {@code bt}), lane by
   * lane, column-major into {@code sums} (column q, row r at {@code (q * 4 + r) * VL}). The vector
   * work is here and in {@link #eightByTwo}, called once per block, not in {@link #gemm}, called
   * once per product: the JIT counts calls, so these reach its second tier within the warm-up
   * ({@link KernelWarmUp}).
   */
  private static void fourByFive(float[] a, int aOff, int lda, int m, int i, float[] bt, int btOff, int ldbt, int n,
      int j, int kv, float[] sums) {
    int a0 = rowAt(aOff, lda, m, i, 0), a1 = rowAt(aOff, lda, m, i, 1), a2 = rowAt(aOff, lda, m, i, 2);
    int a3 = rowAt(aOff, lda, m, i, 3);
    int b0 = rowAt(btOff, ldbt, n, j, 0), b1 = rowAt(btOff, ldbt, n, j, 1), b2 = rowAt(btOff, ldbt, n, j, 2);
    int b3 = rowAt(btOff, ldbt, n, j, 3), b4 = rowAt(btOff, ldbt, n, j, 4);
    FloatVector s00 = FloatVector.zero(SPECIES), s01 = s00, s02 = s00, s03 = s00;
    FloatVector s10 = s00, s11 = s00, s12 = s00, s13 = s00;
    FloatVector s20 = s00, s21 = s00, s22 = s00, s23 = s00;
    FloatVector s30 = s00, s31 = s00, s32 = s00, s33 = s00;
    FloatVector s40 = s00, s41 = s00, s42 = s00, s43 = s00;
    for (int p = 0; p < kv; p += VL) {
      FloatVector x0 = FloatVector.fromArray(SPECIES, a, a0 + p), x1 = FloatVector.fromArray(SPECIES, a, a1 + p);
      FloatVector x2 = FloatVector.fromArray(SPECIES, a, a2 + p), x3 = FloatVector.fromArray(SPECIES, a, a3 + p);
      FloatVector y = FloatVector.fromArray(SPECIES, bt, b0 + p);
      s00 = x0.fma(y, s00); s01 = x1.fma(y, s01); s02 = x2.fma(y, s02); s03 = x3.fma(y, s03);
      y = FloatVector.fromArray(SPECIES, bt, b1 + p);
      s10 = x0.fma(y, s10); s11 = x1.fma(y, s11); s12 = x2.fma(y, s12); s13 = x3.fma(y, s13);
      y = FloatVector.fromArray(SPECIES, bt, b2 + p);
      s20 = x0.fma(y, s20); s21 = x1.fma(y, s21); s22 = x2.fma(y, s22); s23 = x3.fma(y, s23);
      y = FloatVector.fromArray(SPECIES, bt, b3 + p);
      s30 = x0.fma(y, s30); s31 = x1.fma(y, s31); s32 = x2.fma(y, s32); s33 = x3.fma(y, s33);
      y = FloatVector.fromArray(SPECIES, bt, b4 + p);
      s40 = x0.fma(y, s40); s41 = x1.fma(y, s41); s42 = x2.fma(y, s42); s43 = x3.fma(y, s43);
    }
    s00.intoArray(sums, 0); s01.intoArray(sums, VL); s02.intoArray(sums, 2 * VL); s03.intoArray(sums, 3 * VL);
    s10.intoArray(sums, 4 * VL); s11.intoArray(sums, 5 * VL); s12.intoArray(sums, 6 * VL); s13.intoArray(sums, 7 * VL);
    s20.intoArray(sums, 8 * VL); s21.intoArray(sums, 9 * VL); s22.intoArray(sums, 10 * VL);
    s23.intoArray(sums, 11 * VL);
    s30.intoArray(sums, 12 * VL); s31.intoArray(sums, 13 * VL); s32.intoArray(sums, 14 * VL);
    s33.intoArray(sums, 15 * VL);
    s40.intoArray(sums, 16 * VL); s41.intoArray(sums, 17 * VL); s42.intoArray(sums, 18 * VL);
    s43.intoArray(sums, 19 * VL);
  }

  /**
   * As {@link #fourByFive} for rows {@code i..i+7} and columns {@code j, j+1} (column q, row r at
   * {@code (q * 8 + r) * VL}).
   */
  private static void eightByTwo(float[] a, int aOff, int lda, int m, int i, float[] bt, int btOff, int ldbt, int n,
      int j, int kv, float[] sums) {
    int b0 = rowAt(btOff, ldbt, n, j, 0), b1 = rowAt(btOff, ldbt, n, j, 1);
    int a0 = rowAt(aOff, lda, m, i, 0), a1 = rowAt(aOff, lda, m, i, 1), a2 = rowAt(aOff, lda, m, i, 2);
    int a3 = rowAt(aOff, lda, m, i, 3), a4 = rowAt(aOff, lda, m, i, 4), a5 = rowAt(aOff, lda, m, i, 5);
    int a6 = rowAt(aOff, lda, m, i, 6), a7 = rowAt(aOff, lda, m, i, 7);
    FloatVector s00 = FloatVector.zero(SPECIES), s01 = s00, s02 = s00, s03 = s00;
    FloatVector s04 = s00, s05 = s00, s06 = s00, s07 = s00;
    FloatVector s10 = s00, s11 = s00, s12 = s00, s13 = s00;
    FloatVector s14 = s00, s15 = s00, s16 = s00, s17 = s00;
    for (int p = 0; p < kv; p += VL) {
      FloatVector y0 = FloatVector.fromArray(SPECIES, bt, b0 + p), y1 = FloatVector.fromArray(SPECIES, bt, b1 + p);
      FloatVector x = FloatVector.fromArray(SPECIES, a, a0 + p);
      s00 = x.fma(y0, s00); s10 = x.fma(y1, s10);
      x = FloatVector.fromArray(SPECIES, a, a1 + p);
      s01 = x.fma(y0, s01); s11 = x.fma(y1, s11);
      x = FloatVector.fromArray(SPECIES, a, a2 + p);
      s02 = x.fma(y0, s02); s12 = x.fma(y1, s12);
      x = FloatVector.fromArray(SPECIES, a, a3 + p);
      s03 = x.fma(y0, s03); s13 = x.fma(y1, s13);
      x = FloatVector.fromArray(SPECIES, a, a4 + p);
      s04 = x.fma(y0, s04); s14 = x.fma(y1, s14);
      x = FloatVector.fromArray(SPECIES, a, a5 + p);
      s05 = x.fma(y0, s05); s15 = x.fma(y1, s15);
      x = FloatVector.fromArray(SPECIES, a, a6 + p);
      s06 = x.fma(y0, s06); s16 = x.fma(y1, s16);
      x = FloatVector.fromArray(SPECIES, a, a7 + p);
      s07 = x.fma(y0, s07); s17 = x.fma(y1, s17);
    }
    s00.intoArray(sums, 0); s01.intoArray(sums, VL); s02.intoArray(sums, 2 * VL); s03.intoArray(sums, 3 * VL);
    s04.intoArray(sums, 4 * VL); s05.intoArray(sums, 5 * VL); s06.intoArray(sums, 6 * VL); s07.intoArray(sums, 7 * VL);
    s10.intoArray(sums, 8 * VL); s11.intoArray(sums, 9 * VL); s12.intoArray(sums, 10 * VL);
    s13.intoArray(sums, 11 * VL);
    s14.intoArray(sums, 12 * VL); s15.intoArray(sums, 13 * VL); s16.intoArray(sums, 14 * VL);
    s17.intoArray(sums, 15 * VL);
  }
}
