package io.shardtrain.compute.backend;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.util.Arrays;
import java.util.List;

/**
 * {@link RowGemm}'s kernels compiled for one product shape each. The JIT folds a static final
 * field into a constant, so a class whose strides and depth are static finals compiles to a loop
 * that reads A's eight rows at constant displacements from one index; with the strides as
 * arguments, the same loop spends about 28 scalar instructions per step of k forming eight row
 * offsets and B's, and on Zen 4 the output layer's forward product (64x256x10) ran at 0.83 of
 * {@code torch.mm} for it (docs/BENCHMARKS.md, sessions 54 and 55). The same technique as the
 * small-matrix libraries that generate a kernel per shape at run time, without generating code:
 * {@link RowKernel}'s bytes are defined again as a hidden class with the shape as its class data.
 *
 * <p>A shape's kernel is compiled on a daemon thread, by calls on operands of its shape, before
 * any product takes it: until the JIT's second tier has it, each of its vector operations would
 * allocate (see {@link KernelWarmUp}). Until then, for shapes past the first {@link #MAX_SHAPES},
 * and with {@code -Dshardtrain.compute.shape-kernels=false}, products take RowGemm's own loop,
 * which adds in the same order: the same bits either way.
 */
final class ShapeKernels {
  /** The system property that turns shape kernels off (to measure without them). */
  static final String PROPERTY = "shardtrain.compute.shape-kernels";
  /** Shapes given a kernel at most; a training job has one or two (its output layer, at most an evaluation's). */
  static final int MAX_SHAPES = 32;
  /**
   * Calls of a new kernel before products take it, so that the JIT's second tier has compiled it
   * by then; were it still at the first tier, products would run it slowly for a while (same bits).
   */
  static final int WARM_CALLS = 2_000;

  /** This JVM's kernels; null when {@link #PROPERTY} turns them off. */
  static final ShapeKernels JVM =
      "false".equalsIgnoreCase(System.getProperty(PROPERTY, "true")) ? null : new ShapeKernels(MAX_SHAPES, WARM_CALLS);

  private final int maxShapes;
  private final int warmCalls;
  /** Copied on write; read without a lock on every product. */
  private volatile Entry[] entries = new Entry[0];

  ShapeKernels(int maxShapes, int warmCalls) {
    this.maxShapes = maxShapes;
    this.warmCalls = warmCalls;
  }

  /**
   * The shape's compiled kernel, or null: while it compiles (the first call for a shape starts
   * that), past {@link #maxShapes} shapes, or when it could not be made.
   */
  RowGemm.Rows rows(int lda, int ldb, int k, int whole, int n, int ldc) {
    for (Entry e : entries) {
      if (e.shape.is(lda, ldb, k, whole, n, ldc)) return e.ready;
    }
    return add(new RowGemm.Shape(lda, ldb, k, whole, n, ldc));
  }

  /** The shapes given a kernel, compiled or compiling, in the order first asked for. */
  List<RowGemm.Shape> shapes() {
    return Arrays.stream(entries).map(e -> e.shape).toList();
  }

  private synchronized RowGemm.Rows add(RowGemm.Shape shape) {
    for (Entry e : entries) {
      if (e.shape.equals(shape)) return e.ready;
    }
    if (entries.length >= maxShapes) return null;
    Entry entry = new Entry(shape);
    Entry[] more = Arrays.copyOf(entries, entries.length + 1);
    more[entries.length] = entry;
    entries = more;
    Thread t = new Thread(() -> compile(entry), "shardtrain-shape-kernel-" + shape.lda() + "x" + shape.n());
    t.setDaemon(true);
    t.start();
    return null;
  }

  private void compile(Entry entry) {
    try {
      RowGemm.Rows kernel = define(entry.shape);
      warm(kernel, entry.shape, warmCalls);
      entry.ready = kernel;
    } catch (ReflectiveOperationException | IOException | RuntimeException | LinkageError e) {
      // Products of this shape keep RowGemm's loop, which gives the same bits.
    }
  }

  /** A new instance of {@link RowKernel} defined as a hidden class with {@code shape} as its class data. */
  static RowGemm.Rows define(RowGemm.Shape shape) throws ReflectiveOperationException, IOException {
    byte[] bytes;
    try (InputStream in = RowKernel.class.getResourceAsStream(RowKernel.class.getSimpleName() + ".class")) {
      if (in == null) throw new IOException("no class file for " + RowKernel.class.getName());
      bytes = in.readAllBytes();
    }
    Class<?> kernel = MethodHandles.lookup().defineHiddenClassWithClassData(bytes, shape, true).lookupClass();
    return (RowGemm.Rows) kernel.getDeclaredConstructor().newInstance();
  }

  /** Runs {@code kernel} {@code calls} times on operands of its shape (B's rows all in place but the tail's). */
  private static void warm(RowGemm.Rows kernel, RowGemm.Shape shape, int calls) {
    float[] a = new float[7 * shape.lda() + shape.k()];
    float[] b = new float[Math.max(shape.k() * shape.ldb(), (shape.whole() - 1) * shape.ldb() + RowGemm.VL)];
    float[] c = new float[7 * shape.ldc() + shape.n()];
    float[] scratch = new float[RowGemm.TAIL + Math.max(0, shape.k() - shape.whole()) * RowGemm.VL];
    for (int i = 0; i < a.length; i++) a[i] = (i % 7 - 3) * 0.01f;
    for (int i = 0; i < b.length; i++) b[i] = (i % 5 - 2) * 0.01f;
    for (int i = 0; i < calls; i++) kernel.rows(scratch, a, 0, b, 0, 1f, i % 2, c, 0);
  }

  private static final class Entry {
    final RowGemm.Shape shape;
    volatile RowGemm.Rows ready;

    Entry(RowGemm.Shape shape) {
      this.shape = shape;
    }
  }
}
