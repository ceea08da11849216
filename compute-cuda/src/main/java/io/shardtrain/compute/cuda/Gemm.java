package io.shardtrain.compute.cuda;

/**
 * Row-major single-precision GEMM on device addresses, {@code C = alpha op(A) op(B) + beta C},
 * queued on the stream the implementation was bound to. Two implementations: cuBLAS through
 * {@link CublasShim}, and the tiled PTX kernel {@link PtxGemm} when the shim cannot load.
 */
interface Gemm extends AutoCloseable {
  /** Which implementation runs, for logs and benchmark reports. */
  String name();

  void sgemm(boolean transA, boolean transB, int m, int n, int k, float alpha, long a, int lda,
      long b, int ldb, float beta, long c, int ldc);

  @Override
  void close();
}
