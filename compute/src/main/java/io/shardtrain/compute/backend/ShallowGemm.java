package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A product of small depth (the output layer's input gradient: 10 classes deep) whose C rows are
 * whole vectors wide: {@code C[i, :] = alpha * sum_p A[i, p] * op(B)[p, :]}, four rows by four
 * vectors of C at a time in registers, so each load of op(B)'s row serves four FMAs. With a depth
 * this small, {@link VectorGemm}'s tiles would spend more on packing, zeroing and merging a tile
 * than on its few FMAs. op(B) is read by rows: as stored, or, when B is transposed, from a copy
 * in the workspace (k x n, small as k is). Each element is summed over p in order from zero,
 * with alpha applied to A's element, as the tiles do, so with beta 0 or 1 (all that training
 * uses) the bits are theirs.
 */
final class ShallowGemm {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  static final int VL = SPECIES.length();
  /** The deepest product this path takes. */
  static final int MAX_DEPTH = 16;
  private static final int ROWS = 4;
  private static final int VECTORS = 4;

  private ShallowGemm() {}

  /** Whether this path takes an m x n product of depth k: shallow, whole vectors wide, a block of rows tall. */
  static boolean takes(int m, int n, int k) {
    return k <= MAX_DEPTH && n % VL == 0 && n >= VECTORS * VL && m >= ROWS;
  }

  /** Floats of the tile {@link #gemm} needs. */
  static final int TILE = ROWS * VECTORS * VL;

  /**
   * {@code C = alpha * op(A) op(B) + beta * C}, through the workspace's tile and, when B is
   * transposed, its transposed copy of B.
   */
  static void gemm(GemmWorkspace ws, boolean transA, boolean transB, int m, int n, int k, float alpha,
      float[] a, int lda, float[] b, int ldb, float beta, float[] c, int ldc) {
    float[] tile = ws.tile;
    float[] rows = b;
    int ldr = ldb;
    if (transB) {
      rows = ws.transposed(k * n);
      ldr = n;
      ScalarGemm.transpose(b, 0, ldb, n, k, rows);
    }
    // op(A)[i, p]: a[i * lda + p], or a[p * lda + i] when A is transposed.
    int rowStep = transA ? 1 : lda, depthStep = transA ? lda : 1;
    int wide = n / (VECTORS * VL) * (VECTORS * VL);
    int i = 0;
    for (; i + ROWS <= m; i += ROWS) {
      for (int j = 0; j < wide; j += VECTORS * VL) block(rows, ldr, j, a, i * rowStep, rowStep, depthStep, k, alpha,
          beta, c, i * ldc + j, ldc, tile);
      for (int j = wide; j < n; j += VL) {
        for (int r = 0; r < ROWS; r++) vector(rows, ldr, j, a, (i + r) * rowStep, depthStep, k, alpha, beta, c,
            (i + r) * ldc + j, tile);
      }
    }
    for (; i < m; i++) {
      for (int j = 0; j < n; j += VL) {
        vector(rows, ldr, j, a, i * rowStep, depthStep, k, alpha, beta, c, i * ldc + j, tile);
      }
    }
  }

  /** Rows i..i+3 (A's elements from {@code a0}, rows {@code rowStep} apart) by columns j..j+4*VL-1 of C. */
  private static void block(float[] rows, int ldr, int j, float[] a, int a0, int rowStep, int depthStep, int k,
      float alpha, float beta, float[] c, int c0, int ldc, float[] tile) {
    FloatVector c00 = FloatVector.zero(SPECIES), c01 = c00, c02 = c00, c03 = c00;
    FloatVector c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    FloatVector c20 = c00, c21 = c00, c22 = c00, c23 = c00;
    FloatVector c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    int a1 = a0 + rowStep, a2 = a1 + rowStep, a3 = a2 + rowStep;
    for (int p = 0; p < k; p++) {
      int at = p * ldr + j, d = p * depthStep;
      FloatVector y0 = FloatVector.fromArray(SPECIES, rows, at);
      FloatVector y1 = FloatVector.fromArray(SPECIES, rows, at + VL);
      FloatVector y2 = FloatVector.fromArray(SPECIES, rows, at + 2 * VL);
      FloatVector y3 = FloatVector.fromArray(SPECIES, rows, at + 3 * VL);
      FloatVector x = FloatVector.broadcast(SPECIES, alpha * a[a0 + d]);
      c00 = x.fma(y0, c00);
      c01 = x.fma(y1, c01);
      c02 = x.fma(y2, c02);
      c03 = x.fma(y3, c03);
      x = FloatVector.broadcast(SPECIES, alpha * a[a1 + d]);
      c10 = x.fma(y0, c10);
      c11 = x.fma(y1, c11);
      c12 = x.fma(y2, c12);
      c13 = x.fma(y3, c13);
      x = FloatVector.broadcast(SPECIES, alpha * a[a2 + d]);
      c20 = x.fma(y0, c20);
      c21 = x.fma(y1, c21);
      c22 = x.fma(y2, c22);
      c23 = x.fma(y3, c23);
      x = FloatVector.broadcast(SPECIES, alpha * a[a3 + d]);
      c30 = x.fma(y0, c30);
      c31 = x.fma(y1, c31);
      c32 = x.fma(y2, c32);
      c33 = x.fma(y3, c33);
    }
    // Out through a tile, as VectorGemm's micro-kernels: a beta branch taken while the
    // accumulators are live would make C2 box them inside the loop.
    c00.intoArray(tile, 0);
    c01.intoArray(tile, VL);
    c02.intoArray(tile, 2 * VL);
    c03.intoArray(tile, 3 * VL);
    c10.intoArray(tile, 4 * VL);
    c11.intoArray(tile, 5 * VL);
    c12.intoArray(tile, 6 * VL);
    c13.intoArray(tile, 7 * VL);
    c20.intoArray(tile, 8 * VL);
    c21.intoArray(tile, 9 * VL);
    c22.intoArray(tile, 10 * VL);
    c23.intoArray(tile, 11 * VL);
    c30.intoArray(tile, 12 * VL);
    c31.intoArray(tile, 13 * VL);
    c32.intoArray(tile, 14 * VL);
    c33.intoArray(tile, 15 * VL);
    for (int r = 0; r < ROWS; r++) {
      for (int v = 0; v < VECTORS; v++) {
        Merges.vector(tile, (r * VECTORS + v) * VL, beta, c, c0 + r * ldc + v * VL);
      }
    }
  }

  /** One vector of one row of C. */
  private static void vector(float[] rows, int ldr, int j, float[] a, int ai, int depthStep, int k, float alpha,
      float beta, float[] c, int at, float[] tile) {
    FloatVector acc = FloatVector.zero(SPECIES);
    for (int p = 0; p < k; p++) {
      acc = FloatVector.broadcast(SPECIES, alpha * a[ai + p * depthStep]).fma(FloatVector.fromArray(SPECIES, rows,
          p * ldr + j), acc);
    }
    acc.intoArray(tile, 0);
    Merges.vector(tile, 0, beta, c, at);
  }

}
