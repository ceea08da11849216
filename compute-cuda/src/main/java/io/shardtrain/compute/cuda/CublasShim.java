package io.shardtrain.compute.cuda;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * cuBLAS's SGEMM through a JNI shim of ours ({@code src/main/native/cublas_shim.c}) that
 * {@code dlopen}s whichever {@code libcublas} the machine has. JCublas cannot be used on the
 * project's CUDA 13 machines: its natives bind versioned {@code libcublas.so.12} symbols.
 *
 * <p>Where the shim is: system property {@code shardtrain.cuda.shim} or environment variable
 * {@code SHARDTRAIN_CUBLAS_SHIM} (a path to {@code libshardtrain_cublas.so}). Which cuBLAS:
 * {@code shardtrain.cuda.cublas} / {@code SHARDTRAIN_CUBLAS}, else {@code libcublas.so.13},
 * {@code .so.12}, {@code .so} through the dynamic linker's search path. Loaded once per process.
 */
final class CublasShim implements Gemm {
  private static String loadError;
  private static String loadedFrom;
  private static boolean tried;

  private final long handle;
  private final String library;

  private CublasShim(long handle, String library) {
    this.handle = handle;
    this.library = library;
  }

  /** Loads the shim and cuBLAS once; null when both are ready, else why not (one line). */
  static synchronized String load() {
    if (tried) return loadError;
    tried = true;
    String shim = setting("shardtrain.cuda.shim", "SHARDTRAIN_CUBLAS_SHIM");
    if (shim == null) {
      return loadError = "no cuBLAS shim configured (set SHARDTRAIN_CUBLAS_SHIM or -Dshardtrain.cuda.shim)";
    }
    if (!Files.isRegularFile(Path.of(shim))) return loadError = "cuBLAS shim " + shim + " does not exist";
    try {
      System.load(Path.of(shim).toAbsolutePath().toString());
    } catch (LinkageError e) {
      return loadError = "cuBLAS shim " + shim + " did not load (" + CudaProbe.oneLine(e) + ")";
    }
    List<String> candidates = new ArrayList<>();
    String lib = setting("shardtrain.cuda.cublas", "SHARDTRAIN_CUBLAS");
    if (lib != null) candidates.add(lib);
    candidates.addAll(List.of("libcublas.so.13", "libcublas.so.12", "libcublas.so"));
    StringBuilder errors = new StringBuilder();
    for (String c : candidates) {
      String err = nativeOpen(c);
      if (err == null) {
        loadedFrom = c;
        return loadError = null;
      }
      errors.append(errors.length() == 0 ? "" : "; ").append(err);
    }
    return loadError = "no cuBLAS library opened: " + CudaProbe.oneLine(new RuntimeException(errors.toString()));
  }

  /** A cuBLAS handle bound to {@code stream}; call only after {@link #load()} returned null. */
  static CublasShim open(CudaStream stream) {
    long[] h = new long[1];
    check(nativeCreate(h), "cublasCreate_v2");
    check(nativeSetStream(h[0], stream.handle()), "cublasSetStream_v2");
    return new CublasShim(h[0], loadedFrom);
  }

  private static String setting(String property, String env) {
    String v = System.getProperty(property);
    if (v == null || v.isBlank()) v = System.getenv(env);
    return v == null || v.isBlank() ? null : v;
  }

  private static void check(int status, String what) {
    if (status != 0) throw new IllegalStateException(what + " failed with cuBLAS status " + status);
  }

  @Override
  public String name() {
    return "cublas (" + library + " via JNI shim)";
  }

  @Override
  public void sgemm(boolean transA, boolean transB, int m, int n, int k, float alpha, long a, int lda,
      long b, int ldb, float beta, long c, int ldc) {
    if (m == 0 || n == 0) return;
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    check(nativeSgemm(handle, transB ? 1 : 0, transA ? 1 : 0, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc),
        "cublasSgemm_v2");
  }

  @Override
  public void close() {
    nativeDestroy(handle);
  }

  private static native String nativeOpen(String library);

  private static native int nativeCreate(long[] handle);

  private static native int nativeSetStream(long handle, long stream);

  private static native int nativeSgemm(long handle, int opA, int opB, int m, int n, int k, float alpha,
      long a, int lda, long b, int ldb, float beta, long c, int ldc);

  private static native int nativeDestroy(long handle);
}
