package io.shardtrain.bench;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Measures single-precision GEMM throughput of the CPU backend, {@code C = op(A) * op(B)} with
 * random operands, timed over repeated calls after a JIT warm-up: the square n x n product, or the
 * shapes a training step multiplies ({@link #mlpShapes}).
 */
public final class GemmBenchmark {
  private GemmBenchmark() {
  }

  /** Measured calls are repeated until one measurement holds about this many flops, so tiny shapes time well. */
  private static final double FLOPS_PER_MEASUREMENT = 2e7;
  /**
   * Warm-up lasts at least this long: a few products end before the JIT has compiled the
   * kernel, and the figure would time the compiler as well.
   */
  static final long MIN_WARMUP_NANOS = 1_000_000_000L;

  /**
   * A product {@code C[m x n] = op(A) * op(B)} with inner size {@code k}; {@code transA}: A is stored
   * k x m, {@code transB}: B is stored n x k.
   */
  public record Shape(String name, int m, int k, int n, boolean transA, boolean transB) {
    public Shape {
      if (m < 1 || k < 1 || n < 1) {
        throw new IllegalArgumentException("gemm shape " + name + " needs sizes of at least 1, got " + m + "x" + k + "x" + n);
      }
    }

    public double flops() {
      return 2.0 * m * k * n;
    }

    /** {@code MxKxN}, with {@code :tn}, {@code :nt} or {@code :tt} when an operand is transposed. */
    public String dims() {
      String t = transA || transB ? ":" + (transA ? "t" : "n") + (transB ? "t" : "n") : "";
      return m + "x" + k + "x" + n + t;
    }

    static Shape square(int n) {
      return new Shape("square", n, n, n, false, false);
    }

    /**
     * {@code MxKxN} or {@code MxKxN:OP}, OP one of {@code nn}, {@code tn}, {@code nt}, {@code tt} (which
     * of A and B is transposed); anything else is refused with the accepted form.
     */
    public static Shape parse(String text) {
      String s = text.trim().toLowerCase(Locale.ROOT);
      String op = "nn";
      int colon = s.indexOf(':');
      if (colon >= 0) {
        op = s.substring(colon + 1);
        s = s.substring(0, colon);
      }
      String[] parts = s.split("x");
      if (parts.length != 3 || !List.of("nn", "tn", "nt", "tt").contains(op)) {
        throw new IllegalArgumentException("gemm shape '" + text + "' must be MxKxN or MxKxN:OP with OP nn, tn, nt or tt"
            + " (for example 64x784x512 or 784x64x512:tn)");
      }
      try {
        return new Shape(text.trim(), Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), Integer.parseInt(parts[2]),
            op.charAt(0) == 't', op.charAt(1) == 't');
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("gemm shape '" + text + "': sizes must be whole numbers", e);
      }
    }
  }

  /**
   * The products one training step of an MLP with layer sizes {@code dims} (input first) runs on a
   * batch of {@code batch}, as its dense layers call them: per layer the forward
   * {@code X[batch x in] W[in x out]}, the weight gradient {@code X^T G} and, above the first layer,
   * the input gradient {@code G W^T}.
   */
  public static List<Shape> mlpShapes(int batch, int... dims) {
    List<Shape> shapes = new ArrayList<>();
    for (int l = 0; l + 1 < dims.length; l++) {
      int in = dims[l];
      int out = dims[l + 1];
      String layer = "layer " + (l + 1) + " (" + in + "->" + out + ")";
      shapes.add(new Shape(layer + " forward", batch, in, out, false, false));
      shapes.add(new Shape(layer + " weight gradient", in, batch, out, true, false));
      if (l > 0) shapes.add(new Shape(layer + " input gradient", batch, out, in, false, true));
    }
    return shapes;
  }

  /**
   * One benchmark outcome.
   *
   * @param shape the product measured
   * @param threads compute threads the backend used
   * @param gflops throughput of the median measured iteration, in GFLOP/s
   * @param medianSeconds median wall time of one GEMM
   * @param bestGflops throughput of the fastest measured iteration
   * @param iterations measured iterations the median is taken over
   */
  public record Result(Shape shape, int threads, double gflops, double medianSeconds, double bestGflops,
      int iterations) {
    @Override
    public String toString() {
      return String.format(Locale.ROOT,
          "gemm %s %s threads=%d: median %.1f GFLOP/s (%.4f ms) of %d iterations, best %.1f GFLOP/s",
          shape.name(), shape.dims(), threads, gflops, medianSeconds * 1e3, iterations, bestGflops);
    }
  }

  /** The square product of two n x n matrices: {@link #run(Shape, int, int, int)} of that shape. */
  public static Result run(int n, int threads, int warmupIterations, int measuredIterations) {
    if (n < 1) {
      throw new IllegalArgumentException("gemm benchmark size must be at least 1, got " + n);
    }
    return run(Shape.square(n), threads, warmupIterations, measuredIterations);
  }

  /**
   * Runs {@code warmupIterations} untimed (and, unless that is 0, untimed products for at least
   * {@link #MIN_WARMUP_NANOS}) then {@code measuredIterations} timed products of
   * {@code shape} on a {@link CpuBackend} with {@code threads} threads; a measured iteration
   * repeats the product until it holds about 2e7 flops and counts the mean of its calls.
   */
  public static Result run(Shape shape, int threads, int warmupIterations, int measuredIterations) {
    return run(shape, threads, warmupIterations, measuredIterations, false);
  }

  /**
   * As {@link #run(Shape, int, int, int)}; with {@code rewriteOperands}, the calling thread writes
   * every element of A and B (adding zero) before each product, untimed, as a training step does
   * (the optimizer writes the weights, the reader the batch): with more than one thread the other
   * threads then fetch their slices from the caller's cache rather than their own.
   */
  public static Result run(Shape shape, int threads, int warmupIterations, int measuredIterations,
      boolean rewriteOperands) {
    return run(shape, threads, warmupIterations, measuredIterations, 0, rewriteOperands);
  }

  /**
   * As {@link #run(Shape, int, int, int, boolean)}, measuring {@code measuredIterations} or more,
   * until the measured iterations have taken at least {@code minSeconds} in all: a product of a
   * fraction of a millisecond gives a median of a few milliseconds otherwise, as unsteady as the
   * host is over that time.
   */
  public static Result run(Shape shape, int threads, int warmupIterations, int measuredIterations,
      double minSeconds, boolean rewriteOperands) {
    if (warmupIterations < 0 || measuredIterations < 1) {
      throw new IllegalArgumentException("gemm benchmark needs warmup >= 0 and measured >= 1 "
          + "iterations, got warmup=" + warmupIterations + " measured=" + measuredIterations);
    }
    if (!(minSeconds >= 0) || Double.isInfinite(minSeconds)) {
      throw new IllegalArgumentException("gemm benchmark's minimum measuring time must be a finite number of"
          + " seconds >= 0, got " + minSeconds);
    }
    CpuBackend backend = CpuBackend.create(threads);
    SplittableRandom random = new SplittableRandom(42);
    Tensor a = shape.transA() ? randomMatrix(shape.k(), shape.m(), random) : randomMatrix(shape.m(), shape.k(), random);
    Tensor b = shape.transB() ? randomMatrix(shape.n(), shape.k(), random) : randomMatrix(shape.k(), shape.n(), random);
    Tensor c = Tensor.zeros(shape.m(), shape.n());
    int calls = (int) Math.max(1, Math.ceil(FLOPS_PER_MEASUREMENT / shape.flops()));
    long warmupStart = System.nanoTime();
    for (int i = 0; i < warmupIterations * calls
        || warmupIterations > 0 && System.nanoTime() - warmupStart < MIN_WARMUP_NANOS; i++) {
      backend.gemm(shape.transA(), shape.transB(), 1f, a, b, 0f, c);
    }
    double[] seconds = new double[measuredIterations];
    long minNanos = (long) (minSeconds * 1e9);
    long measuredNanos = 0;
    int done = 0;
    while (done < measuredIterations || measuredNanos < minNanos) {
      long nanos = 0;
      if (rewriteOperands) {
        for (int j = 0; j < calls; j++) {
          rewrite(a);
          rewrite(b);
          long start = System.nanoTime();
          backend.gemm(shape.transA(), shape.transB(), 1f, a, b, 0f, c);
          nanos += System.nanoTime() - start;
        }
      } else {
        long start = System.nanoTime();
        for (int j = 0; j < calls; j++) backend.gemm(shape.transA(), shape.transB(), 1f, a, b, 0f, c);
        nanos = System.nanoTime() - start;
      }
      if (done == seconds.length) seconds = Arrays.copyOf(seconds, 2 * done);
      seconds[done++] = nanos / 1e9 / calls;
      measuredNanos += nanos;
    }
    seconds = Arrays.copyOf(seconds, done);
    Arrays.sort(seconds);
    double median = Median.ofSorted(seconds, done);
    return new Result(shape, threads, shape.flops() / median / 1e9, median, shape.flops() / seconds[0] / 1e9, done);
  }

  /** Stores every element again (x + 0 is not x only for -0, which random data has not). */
  private static void rewrite(Tensor t) {
    float[] d = t.data();
    for (int i = 0; i < d.length; i++) d[i] += 0f;
  }

  private static Tensor randomMatrix(int rows, int cols, SplittableRandom random) {
    float[] data = new float[rows * cols];
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) (random.nextDouble() * 2 - 1);
    }
    return Tensor.wrap(data, rows, cols);
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
