package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Mlp}: whole-model gradients against central differences on random entries of every
 * parameter (eps 1e-2, relative error below 1e-2 with a 1e-3 floor: the float noise of three
 * layers divided by the step is a few 1e-4 of the smallest gradients), gradient hand-out order,
 * determinism, and training to high accuracy with plain SGD.
 */
class MlpTest {
  private static final CpuBackend BACKEND = CpuBackend.create(1);

  @AfterAll
  static void close() {
    BACKEND.close();
  }

  @Test
  void gradientsOfEveryParameterMatchCentralDifferencesForEachActivation() {
    for (Activation act : Activation.values()) {
      Random rnd = new Random(11);
      Mlp mlp = Mlp.create(BACKEND, 4, new int[] {6, 5}, 3, act, 12);
      for (Parameter p : mlp.parameters()) {
        if (p.name().endsWith(".bias")) p.value().copyFrom(GradCheck.random(rnd, 0.3f, p.shape()));
      }
      Tensor x = GradCheck.random(rnd, 1.5f, 7, 4);
      int[] labels = {0, 2, 1, 1, 0, 2, 2};
      mlp.forwardBackward(x, labels, p -> {});
      List<float[]> analytic = new ArrayList<>();
      for (Parameter p : mlp.parameters()) analytic.add(p.grad().data().clone());

      for (int k = 0; k < mlp.parameters().size(); k++) {
        Parameter p = mlp.parameters().get(k);
        for (int trial = 0; trial < 4; trial++) {
          int i = rnd.nextInt(p.size());
          double numeric = GradCheck.numeric(p.value().data(), i, 1e-2,
              () -> mlp.forwardBackward(x, labels, q -> {}));
          double a = analytic.get(k)[i];
          double err = GradCheck.relativeError(a, numeric, 1e-3);
          assertTrue(err < 1e-2, act + " " + p.name() + "[" + i + "]: analytic " + a + " numeric "
              + numeric + " relative error " + err);
        }
      }
    }
  }

  @Test
  void gradientsAreHandedOutLastLayerFirstBeforeEarlierLayersAreComputed() {
    Mlp mlp = Mlp.create(BACKEND, 3, new int[] {4, 4}, 2, Activation.TANH, 1);
    Random rnd = new Random(2);
    Tensor x = GradCheck.random(rnd, 1f, 5, 3);
    List<String> order = new ArrayList<>();
    Parameter first = mlp.parameters().get(0);
    float[] firstGradWhenTopArrived = new float[1];
    mlp.forwardBackward(x, new int[] {0, 1, 1, 0, 1}, p -> {
      order.add(p.name());
      if (p.name().equals("dense3.weight")) firstGradWhenTopArrived[0] = maxAbs(first.grad().data());
    });
    assertEquals(List.of("dense3.weight", "dense3.bias", "dense2.weight", "dense2.bias",
        "dense1.weight", "dense1.bias"), order);
    // On the first step dense1's gradient is still all zeros while dense3's is handed out.
    assertEquals(0f, firstGradWhenTopArrived[0], 0f);
    assertTrue(maxAbs(first.grad().data()) > 0f);
  }

  @Test
  void parametersComeInLayerOrderWeightThenBias() {
    Mlp mlp = Mlp.create(BACKEND, 10, new int[] {8, 6}, 4, Activation.RELU, 3);
    List<String> names = new ArrayList<>();
    List<String> shapes = new ArrayList<>();
    for (Parameter p : mlp.parameters()) {
      names.add(p.name());
      shapes.add(Arrays.toString(p.shape()));
    }
    assertEquals(List.of("dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias",
        "dense3.weight", "dense3.bias"), names);
    assertEquals(List.of("[10, 8]", "[8]", "[8, 6]", "[6]", "[6, 4]", "[4]"), shapes);
    assertEquals(10 * 8 + 8 + 8 * 6 + 6 + 6 * 4 + 4, mlp.parameterCount());
    assertEquals(mlp.parameterCount(), Mlp.parameterCount(10, new int[] {8, 6}, 4));
    // MNIST's 784-512-256-10, and a model with no hidden layer.
    assertEquals(535_818L, Mlp.parameterCount(784, new int[] {512, 256}, 10));
    assertEquals(7_850L, Mlp.parameterCount(784, new int[0], 10));
    // The rectifier is the dense layers' last pass; tanh a layer of its own between them.
    assertEquals(3, mlp.layers().size());
    assertEquals(5, Mlp.create(BACKEND, 10, new int[] {8, 6}, 4, Activation.TANH, 1).layers().size());
  }

  @Test
  void sameSeedGivesBitIdenticalTrainingAndAnotherSeedDoesNot() {
    Problem data = Problem.quadrants(64, 5);
    float[] a = trainLosses(Mlp.create(BACKEND, 2, new int[] {8}, 2, Activation.RELU, 77), data, 5);
    float[] b = trainLosses(Mlp.create(BACKEND, 2, new int[] {8}, 2, Activation.RELU, 77), data, 5);
    float[] c = trainLosses(Mlp.create(BACKEND, 2, new int[] {8}, 2, Activation.RELU, 78), data, 5);
    assertArrayEquals(a, b, 0f);
    assertFalse(Arrays.equals(a, c));
  }

  @Test
  void sgdForTwoHundredStepsSeparatesQuadrantXorAboveNinetyFivePercent() {
    // XOR of the signs: no linear model gets past ~50-75%, so this needs the hidden layer.
    Problem data = Problem.quadrants(400, 21);
    Mlp mlp = Mlp.create(BACKEND, 2, new int[] {16}, 2, Activation.RELU, 42);
    double before = accuracy(mlp, data);
    float[] losses = trainLosses(mlp, data, 200);
    double after = accuracy(mlp, data);
    assertTrue(after > 0.95, "train accuracy " + after + " (before " + before + ")");
    assertTrue(losses[199] < 0.5f * losses[0], "loss " + losses[0] + " -> " + losses[199]);
  }

  @Test
  void updatingValuesInsideTheCallbackEqualsUpdatingAfterTheStep() {
    Problem data = Problem.quadrants(32, 8);
    Mlp inCallback = Mlp.create(BACKEND, 2, new int[] {5, 4}, 2, Activation.SIGMOID, 9);
    Mlp afterStep = Mlp.create(BACKEND, 2, new int[] {5, 4}, 2, Activation.SIGMOID, 9);
    for (int step = 0; step < 3; step++) {
      inCallback.forwardBackward(data.x, data.labels, p -> BACKEND.axpy(-0.3f, p.grad(), p.value()));
      afterStep.forwardBackward(data.x, data.labels, p -> {});
      for (Parameter p : afterStep.parameters()) BACKEND.axpy(-0.3f, p.grad(), p.value());
    }
    for (int k = 0; k < inCallback.parameters().size(); k++) {
      assertArrayEquals(afterStep.parameters().get(k).value().data(),
          inCallback.parameters().get(k).value().data(), 0f);
    }
  }

  @Test
  void pytorchInitStartsEveryLayerAsTorchLinearAndAutoByItsActivation() {
    int[] widths = {784, 512, 256, 10};
    Mlp torch = Mlp.create(BACKEND, 784, new int[] {512, 256}, 10, Activation.RELU, Initialization.PYTORCH, 5);
    Mlp auto = Mlp.create(BACKEND, 784, new int[] {512, 256}, 10, Activation.RELU, Initialization.parse("AUTO"), 5);
    for (int l = 0; l < 3; l++) {
      double torchBound = 1 / Math.sqrt(widths[l]);
      // He-uniform before the ReLUs, Glorot-uniform for the output layer.
      double autoBound = l < 2 ? Math.sqrt(6.0 / widths[l]) : Math.sqrt(6.0 / (widths[l] + widths[l + 1]));
      assertEquals(torchBound, maxAbs(torch.parameters().get(2 * l).value().data()), 0.01 * torchBound);
      double biasMax = maxAbs(torch.parameters().get(2 * l + 1).value().data());
      assertTrue(biasMax <= torchBound && biasMax > 0.5 * torchBound, "layer " + l + "'s biases reach " + biasMax);
      assertEquals(autoBound, maxAbs(auto.parameters().get(2 * l).value().data()), 0.01 * autoBound);
      assertEquals(0.0, maxAbs(auto.parameters().get(2 * l + 1).value().data()), "auto's biases start at zero");
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Initialization.parse("xavier"));
    assertEquals("unknown init 'xavier': expected auto or pytorch", e.getMessage());
  }

  @Test
  void predictIsTheArgmaxOfTheLogits() {
    Mlp mlp = Mlp.create(BACKEND, 3, new int[] {4}, 5, Activation.TANH, 4);
    Tensor x = GradCheck.random(new Random(5), 2f, 9, 3);
    Tensor logits = mlp.logits(x).copy();
    assertArrayEquals(new int[] {9, 5}, logits.shape());
    int[] predicted = mlp.predict(x);
    for (int r = 0; r < 9; r++) {
      for (int c = 0; c < 5; c++) assertTrue(logits.get(r, c) <= logits.get(r, predicted[r]));
    }
  }

  @Test
  void wrongInputWidthNamesBothShapes() {
    Mlp mlp = Mlp.create(BACKEND, 3, new int[] {4}, 2, Activation.RELU, 4);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> mlp.forwardBackward(Tensor.zeros(2, 5), new int[] {0, 1}, p -> {}));
    assertTrue(e.getMessage().contains("[2, 5]") && e.getMessage().contains("[3, 4]"), e.getMessage());
    IllegalArgumentException widths = assertThrows(IllegalArgumentException.class,
        () -> Mlp.create(BACKEND, 3, new int[] {0}, 2, Activation.RELU, 4));
    assertTrue(widths.getMessage().contains("[0]"), widths.getMessage());
  }

  private static float[] trainLosses(Mlp mlp, Problem data, int steps) {
    float[] losses = new float[steps];
    for (int s = 0; s < steps; s++) {
      losses[s] = mlp.forwardBackward(data.x, data.labels, p -> {});
      for (Parameter p : mlp.parameters()) BACKEND.axpy(-0.5f, p.grad(), p.value());
    }
    return losses;
  }

  private static double accuracy(Mlp mlp, Problem data) {
    int[] predicted = mlp.predict(data.x);
    int right = 0;
    for (int i = 0; i < predicted.length; i++) if (predicted[i] == data.labels[i]) right++;
    return (double) right / predicted.length;
  }

  private static float maxAbs(float[] v) {
    float m = 0f;
    for (float f : v) m = Math.max(m, Math.abs(f));
    return m;
  }

  /** Points in [-1, 1]^2 at least 0.1 from both axes; label 1 when the signs differ. */
  private static final class Problem {
    final Tensor x;
    final int[] labels;

    private Problem(Tensor x, int[] labels) {
      this.x = x;
      this.labels = labels;
    }

    static Problem quadrants(int n, long seed) {
      Random rnd = new Random(seed);
      Tensor x = Tensor.zeros(n, 2);
      int[] labels = new int[n];
      for (int i = 0; i < n; i++) {
        float a = coordinate(rnd), b = coordinate(rnd);
        x.set(i, 0, a);
        x.set(i, 1, b);
        labels[i] = (a > 0) != (b > 0) ? 1 : 0;
      }
      return new Problem(x, labels);
    }

    private static float coordinate(Random rnd) {
      float magnitude = 0.1f + 0.9f * rnd.nextFloat();
      return rnd.nextBoolean() ? magnitude : -magnitude;
    }
  }
}
