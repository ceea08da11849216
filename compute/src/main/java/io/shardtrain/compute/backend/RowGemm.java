package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A product whose C rows fit one vector (the output layer's forward, 10 classes) with neither
 * operand transposed: each row of C is a vector accumulated over k as
 * {@code C[i, :] += A[i, p] * B[p, :]}, eight rows at a time so eight independent FMA chains
 * share each load of B's row. B's rows are loaded a whole vector wide from where they start,
 * reading into the next row; the lanes past n are never stored. No packing, no transposed copy
 * of B, no reduction across lanes. A shape seen before takes a kernel compiled for it
 * ({@link ShapeKernels}), whose strides are constants.
 */
final class RowGemm {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  static final int VL = SPECIES.length();
  private static final int ROWS = 8;

  private RowGemm() {}

  /** Floats of scratch {@link #gemm} needs. */
  static final int SCRATCH = (ROWS + VL) * VL;
  /** Where in the scratch B's last rows start, copied zero-padded; before it, the rows of C. */
  static final int TAIL = ROWS * VL;

  /** What a kernel compiled for one shape is compiled for: the strides, the depth, B's rows read in place, C's width. */
  record Shape(int lda, int ldb, int k, int whole, int n, int ldc) {
    boolean is(int lda, int ldb, int k, int whole, int n, int ldc) {
      return this.lda == lda && this.ldb == ldb && this.k == k && this.whole == whole && this.n == n && this.ldc == ldc;
    }
  }

  /** {@link #ROWS} rows of C for one {@link Shape}: A's rows from {@code a0}, C's from {@code ci}. */
  interface Rows {
    void rows(float[] scratch, float[] a, int a0, float[] b, int bOff, float alpha, float beta, float[] c, int ci);
  }

  /**
   * {@code C = alpha * A B + beta * C} for {@code n <= VL}; {@code scratch} holds {@link #SCRATCH}
   * floats. {@code kernels}: where a kernel compiled for this shape may be; null for none.
   */
  static void gemm(ShapeKernels kernels, float[] scratch, int m, int n, int k, float alpha, float[] a, int aOff,
      int lda, float[] b, int bOff, int ldb, float beta, float[] c, int cOff, int ldc) {
    if (n > VL) throw new IllegalArgumentException("RowGemm takes at most " + VL + " columns, not " + n);
    // B's rows p < whole are read a whole vector wide in place; the last few, which would read
    // past the array, are copied zero-padded behind the rows' store area.
    int whole = wholeRows(b, bOff, ldb, k);
    int tail = TAIL;
    java.util.Arrays.fill(scratch, tail, tail + (k - whole) * VL, 0f);
    for (int p = whole; p < k; p++) System.arraycopy(b, bOff + p * ldb, scratch, tail + (p - whole) * VL, n);
    int i = 0;
    Rows shaped = kernels == null || m < ROWS ? null : kernels.rows(lda, ldb, k, whole, n, ldc);
    if (shaped != null) {
      for (; i + ROWS <= m; i += ROWS) shaped.rows(scratch, a, aOff + i * lda, b, bOff, alpha, beta, c, cOff + i * ldc);
    }
    for (; i + ROWS <= m; i += ROWS) {
      rows(scratch, a, aOff + i * lda, lda, b, bOff, ldb, whole, tail, k, n, alpha, beta, c, cOff + i * ldc, ldc);
    }
    for (; i < m; i++) row(scratch, a, aOff + i * lda, b, bOff, ldb, whole, tail, k, n, alpha, beta, c, cOff + i * ldc);
  }

  /**
   * {@link #ROWS} rows of C from A's rows at {@code a0}, {@code lda} apart. The vector work is in
   * methods called once per block of rows, not in {@link #gemm}, called once per product: the JIT
   * counts calls, so these reach its second tier within the warm-up ({@link KernelWarmUp}), where
   * {@link #gemm} would only in training, each of its vector operations allocating until then.
   */
  private static void rows(float[] scratch, float[] a, int a0, int lda, float[] b, int bOff, int ldb, int whole,
      int tail, int k, int n, float alpha, float beta, float[] c, int ci, int ldc) {
    FloatVector c0 = FloatVector.zero(SPECIES), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    int a1 = a0 + lda, a2 = a1 + lda, a3 = a2 + lda;
    int a4 = a3 + lda, a5 = a4 + lda, a6 = a5 + lda, a7 = a6 + lda;
    for (int p = 0; p < k; p++) {
      // A choice of array and offset, not of two vectors (a vector through a phi may be boxed).
      boolean inPlace = p < whole;
      FloatVector y = FloatVector.fromArray(SPECIES, inPlace ? b : scratch,
          inPlace ? bOff + p * ldb : tail + (p - whole) * VL);
      c0 = FloatVector.broadcast(SPECIES, a[a0 + p]).fma(y, c0);
      c1 = FloatVector.broadcast(SPECIES, a[a1 + p]).fma(y, c1);
      c2 = FloatVector.broadcast(SPECIES, a[a2 + p]).fma(y, c2);
      c3 = FloatVector.broadcast(SPECIES, a[a3 + p]).fma(y, c3);
      c4 = FloatVector.broadcast(SPECIES, a[a4 + p]).fma(y, c4);
      c5 = FloatVector.broadcast(SPECIES, a[a5 + p]).fma(y, c5);
      c6 = FloatVector.broadcast(SPECIES, a[a6 + p]).fma(y, c6);
      c7 = FloatVector.broadcast(SPECIES, a[a7 + p]).fma(y, c7);
    }
    c0.intoArray(scratch, 0);
    c1.intoArray(scratch, VL);
    c2.intoArray(scratch, 2 * VL);
    c3.intoArray(scratch, 3 * VL);
    c4.intoArray(scratch, 4 * VL);
    c5.intoArray(scratch, 5 * VL);
    c6.intoArray(scratch, 6 * VL);
    c7.intoArray(scratch, 7 * VL);
    for (int r = 0; r < ROWS; r++) store(scratch, r * VL, n, alpha, beta, c, ci + r * ldc);
  }

  /** One row of C from A's row at {@code ai}, as {@link #rows}. */
  private static void row(float[] scratch, float[] a, int ai, float[] b, int bOff, int ldb, int whole, int tail,
      int k, int n, float alpha, float beta, float[] c, int ci) {
    FloatVector acc = FloatVector.zero(SPECIES);
    for (int p = 0; p < k; p++) {
      boolean inPlace = p < whole;
      FloatVector y = FloatVector.fromArray(SPECIES, inPlace ? b : scratch,
          inPlace ? bOff + p * ldb : tail + (p - whole) * VL);
      acc = FloatVector.broadcast(SPECIES, a[ai + p]).fma(y, acc);
    }
    acc.intoArray(scratch, 0);
    store(scratch, 0, n, alpha, beta, c, ci);
  }

  /** B's rows read a whole vector wide in place: the first rows, up to the one whose vector would end past the array. */
  static int wholeRows(float[] b, int bOff, int ldb, int k) {
    int room = b.length - bOff - VL;
    return room < 0 ? 0 : Math.min(k, room / ldb + 1);
  }

  private static void store(float[] row, int from, int n, float alpha, float beta, float[] c, int at) {
    if (beta == 0f) {
      for (int j = 0; j < n; j++) c[at + j] = alpha * row[from + j];
    } else {
      for (int j = 0; j < n; j++) c[at + j] = alpha * row[from + j] + beta * c[at + j];
    }
  }
}
