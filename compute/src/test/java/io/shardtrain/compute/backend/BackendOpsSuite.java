package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;

/**
 * The kernel test suite every {@link Backend} runs: each operation against an oracle backend on
 * random shapes, odd ones included, plus the bad-input contract (shape mismatches name both
 * shapes, bad labels and ids are rejected). Subclasses say which backend is tested and against
 * what: {@link CpuBackend} against {@link ReferenceBackend}; the CUDA backend (in
 * {@code compute-cuda}, through this module's test jar) against {@link CpuBackend}.
 *
 * <p>Error measure: {@code max|actual - expected| / max|expected|} over the whole output (a
 * normwise relative error), below {@link #tolerance()}. Per-element relative error is
 * meaningless for sums that cancel to near zero, which random data produces.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class BackendOpsSuite {
  private static final int[][] SHAPES = {{1, 1}, {3, 17}, {33, 65}, {130, 7}, {16, 16}, {5, 1}, {257, 129}};

  private Backend backend;
  private Backend oracle;
  private double tol;

  /** The backend under test; may abort the class with a JUnit assumption (no GPU here). */
  protected abstract Backend createBackend();

  /** The backend whose answers count as right. */
  protected abstract Backend createOracle();

  /** The largest normwise relative error accepted. */
  protected abstract double tolerance();

  @BeforeAll
  void openBackends() {
    backend = createBackend();
    oracle = createOracle();
    tol = tolerance();
  }

  @AfterAll
  void closeBackends() {
    if (backend != null) backend.close();
    if (oracle != null) oracle.close();
  }

  // ---- gemm (a quick check of all four transposes; VectorGemm has its own deep tests) ----

  @Test
  void gemmWithAllFourTransposesMatchesReference() {
    Backend be = backend;
    Random rnd = new Random(1);
    int[][] mkn = {{1, 1, 1}, {3, 17, 5}, {33, 65, 20}, {130, 7, 9}, {70, 90, 110}, {129, 257, 67}};
    for (int[] s : mkn) {
      int m = s[0], k = s[1], n = s[2];
      for (int t = 0; t < 4; t++) {
        boolean ta = (t & 1) != 0, tb = (t & 2) != 0;
        Tensor a = random(rnd, ta ? k : m, ta ? m : k);
        Tensor b = random(rnd, tb ? n : k, tb ? k : n);
        Tensor c0 = random(rnd, m, n);
        for (float beta : new float[] {0f, 0.3f}) {
          Tensor expected = c0.copy();
          Tensor actual = c0.copy();
          oracle.gemm(ta, tb, 0.7f, a, b, beta, expected);
          be.gemm(ta, tb, 0.7f, a, b, beta, actual);
          assertClose("gemm " + m + "x" + k + "x" + n + " transA=" + ta + " transB=" + tb
              + " beta=" + beta, expected, actual);
        }
      }
    }
  }

  @Test
  void gemmWithBetaZeroDoesNotReadStaleNanInC() {
    Backend be = backend;
    // Layers reuse gradient buffers with beta = 0; a NaN left from an earlier bad step must not
    // survive into the next one (BLAS convention).
    Random rnd = new Random(2);
    Tensor a = random(rnd, 9, 13);
    Tensor b = random(rnd, 13, 18);
    Tensor c = Tensor.zeros(9, 18).fill(Float.NaN);
    Tensor expected = Tensor.zeros(9, 18);
    be.gemm(false, false, 1f, a, b, 0f, c);
    oracle.gemm(false, false, 1f, a, b, 0f, expected);
    assertClose("gemm beta=0 over NaN", expected, c);
  }

  @Test
  void gemmEndedByTheRectifierMatchesGemmThenTheRectifier() {
    Backend be = backend;
    Random rnd = new Random(7);
    int[][] mkn = {{3, 17, 5}, {33, 65, 20}, {64, 100, 96}, {64, 96, 100}};
    for (int[] s : mkn) {
      int m = s[0], k = s[1], n = s[2];
      for (int t = 0; t < 4; t++) {
        boolean ta = (t & 1) != 0, tb = (t & 2) != 0;
        Tensor a = random(rnd, ta ? k : m, ta ? m : k);
        Tensor b = random(rnd, tb ? n : k, tb ? k : n);
        Tensor c0 = random(rnd, m, n);
        Tensor gate = random(rnd, m, n);
        String what = m + "x" + k + "x" + n + " transA=" + ta + " transB=" + tb;
        Tensor expected = c0.copy(), actual = c0.copy();
        if (!ta && !tb) {
          Tensor bias = random(rnd, n);
          for (int i = 0; i < m; i++) System.arraycopy(bias.data(), 0, expected.data(), i * n, n);
          oracle.gemm(false, false, 1f, a, b, 1f, expected);
          oracle.relu(expected, expected);
          be.gemmBiasRelu(a, b, bias, actual);
          assertClose("gemmBiasRelu " + what, expected, actual);
          expected = c0.copy();
          actual = c0.copy();
        }
        oracle.gemm(ta, tb, 0.7f, a, b, 0f, expected);
        oracle.reluBackward(gate, expected, expected);
        be.gemmReluBackward(ta, tb, 0.7f, a, b, 0f, actual, gate);
        assertClose("gemmReluBackward " + what, expected, actual);
      }
    }
  }

  @Test
  void gemmEndedByTheRectifierRefusesABiasOrGateOfAnotherShapeBeforeWritingC() {
    Backend be = backend;
    Random rnd = new Random(8);
    Tensor a = random(rnd, 4, 6), b = random(rnd, 6, 5), c = random(rnd, 4, 5);
    Tensor before = c.copy();
    assertNamesShapes(() -> be.gemmReluBackward(false, false, 1f, a, b, 0f, c, Tensor.zeros(5, 4)), "[5, 4]",
        "[4, 5]");
    assertArrayEquals(before.data(), c.data());
    assertNamesShapes(() -> be.gemmBiasRelu(a, b, Tensor.zeros(4), c), "[4, 5]", "[4]");
    assertArrayEquals(before.data(), c.data());
    assertNamesShapes(() -> be.gemmBiasRelu(a, Tensor.zeros(5, 5), Tensor.zeros(5), c), "[4, 6]", "[5, 5]");
    assertArrayEquals(before.data(), c.data());
  }

  // ---- element-wise and reductions ----

  @Test
  void axpyScaleAddMulMatchReference() {
    Backend be = backend;
    Random rnd = new Random(3);
    for (int[] s : SHAPES) {
      Tensor x = random(rnd, s), y = random(rnd, s);
      Tensor ey = y.copy(), ay = y.copy();
      oracle.axpy(-1.3f, x, ey);
      be.axpy(-1.3f, x, ay);
      assertClose("axpy " + x.shapeString(), ey, ay);

      Tensor ex = x.copy(), ax = x.copy();
      oracle.scale(0.37f, ex);
      be.scale(0.37f, ax);
      assertClose("scale", ex, ax);

      Tensor eo = Tensor.zeros(s), ao = Tensor.zeros(s);
      oracle.add(x, y, eo);
      be.add(x, y, ao);
      assertClose("add", eo, ao);
      oracle.mul(x, y, eo);
      be.mul(x, y, ao);
      assertClose("mul", eo, ao);
    }
  }

  @Test
  void elementWiseOpsMayWriteInPlace() {
    Backend be = backend;
    Random rnd = new Random(4);
    Tensor x = random(rnd, 33, 65), y = random(rnd, 33, 65);
    Tensor expected = Tensor.zeros(33, 65);
    oracle.add(x, y, expected);
    Tensor inPlace = x.copy();
    be.add(inPlace, y, inPlace);
    assertClose("add in place", expected, inPlace);

    oracle.mul(x, y, expected);
    inPlace = x.copy();
    be.mul(inPlace, y, inPlace);
    assertClose("mul in place", expected, inPlace);

    oracle.tanh(x, expected);
    inPlace = x.copy();
    be.tanh(inPlace, inPlace);
    assertClose("tanh in place", expected, inPlace);
  }

  @Test
  void rowAndColumnReductionsMatchReference() {
    Backend be = backend;
    Random rnd = new Random(5);
    for (int[] s : SHAPES) {
      Tensor m = random(rnd, s);
      int rows = s[0], cols = s[1];

      Tensor v = random(rnd, cols);
      Tensor em = m.copy(), am = m.copy();
      oracle.addRowVector(em, v);
      be.addRowVector(am, v);
      assertClose("addRowVector " + m.shapeString(), em, am);

      Tensor ec = Tensor.zeros(cols), ac = random(rnd, cols);
      oracle.columnSums(m, ec);
      be.columnSums(m, ac);
      assertClose("columnSums " + m.shapeString(), ec, ac);

      Tensor er = Tensor.zeros(rows), ar = random(rnd, rows);
      oracle.rowSums(m, er);
      be.rowSums(m, ar);
      assertClose("rowSums " + m.shapeString(), er, ar);

      oracle.rowMax(m, er);
      be.rowMax(m, ar);
      assertClose("rowMax " + m.shapeString(), er, ar);

      int[] ei = new int[rows], ai = new int[rows];
      oracle.rowArgmax(m, ei);
      be.rowArgmax(m, ai);
      assertArrayEquals(ei, ai, "rowArgmax " + m.shapeString());
    }
  }

  @Test
  void rowArgmaxTakesTheFirstIndexOnTies() {
    Backend be = backend;
    Tensor m = Tensor.of(new float[] {1, 5, 5, 2, -3, -3, -3, -3, 0, 7, 1, 7}, 3, 4);
    int[] out = new int[3];
    be.rowArgmax(m, out);
    assertArrayEquals(new int[] {1, 0, 1}, out);
  }

  @Test
  void activationsAndTheirBackwardMatchReference() {
    Backend be = backend;
    Random rnd = new Random(6);
    for (int[] s : SHAPES) {
      Tensor x = random(rnd, s), g = random(rnd, s);
      Tensor e = Tensor.zeros(s), a = Tensor.zeros(s);
      Tensor eg = Tensor.zeros(s), ag = Tensor.zeros(s);

      oracle.relu(x, e);
      be.relu(x, a);
      assertClose("relu " + x.shapeString(), e, a);
      oracle.reluBackward(x, g, eg);
      be.reluBackward(x, g, ag);
      assertClose("reluBackward", eg, ag);

      oracle.tanh(x, e);
      be.tanh(x, a);
      assertClose("tanh", e, a);
      oracle.tanhBackward(e, g, eg);
      be.tanhBackward(e, g, ag);
      assertClose("tanhBackward", eg, ag);

      oracle.sigmoid(x, e);
      be.sigmoid(x, a);
      assertClose("sigmoid", e, a);
      oracle.sigmoidBackward(e, g, eg);
      be.sigmoidBackward(e, g, ag);
      assertClose("sigmoidBackward", eg, ag);
    }
  }

  @Test
  void sigmoidAndTanhStayFiniteAtExtremeInputs() {
    Backend be = backend;
    Tensor x = Tensor.of(new float[] {-1000f, -90f, 0f, 90f, 1000f}, 5);
    Tensor s = Tensor.zeros(5), t = Tensor.zeros(5);
    be.sigmoid(x, s);
    be.tanh(x, t);
    assertArrayEquals(new float[] {0f, 0f, 0.5f, 1f, 1f}, s.data(), 1e-30f);
    assertArrayEquals(new float[] {-1f, -1f, 0f, 1f, 1f}, t.data(), 0f);
  }

  // ---- losses ----

  @Test
  void softmaxCrossEntropyLossProbsAndGradMatchReference() {
    Backend be = backend;
    Random rnd = new Random(7);
    for (int[] s : SHAPES) {
      int rows = s[0], cols = s[1];
      Tensor logits = random(rnd, s);
      logits.data()[0] += 40f; // one large logit: the max-shift must keep exp from overflowing
      int[] labels = randomIds(rnd, rows, cols);
      Tensor ep = Tensor.zeros(s), eg = Tensor.zeros(s), ap = Tensor.zeros(s), ag = Tensor.zeros(s);
      float el = oracle.softmaxCrossEntropy(logits, labels, ep, eg);
      float al = be.softmaxCrossEntropy(logits, labels, ap, ag);
      assertRelClose("softmaxCrossEntropy loss " + logits.shapeString(), el, al);
      assertClose("softmaxCrossEntropy probs", ep, ap);
      assertClose("softmaxCrossEntropy grad", eg, ag);
      assertRelClose("softmaxCrossEntropy loss without outputs", el,
          be.softmaxCrossEntropy(logits, labels, null, null));
    }
  }

  @Test
  void softmaxCrossEntropyOfKnownLogitsIsHandComputed() {
    Backend be = backend;
    // Uniform logits over 4 classes: loss ln 4, probs 1/4, grad (1/4 - onehot) / 2.
    Tensor logits = Tensor.zeros(2, 4).fill(3f);
    Tensor p = Tensor.zeros(2, 4), g = Tensor.zeros(2, 4);
    float loss = be.softmaxCrossEntropy(logits, new int[] {1, 3}, p, g);
    assertEquals(Math.log(4), loss, 1e-6);
    assertEquals(0.25f, p.get(1, 2), 1e-7f);
    assertEquals(-0.375f, g.get(0, 1), 1e-7f);
    assertEquals(0.125f, g.get(0, 0), 1e-7f);
    assertEquals(-0.375f, g.get(1, 3), 1e-7f);
  }

  @Test
  void logisticLossMatchesReference() {
    Backend be = backend;
    Random rnd = new Random(8);
    for (int n : new int[] {1, 17, 65, 130}) {
      Tensor logits = random(rnd, n, 1);
      logits.data()[0] = n % 2 == 0 ? 60f : -60f; // saturated sigmoid: the loss must stay finite
      float[] labels = new float[n];
      for (int i = 0; i < n; i++) labels[i] = i % 3 == 0 ? rnd.nextFloat() : rnd.nextInt(2);
      Tensor ep = Tensor.zeros(n, 1), eg = Tensor.zeros(n, 1), ap = Tensor.zeros(n, 1), ag = Tensor.zeros(n, 1);
      float el = oracle.logisticLoss(logits, labels, ep, eg);
      float al = be.logisticLoss(logits, labels, ap, ag);
      assertRelClose("logisticLoss n=" + n, el, al);
      assertClose("logisticLoss probs", ep, ap);
      assertClose("logisticLoss grad", eg, ag);
    }
  }

  @Test
  void logisticLossOfZeroLogitIsLnTwo() {
    Backend be = backend;
    Tensor g = Tensor.zeros(2);
    float loss = be.logisticLoss(Tensor.zeros(2), new float[] {1f, 0f}, null, g);
    assertEquals(Math.log(2), loss, 1e-6);
    assertArrayEquals(new float[] {-0.25f, 0.25f}, g.data(), 1e-7f);
  }

  // ---- embedding lookup ----

  @Test
  void gatherAndScatterAddWithRepeatedIdsMatchReference() {
    Backend be = backend;
    Random rnd = new Random(9);
    for (int[] s : SHAPES) {
      int rows = s[0], dim = s[1];
      Tensor table = random(rnd, s);
      int[] ids = randomIds(rnd, 2 * rows + 3, rows); // more ids than rows: repeats for sure
      Tensor eo = Tensor.zeros(ids.length, dim), ao = Tensor.zeros(ids.length, dim);
      oracle.gather(table, ids, eo);
      be.gather(table, ids, ao);
      assertClose("gather " + table.shapeString(), eo, ao);

      Tensor grad = random(rnd, ids.length, dim);
      Tensor start = random(rnd, s); // scatterAdd accumulates into what is there
      Tensor et = start.copy(), at = start.copy();
      oracle.scatterAdd(grad, ids, et);
      be.scatterAdd(grad, ids, at);
      assertClose("scatterAdd " + table.shapeString(), et, at);
    }
  }

  @Test
  void scatterAddSumsEveryRepeatOfAnId() {
    Backend be = backend;
    Tensor tableGrad = Tensor.zeros(3, 2);
    Tensor grad = Tensor.of(new float[] {1, 2, 10, 20, 100, 200, 5, 5}, 4, 2);
    be.scatterAdd(grad, new int[] {2, 0, 2, 2}, tableGrad);
    assertArrayEquals(new float[] {10, 20, 0, 0, 106, 207}, tableGrad.data(), 0f);
  }

  // ---- bad input ----

  @Test
  void mismatchedShapesNameBothShapes() {
    Backend be = backend;
    Tensor a34 = Tensor.zeros(3, 4), b43 = Tensor.zeros(4, 3);
    assertNamesShapes(() -> be.add(a34, b43, a34.copy()), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.mul(a34, b43, a34.copy()), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.add(a34, a34, b43), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.axpy(1f, a34, b43), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.relu(a34, b43), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.reluBackward(a34, b43, a34), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.tanh(a34, b43), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.tanhBackward(a34, a34, b43), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.sigmoid(a34, b43), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.sigmoidBackward(a34, b43, a34), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.gemm(false, false, 1f, a34, a34, 0f, Tensor.zeros(3, 4)), "[3, 4]");
    assertNamesShapes(() -> be.gemm(false, false, 1f, a34, b43, 0f, Tensor.zeros(4, 4)), "[3, 4]",
        "[4, 3]", "[4, 4]");
    assertNamesShapes(() -> be.addRowVector(a34, Tensor.zeros(3)), "[3, 4]", "[3]");
    assertNamesShapes(() -> be.columnSums(a34, Tensor.zeros(3)), "[3, 4]", "[3]");
    assertNamesShapes(() -> be.rowSums(a34, Tensor.zeros(4)), "[3, 4]", "[4]");
    assertNamesShapes(() -> be.rowMax(a34, Tensor.zeros(4)), "[3, 4]", "[4]");
    assertNamesShapes(() -> be.softmaxCrossEntropy(a34, new int[3], b43, null), "[3, 4]", "[4, 3]");
    assertNamesShapes(() -> be.softmaxCrossEntropy(a34, new int[4], null, null), "[3, 4]");
    assertNamesShapes(() -> be.logisticLoss(Tensor.zeros(3, 1), new float[3], Tensor.zeros(1, 3), null),
        "[3, 1]", "[1, 3]");
    assertNamesShapes(() -> be.gather(a34, new int[] {0, 1}, Tensor.zeros(2, 3)), "[3, 4]", "[2, 3]");
    assertNamesShapes(() -> be.scatterAdd(Tensor.zeros(2, 3), new int[] {0, 1}, a34), "[3, 4]", "[2, 3]");
  }

  @Test
  void outOfRangeLabelsAreRejected() {
    Backend be = backend;
    Tensor logits = Tensor.zeros(2, 3);
    for (int bad : new int[] {-1, 3}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> be.softmaxCrossEntropy(logits, new int[] {0, bad}, null, null));
      assertTrue(e.getMessage().contains("label " + bad), e.getMessage());
    }
    for (float bad : new float[] {-0.1f, 1.5f, Float.NaN}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> be.logisticLoss(Tensor.zeros(2), new float[] {1f, bad}, null, null));
      assertTrue(e.getMessage().contains("label " + bad), e.getMessage());
    }
  }

  @Test
  void outOfRangeIdsAreRejected() {
    Backend be = backend;
    Tensor table = Tensor.zeros(5, 2);
    for (int bad : new int[] {-1, 5}) {
      IllegalArgumentException g = assertThrows(IllegalArgumentException.class,
          () -> be.gather(table, new int[] {0, bad}, Tensor.zeros(2, 2)));
      assertTrue(g.getMessage().contains("id " + bad) && g.getMessage().contains("[5, 2]"), g.getMessage());
      IllegalArgumentException s = assertThrows(IllegalArgumentException.class,
          () -> be.scatterAdd(Tensor.zeros(2, 2), new int[] {bad, 0}, table));
      assertTrue(s.getMessage().contains("id " + bad) && s.getMessage().contains("[5, 2]"), s.getMessage());
    }
  }

  // ---- helpers ----

  private static void assertNamesShapes(Executable call, String... shapes) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    for (String s : shapes) {
      assertTrue(e.getMessage().contains(s), () -> "message should name " + s + ": " + e.getMessage());
    }
  }

  protected static Tensor random(Random rnd, int... shape) {
    Tensor t = Tensor.zeros(shape);
    for (int i = 0; i < t.size(); i++) t.data()[i] = rnd.nextFloat() * 4f - 2f;
    return t;
  }

  private static int[] randomIds(Random rnd, int n, int bound) {
    int[] ids = new int[n];
    for (int i = 0; i < n; i++) ids[i] = rnd.nextInt(bound);
    return ids;
  }

  private void assertClose(String what, Tensor expected, Tensor actual) {
    assertArrayEquals(expected.shape(), actual.shape(), what + ": shape");
    float[] e = expected.data(), a = actual.data();
    double maxErr = 0, maxRef = 0;
    for (int i = 0; i < e.length; i++) {
      maxErr = Math.max(maxErr, Math.abs((double) a[i] - e[i]));
      maxRef = Math.max(maxRef, Math.abs((double) e[i]));
      if (Float.isNaN(a[i]) || Float.isNaN(e[i])) {
        throw new AssertionError(what + ": NaN at " + i + " expected " + e[i] + " actual " + a[i]);
      }
    }
    double rel = maxRef == 0 ? maxErr : maxErr / maxRef;
    assertTrue(rel < tol, what + ": relative error " + rel);
  }

  private void assertRelClose(String what, double expected, double actual) {
    double rel = Math.abs(actual - expected) / Math.max(Math.abs(expected), 1e-30);
    assertTrue(rel < tol, what + ": expected " + expected + " actual " + actual + " relative error " + rel);
  }
}
