package io.shardtrain.compute.backend;

/**
 * Single-precision GEMM on row-major arrays. TEMPORARY straightforward version; replaced by the
 * packed, register-blocked Vector API kernel.
 */
final class VectorGemm {
  private final int threads;

  VectorGemm(int threads) {
    this.threads = threads;
  }

  /**
   * C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C. lda/ldb/ldc are the row strides of
   * the arrays as stored (A is m x k, or k x m when transposed).
   */
  void gemm(boolean transA, boolean transB, int m, int n, int k, float alpha,
      float[] a, int lda, float[] b, int ldb, float beta, float[] c, int ldc) {
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        float s = 0f;
        for (int p = 0; p < k; p++) {
          float av = transA ? a[p * lda + i] : a[i * lda + p];
          float bv = transB ? b[j * ldb + p] : b[p * ldb + j];
          s += av * bv;
        }
        c[i * ldc + j] = alpha * s + (beta == 0f ? 0f : beta * c[i * ldc + j]);
      }
    }
  }

  int threads() {
    return threads;
  }
}
