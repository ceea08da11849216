package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * A product of few output columns (the output layer's forward, 10 classes) whose rows of A are
 * contiguous, as dot products of A's rows with op(B)'s columns, vectorized along k, four rows at a
 * time: {@link VectorGemm}'s tiles would pack A and pad the columns to a whole tile.
 */
final class DotGemm {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();

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
    int kv = SPECIES.loopBound(k);
    int i = 0;
    for (; i + 4 <= m; i += 4) {
      fourRows(a, aOff + i * lda, lda, bt, btOff, ldbt, n, k, kv, alpha, beta, c, cOff + i * ldc, ldc);
    }
    for (; i < m; i++) {
      oneRow(a, aOff + i * lda, bt, btOff, ldbt, n, k, kv, alpha, beta, c, cOff + i * ldc);
    }
  }

  /**
   * Four rows of C from A's rows at {@code a0}, {@code lda} apart. The vector work is here and in
   * {@link #oneRow}, called once per block of rows, not in {@link #gemm}, called once per product:
   * the JIT counts calls, so these reach its second tier within the warm-up ({@link KernelWarmUp}).
   */
  private static void fourRows(float[] a, int a0, int lda, float[] bt, int btOff, int ldbt, int n, int k, int kv,
      float alpha, float beta, float[] c, int ci, int ldc) {
    int a1 = a0 + lda, a2 = a1 + lda, a3 = a2 + lda;
    for (int j = 0; j < n; j++) {
      int bj = btOff + j * ldbt;
      FloatVector s0 = FloatVector.zero(SPECIES);
      FloatVector s1 = FloatVector.zero(SPECIES);
      FloatVector s2 = FloatVector.zero(SPECIES);
      FloatVector s3 = FloatVector.zero(SPECIES);
      for (int p = 0; p < kv; p += VL) {
        FloatVector y = FloatVector.fromArray(SPECIES, bt, bj + p);
        s0 = FloatVector.fromArray(SPECIES, a, a0 + p).fma(y, s0);
        s1 = FloatVector.fromArray(SPECIES, a, a1 + p).fma(y, s1);
        s2 = FloatVector.fromArray(SPECIES, a, a2 + p).fma(y, s2);
        s3 = FloatVector.fromArray(SPECIES, a, a3 + p).fma(y, s3);
      }
      float d0 = s0.reduceLanes(VectorOperators.ADD), d1 = s1.reduceLanes(VectorOperators.ADD);
      float d2 = s2.reduceLanes(VectorOperators.ADD), d3 = s3.reduceLanes(VectorOperators.ADD);
      for (int p = kv; p < k; p++) {
        float y = bt[bj + p];
        d0 += a[a0 + p] * y;
        d1 += a[a1 + p] * y;
        d2 += a[a2 + p] * y;
        d3 += a[a3 + p] * y;
      }
      store(c, ci + j, alpha * d0, beta);
      store(c, ci + ldc + j, alpha * d1, beta);
      store(c, ci + 2 * ldc + j, alpha * d2, beta);
      store(c, ci + 3 * ldc + j, alpha * d3, beta);
    }
  }

  /** One row of C from A's row at {@code ai}. */
  private static void oneRow(float[] a, int ai, float[] bt, int btOff, int ldbt, int n, int k, int kv, float alpha,
      float beta, float[] c, int ci) {
    for (int j = 0; j < n; j++) {
      int bj = btOff + j * ldbt;
      FloatVector s0 = FloatVector.zero(SPECIES);
      for (int p = 0; p < kv; p += VL) {
        s0 = FloatVector.fromArray(SPECIES, a, ai + p).fma(FloatVector.fromArray(SPECIES, bt, bj + p), s0);
      }
      float d = s0.reduceLanes(VectorOperators.ADD);
      for (int p = kv; p < k; p++) d += a[ai + p] * bt[bj + p];
      store(c, ci + j, alpha * d, beta);
    }
  }

  private static void store(float[] c, int at, float value, float beta) {
    c[at] = beta == 0f ? value : value + beta * c[at];
  }
}
