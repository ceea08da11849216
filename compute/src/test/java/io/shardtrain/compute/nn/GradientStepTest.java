package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.CpuBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Which forward and backward a trainer runs: the model's own on the CPU, the backend's resident one on a device. */
class GradientStepTest {
  private static final CpuBackend CPU = CpuBackend.create(1);

  @AfterAll
  static void close() {
    CPU.close();
  }

  @Test
  void onTheCpuTheStepIsTheModelsOwnForwardAndBackward() {
    Mlp model = Mlp.create(CPU, 6, new int[] {5}, 3, Activation.TANH, 4);
    Mlp twin = Mlp.create(CPU, 6, new int[] {5}, 3, Activation.TANH, 4);
    Tensor x = batch(7, 6, 1);
    int[] y = {0, 1, 2, 0, 1, 2, 0};
    List<String> order = new ArrayList<>();
    float loss;
    try (GradientStep step = GradientStep.of(model, 7)) {
      loss = step.forwardBackward(x, y, p -> order.add(p.name()));
    }
    assertEquals(twin.forwardBackward(x, y, p -> { }), loss);
    assertEquals(List.of("dense2.weight", "dense2.bias", "dense1.weight", "dense1.bias"), order);
    for (int i = 0; i < model.parameters().size(); i++) {
      assertArrayEquals(twin.parameters().get(i).grad().data(), model.parameters().get(i).grad().data());
    }
  }

  @Test
  void aBackendThatKeepsTheModelResidentRunsTheStepAndIsAskedForItsBatchSize() {
    AtomicInteger residentSteps = new AtomicInteger();
    int[] maxBatch = new int[1];
    // The CPU backend's operations, plus a resident step that counts its calls.
    Backend device = (Backend) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {Backend.class, ResidentMlpBackend.class}, (proxy, method, args) -> {
          if (method.getName().equals("residentStep")) {
            Mlp model = (Mlp) args[0];
            maxBatch[0] = (Integer) args[1];
            return new GradientStep() {
              @Override
              public void beginForward(Tensor x) {
                model.beginForward(x);
              }

              @Override
              public void forwardLayer(int layer) {
                model.forwardLayer(layer);
              }

              @Override
              public float finishForwardBackward(int[] y, Consumer<Parameter> onGradient) {
                residentSteps.incrementAndGet();
                return model.finishForwardBackward(y, onGradient);
              }
            };
          }
          try {
            return method.invoke(CPU, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    Mlp model = Mlp.create(device, 6, new int[] {5}, 3, Activation.RELU, 4);
    try (GradientStep step = GradientStep.of(model, 32)) {
      step.forwardBackward(batch(4, 6, 2), new int[] {0, 1, 2, 1}, p -> { });
      step.forwardBackward(batch(4, 6, 3), new int[] {2, 1, 0, 1}, p -> { });
    }
    assertEquals(2, residentSteps.get());
    assertEquals(32, maxBatch[0]);
  }

  @Test
  void aForwardRunLayerByLayerWhileLaterLayersParametersArriveGivesTheOneCallStepsLossAndGradients() {
    Mlp model = Mlp.create(CPU, 6, new int[] {5, 4}, 3, Activation.RELU, 4);
    Mlp twin = Mlp.create(CPU, 6, new int[] {5, 4}, 3, Activation.RELU, 4);
    Tensor x = batch(7, 6, 5);
    int[] y = {0, 1, 2, 0, 1, 2, 0};
    // The twin's last two layers get new values before its step; the model's arrive after its first layer ran.
    Random rnd = new Random(9);
    List<float[]> fresh = new ArrayList<>();
    for (int p = 2; p < 6; p++) {
      float[] v = new float[twin.parameters().get(p).size()];
      for (int i = 0; i < v.length; i++) v[i] = rnd.nextFloat() - 0.5f;
      fresh.add(v);
      System.arraycopy(v, 0, twin.parameters().get(p).value().data(), 0, v.length);
    }
    float expected = twin.forwardBackward(x, y, p -> { });

    GradientStep step = GradientStep.of(model, 7);
    step.beginForward(x);
    step.forwardLayer(0);
    for (int p = 2; p < 6; p++) {
      float[] v = fresh.get(p - 2);
      System.arraycopy(v, 0, model.parameters().get(p).value().data(), 0, v.length);
    }
    step.forwardLayer(1);
    float loss = step.finishForwardBackward(y, p -> { });

    assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(loss));
    for (int i = 0; i < model.parameters().size(); i++) {
      assertArrayEquals(twin.parameters().get(i).grad().data(), model.parameters().get(i).grad().data(),
          model.parameters().get(i).name());
    }
  }

  @Test
  void layersRunInOrderOncePerStep() {
    Mlp model = Mlp.create(CPU, 6, new int[] {5}, 3, Activation.RELU, 4);
    assertThrows(IllegalStateException.class, () -> model.forwardLayer(0));
    model.beginForward(batch(2, 6, 1));
    assertThrows(IllegalStateException.class, () -> model.forwardLayer(1));
    model.forwardLayer(0);
    assertThrows(IllegalStateException.class, () -> model.forwardLayer(0));
    model.finishForwardBackward(new int[] {0, 1}, p -> { });
    assertThrows(IllegalStateException.class, () -> model.forwardLayer(1));
    assertEquals(2, model.denseLayers());
    assertEquals(List.of("dense2.weight", "dense2.bias"),
        model.parametersOf(1).stream().map(Parameter::name).toList());
  }

  private static Tensor batch(int rows, int cols, long seed) {
    Random rnd = new Random(seed);
    Tensor x = Tensor.zeros(rows, cols);
    for (int i = 0; i < x.size(); i++) x.data()[i] = rnd.nextFloat() * 2 - 1;
    return x;
  }
}
