package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Dense}: hand-computed forward, finite-difference gradients for weight, bias and input
 * (the layer is linear, so central differences are exact up to float noise: eps 1e-2,
 * relative error below 1e-3), overwrite-not-accumulate, buffer reuse, init ranges, bad input.
 */
class DenseTest {
  private static final CpuBackend BACKEND = CpuBackend.create(1);

  @AfterAll
  static void close() {
    BACKEND.close();
  }

  /** A 2 -> 3 layer with W = {{1, 2, 3}, {4, 5, 6}} and b = {0.5, -1, 0}. */
  private static Dense setByHand() {
    Dense d = new Dense("d", 2, 3, BACKEND, new Random(1));
    d.weight().value().copyFrom(Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3));
    d.bias().value().copyFrom(Tensor.of(new float[] {0.5f, -1f, 0f}, 3));
    return d;
  }

  @Test
  void forwardComputesXTimesWPlusB() {
    Dense d = setByHand();
    Tensor y = d.forward(Tensor.of(new float[] {1, 2, -1, 0}, 2, 2));
    assertArrayEquals(new float[] {9.5f, 11f, 15f, -0.5f, -3f, -3f}, y.data(), 0f);
  }

  @Test
  void forwardIntoTheRectifierAndTheInputGradientThroughItByHand() {
    Dense d = setByHand();
    // x W + b is {9.5, 11, 15, -0.5, -3, -3}: the second row's negatives become 0.
    Tensor y = d.forwardRectified(Tensor.of(new float[] {1, 2, -1, 0}, 2, 2));
    assertArrayEquals(new float[] {9.5f, 11f, 15f, 0f, 0f, 0f}, y.data(), 0f);

    // The next layer's input gradient g W2^T passes where its input (y) is positive.
    Dense next = new Dense("next", 3, 1, BACKEND, new Random(2));
    next.weight().value().copyFrom(Tensor.of(new float[] {1, -2, 3}, 3, 1));
    next.forward(y);
    Tensor dx = next.backwardInputRectified(Tensor.of(new float[] {2, 5}, 2, 1));
    assertArrayEquals(new float[] {2f, -4f, 6f, 0f, 0f, 0f}, dx.data(), 0f);
  }

  @Test
  void weightBiasAndInputGradientsMatchCentralDifferences() {
    Random rnd = new Random(2);
    Dense d = new Dense("d", 5, 3, BACKEND, rnd);
    d.bias().value().copyFrom(GradCheck.random(rnd, 0.5f, 3)); // a non-zero bias, so it matters
    Tensor x = GradCheck.random(rnd, 1f, 4, 5);
    Tensor r = GradCheck.random(rnd, 1f, 4, 3);

    d.forward(x);
    float[] dx = d.backward(r).data().clone();
    float[] dw = d.weight().grad().data().clone();
    float[] db = d.bias().grad().data().clone();

    double eps = 1e-2, tol = 1e-3;
    GradCheck.checkAll("dW", d.weight().value().data(), dw, eps, tol, () -> GradCheck.project(d.forward(x), r));
    GradCheck.checkAll("db", d.bias().value().data(), db, eps, tol, () -> GradCheck.project(d.forward(x), r));
    GradCheck.checkAll("dx", x.data(), dx, eps, tol, () -> GradCheck.project(d.forward(x), r));
    // db is the column sums of the upstream gradient, exactly.
    assertEquals(r.get(0, 1) + r.get(1, 1) + r.get(2, 1) + r.get(3, 1), db[1], 1e-6f);
  }

  @Test
  void backwardOverwritesGradientsInsteadOfAccumulating() {
    Random rnd = new Random(3);
    Dense d = new Dense("d", 4, 2, BACKEND, rnd);
    Tensor x = GradCheck.random(rnd, 1f, 3, 4);
    Tensor g = GradCheck.random(rnd, 1f, 3, 2);
    d.forward(x);
    d.backward(g);
    float[] once = d.weight().grad().data().clone();
    float[] onceBias = d.bias().grad().data().clone();
    d.weight().grad().fill(Float.NaN); // stale garbage must not leak into the next gradient
    d.bias().grad().fill(Float.NaN);
    d.forward(x);
    d.backward(g);
    assertArrayEquals(once, d.weight().grad().data(), 0f);
    assertArrayEquals(onceBias, d.bias().grad().data(), 0f);
  }

  @Test
  void buffersAreReusedUntilTheBatchSizeChanges() {
    Random rnd = new Random(4);
    Dense d = new Dense("d", 3, 2, BACKEND, rnd);
    Tensor y1 = d.forward(GradCheck.random(rnd, 1f, 5, 3));
    Tensor dx1 = d.backward(GradCheck.random(rnd, 1f, 5, 2));
    Tensor y2 = d.forward(GradCheck.random(rnd, 1f, 5, 3));
    Tensor dx2 = d.backward(GradCheck.random(rnd, 1f, 5, 2));
    assertSame(y1, y2);
    assertSame(dx1, dx2);
    Tensor y3 = d.forward(GradCheck.random(rnd, 1f, 7, 3));
    assertNotSame(y1, y3);
    assertArrayEquals(new int[] {7, 2}, y3.shape());
  }

  @Test
  void wrongInputWidthNamesBothShapes() {
    Dense d = new Dense("dense1", 5, 3, BACKEND, new Random(5));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> d.forward(Tensor.zeros(4, 6)));
    assertTrue(e.getMessage().contains("[4, 6]") && e.getMessage().contains("[5, 3]")
        && e.getMessage().contains("dense1"), e.getMessage());
    IllegalArgumentException rank = assertThrows(IllegalArgumentException.class,
        () -> d.forward(Tensor.zeros(5)));
    assertTrue(rank.getMessage().contains("[5]") && rank.getMessage().contains("[5, 3]"), rank.getMessage());
  }

  @Test
  void wrongGradientShapeNamesBothShapes() {
    Dense d = new Dense("d", 5, 3, BACKEND, new Random(6));
    d.forward(Tensor.zeros(4, 5));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> d.backward(Tensor.zeros(3, 4)));
    assertTrue(e.getMessage().contains("[3, 4]") && e.getMessage().contains("[4, 3]"), e.getMessage());
  }

  @Test
  void backwardBeforeForwardIsAnError() {
    Dense d = new Dense("d", 2, 2, BACKEND, new Random(7));
    assertThrows(IllegalStateException.class, () -> d.backward(Tensor.zeros(1, 2)));
  }

  @Test
  void heAndGlorotInitStayInTheirBoundsWithTheExpectedVariance() {
    int in = 200, out = 100;
    Dense he = new Dense("he", in, out, BACKEND, new Random(8));
    Dense glorot = new Dense("g", in, out, BACKEND, new Random(8), Dense.Init.GLOROT_UNIFORM);
    // U(-a, a) has variance a^2 / 3: 2/in for He, 2/(in+out) for Glorot.
    assertInit(he.weight().value().data(), Math.sqrt(6.0 / in), 2.0 / in);
    assertInit(glorot.weight().value().data(), Math.sqrt(6.0 / (in + out)), 2.0 / (in + out));
    assertArrayEquals(new float[out], he.bias().value().data(), 0f);
  }

  @Test
  void pytorchInitDrawsWeightsAndBiasesWithinOneOverRootIn() {
    int in = 400, out = 300;
    Dense d = new Dense("p", in, out, BACKEND, new Random(8), Dense.Init.PYTORCH);
    // U(-1/sqrt(in), 1/sqrt(in)) has variance 1/(3 in), as torch.nn.Linear's weights and biases.
    assertInit(d.weight().value().data(), 1 / Math.sqrt(in), 1.0 / (3 * in));
    // 300 values estimate that variance to about 5%.
    assertInit(d.bias().value().data(), 1 / Math.sqrt(in), 1.0 / (3 * in), 0.25);
  }

  @Test
  void sameSeedGivesTheSameWeightsAndParametersAreNamedWeightThenBias() {
    Dense a = new Dense("dense1", 6, 4, BACKEND, new Random(9));
    Dense b = new Dense("dense1", 6, 4, BACKEND, new Random(9));
    assertArrayEquals(a.weight().value().data(), b.weight().value().data(), 0f);
    List<Parameter> ps = a.parameters();
    assertEquals("dense1.weight", ps.get(0).name());
    assertEquals("dense1.bias", ps.get(1).name());
    assertArrayEquals(new int[] {6, 4}, ps.get(0).shape());
    assertArrayEquals(new int[] {4}, ps.get(1).shape());
    assertEquals(24, ps.get(0).size());
    assertArrayEquals(ps.get(0).shape(), ps.get(0).grad().shape());
  }

  private static void assertInit(float[] w, double limit, double variance) {
    assertInit(w, limit, variance, 0.05);
  }

  private static void assertInit(float[] w, double limit, double variance, double tolerance) {
    double sumSq = 0;
    for (float v : w) {
      assertTrue(Math.abs(v) <= limit, "weight " + v + " outside +-" + limit);
      sumSq += (double) v * v;
    }
    double measured = sumSq / w.length;
    assertEquals(variance, measured, tolerance * variance, "init variance");
  }
}
