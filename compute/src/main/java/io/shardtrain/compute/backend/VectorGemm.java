package io.shardtrain.compute.backend;

import io.shardtrain.compute.RowSlices;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Single-precision GEMM on row-major arrays, GotoBLAS/BLIS style, on the JDK Vector API.
 *
 * <p>{@code C = alpha * op(A) * op(B) + beta * C} is blocked over n ({@link #NC}), k ({@link #KC})
 * and m ({@link #MC}). Each block of op(B) is packed into {@link #NR}-column micro-panels and each
 * block of op(A) (scaled by alpha) into micro-panels of {@link #MR} or {@link #MR_TALL} rows
 * ({@link #rowsPerTile}), so the micro-kernel reads both operands contiguously and never sees a
 * transpose; with at most {@link #IN_PLACE_B_ROWS} rows of op(A), an untransposed B is instead
 * read from its own rows (stride ldb), all but a last partial panel. The micro-kernel keeps an mr x NR tile of C in
 * {@code 2 * mr} vector accumulators and does one broadcast and two FMAs per row and k step.
 * Edge tiles are computed into a zero-padded scratch tile and merged into C element by element.
 * Shapes under {@link #SMALL_VOLUME} multiply-adds skip packing ({@link ScalarGemm}); outputs
 * narrower than a tile take {@link #narrowProduct}, products of small depth too small to split
 * {@link ShallowGemm}, an input gradient of few rows its transpose ({@link TransposedGemm}).
 *
 * <p>The depth is cut into blocks of equal size, at most {@link #KC}, or {@link #KC_PACKED} for
 * more than {@link #IN_PLACE_B_ROWS} rows ({@link #depthBlock}, {@link DepthBlocks}), added to C
 * one after another.
 *
 * <p>With {@code threads > 1}, large products are split into slices, one per thread: the caller
 * computes the first and {@code threads - 1} workers owned by this instance ({@link GemmCrew}) the
 * rest, each worker always the same slice. A dense layer's weights W ({@code in x out}) are cut by
 * rows, the same rows on the same thread in all three products and in the update: the forward
 * product {@code x W} by depth ({@link #splitDepth}: each thread its depth blocks, the others'
 * partial products added to C in block order, so the bits are those of one thread), the weight
 * gradient {@code x^T g} by rows of C, the input gradient {@code g W^T} by columns of C, and the
 * update by {@link #forEachRowSlice}. A weight, or its gradient, written on one core and read on
 * the other cost more than the second core gave (`--compute-threads 2` at 0.87x of one thread
 * with products cut along their longer side). Other products are cut along the longer side of C.
 * A rectified model's whole step, run by all the threads together with the same cuts, is
 * {@link CrewStep}. Pack buffers are per thread, so concurrent calls on one instance are safe.
 */
final class VectorGemm {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  /** Micro-tile columns: two vectors. */
  static final int NR = 2 * VL;
  /** Micro-tile rows; 8 x 2 accumulators fit the 32 AVX-512 registers, 6 x 2 the 16 of AVX2. */
  static final int MR = VL >= 16 ? 8 : 6;
  /**
   * Micro-tile rows where op(A) has at least {@link #TALL_ROWS} rows, or where they pad no more
   * rows than {@link #MR}, with AVX-512: 12 x 2 accumulators, 24 FMAs for each two loads of B
   * against 16. A batch of 64 rows would fill its last tile of 12 to a third (72 rows computed for
   * 64), so it keeps {@link #MR}.
   */
  static final int MR_TALL = VL >= 16 ? 12 : MR;
  static final int TALL_ROWS = 192;
  /** Depth of one block; a KC x NR micro-panel of B stays in L1. */
  static final int KC = 256;
  /**
   * Depth of one block for more than {@link #IN_PLACE_B_ROWS} rows of op(A), where B is always
   * packed. Each depth block reads and writes all of C once more, a wait for memory that BLAS
   * kernels hide by prefetching C's rows ahead, an instruction Java lacks: a depth of up to 1024
   * is one block, C written once, though a micro-panel of B (128 KiB) then streams from L2 rather
   * than L1. With A's unrolled packing ({@link Panels}) it made `bench gemm --n 1024` 5-7% faster
   * than blocks of 512 (docs/BENCHMARKS.md, sessions 29 and 39).
   */
  static final int KC_PACKED = 4 * KC;
  /** Rows of A packed at once at most (a multiple of every tile height); fewer for deep blocks ({@link #rowBlock}). */
  static final int MC = 192;
  /** Values of A packed at once (192 KiB): the block shares L2 with a micro-panel of B. */
  static final int A_BLOCK = MC * KC;
  /** Columns of B packed at once (a multiple of NR). */
  static final int NC = 128 * NR;
  /**
   * Below this many multiply-adds the packing overhead is not worth it. Small, not tiny: the last
   * layer of an MLP (64x256x10 and its two gradient products, `bench gemm --shapes mlp`) ran at
   * about 1 GFLOP/s in the scalar loop and at 6-19 GFLOP/s packed, even padded to a full tile.
   */
  static final long SMALL_VOLUME = 16L * 16 * 16;
  /** Up to this many rows of op(A), an untransposed B is read in place rather than packed. */
  static final int IN_PLACE_B_ROWS = 256;
  /** Row slices of a parallel product start at multiples of this, a multiple of every tile height. */
  private static final int ROW_ALIGN = 24;
  /** Below this many multiply-adds a product is not split across threads. */
  static final long PARALLEL_VOLUME = 128L * 128 * 128;
  /** Below this many values an update of a layer's weights is not split across threads. */
  static final long PARALLEL_ELEMENTS = 64L * 1024;

  private static final ThreadLocal<GemmWorkspace> WORKSPACE = ThreadLocal.withInitial(GemmWorkspace::new);

  private final int threads;
  private final GemmCrew crew;
  /**
   * The last calling thread's workspace: on a thread with many thread-locals (an actor
   * dispatcher's) a ThreadLocal lookup costs a few percent of a training step.
   */
  private Cached cached;

  /** A thread's workspace; immutable, so a thread that reads another's sees it whole and passes it by. */
  private record Cached(Thread thread, GemmWorkspace workspace) {}

  VectorGemm(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("gemm threads must be at least 1, got " + threads);
    }
    this.threads = threads;
    this.crew = threads == 1 ? null : new GemmCrew(threads - 1);
  }

  int threads() {
    return threads;
  }

  /** The threads beside the caller's; null with one thread. */
  GemmCrew crew() {
    return crew;
  }

  /** The calling thread's workspace. */
  static GemmWorkspace threadWorkspace() {
    return WORKSPACE.get();
  }

  /** The crew's {@link GemmCrew#totals()}; null with one thread. */
  long[] crewTotals() {
    return crew == null ? null : crew.totals();
  }

  /**
   * C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C. lda/ldb/ldc are the row strides of
   * the arrays as stored (A is m x k, or k x m when transposed; B is k x n, or n x k when
   * transposed). When beta is 0 the previous contents of C are ignored, NaN included.
   */
  void gemm(boolean transA, boolean transB, int m, int n, int k, float alpha,
      float[] a, int lda, float[] b, int ldb, float beta, float[] c, int ldc) {
    gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, null);
  }

  /**
   * {@link #gemm}, then {@code last} over C (none where null): a parallel product applies it to
   * each slice of C on the thread that computed the slice.
   */
  void gemm(boolean transA, boolean transB, int m, int n, int k, float alpha,
      float[] a, int lda, float[] b, int ldb, float beta, float[] c, int ldc, Rectifier last) {
    if (m == 0 || n == 0) {
      return;
    }
    long volume = (long) m * n * k;
    if (k == 0 || alpha == 0f) {
      ScalarGemm.scaleC(m, n, beta, c, 0, ldc);
    } else if (volume < SMALL_VOLUME) {
      ScalarGemm.small(transA, transB, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
    } else if (narrow(m, n)) {
      // Decided for the whole product, never for a slice, so more threads give the same bits.
      narrowProduct(workspace(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else if (volume < PARALLEL_VOLUME && ShallowGemm.takes(m, n, k)) {
      // One thread; a product large enough to split keeps the tiles, and its threads.
      ShallowGemm.gemm(workspace(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else if (threads == 1 || volume < PARALLEL_VOLUME) {
      product(workspace(), transA, transB, m, n, k, depthBlock(m, k), alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
    } else {
      parallel(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, last);
      return;
    }
    if (last != null) last.apply(c, ldc, 0, m, 0, n);
  }

  /**
   * {@code C = A B + bias}, the bias added to every row first: the sums one thread forms from C's
   * rows set to the bias and a product with beta 1; then {@code last} over C (none where null).
   * Cut by depth, the caller's first blocks start from the bias in a scratch matrix of its own
   * rather than in C ({@link #splitDepth}), so that each thread writes only its own rows of C:
   * rows the other thread wrote in the step before cost the caller's bias copy a trip across cores.
   */
  void gemmBias(int m, int n, int k, float[] a, int lda, float[] b, int ldb, float[] bias, float[] c, int ldc,
      Rectifier last) {
    if (m == 0 || n == 0) {
      return;
    }
    if (cutByDepth(m, n, k)) {
      splitDepth(m, n, k, 1f, a, lda, b, ldb, 1f, c, ldc, bias, last);
      return;
    }
    Merges.biasRows(bias, n, m, c, 0, ldc);
    gemm(false, false, m, n, k, 1f, a, lda, b, ldb, 1f, c, ldc, last);
  }

  /** The tiles alone, on the caller, whatever the shape: what the other paths keep the bits of. */
  static void tiles(boolean transA, boolean transB, int m, int n, int k, float alpha, float[] a, int lda, float[] b,
      int ldb, float beta, float[] c, int ldc) {
    blocked(WORKSPACE.get(), transA, transB, m, n, k, depthBlock(m, k), alpha, a, 0, lda, b, 0, ldb, beta, c, 0,
        ldc);
  }

  /**
   * The depth blocks of a product with {@code m} rows of op(A), decided for the whole product (a
   * slice of its rows keeps them, so more threads give the same bits): at most {@link #KC_PACKED}
   * for more than {@link #IN_PLACE_B_ROWS} rows, else {@link #KC}.
   */
  static int depthBlock(int m, int k) {
    return DepthBlocks.block(k, m > IN_PLACE_B_ROWS ? KC_PACKED : KC);
  }

  /**
   * Runs {@code body} over row ranges covering {@code [0, rows)} of a {@code rows x columns}
   * matrix (a dense layer's weights), each on the thread that computes those rows of the layer's
   * products; on the caller alone where they are not cut by rows or the matrix is small.
   */
  void forEachRowSlice(int rows, int columns, RowSlices.Range body) {
    if (threads == 1 || !byWeightRows(rows) || (long) rows * columns < PARALLEL_ELEMENTS
        || narrow(rows, columns)) {
      body.run(0, rows);
      return;
    }
    Runnable[] slices = new Runnable[threads];
    for (int part = 0; part < threads; part++) {
      int from = DepthBlocks.start(rows, part, threads);
      int to = DepthBlocks.start(rows, part + 1, threads);
      slices[part] = () -> body.run(from, to);
    }
    crew.run(slices);
  }

  /** Whether a layer with {@code in} inputs has its weights cut by rows: a depth block or more per thread. */
  private boolean byWeightRows(int in) {
    return DepthBlocks.count(in) >= threads;
  }

  /**
   * Whether {@link #gemm} cuts an untransposed product across threads by depth
   * ({@link #splitDepth}): large enough to split, a tile or more wide, few enough rows for B to be
   * read in place, and a depth block or more per thread.
   */
  boolean cutByDepth(int m, int n, int k) {
    return threads > 1 && (long) m * n * k >= PARALLEL_VOLUME && !narrow(m, n) && m <= IN_PLACE_B_ROWS
        && byWeightRows(k);
  }

  /** Whether an m x n output is narrower than a micro-tile and tall enough to take {@link #narrowProduct}. */
  static boolean narrow(int m, int n) {
    return n < NR && m >= NR;
  }

  private void parallel(boolean transA, boolean transB, int m, int n, int k, float alpha,
      float[] a, int lda, float[] b, int ldb, float beta, float[] c, int ldc, Rectifier last) {
    if (!transA && !transB && cutByDepth(m, n, k)) {
      splitDepth(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, null, last);
      return;
    }
    // A weight gradient (x^T g) by the weights' rows, an input gradient (g W^T) by their rows too,
    // else along the longer side, which keeps every slice a well-shaped GEMM; each slice packs its
    // own copy of the shared operand, which costs O(k * n) against O(m * n * k / threads) of math.
    boolean weightRows = transA && !transB ? byWeightRows(m) : !transA && transB && byWeightRows(n);
    boolean splitRows = weightRows ? transA : m >= n;
    int dim = splitRows ? m : n;
    int parts = threads;
    int chunk = 0;
    if (!weightRows) {
      int align = splitRows ? ROW_ALIGN : NR;
      chunk = ceilDiv(ceilDiv(dim, Math.min(threads, ceilDiv(dim, align))), align) * align;
      parts = ceilDiv(dim, chunk);
    }
    int depth = depthBlock(m, k);
    Runnable[] slices = new Runnable[parts];
    for (int part = 0; part < parts; part++) {
      int start = weightRows ? DepthBlocks.start(dim, part, parts) : part * chunk;
      int len = weightRows ? DepthBlocks.start(dim, part + 1, parts) - start : Math.min(chunk, dim - start);
      slices[part] = part == 0
          ? () -> slice(workspace(), splitRows, start, len, transA, transB, m, n, k, depth, alpha, a, lda, b, ldb,
              beta, c, ldc, last)
          : () -> slice(WORKSPACE.get(), splitRows, start, len, transA, transB, m, n, k, depth, alpha, a, lda, b,
              ldb, beta, c, ldc, last);
    }
    crew.run(slices);
  }

  /**
   * {@code C = alpha * A B + beta * C} with the depth cut across threads: the caller adds the first
   * depth blocks into C, each worker writes each of its blocks' product to a scratch matrix of its
   * own, and then the threads add those to C, each a range of C's rows, in block order. So every
   * element of C is the sum one thread would have formed, in the same order. With a {@code bias}
   * (beta then 1, C's rows as if set to it) the caller's blocks go to a matrix of its own that
   * starts from the bias, to which each thread adds the workers' for its rows of C.
   * {@code last} follows on each range of rows once its sums are in.
   */
  private void splitDepth(int m, int n, int k, float alpha, float[] a, int lda, float[] b, int ldb, float beta,
      float[] c, int ldc, float[] bias, Rectifier last) {
    int block = DepthBlocks.block(k);
    int firstEnd = DepthBlocks.start(k, 1, threads);
    int firstBlocks = firstEnd / block;
    int size = m * n;
    int partials = DepthBlocks.count(k) - firstBlocks;
    GemmWorkspace callers = workspace();
    float[] scratch = callers.depthScratch(partials * size);
    float[] first = bias == null ? null : callers.biasedBlocks(size);
    Runnable[] slices = new Runnable[threads];
    slices[0] = bias == null
        ? () -> blocked(callers, false, false, m, n, firstEnd, block, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc)
        : () -> {
          Merges.biasRows(bias, n, m, first, 0, n);
          blocked(callers, false, false, m, n, firstEnd, block, alpha, a, 0, lda, b, 0, ldb, 1f, first, 0, n);
        };
    for (int part = 1; part < threads; part++) {
      int from = DepthBlocks.start(k, part, threads);
      int to = DepthBlocks.start(k, part + 1, threads);
      slices[part] = () -> {
        GemmWorkspace ws = WORKSPACE.get();
        for (int pc = from; pc < to; pc += block) {
          int kc = Math.min(block, to - pc);
          blocked(ws, false, false, m, n, kc, block, alpha, a, pc, lda, b, pc * ldb, ldb, 0f, scratch,
              (pc / block - firstBlocks) * size, n);
        }
      };
    }
    crew.run(slices);
    int rowsPerPart = ceilDiv(m, threads);
    Runnable[] sums = new Runnable[ceilDiv(m, rowsPerPart)];
    for (int part = 0; part < sums.length; part++) {
      int from = part * rowsPerPart;
      int to = Math.min(m, from + rowsPerPart);
      sums[part] = () -> {
        addPartials(first, scratch, partials, size, n, from, to, c, ldc);
        if (last != null) last.apply(c, ldc, from, to, 0, n);
      };
    }
    crew.run(sums);
  }

  /**
   * Adds the {@code partials} m x n matrices in {@code scratch}, in order, to rows [from, to) of C;
   * to {@code first}'s rows instead of C's where it is not null, C's previous values unread.
   */
  private static void addPartials(float[] first, float[] scratch, int partials, int size, int n, int from, int to,
      float[] c, int ldc) {
    for (int i = from; i < to; i++) {
      int ci = i * ldc;
      for (int p = 0; p < partials; p++) {
        float[] base = p == 0 && first != null ? first : c;
        int bi = base == c ? ci : i * n;
        add(base, bi, scratch, p * size + i * n, c, ci, n);
      }
    }
  }

  /** {@code out[oi + j] = a[ai + j] + b[bi + j]} for j in {@code [0, len)}: one partial sum's row added. */
  static void add(float[] a, int ai, float[] b, int bi, float[] out, int oi, int len) {
    int j = 0;
    for (int bound = SPECIES.loopBound(len); j < bound; j += VL) {
      FloatVector.fromArray(SPECIES, a, ai + j).add(FloatVector.fromArray(SPECIES, b, bi + j)).intoArray(out, oi + j);
    }
    for (; j < len; j++) out[oi + j] = a[ai + j] + b[bi + j];
  }

  private static void slice(GemmWorkspace ws, boolean splitRows, int start, int len, boolean transA, boolean transB,
      int m, int n, int k, int depth, float alpha, float[] a, int lda, float[] b, int ldb, float beta,
      float[] c, int ldc, Rectifier last) {
    if (splitRows) {
      int aOff = transA ? start : start * lda;
      product(ws, transA, transB, len, n, k, depth, alpha, a, aOff, lda, b, 0, ldb, beta, c, start * ldc, ldc);
      if (last != null) last.apply(c, ldc, start, start + len, 0, n);
    } else {
      int bOff = transB ? start * ldb : start;
      product(ws, transA, transB, m, len, k, depth, alpha, a, 0, lda, b, bOff, ldb, beta, c, start, ldc);
      if (last != null) last.apply(c, ldc, 0, m, start, start + len);
    }
  }

  /**
   * The tiles, with depth blocks of {@code depth}, or for an input gradient of a few rows its
   * transpose ({@link TransposedGemm}), which cuts the depth as {@link DepthBlocks#block(int)}, once
   * the warm-up has ended ({@link KernelWarmUp#running}); the same bits either way.
   */
  static void product(GemmWorkspace ws, boolean transA, boolean transB, int m, int n, int k, int depth,
      float alpha, float[] a, int aOff, int lda, float[] b, int bOff, int ldb, float beta, float[] c, int cOff,
      int ldc) {
    if (depth == DepthBlocks.block(k) && TransposedGemm.takes(transA, transB, m, n, k) && !KernelWarmUp.running()) {
      TransposedGemm.gemm(ws, m, n, k, alpha, a, aOff, lda, b, bOff, ldb, beta, c, cOff, ldc);
    } else {
      blocked(ws, transA, transB, m, n, k, depth, alpha, a, aOff, lda, b, bOff, ldb, beta, c, cOff, ldc);
    }
  }

  private GemmWorkspace workspace() {
    Cached c = cached;
    Thread t = Thread.currentThread();
    if (c != null && c.thread() == t) return c.workspace();
    GemmWorkspace w = WORKSPACE.get();
    cached = new Cached(t, w);
    return w;
  }

  /** The tiles, the depth cut into blocks of {@code depth} (the last may be shorter). */
  static void blocked(GemmWorkspace ws, boolean transA, boolean transB, int m, int n, int k, int depth,
      float alpha, float[] a, int aOff, int lda, float[] b, int bOff, int ldb, float beta,
      float[] c, int cOff, int ldc) {
    float[] ap = ws.ap;
    int mr = rowsPerTile(m);
    // With few rows of A each packed panel of B would serve only m / mr micro-kernels, so packing
    // all of B (as large as the weights) costs more than it saves: the kernel reads B's rows in
    // place and only a last partial panel is packed.
    boolean inPlace = !transB && m <= IN_PLACE_B_ROWS;
    int rowBlock = rowBlock(depth);
    for (int jc = 0; jc < n; jc += NC) {
      int nc = Math.min(NC, n - jc);
      int inPlaceCols = inPlace ? nc / NR * NR : 0;
      float[] bp = ws.panels(depth * roundUp(nc - inPlaceCols, NR));
      for (int pc = 0; pc < k; pc += depth) {
        int kc = Math.min(depth, k - pc);
        // beta applies once; later k blocks accumulate onto what the first one wrote.
        float blockBeta = pc == 0 ? beta : 1f;
        if (inPlaceCols < nc) Panels.packB(transB, b, bOff, ldb, pc, kc, jc + inPlaceCols, nc - inPlaceCols, bp);
        for (int ic = 0; ic < m; ic += rowBlock) {
          int mc = Math.min(rowBlock, m - ic);
          Panels.packA(transA, a, aOff, lda, alpha, ic, mc, pc, kc, mr, ap);
          // One call site for both kinds of panel, so the JIT compiles one shape of the kernel.
          for (int part = inPlaceCols > 0 ? 0 : 1; part < (inPlaceCols < nc ? 2 : 1); part++) {
            boolean rows = part == 0;
            macroKernel(ap, mr, rows ? b : bp, rows ? bOff + pc * ldb + jc : 0, rows ? ldb : NR, rows ? 1 : kc, mc,
                rows ? inPlaceCols : nc - inPlaceCols, kc, c, cOff + ic * ldc + jc + (rows ? 0 : inPlaceCols), ldc,
                blockBeta, ws.tile);
          }
        }
      }
    }
  }

  /**
   * A product with fewer columns than a micro-tile (the output layer's 10 classes, or one logit)
   * would fill a third of each tile or less. Untransposed, with C's rows more than half a vector
   * wide, it is rows of C accumulated in place ({@link RowGemm}); else with A's rows contiguous it
   * is dot products ({@link DotGemm}), which fill every lane but need B's columns contiguous, a
   * transposed copy when B is not stored transposed; else its transpose,
   * {@code C^T = op(B)^T op(A)^T}, pads the n rows to a tile's height instead and is written to C
   * transposed. One thread: these products are small.
   */
  private static void narrowProduct(GemmWorkspace ws, boolean transA, boolean transB, int m, int n, int k,
      float alpha, float[] a, int lda, float[] b, int ldb, float beta, float[] c, int ldc) {
    if (!transA && !transB && n <= RowGemm.VL && (2 * n > RowGemm.VL || k < VL)) {
      RowGemm.gemm(ws.shapeKernels, ws.transposed(RowGemm.SCRATCH), m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0,
          ldc);
      return;
    }
    if (!transA && k >= VL) {
      DotGemm.gemm(ws, transB, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
      return;
    }
    float[] t = ws.transposed(n * m);
    // The tiles themselves: TransposedGemm would use the workspace's transposed buffer, which is t.
    blocked(ws, !transB, !transA, n, m, k, depthBlock(n, k), alpha, b, 0, ldb, a, 0, lda, 0f, t, 0, m);
    Merges.transposed(t, m, m, n, c, 0, ldc, beta);
  }

  /**
   * The micro-kernels over an mc x nc block of C. Micro-panel {@code jr / NR} of B starts at
   * {@code bOff + jr * panelStep} and steps {@code bStride} per k: a packed panel
   * ({@code bStride = NR}, {@code panelStep = kc}) or B's own rows ({@code bStride = ldb},
   * {@code panelStep = 1}).
   */
  private static void macroKernel(float[] ap, int mr, float[] bp, int bOff, int bStride, int panelStep, int mc,
      int nc, int kc, float[] c, int cOff, int ldc, float beta, float[] tile) {
    for (int jr = 0; jr < nc; jr += NR) {
      int nr = Math.min(NR, nc - jr);
      int bo = bOff + jr * panelStep;
      for (int ir = 0; ir < mc; ir += mr) {
        int rows = Math.min(mr, mc - ir);
        int ao = ir * kc;
        int co = cOff + ir * ldc + jr;
        MicroKernels.run(mr, ap, ao, bp, bo, bStride, kc, tile);
        if (rows == mr && nr == NR) {
          Merges.fullTile(tile, mr, c, co, ldc, beta);
        } else {
          Merges.tile(tile, rows, nr, c, co, ldc, beta);
        }
      }
    }
  }

  /**
   * Rows of A packed at once for depth blocks of {@code depth}: {@link #MC}, fewer where the block
   * would pass {@link #A_BLOCK}.
   */
  static int rowBlock(int depth) {
    return Math.max(ROW_ALIGN, Math.min(MC, A_BLOCK / depth / ROW_ALIGN * ROW_ALIGN));
  }

  /**
   * Tile height for a product of {@code m} rows: {@link #MR_TALL} for tall ones, and for short
   * ones where it pads no more rows than {@link #MR} (10 rows: one tile of 12, not two of 8), else
   * {@link #MR}. The height changes no bits: each element of C is one accumulator's sum.
   */
  static int rowsPerTile(int m) {
    return m >= TALL_ROWS || roundUp(m, MR_TALL) <= roundUp(m, MR) ? MR_TALL : MR;
  }

  private static int ceilDiv(int x, int y) {
    return (x + y - 1) / y;
  }

  static int roundUp(int x, int multiple) {
    return ceilDiv(x, multiple) * multiple;
  }
}
