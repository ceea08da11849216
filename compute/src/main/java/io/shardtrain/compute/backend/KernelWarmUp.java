package io.shardtrain.compute.backend;

import io.shardtrain.compute.Tensor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Compiles the CPU backend's kernels before training needs them: a daemon thread runs the
 * operations of a dense network's training step on small operands while the process still reads
 * its data or joins its cluster.
 *
 * <p>Why: until the JIT's second tier has compiled a Vector API kernel, each vector operation in
 * it is a call that allocates an object (one 64x784x512 product: 15 s under {@code -Xint}, 0.3 ms
 * compiled), and the first tier's calls make the library's fallback code hot enough to fill the
 * second tier's queue ahead of the kernels. A 784-512-256-10 MLP's first step took 260-720 ms
 * and its next hundred steps 0.3-0.6 s more than compiled ones, a fifth of a 3000-step run
 * ({@code bin/shardtrain local --report FILE} writes each step's time beside FILE). The warm-up
 * takes the same paths as that step (both tile heights, B read in place and packed, more than
 * one depth block, partial tiles, the narrow output products, the element-wise passes, and last
 * the input gradient computed as its transpose), so what it compiles is what training runs, and
 * it runs on its own single-threaded GEMM: the kernels are static code the whole JVM shares, the
 * workspaces are per thread.
 *
 * <p>Once per JVM; {@code -Dshardtrain.compute.warm-up=false} turns it off (to measure without it).
 */
final class KernelWarmUp {
  /** The system property that turns the warm-up off. */
  static final String PROPERTY = "shardtrain.compute.warm-up";
  /** Passes of the small network; enough for the kernels' callers, invoked once per product, to be compiled too. */
  static final int STEPS = 300;
  /** Rounds of the shallow products that come first. */
  static final int SHALLOW_ROUNDS = 150;
  private static final KernelWarmUp JVM = new KernelWarmUp();

  private static final AtomicInteger RUNNING = new AtomicInteger();

  private final AtomicBoolean started = new AtomicBoolean();

  KernelWarmUp() {}

  /** Starts this JVM's warm-up unless it ran already or {@link #PROPERTY} turns it off; returns at once. */
  static void startOnce() {
    JVM.start(!"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true")), STEPS);
  }

  /** The warm-up thread, started now; null when {@code enabled} is false or this warm-up started before. */
  Thread start(boolean enabled, int steps) {
    if (!enabled || !started.compareAndSet(false, true)) return null;
    RUNNING.incrementAndGet();
    Thread t = new Thread(() -> {
      try {
        run(steps);
      } finally {
        RUNNING.decrementAndGet();
      }
    }, "shardtrain-kernel-warm-up");
    t.setDaemon(true);
    try {
      t.start();
    } catch (Throwable e) {
      RUNNING.decrementAndGet();
      throw e;
    }
    return t;
  }

  /**
   * Whether a warm-up is running in this JVM. {@link TransposedGemm}, which it compiles last, waits
   * for it to end, and the product takes the tiles (the same bits) until then: otherwise its
   * kernel reached the JIT's second tier up to 0.7 s into training, and ran at the first tier's
   * speed, whose vector operations each allocate, until then.
   */
  static boolean running() {
    return RUNNING.get() > 0;
  }

  /**
   * First {@link #SHALLOW_ROUNDS} rounds of products only 16 deep, cheap while still interpreted
   * but with many micro-kernel calls each, which is what the JIT counts; then {@code steps}
   * forward and backward passes of a 272-200-64-10 network at batch 16, which the compiled kernels
   * run quickly: 272 inputs make two depth blocks ({@link VectorGemm#KC} 256), the 272 and 200
   * rows of the weight gradients take the tall tiles and two row blocks ({@link VectorGemm#MC}
   * 192), the 10 outputs the narrow products. Standalone on this project's 2-core machine the
   * whole takes about 1-1.3 s of one core.
   */
  static void run(int steps) {
    // Its shapes are not training's: no kernel is compiled for them (ShapeKernels).
    GemmWorkspace ws = VectorGemm.threadWorkspace();
    ShapeKernels kernels = ws.shapeKernels;
    ws.shapeKernels = null;
    CpuBackend backend = CpuBackend.create(1);
    try {
      shallowProducts(backend);
      denseSteps(backend, steps);
      transposedProducts(steps);
    } finally {
      backend.close();
      ws.shapeKernels = kernels;
    }
  }

  private static void shallowProducts(CpuBackend backend) {
    int k = 16;
    Tensor a64 = filled(64, k, 1);
    Tensor tall = filled(k, 288, 2);
    Tensor b96 = filled(k, 96, 3);
    Tensor b64 = filled(k, 64, 4);
    Tensor bT64 = filled(64, k, 5);
    Tensor b10 = filled(k, 10, 6);
    Tensor bT10 = filled(10, k, 7);
    Tensor b2 = filled(k, 2, 12);
    Tensor a20 = filled(20, k, 8);
    Tensor b40 = filled(k, 40, 9);
    Tensor aT48 = filled(64, 48, 10);
    Tensor g10 = filled(64, 10, 11);
    Tensor c96 = Tensor.zeros(64, 96);
    Tensor c288 = Tensor.zeros(288, 64);
    Tensor c64 = Tensor.zeros(64, 64);
    Tensor c10 = Tensor.zeros(64, 10);
    Tensor c2 = Tensor.zeros(64, 2);
    Tensor c48x10 = Tensor.zeros(48, 10);
    Tensor c20 = Tensor.zeros(20, 40);
    for (int r = 0; r < SHALLOW_ROUNDS; r++) {
      float beta = r % 2;
      backend.gemm(false, false, 1f, a64, b96, beta, c96); // 8-row tiles, B read in place
      backend.gemm(true, false, 1f, tall, b64, beta, c288); // 12-row tiles, B packed, two row blocks
      backend.gemm(false, true, 1f, a64, bT64, beta, c64); // B transposed, packed
      backend.gemm(false, false, 1f, a64, b10, beta, c10); // narrow: rows of C accumulated
      backend.gemm(false, true, 1f, a64, bT10, beta, c10); // narrow: dot products, five columns a block
      backend.gemm(false, false, 1f, a64, b2, beta, c2); // narrow: dot products, two columns a block
      backend.gemm(true, false, 1f, aT48, g10, beta, c48x10); // narrow: the transposed product
      backend.gemm(false, false, 1f, a20, b40, beta, c20); // partial tiles and a partial panel
    }
  }

  private static void denseSteps(CpuBackend backend, int steps) {
    int batch = 16;
    int[] widths = {272, 200, 64, 10};
    int layers = widths.length - 1;
    Tensor[] acts = new Tensor[widths.length];
    Tensor[] grads = new Tensor[widths.length];
    Tensor[] weights = new Tensor[layers];
    Tensor[] weightGrads = new Tensor[layers];
    Tensor[] biases = new Tensor[layers];
    Tensor[] biasGrads = new Tensor[layers];
    for (int i = 0; i < widths.length; i++) {
      acts[i] = filled(batch, widths[i], i);
      grads[i] = Tensor.zeros(batch, widths[i]);
    }
    for (int l = 0; l < layers; l++) {
      weights[l] = filled(widths[l], widths[l + 1], 10 + l);
      weightGrads[l] = Tensor.zeros(widths[l], widths[l + 1]);
      biases[l] = filled(1, widths[l + 1], 20 + l);
      biasGrads[l] = Tensor.zeros(1, widths[l + 1]);
    }
    int[] labels = new int[batch];
    for (int i = 0; i < batch; i++) labels[i] = i % widths[layers];
    Tensor probs = Tensor.zeros(batch, widths[layers]);
    for (int s = 0; s < steps; s++) {
      for (int l = 0; l < layers; l++) {
        if (l + 1 < layers) {
          backend.gemmBiasRelu(acts[l], weights[l], biases[l], acts[l + 1]);
        } else {
          backend.gemm(false, false, 1f, acts[l], weights[l], 0f, acts[l + 1]);
          backend.addRowVector(acts[l + 1], biases[l]);
        }
      }
      backend.softmaxCrossEntropy(acts[layers], labels, probs, grads[layers]);
      for (int l = layers - 1; l >= 0; l--) {
        backend.gemm(true, false, 1f, acts[l], grads[l + 1], 0f, weightGrads[l]);
        backend.columnSums(grads[l + 1], biasGrads[l]);
        if (l > 0) backend.gemmReluBackward(false, true, 1f, grads[l + 1], weights[l], 0f, grads[l], acts[l]);
      }
      // Weights move a little, as an optimizer's would, so no product repeats an earlier one's inputs exactly.
      for (int l = 0; l < layers; l++) backend.axpy(-1e-3f, weightGrads[l], weights[l]);
    }
  }

  /**
   * Last, {@link TransposedGemm}, which training takes only once this warm-up has ended
   * ({@link #running}): compiling it earlier delayed the tiles' kernels, and so training's first
   * steps, by more than it gains in 3000. Called directly, first 32 deep (cheap while
   * interpreted), then with a step's depth, each with B's last rows short of a tile;
   * {@link TransposedGemm#takes} would send so shallow a product elsewhere.
   */
  private static void transposedProducts(int steps) {
    GemmWorkspace ws = new GemmWorkspace();
    float[] g = filled(64, 80, 30).data();
    float[] w = filled(96, 80, 31).data();
    float[] c = new float[64 * 96];
    for (int r = 0; r < SHALLOW_ROUNDS; r++) TransposedGemm.gemm(ws, 64, 22, 32, 1f, g, 0, 32, w, 0, 32, r % 2, c, 0, 22);
    for (int s = 0; s < steps; s++) TransposedGemm.gemm(ws, 64, 94, 80, 1f, g, 0, 80, w, 0, 80, 0f, c, 0, 94);
  }

  private static Tensor filled(int rows, int cols, int seed) {
    Tensor t = Tensor.zeros(rows, cols);
    float[] d = t.data();
    for (int i = 0; i < d.length; i++) d[i] = ((i * 31 + seed * 7) % 17 - 8) * 0.01f;
    return t;
  }
}
