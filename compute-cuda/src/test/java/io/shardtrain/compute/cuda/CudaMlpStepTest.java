package io.shardtrain.compute.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.Adam;
import io.shardtrain.compute.optim.Momentum;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.Sgd;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The resident training step against the CPU model and optimizer: same seed, same batches, the
 * losses, gradients and parameters after several steps agree to {@code 1e-4} (normwise). Skipped
 * without a GPU.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CudaMlpStepTest {
  private CudaBackend gpu;
  private CpuBackend cpu;

  @BeforeAll
  void open() {
    gpu = CudaBackendTest.gpuOrSkip(CudaBackend.GemmChoice.AUTO);
    cpu = CpuBackend.create(1);
  }

  @AfterAll
  void close() {
    if (gpu != null) gpu.close();
    if (cpu != null) cpu.close();
  }

  @Test
  void sgdStepsMatchTheCpuModel() {
    compare(Activation.RELU, new Sgd(1e-4f), 0.1f);
  }

  @Test
  void momentumWithTanhMatchesTheCpuModel() {
    compare(Activation.TANH, new Momentum(0.9f, true, 0f), 0.05f);
  }

  @Test
  void adamWithSigmoidMatchesTheCpuModel() {
    compare(Activation.SIGMOID, new Adam(0.9f, 0.999f, 1e-8f, 0.01f, true), 0.01f);
  }

  /**
   * What a trainer does on a GPU: the same model on the CPU and on the CUDA backend, the optimizer
   * on the host values between steps (as a pull replaces them), forward and backward through
   * {@link GradientStep}: same losses, gradients and callback order as the CPU model.
   */
  @Test
  void residentGradientStepGivesTheCpuModelsLossGradientsAndOrder() {
    Random rnd = new Random(13);
    int in = 29, classes = 5;
    Mlp reference = Mlp.create(cpu, in, new int[] {31, 11}, classes, Activation.RELU, 8);
    Mlp onGpu = Mlp.create(gpu, in, new int[] {31, 11}, classes, Activation.RELU, 8);
    Sgd sgd = new Sgd();
    try (GradientStep step = GradientStep.of(onGpu, 40)) {
      assertTrue(step instanceof CudaBackend.ResidentStep, "a resident step, not the host-tensor path: " + step);
      for (int s = 1; s <= 3; s++) {
        int rows = s == 3 ? 9 : 40;
        Tensor x = Tensor.zeros(rows, in);
        for (int i = 0; i < x.size(); i++) x.data()[i] = rnd.nextFloat() * 2 - 1;
        int[] y = new int[rows];
        for (int i = 0; i < rows; i++) y[i] = rnd.nextInt(classes);
        List<String> cpuOrder = new ArrayList<>();
        List<String> gpuOrder = new ArrayList<>();
        float cpuLoss = reference.forwardBackward(x, y, p -> cpuOrder.add(p.name()));
        float gpuLoss = step.forwardBackward(x, y, p -> gpuOrder.add(p.name()));
        assertEquals(cpuLoss, gpuLoss, 1e-4 * Math.abs(cpuLoss), "loss at step " + s);
        assertEquals(cpuOrder, gpuOrder);
        for (int p = 0; p < reference.parameters().size(); p++) {
          Parameter want = reference.parameters().get(p);
          Parameter got = onGpu.parameters().get(p);
          assertNormClose("grad " + want.name() + " step " + s, want.grad(), got.grad());
          sgd.apply(want.value().data(), want.grad().data(), new float[0][], s, 0.1f);
          sgd.apply(got.value().data(), got.grad().data(), new float[0][], s, 0.1f);
        }
      }
    }
  }

  /**
   * A trainer writes each layer's pulled values and starts that layer at once: layer 0 runs on the
   * values it had when it was queued, though they change right after; layer 1 on values written
   * after layer 0 was queued; the top layer, never queued on its own, in the finish. The loss and
   * gradients are the CPU model's for those values.
   */
  @Test
  void eachLayerRunsOnTheValuesItHadWhenItWasQueued() {
    Random rnd = new Random(17);
    int in = 23, classes = 4, rows = 16;
    Mlp reference = Mlp.create(cpu, in, new int[] {19, 9}, classes, Activation.RELU, 3);
    Mlp onGpu = Mlp.create(gpu, in, new int[] {19, 9}, classes, Activation.RELU, 3);
    Tensor x = Tensor.zeros(rows, in);
    for (int i = 0; i < x.size(); i++) x.data()[i] = rnd.nextFloat() * 2 - 1;
    int[] y = new int[rows];
    for (int i = 0; i < rows; i++) y[i] = rnd.nextInt(classes);
    for (int p = 2; p <= 3; p++) halve(reference.parameters().get(p).value());
    float cpuLoss = reference.forwardBackward(x, y, p -> { });
    try (GradientStep step = GradientStep.of(onGpu, rows)) {
      step.beginForward(x);
      step.forwardLayer(0);
      for (int p = 0; p <= 1; p++) java.util.Arrays.fill(onGpu.parameters().get(p).value().data(), 7f);
      for (int p = 2; p <= 3; p++) halve(onGpu.parameters().get(p).value());
      step.forwardLayer(1);
      IllegalStateException skipped = assertThrows(IllegalStateException.class, () -> step.forwardLayer(1));
      assertTrue(skipped.getMessage().contains("layer 2 of 3 next"), skipped.getMessage());
      float gpuLoss = step.finishForwardBackward(y, p -> { });
      assertEquals(cpuLoss, gpuLoss, 1e-4 * Math.abs(cpuLoss));
      for (int p = 0; p < reference.parameters().size(); p++) {
        Parameter want = reference.parameters().get(p);
        assertNormClose("grad " + want.name(), want.grad(), onGpu.parameters().get(p).grad());
      }
    }
  }

  @Test
  void wrongInputWidthIsRejected() {
    Mlp model = Mlp.create(cpu, 5, new int[] {4}, 3, Activation.RELU, 1);
    try (CudaMlpStep step = CudaMlpStep.create(gpu, model, Activation.RELU, 8, new Sgd())) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> step.trainStep(Tensor.zeros(2, 6), new int[2], 0.1f));
      assertTrue(e.getMessage().contains("[2, 6]"), e.getMessage());
    }
  }

  private void compare(Activation act, Optimizer opt, float lr) {
    Random rnd = new Random(11);
    int in = 37, classes = 7, batch = 50;
    Mlp model = Mlp.create(cpu, in, new int[] {33, 17}, classes, act, 5);
    List<float[][]> cpuSlots = new ArrayList<>();
    for (Parameter p : model.parameters()) cpuSlots.add(new float[opt.slotCount()][p.size()]);
    try (CudaMlpStep step = CudaMlpStep.create(gpu, model, act, 64, opt)) {
      for (int s = 1; s <= 4; s++) {
        int rows = s == 4 ? 13 : batch; // a short last batch too
        Tensor x = Tensor.zeros(rows, in);
        for (int i = 0; i < x.size(); i++) x.data()[i] = rnd.nextFloat() * 2 - 1;
        int[] y = new int[rows];
        for (int i = 0; i < rows; i++) y[i] = rnd.nextInt(classes);

        float cpuLoss = model.forwardBackward(x, y, p -> { });
        List<Tensor> gpuGrads = zerosLike(model);
        float gpuLoss = step.forwardBackward(x, y);
        step.readGradients(gpuGrads);
        assertEquals(cpuLoss, gpuLoss, 1e-4 * Math.abs(cpuLoss), "loss at step " + s);
        for (int p = 0; p < gpuGrads.size(); p++) {
          assertNormClose("grad " + model.parameters().get(p).name() + " step " + s,
              model.parameters().get(p).grad(), gpuGrads.get(p));
        }
        // Update both: the GPU step re-runs forward/backward on the same batch, then updates.
        for (int p = 0; p < model.parameters().size(); p++) {
          Parameter par = model.parameters().get(p);
          opt.apply(par.value().data(), par.grad().data(), cpuSlots.get(p), s, lr);
        }
        step.trainStep(x, y, lr);
        List<Tensor> gpuParams = zerosLike(model);
        step.readParameters(gpuParams);
        for (int p = 0; p < gpuParams.size(); p++) {
          assertNormClose("param " + model.parameters().get(p).name() + " step " + s,
              model.parameters().get(p).value(), gpuParams.get(p));
        }
      }
    }
  }

  private static void halve(Tensor t) {
    for (int i = 0; i < t.size(); i++) t.data()[i] *= 0.5f;
  }

  private static List<Tensor> zerosLike(Mlp model) {
    List<Tensor> ts = new ArrayList<>();
    for (Parameter p : model.parameters()) ts.add(Tensor.zeros(p.shape()));
    return ts;
  }

  private static void assertNormClose(String what, Tensor expected, Tensor actual) {
    double maxErr = 0, maxRef = 0;
    for (int i = 0; i < expected.size(); i++) {
      maxErr = Math.max(maxErr, Math.abs((double) actual.data()[i] - expected.data()[i]));
      maxRef = Math.max(maxRef, Math.abs((double) expected.data()[i]));
    }
    double rel = maxRef == 0 ? maxErr : maxErr / maxRef;
    assertTrue(rel < 1e-4, what + ": relative error " + rel);
  }
}
