package io.shardtrain.compute.cuda;

import jcuda.driver.CUstream;

/** The fallback GEMM: our 64x64-tiled PTX kernel {@code st_sgemm}; far below cuBLAS. */
final class PtxGemm implements Gemm {
  private final CudaRuntime rt;
  private final CUstream stream;
  private final String why;

  PtxGemm(CudaRuntime rt, CUstream stream, String why) {
    this.rt = rt;
    this.stream = stream;
    this.why = why;
  }

  @Override
  public String name() {
    return "ptx-tiled (" + why + ")";
  }

  @Override
  public void sgemm(boolean transA, boolean transB, int m, int n, int k, float alpha, long a, int lda,
      long b, int ldb, float beta, long c, int ldc) {
    if (m == 0 || n == 0) return;
    rt.launch("st_sgemm", (n + 63) / 64, (m + 63) / 64, 256, stream,
        transA ? 1 : 0, transB ? 1 : 0, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }

  @Override
  public void close() {}
}
