package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Relu}, {@link Tanh} and {@link Sigmoid}: hand-computed values and input gradients
 * against central differences (eps 1e-3, relative error below 1e-3; ReLU inputs are kept at
 * least 0.1 from its kink so the difference never straddles it).
 */
class ActivationsTest {
  private static final CpuBackend BACKEND = CpuBackend.create(1);

  @AfterAll
  static void close() {
    BACKEND.close();
  }

  @Test
  void reluGradientMatchesCentralDifferences() {
    Random rnd = new Random(1);
    Tensor x = GradCheck.random(rnd, 2f, 4, 7);
    for (int i = 0; i < x.size(); i++) {
      float v = x.data()[i];
      if (Math.abs(v) < 0.1f) x.data()[i] = v < 0 ? -0.1f - Math.abs(v) : 0.1f + v;
    }
    checkInputGradient(new Relu(BACKEND), x, rnd);
  }

  @Test
  void tanhGradientMatchesCentralDifferences() {
    Random rnd = new Random(2);
    checkInputGradient(new Tanh(BACKEND), GradCheck.random(rnd, 2f, 4, 7), rnd);
  }

  @Test
  void sigmoidGradientMatchesCentralDifferences() {
    Random rnd = new Random(3);
    checkInputGradient(new Sigmoid(BACKEND), GradCheck.random(rnd, 3f, 4, 7), rnd);
  }

  @Test
  void activationsComputeHandCheckedValues() {
    Tensor x = Tensor.of(new float[] {-2f, 0f, 0.5f, 3f}, 1, 4);
    assertArrayEquals(new float[] {0f, 0f, 0.5f, 3f}, new Relu(BACKEND).forward(x).data(), 0f);
    assertArrayEquals(new float[] {-0.9640276f, 0f, 0.46211717f, 0.9950548f},
        new Tanh(BACKEND).forward(x).data(), 1e-6f);
    assertArrayEquals(new float[] {0.11920292f, 0.5f, 0.62245935f, 0.95257413f},
        new Sigmoid(BACKEND).forward(x).data(), 1e-6f);
  }

  @Test
  void reluBackwardPassesGradientOnlyWherePositive() {
    Relu relu = new Relu(BACKEND);
    relu.forward(Tensor.of(new float[] {-1f, 0f, 2f, 5f}, 2, 2));
    Tensor g = relu.backward(Tensor.of(new float[] {10f, 20f, 30f, 40f}, 2, 2));
    assertArrayEquals(new float[] {0f, 0f, 30f, 40f}, g.data(), 0f);
  }

  @Test
  void backwardDoesNotDependOnTheInputBufferAfterForward() {
    // Activations keep their output, so a caller may overwrite the input right after forward.
    Random rnd = new Random(4);
    Tensor x = GradCheck.random(rnd, 2f, 3, 5);
    Tensor g = GradCheck.random(rnd, 1f, 3, 5);
    for (Layer layer : new Layer[] {new Relu(BACKEND), new Tanh(BACKEND), new Sigmoid(BACKEND)}) {
      Tensor input = x.copy();
      layer.forward(input);
      float[] expected = layer.backward(g).data().clone();
      layer.forward(input);
      input.fill(-7f);
      assertArrayEquals(expected, layer.backward(g).data(), 0f, layer.getClass().getSimpleName());
      assertEquals(0, layer.parameters().size());
    }
  }

  @Test
  void backwardBeforeForwardIsAnError() {
    assertThrows(IllegalStateException.class, () -> new Tanh(BACKEND).backward(Tensor.zeros(1, 1)));
  }

  private static void checkInputGradient(Layer layer, Tensor x, Random rnd) {
    Tensor r = GradCheck.random(rnd, 1f, x.shape());
    layer.forward(x);
    float[] analytic = layer.backward(r).data().clone();
    GradCheck.checkAll(layer.getClass().getSimpleName() + " dx", x.data(), analytic, 1e-3, 1e-3,
        () -> GradCheck.project(layer.forward(x), r));
  }
}
