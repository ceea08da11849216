package io.shardtrain.compute.backend;

import java.lang.constant.ConstantDescs;
import java.lang.invoke.MethodHandles;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link RowGemm}'s eight rows of C for one product shape, as the template {@link ShapeKernels}
 * defines again as a hidden class per shape: the shape is the class data, read once into static
 * finals, which the JIT folds into constants. Never used by this name (its initializer needs class
 * data). The same FMAs in the same order as {@link RowGemm}'s loop, so the same bits.
 */
final class RowKernel implements RowGemm.Rows {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  private static final int LDA;
  private static final int LDB;
  private static final int K;
  /** B's rows read in place; rows {@code WHOLE..K-1} are in the scratch's tail, as {@link RowGemm#gemm} puts them. */
  private static final int WHOLE;
  private static final int N;
  private static final int LDC;

  static {
    try {
      RowGemm.Shape shape =
          MethodHandles.classData(MethodHandles.lookup(), ConstantDescs.DEFAULT_NAME, RowGemm.Shape.class);
      LDA = shape.lda();
      LDB = shape.ldb();
      K = shape.k();
      WHOLE = shape.whole();
      N = shape.n();
      LDC = shape.ldc();
    } catch (IllegalAccessException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @Override
  public void rows(float[] scratch, float[] a, int a0, float[] b, int bOff, float alpha, float beta, float[] c,
      int ci) {
    FloatVector c0 = FloatVector.zero(SPECIES), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    for (int p = 0; p < WHOLE; p++) {
      FloatVector y = FloatVector.fromArray(SPECIES, b, bOff + p * LDB);
      c0 = FloatVector.broadcast(SPECIES, a[a0 + p]).fma(y, c0);
      c1 = FloatVector.broadcast(SPECIES, a[a0 + LDA + p]).fma(y, c1);
      c2 = FloatVector.broadcast(SPECIES, a[a0 + 2 * LDA + p]).fma(y, c2);
      c3 = FloatVector.broadcast(SPECIES, a[a0 + 3 * LDA + p]).fma(y, c3);
      c4 = FloatVector.broadcast(SPECIES, a[a0 + 4 * LDA + p]).fma(y, c4);
      c5 = FloatVector.broadcast(SPECIES, a[a0 + 5 * LDA + p]).fma(y, c5);
      c6 = FloatVector.broadcast(SPECIES, a[a0 + 6 * LDA + p]).fma(y, c6);
      c7 = FloatVector.broadcast(SPECIES, a[a0 + 7 * LDA + p]).fma(y, c7);
    }
    // B's last rows from the scratch, in a loop of their own, so that the main loop reads one array.
    int tail = RowGemm.TAIL;
    for (int p = WHOLE; p < K; p++) {
      FloatVector y = FloatVector.fromArray(SPECIES, scratch, tail + (p - WHOLE) * VL);
      c0 = FloatVector.broadcast(SPECIES, a[a0 + p]).fma(y, c0);
      c1 = FloatVector.broadcast(SPECIES, a[a0 + LDA + p]).fma(y, c1);
      c2 = FloatVector.broadcast(SPECIES, a[a0 + 2 * LDA + p]).fma(y, c2);
      c3 = FloatVector.broadcast(SPECIES, a[a0 + 3 * LDA + p]).fma(y, c3);
      c4 = FloatVector.broadcast(SPECIES, a[a0 + 4 * LDA + p]).fma(y, c4);
      c5 = FloatVector.broadcast(SPECIES, a[a0 + 5 * LDA + p]).fma(y, c5);
      c6 = FloatVector.broadcast(SPECIES, a[a0 + 6 * LDA + p]).fma(y, c6);
      c7 = FloatVector.broadcast(SPECIES, a[a0 + 7 * LDA + p]).fma(y, c7);
    }
    c0.intoArray(scratch, 0);
    c1.intoArray(scratch, VL);
    c2.intoArray(scratch, 2 * VL);
    c3.intoArray(scratch, 3 * VL);
    c4.intoArray(scratch, 4 * VL);
    c5.intoArray(scratch, 5 * VL);
    c6.intoArray(scratch, 6 * VL);
    c7.intoArray(scratch, 7 * VL);
    // N and LDC constant: the JIT unrolls these stores, which cost RowGemm's loop about 3%.
    if (beta == 0f) {
      for (int r = 0; r < 8; r++) {
        for (int j = 0; j < N; j++) c[ci + r * LDC + j] = alpha * scratch[r * VL + j];
      }
    } else {
      for (int r = 0; r < 8; r++) {
        for (int j = 0; j < N; j++) c[ci + r * LDC + j] = alpha * scratch[r * VL + j] + beta * c[ci + r * LDC + j];
      }
    }
  }
}
