package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ShapeKernelsTest {
  /** Few warm-up calls: these tests check bits, not speed (an uncompiled kernel adds in the same order). */
  private static final int WARM_CALLS = 20;

  @Test
  void aShapesKernelGivesRowGemmsOwnBitsAndTheRightProduct() throws InterruptedException {
    ShapeKernels kernels = new ShapeKernels(4, WARM_CALLS);
    // {m, n, k, lda, ldc, extra floats after B}: the output layer's forward (B's last row read from
    // the scratch), A's and C's rows padded, rows past a multiple of eight, B with room for every row.
    int[][] cases = {{64, 10, 256, 256, 10, 0}, {21, 12, 40, 43, 15, 0}, {16, 9, 33, 33, 9, 64}};
    SplittableRandom random = new SplittableRandom(3);
    for (int[] s : cases) {
      int m = s[0], n = s[1], k = s[2], lda = s[3], ldc = s[4];
      float[] a = randoms(random, 5 + m * lda);
      float[] b = randoms(random, 2 + k * n + s[5]);
      float[] c0 = randoms(random, 7 + m * ldc);
      int whole = RowGemm.wholeRows(b, 2, n, k);
      if (s[5] == 0) assertTrue(whole < k, "B's last rows are copied for case " + m + "x" + k + "x" + n);
      RowGemm.Rows kernel = awaitKernel(kernels, lda, n, k, whole, n, ldc);
      for (float beta : new float[] {0f, 0.25f}) {
        float[] generic = c0.clone();
        float[] shaped = c0.clone();
        float[] scratch = new float[RowGemm.SCRATCH];
        RowGemm.gemm(null, scratch, m, n, k, 0.5f, a, 5, lda, b, 2, n, beta, generic, 7, ldc);
        RowGemm.gemm(kernels, scratch, m, n, k, 0.5f, a, 5, lda, b, 2, n, beta, shaped, 7, ldc);
        assertArrayEquals(generic, shaped, "bits of " + m + "x" + k + "x" + n + " beta " + beta);
        for (int i = 0; i < m; i++) {
          for (int j = 0; j < n; j++) {
            double sum = 0;
            for (int p = 0; p < k; p++) sum += (double) a[5 + i * lda + p] * b[2 + p * n + j];
            double expected = 0.5 * sum + beta * c0[7 + i * ldc + j];
            assertEquals(expected, shaped[7 + i * ldc + j], 1e-4, "C[" + i + "][" + j + "]");
          }
        }
        for (int j = n; j < ldc; j++) assertEquals(c0[7 + j], shaped[7 + j], "C's padding is left as it was");
      }
      assertNotNull(kernel);
    }
    assertEquals(3, kernels.shapes().size());
  }

  @Test
  void eachShapeHasItsOwnKernelClass() throws InterruptedException {
    ShapeKernels kernels = new ShapeKernels(4, WARM_CALLS);
    RowGemm.Rows narrow = awaitKernel(kernels, 256, 10, 256, 255, 10, 10);
    RowGemm.Rows wide = awaitKernel(kernels, 300, 10, 256, 255, 10, 10);
    assertNotSame(narrow.getClass(), wide.getClass());
    assertTrue(narrow.getClass().isHidden());
    assertEquals(List.of(new RowGemm.Shape(256, 10, 256, 255, 10, 10), new RowGemm.Shape(300, 10, 256, 255, 10, 10)),
        kernels.shapes());
  }

  @Test
  void shapesPastTheLimitKeepRowGemmsLoop() throws InterruptedException {
    ShapeKernels kernels = new ShapeKernels(1, WARM_CALLS);
    awaitKernel(kernels, 256, 10, 256, 255, 10, 10);
    for (int i = 0; i < 3; i++) assertNull(kernels.rows(128, 10, 128, 127, 10, 10));
    assertEquals(1, kernels.shapes().size());
  }

  @Test
  void theWarmUpsProductsMakeNoKernels() {
    ShapeKernels before = VectorGemm.threadWorkspace().shapeKernels;
    ShapeKernels kernels = new ShapeKernels(4, WARM_CALLS);
    VectorGemm.threadWorkspace().shapeKernels = kernels;
    try {
      KernelWarmUp.run(2);
      assertEquals(List.of(), kernels.shapes());
      assertEquals(kernels, VectorGemm.threadWorkspace().shapeKernels, "the thread's kernels are given back");
    } finally {
      VectorGemm.threadWorkspace().shapeKernels = before;
    }
  }

  private static RowGemm.Rows awaitKernel(ShapeKernels kernels, int lda, int ldb, int k, int whole, int n, int ldc)
      throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    RowGemm.Rows kernel;
    while ((kernel = kernels.rows(lda, ldb, k, whole, n, ldc)) == null) {
      assertTrue(System.nanoTime() < deadline, "no kernel for lda " + lda + " within 20 s");
      Thread.sleep(5);
    }
    return kernel;
  }

  private static float[] randoms(SplittableRandom random, int length) {
    float[] x = new float[length];
    for (int i = 0; i < length; i++) x[i] = (float) (random.nextDouble() * 2 - 1);
    return x;
  }
}
