package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

class VectorGemmTest {
  private static final int[] SIZES = {1, 3, 17, 33, 65, 127, 130, 257};
  private static final CpuBackend ONE = CpuBackend.create(1);
  private static final CpuBackend TWO = CpuBackend.create(2);

  @Test
  void randomShapesMatchReferenceForAllTransposesAndThreadCounts() {
    SplittableRandom random = new SplittableRandom(7);
    for (int trial = 0; trial < 14; trial++) {
      int m = SIZES[random.nextInt(SIZES.length)];
      int n = SIZES[random.nextInt(SIZES.length)];
      int k = SIZES[random.nextInt(SIZES.length)];
      for (int t = 0; t < 4; t++) {
        boolean transA = (t & 1) != 0;
        boolean transB = (t & 2) != 0;
        checkAgainstReference(ONE, transA, transB, m, n, k, 1f, 0f, random);
        checkAgainstReference(TWO, transA, transB, m, n, k, 1f, 0f, random);
      }
    }
  }

  @Test
  void blockBoundariesInEveryDimensionMatchReference() {
    SplittableRandom random = new SplittableRandom(11);
    // k crosses KC twice, m crosses MC, n crosses NC, and the last shape only the small path sees.
    int[][] shapes = {{130, 65, 600}, {257, 33, 257}, {3, VectorGemm.NC + 5, 70},
        {VectorGemm.MR + 1, VectorGemm.NR + 1, 1000}, {1, 1, 1}, {5, 7, 9}};
    for (int[] s : shapes) {
      for (int t = 0; t < 4; t++) {
        checkAgainstReference(ONE, (t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], 1f, 0f, random);
        checkAgainstReference(TWO, (t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], 1f, 0f, random);
      }
    }
  }

  @Test
  void fewRowsAndNarrowOutputsTakeTheirOwnPathsAndMatchReference() {
    SplittableRandom random = new SplittableRandom(19);
    // {m, n, k}: few rows with B read in place (and a partial last panel), and outputs narrower
    // than a micro-tile, computed as rows of C (B untransposed, a tail of rows, B's last rows
    // padded), as their transpose or as dot products (blocks of five columns and of two, with a
    // tail of rows, of columns and of k); beta 0 and 1 as training uses them.
    int[][] shapes = {{64, 512, 784}, {64, 10, 256}, {256, 10, 64}, {64, 256, 10},
        {VectorGemm.IN_PLACE_B_ROWS, VectorGemm.NR + 3, 40}, {VectorGemm.IN_PLACE_B_ROWS + 1, 70, 33},
        {VectorGemm.NR, VectorGemm.NR - 1, 9}, {100, 1, 300}, {67, 5, 37}, {45, 2, 100}, {37, 3, 64},
        {50, 4, 20}, {33, 7, 48}, {64, 8, 256}, {35, 13, 17},
        // Sliced across two threads: narrow outputs by rows, tall tiles with a B read in place,
        // and a B read in place past the first block of NC columns.
        {512, 10, 512}, {400, 40, 200}, {16, VectorGemm.NC + 40, 300}};
    for (int[] s : shapes) {
      for (int t = 0; t < 4; t++) {
        for (float beta : new float[] {0f, 1f}) {
          checkAgainstReference(ONE, (t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], 0.5f, beta, random);
          checkAgainstReference(TWO, (t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], 0.5f, beta, random);
        }
      }
    }
  }

  /**
   * Products of depth 16 or less (the output layer's input gradient, 64x10x256:nt) take
   * ShallowGemm: they match the reference for every transpose, alpha and beta, and with beta 0
   * or 1 give the tiles' bits, on one thread and two.
   */
  @Test
  void shallowProductsMatchReferenceAndGiveTheTilesBits() {
    SplittableRandom random = new SplittableRandom(23);
    int vl = ShallowGemm.VL;
    // {m, n, k}: the training shape; rows past a block of four and vectors past a block of four;
    // the fewest rows; a depth of one and of the most it takes. Each above the scalar path's volume.
    int[][] shapes = {{64, 256, 10}, {7, 9 * vl, 12}, {4, 16 * vl, 8}, {128, 4 * vl, 1},
        {9, 6 * vl, ShallowGemm.MAX_DEPTH}};
    for (int[] s : shapes) {
      long volume = (long) s[0] * s[1] * s[2];
      assertTrue(ShallowGemm.takes(s[0], s[1], s[2]) && volume >= VectorGemm.SMALL_VOLUME
          && volume < VectorGemm.PARALLEL_VOLUME, java.util.Arrays.toString(s));
      for (int t = 0; t < 4; t++) {
        boolean transA = (t & 1) != 0;
        boolean transB = (t & 2) != 0;
        for (float beta : new float[] {0f, 1f, 0.25f}) {
          checkAgainstReference(ONE, transA, transB, s[0], s[1], s[2], 1.5f, beta, random);
          checkAgainstReference(TWO, transA, transB, s[0], s[1], s[2], 1.5f, beta, random);
        }
        for (float beta : new float[] {0f, 1f}) {
          Tensor a = transA ? random(s[2], s[0], random) : random(s[0], s[2], random);
          Tensor b = transB ? random(s[1], s[2], random) : random(s[2], s[1], random);
          Tensor c = random(s[0], s[1], random);
          float[] tiles = c.data().clone();
          ONE.gemm(transA, transB, 1.5f, a, b, beta, c);
          VectorGemm.tiles(transA, transB, s[0], s[1], s[2], 1.5f, a.data(), a.cols(), b.data(), b.cols(), beta, tiles,
              s[1]);
          assertArrayEquals(tiles, c.data(), java.util.Arrays.toString(s) + " t=" + t + " beta=" + beta);
        }
      }
    }
    assertFalse(ShallowGemm.takes(64, 256, ShallowGemm.MAX_DEPTH + 1));
    assertFalse(ShallowGemm.takes(64, 4 * vl + 1, 10));
    assertFalse(ShallowGemm.takes(3, 256, 10));
  }

  /**
   * Input gradients of few rows (64x256x512:nt, a batch's gradient times a layer's weights
   * transposed) computed as their transpose (TransposedGemm) give the tiles' bits with beta 0 or
   * 1, and through the backend, which takes that path with AVX-512, match the reference for every
   * beta on one thread and two.
   */
  @Test
  void inputGradientsOfFewRowsGiveTheTilesBitsThroughTheirTranspose() {
    assertFalse(KernelWarmUp.running(), "no warm-up in this JVM: products would take the tiles while one runs");
    SplittableRandom random = new SplittableRandom(29);
    boolean avx512 = FloatVector.SPECIES_PREFERRED.length() >= 16;
    // {m, n, k}: the training shape; rows of A padded to a panel, B's last rows padded to a tile
    // and two depth blocks; three depth blocks, cut across two threads by rows of C; a last depth
    // block shorter than the first (129 and 128); cut by columns.
    int[][] shapes = {{64, 512, 256}, {56, 203, 300}, {128, 40, 600}, {64, 37, 257}, {64, 1024, 512}};
    for (int[] s : shapes) {
      int m = s[0], n = s[1], k = s[2];
      assertEquals(avx512, TransposedGemm.takes(false, true, m, n, k), java.util.Arrays.toString(s));
      for (float beta : new float[] {0f, 1f, 0.25f}) {
        checkAgainstReference(ONE, false, true, m, n, k, 1.5f, beta, random);
        checkAgainstReference(TWO, false, true, m, n, k, 1.5f, beta, random);
      }
      for (float beta : new float[] {0f, 1f}) {
        // A, B and C inside larger arrays, at offsets and with C's rows longer than n.
        int lda = k + 3, ldb = k + 5, ldc = n + 7, aOff = 11, bOff = 13, cOff = 17;
        float[] a = random(1, aOff + m * lda, random).data();
        float[] b = random(1, bOff + n * ldb, random).data();
        float[] c = random(1, cOff + m * ldc, random).data();
        float[] tiles = c.clone();
        TransposedGemm.gemm(new GemmWorkspace(), m, n, k, 1.5f, a, aOff, lda, b, bOff, ldb, beta, c, cOff, ldc);
        float[] aTiles = java.util.Arrays.copyOfRange(a, aOff, a.length);
        float[] bTiles = java.util.Arrays.copyOfRange(b, bOff, b.length);
        float[] cTiles = java.util.Arrays.copyOfRange(tiles, cOff, tiles.length);
        VectorGemm.tiles(false, true, m, n, k, 1.5f, aTiles, lda, bTiles, ldb, beta, cTiles, ldc);
        System.arraycopy(cTiles, 0, tiles, cOff, cTiles.length);
        assertArrayEquals(tiles, c, java.util.Arrays.toString(s) + " beta=" + beta);
      }
    }
    assertFalse(TransposedGemm.takes(false, true, 65, 512, 256), "63 rows of padding");
    assertFalse(TransposedGemm.takes(false, true, 64, 512, 64), "as many rows as depth");
    assertFalse(TransposedGemm.takes(true, true, 64, 512, 256), "A transposed");
    assertFalse(TransposedGemm.takes(false, false, 64, 512, 256), "B untransposed");
  }

  @Test
  void alphaAndBetaScaleProductAndPreviousOutput() {
    SplittableRandom random = new SplittableRandom(13);
    float[][] alphaBeta = {{1f, 1f}, {-0.75f, 0.5f}, {2f, 1f}, {0.5f, -1.5f}, {3f, 0f}};
    int[][] shapes = {{17, 33, 65}, {130, 127, 257}, {3, 1, 2}, {257, 65, 130}};
    for (float[] ab : alphaBeta) {
      for (int[] s : shapes) {
        for (int t = 0; t < 4; t++) {
          boolean transA = (t & 1) != 0;
          boolean transB = (t & 2) != 0;
          checkAgainstReference(ONE, transA, transB, s[0], s[1], s[2], ab[0], ab[1], random);
          checkAgainstReference(TWO, transA, transB, s[0], s[1], s[2], ab[0], ab[1], random);
        }
      }
    }
  }

  @Test
  void betaZeroOverwritesNanInOutput() {
    SplittableRandom random = new SplittableRandom(17);
    int[][] shapes = {{3, 5, 7}, {65, 33, 17}, {257, 130, 127}, {130, 257, 1}};
    for (int[] s : shapes) {
      for (CpuBackend backend : new CpuBackend[] {ONE, TWO}) {
        Tensor a = random(s[0], s[2], random);
        Tensor b = random(s[2], s[1], random);
        Tensor c = Tensor.zeros(s[0], s[1]).fill(Float.NaN);
        backend.gemm(false, false, 1f, a, b, 0f, c);
        double[] expected = reference(false, false, a, b, s[0], s[1], s[2]);
        for (int i = 0; i < expected.length; i++) {
          assertTrue(Math.abs(c.data()[i] - expected[i]) <= 1e-4,
              "shape " + s[0] + "x" + s[1] + "x" + s[2] + " element " + i + " = " + c.data()[i]);
        }
      }
    }
  }

  @Test
  void emptyInnerDimensionScalesOutputByBeta() {
    Tensor a = Tensor.zeros(4, 0);
    Tensor b = Tensor.zeros(0, 3);
    Tensor c = Tensor.zeros(4, 3).fill(2f);
    ONE.gemm(false, false, 1f, a, b, 0.5f, c);
    assertArrayEquals(filled(12, 1f), c.data());
    c.fill(Float.NaN);
    TWO.gemm(false, false, 1f, a, b, 0f, c);
    assertArrayEquals(filled(12, 0f), c.data());
  }

  @Test
  void smallProductMatchesHandComputedValues() {
    Tensor a = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
    Tensor b = Tensor.of(new float[] {7, 8, 9, 10, 11, 12}, 3, 2);
    Tensor c = Tensor.of(new float[] {1, 1, 1, 1}, 2, 2);
    ONE.gemm(false, false, 2f, a, b, 10f, c);
    assertArrayEquals(new float[] {126, 138, 288, 318}, c.data());
    // A^T (3x2)^T * B^T (2x3)^T: with a = 3x2 and b = 2x3 stored, op(A) = 2x3, op(B) = 3x2.
    Tensor at = Tensor.of(new float[] {1, 4, 2, 5, 3, 6}, 3, 2);
    Tensor bt = Tensor.of(new float[] {7, 9, 11, 8, 10, 12}, 2, 3);
    Tensor c2 = Tensor.zeros(2, 2);
    TWO.gemm(true, true, 1f, at, bt, 0f, c2);
    assertArrayEquals(new float[] {58, 64, 139, 154}, c2.data());
  }

  @Test
  void twoThreadsGiveBitIdenticalResultsToOne() {
    SplittableRandom random = new SplittableRandom(19);
    // The fourth includes a column slice narrower than a tile, which takes the tiles as the whole
    // does. Then a dense layer's three products, 784 inputs to 512 (and 600 to 100: three depth
    // blocks of 200, one on the caller and two added from a worker's scratch, in order), whose
    // untransposed product is cut by depth. Last, B packed and the depth in blocks of up to
    // KC_PACKED, kept by slices of few enough rows to take KC's blocks, or TransposedGemm, alone.
    int[][] shapes = {{257, 130, 300}, {33, 1100, 257}, {512, 10, 512},
        {2 * VectorGemm.NR, 2 * VectorGemm.NR + 1, 512}, {64, 512, 784}, {784, 512, 64}, {64, 784, 512},
        {64, 100, 600}, {600, 100, 64}, {64, 600, 100}, {300, 200, 2000}};
    for (int[] s : shapes) {
      for (int t = 0; t < 4; t++) {
        boolean transA = (t & 1) != 0;
        boolean transB = (t & 2) != 0;
        Tensor a = transA ? random(s[2], s[0], random) : random(s[0], s[2], random);
        Tensor b = transB ? random(s[1], s[2], random) : random(s[2], s[1], random);
        Tensor c1 = random(s[0], s[1], random);
        Tensor c2 = c1.copy();
        ONE.gemm(transA, transB, 1.5f, a, b, 0.25f, c1);
        TWO.gemm(transA, transB, 1.5f, a, b, 0.25f, c2);
        assertArrayEquals(c1.data(), c2.data());
      }
    }
  }

  @Test
  void theRectifierEndingAProductGivesTheBitsOfAPassAfterItOnOneAndTwoThreads() {
    SplittableRandom random = new SplittableRandom(23);
    // {m, n, k}: small (scalar), narrow, shallow, one thread's tiles; then a dense layer's forward
    // cut by depth (its sums rectified row range by row range), its input gradient cut by columns
    // (TransposedGemm in each slice), a product cut by rows, and one by columns of B.
    int[][] shapes = {{3, 5, 7}, {64, 10, 256}, {64, 96, 24}, {40, 48, 64}, {64, 512, 784}, {64, 256, 512},
        {64, 512, 256}, {257, 130, 300}, {33, 1100, 257}};
    for (int[] s : shapes) {
      int m = s[0], n = s[1], k = s[2];
      Tensor bias = random(1, n, random);
      for (int t = 0; t < 4; t++) {
        boolean transA = (t & 1) != 0;
        boolean transB = (t & 2) != 0;
        Tensor a = transA ? random(k, m, random) : random(m, k, random);
        Tensor b = transB ? random(n, k, random) : random(k, n, random);
        Tensor c0 = random(m, n, random);
        // The rectifier's output: a third of it zero, as a dead unit's, the rest of either sign.
        Tensor gate = random(m, n, random);
        for (int i = 0; i < gate.size(); i += 3) gate.data()[i] = 0f;
        String what = m + "x" + n + "x" + k + " transA=" + transA + " transB=" + transB;
        Tensor expectedGated = c0.copy();
        ONE.gemm(transA, transB, 1.5f, a, b, 0f, expectedGated);
        ONE.reluBackward(gate, expectedGated, expectedGated);
        for (CpuBackend backend : new CpuBackend[] {ONE, TWO}) {
          Tensor gated = c0.copy();
          backend.gemmReluBackward(transA, transB, 1.5f, a, b, 0f, gated, gate);
          assertArrayEquals(expectedGated.data(), gated.data(),
              "gemmReluBackward " + what + " threads=" + backend.threads());
        }
        if (transA || transB) continue;
        // A dense layer's forward: the output's rows set to the bias, the product added (beta 1), rectified.
        Tensor expected = Tensor.zeros(m, n);
        for (int i = 0; i < m; i++) System.arraycopy(bias.data(), 0, expected.data(), i * n, n);
        ONE.gemm(false, false, 1f, a, b, 1f, expected);
        ONE.relu(expected, expected);
        long positive = 0;
        for (float v : expected.data()) positive += v > 0f ? 1 : 0;
        assertTrue(positive > 0 && positive < expected.size(), what + ": " + positive + " positive");
        for (CpuBackend backend : new CpuBackend[] {ONE, TWO}) {
          // Twice: the second call finds the first's values in C and in the scratch matrices.
          for (int call = 0; call < 2; call++) {
            Tensor rectified = c0.copy();
            backend.gemmBiasRelu(a, b, bias, rectified);
            assertArrayEquals(expected.data(), rectified.data(), "gemmBiasRelu " + what + " threads=" + backend.threads());
          }
        }
      }
    }
  }

  @Test
  void productsWithBPackedCutTheirDepthIntoFewerLongerBlocks() {
    // B is read in place up to IN_PLACE_B_ROWS rows of op(A), packed beyond; 1100 is two blocks
    // of 550 against five of 220.
    assertEquals(220, VectorGemm.depthBlock(VectorGemm.IN_PLACE_B_ROWS, 1100));
    assertEquals(550, VectorGemm.depthBlock(VectorGemm.IN_PLACE_B_ROWS + 1, 1100));
    assertEquals(VectorGemm.KC_PACKED, VectorGemm.depthBlock(1024, 1024));
    // The deeper the block, the fewer rows of A are packed at once: 192 KiB of panels.
    assertEquals(VectorGemm.MC, VectorGemm.rowBlock(VectorGemm.KC));
    assertEquals(96, VectorGemm.rowBlock(512));
    assertEquals(72, VectorGemm.rowBlock(550));
    assertEquals(48, VectorGemm.rowBlock(VectorGemm.KC_PACKED));
    SplittableRandom random = new SplittableRandom(31);
    for (int t = 0; t < 4; t++) {
      for (float beta : new float[] {0f, 0.25f}) {
        checkAgainstReference(ONE, (t & 1) != 0, (t & 2) != 0, 300, 70, 1100, 1.5f, beta, random);
        checkAgainstReference(TWO, (t & 1) != 0, (t & 2) != 0, 300, 70, 1100, 1.5f, beta, random);
      }
    }
  }

  @Test
  void concurrentCallsOnOneBackendDoNotInterfere() throws Exception {
    SplittableRandom random = new SplittableRandom(23);
    Tensor[] as = {random(200, 150, random), random(130, 257, random)};
    Tensor[] bs = {random(150, 180, random), random(257, 90, random)};
    float[][] expected = new float[2][];
    for (int i = 0; i < 2; i++) {
      Tensor c = Tensor.zeros(as[i].rows(), bs[i].cols());
      ONE.gemm(false, false, 1f, as[i], bs[i], 0f, c);
      expected[i] = c.data();
    }
    ExecutorService callers = Executors.newFixedThreadPool(2);
    try {
      Future<?>[] futures = new Future<?>[2];
      for (int i = 0; i < 2; i++) {
        int idx = i;
        futures[i] = callers.submit(() -> {
          for (int rep = 0; rep < 5; rep++) {
            Tensor c = Tensor.zeros(as[idx].rows(), bs[idx].cols());
            TWO.gemm(false, false, 1f, as[idx], bs[idx], 0f, c);
            assertArrayEquals(expected[idx], c.data());
          }
          return null;
        });
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void shapeMismatchNamesBothShapes() {
    Tensor a = Tensor.zeros(3, 4);
    Tensor b = Tensor.zeros(5, 2);
    Tensor c = Tensor.zeros(3, 2);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ONE.gemm(false, false, 1f, a, b, 0f, c));
    assertTrue(e.getMessage().contains("[3, 4]"), e.getMessage());
    assertTrue(e.getMessage().contains("[5, 2]"), e.getMessage());
    IllegalArgumentException wrongC = assertThrows(IllegalArgumentException.class,
        () -> ONE.gemm(true, false, 1f, a, Tensor.zeros(3, 2), 0f, Tensor.zeros(3, 2)));
    assertTrue(wrongC.getMessage().contains("[3, 4]^T"), wrongC.getMessage());
    assertTrue(wrongC.getMessage().contains("C=[3, 2]"), wrongC.getMessage());
  }

  @Test
  void threadCountIsReported() {
    assertEquals(1, ONE.threads());
    assertEquals(2, TWO.threads());
  }

  private static void checkAgainstReference(CpuBackend backend, boolean transA, boolean transB,
      int m, int n, int k, float alpha, float beta, SplittableRandom random) {
    Tensor a = transA ? random(k, m, random) : random(m, k, random);
    Tensor b = transB ? random(n, k, random) : random(k, n, random);
    Tensor c = beta == 0f ? Tensor.zeros(m, n).fill(Float.NaN) : random(m, n, random);
    float[] before = c.data().clone();
    backend.gemm(transA, transB, alpha, a, b, beta, c);
    double[] product = reference(transA, transB, a, b, m, n, k);
    double[] magnitude = referenceMagnitude(transA, transB, a, b, m, n, k);
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        int idx = i * n + j;
        double prev = beta == 0f ? 0 : (double) beta * before[idx];
        double expected = alpha * product[idx] + prev;
        double bound = 1e-5 * (Math.abs(alpha) * magnitude[idx] + Math.abs(prev)) + 1e-30;
        double got = c.data()[idx];
        if (!(Math.abs(got - expected) <= bound)) {
          throw new AssertionError(String.format(
              "threads=%d transA=%b transB=%b m=%d n=%d k=%d alpha=%s beta=%s: C[%d,%d]=%s, "
                  + "expected %s (bound %s)",
              backend.threads(), transA, transB, m, n, k, alpha, beta, i, j, got, expected,
              bound));
        }
      }
    }
  }

  private static double opA(boolean transA, Tensor a, int i, int p) {
    return transA ? a.get(p, i) : a.get(i, p);
  }

  private static double opB(boolean transB, Tensor b, int p, int j) {
    return transB ? b.get(j, p) : b.get(p, j);
  }

  private static double[] reference(boolean transA, boolean transB, Tensor a, Tensor b,
      int m, int n, int k) {
    double[] out = new double[m * n];
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        double s = 0;
        for (int p = 0; p < k; p++) {
          s += opA(transA, a, i, p) * opB(transB, b, p, j);
        }
        out[i * n + j] = s;
      }
    }
    return out;
  }

  private static double[] referenceMagnitude(boolean transA, boolean transB, Tensor a, Tensor b,
      int m, int n, int k) {
    double[] out = new double[m * n];
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        double s = 0;
        for (int p = 0; p < k; p++) {
          s += Math.abs(opA(transA, a, i, p) * opB(transB, b, p, j));
        }
        out[i * n + j] = s;
      }
    }
    return out;
  }

  private static Tensor random(int rows, int cols, SplittableRandom random) {
    float[] data = new float[rows * cols];
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) (random.nextDouble() * 2 - 1);
    }
    return Tensor.wrap(data, rows, cols);
  }

  private static float[] filled(int size, float value) {
    float[] out = new float[size];
    java.util.Arrays.fill(out, value);
    return out;
  }
}
