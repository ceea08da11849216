package io.shardtrain.bench;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Measures single-precision GEMM throughput of the CPU backend: {@code C = A * B} for two random
 * n x n matrices, timed over repeated calls after a JIT warm-up.
 */
public final class GemmBenchmark {
  private GemmBenchmark() {
  }

  /**
   * One benchmark outcome.
   *
   * @param n matrix size (n x n times n x n)
   * @param threads compute threads the backend used
   * @param gflops throughput of the median measured iteration, in GFLOP/s ({@code 2 n^3} flops)
   * @param medianSeconds median wall time of one measured GEMM
   * @param bestGflops throughput of the fastest measured iteration
   */
  public record Result(int n, int threads, double gflops, double medianSeconds, double bestGflops) {
    @Override
    public String toString() {
      return String.format("gemm n=%d threads=%d: median %.1f GFLOP/s (%.3f ms), best %.1f GFLOP/s",
          n, threads, gflops, medianSeconds * 1e3, bestGflops);
    }
  }

  /**
   * Runs {@code warmupIterations} untimed then {@code measuredIterations} timed n x n GEMMs on a
   * {@link CpuBackend} with {@code threads} threads.
   */
  public static Result run(int n, int threads, int warmupIterations, int measuredIterations) {
    if (n < 1) {
      throw new IllegalArgumentException("gemm benchmark size must be at least 1, got " + n);
    }
    if (warmupIterations < 0 || measuredIterations < 1) {
      throw new IllegalArgumentException("gemm benchmark needs warmup >= 0 and measured >= 1 "
          + "iterations, got warmup=" + warmupIterations + " measured=" + measuredIterations);
    }
    CpuBackend backend = CpuBackend.create(threads);
    SplittableRandom random = new SplittableRandom(42);
    Tensor a = randomMatrix(n, random);
    Tensor b = randomMatrix(n, random);
    Tensor c = Tensor.zeros(n, n);
    for (int i = 0; i < warmupIterations; i++) {
      backend.gemm(false, false, 1f, a, b, 0f, c);
    }
    double[] seconds = new double[measuredIterations];
    for (int i = 0; i < measuredIterations; i++) {
      long start = System.nanoTime();
      backend.gemm(false, false, 1f, a, b, 0f, c);
      seconds[i] = (System.nanoTime() - start) / 1e9;
    }
    Arrays.sort(seconds);
    double median = measuredIterations % 2 == 1
        ? seconds[measuredIterations / 2]
        : (seconds[measuredIterations / 2 - 1] + seconds[measuredIterations / 2]) / 2;
    double flops = 2.0 * n * n * n;
    return new Result(n, threads, flops / median / 1e9, median, flops / seconds[0] / 1e9);
  }

  private static Tensor randomMatrix(int n, SplittableRandom random) {
    float[] data = new float[n * n];
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) (random.nextDouble() * 2 - 1);
    }
    return Tensor.wrap(data, n, n);
  }

  /** Command line: {@code GemmBenchmark [n] [threads] [warmup] [measured]}. */
  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1024;
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    int measured = args.length > 3 ? Integer.parseInt(args[3]) : 20;
    System.out.println(run(n, threads, warmup, measured));
  }
}
