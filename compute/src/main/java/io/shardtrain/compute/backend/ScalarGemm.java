package io.shardtrain.compute.backend;

/**
 * The plain loops of {@link VectorGemm}: products too small to be worth packing, and C scaled by
 * beta (0 ignores what C held, NaN included).
 */
final class ScalarGemm {
  private ScalarGemm() {}

  static void small(boolean transA, boolean transB, int m, int n, int k, float alpha,
      float[] a, int aOff, int lda, float[] b, int bOff, int ldb, float beta,
      float[] c, int cOff, int ldc) {
    scaleC(m, n, beta, c, cOff, ldc);
    for (int i = 0; i < m; i++) {
      int ci = cOff + i * ldc;
      if (!transB) {
        for (int p = 0; p < k; p++) {
          float av = alpha * (transA ? a[aOff + p * lda + i] : a[aOff + i * lda + p]);
          int bi = bOff + p * ldb;
          for (int j = 0; j < n; j++) {
            c[ci + j] += av * b[bi + j];
          }
        }
      } else {
        for (int j = 0; j < n; j++) {
          int bj = bOff + j * ldb;
          float s = 0f;
          for (int p = 0; p < k; p++) {
            s += (transA ? a[aOff + p * lda + i] : a[aOff + i * lda + p]) * b[bj + p];
          }
          c[ci + j] += alpha * s;
        }
      }
    }
  }

  static void scaleC(int m, int n, float beta, float[] c, int cOff, int ldc) {
    if (beta == 1f) {
      return;
    }
    for (int i = 0; i < m; i++) {
      int ci = cOff + i * ldc;
      for (int j = 0; j < n; j++) {
        c[ci + j] = beta == 0f ? 0f : beta * c[ci + j];
      }
    }
  }

  /**
   * {@code dst} (cols x rows, dense) = the transpose of src's rows x cols block at {@code off},
   * rows {@code ld} apart: dst row by row, down src's columns, so that the inner loop is long
   * where src is narrow.
   */
  static void transpose(float[] src, int off, int ld, int rows, int cols, float[] dst) {
    for (int col = 0; col < cols; col++) {
      for (int r = 0, d = col * rows, from = off + col; r < rows; r++, from += ld) dst[d + r] = src[from];
    }
  }
}
