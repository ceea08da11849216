package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.TimedBackend.OpTime;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The per-operation timer of a single process's step profile: it changes no result and counts every call once. */
class TimedBackendTest {

  @Test
  void anMlpStepOnTheTimedBackendEqualsTheCpuBackendsBitForBit() {
    try (CpuBackend cpu = CpuBackend.create(2); TimedBackend timed = TimedBackend.wrap(CpuBackend.create(2))) {
      // Two hidden layers, so every GEMM form a step runs is there (nn, tn and nt).
      Mlp plain = Mlp.create(cpu, 40, new int[] {33, 17}, 5, Activation.TANH, 9);
      Mlp wrapped = Mlp.create(timed, 40, new int[] {33, 17}, 5, Activation.TANH, 9);
      Tensor x = batch(11, 40, 3);
      int[] y = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0};
      for (int step = 0; step < 3; step++) {
        float expected = plain.forwardBackward(x, y, p -> sgd(p.value(), p.grad()));
        float actual = wrapped.forwardBackward(x, y, p -> sgd(p.value(), p.grad()));
        assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(actual), "loss of step " + step);
      }
      for (int i = 0; i < plain.parameters().size(); i++) {
        String name = plain.parameters().get(i).name();
        assertArrayEquals(plain.parameters().get(i).grad().data(), wrapped.parameters().get(i).grad().data(), name);
        assertArrayEquals(plain.parameters().get(i).value().data(), wrapped.parameters().get(i).value().data(), name);
      }
      assertArrayEquals(plain.logits(x).data(), wrapped.logits(x).data());
      assertArrayEquals(plain.predict(x), wrapped.predict(x));
      assertEquals("cpu", timed.name());
      assertEquals(2, timed.threads());
    }
  }

  @Test
  void aTwoLayerMlpStepRunsEachOfItsOperationsOncePerShape() {
    try (TimedBackend timed = TimedBackend.wrap(CpuBackend.create(1))) {
      int batch = 6, in = 12, hidden = 8, classes = 3, steps = 4;
      Mlp model = Mlp.create(timed, in, new int[] {hidden}, classes, Activation.RELU, 2);
      Tensor x = batch(batch, in, 5);
      int[] y = {0, 1, 2, 0, 1, 2};
      for (int s = 0; s < steps; s++) model.forwardBackward(x, y, p -> { });
      // Evaluation between steps: passed on, not counted.
      timed.recording(false);
      model.predict(x);
      timed.recording(true);

      List<OpTime> ops = timed.snapshot();
      // Forward, loss, then backward from the top; the first layer's input gradient is skipped,
      // and the rectifier is the last pass of the products around it.
      assertEquals(List.of("gemm+bias+relu 6x12x8", "gemm 6x8x3", "softmaxCrossEntropy 6x3", "gemm 8x6x3:tn",
          "columnSums 6x3", "gemm+reluBackward 6x3x8:nt", "gemm 12x6x8:tn", "columnSums 6x8"),
          ops.stream().map(OpTime::op).toList());
      long nanos = 0;
      for (OpTime op : ops) {
        assertEquals(steps, op.calls(), op.op());
        assertTrue(op.nanos() >= 0, op.toString());
        nanos += op.nanos();
      }
      assertTrue(nanos > 0, "no time counted: " + ops);
      assertEquals(steps * 2L * batch * in * hidden, flops(ops, "gemm+bias+relu 6x12x8"));
      assertEquals(steps * 2L * hidden * batch * classes, flops(ops, "gemm 8x6x3:tn"));
      assertEquals(steps * 2L * batch * classes * hidden, flops(ops, "gemm+reluBackward 6x3x8:nt"));
      assertEquals(0, flops(ops, "columnSums 6x8"));
    }
  }

  /** A product large enough to run in parallel on two threads tells its runs apart; one thread, or a small product, none. */
  @Test
  void aParallelProductsSlicesAreCountedAndOthersHaveNone() {
    Tensor a = Tensor.zeros(64, 784);
    Tensor b = Tensor.zeros(784, 512);
    Tensor small = Tensor.zeros(4, 4);
    try (TimedBackend two = TimedBackend.wrap(CpuBackend.create(2)); TimedBackend one = TimedBackend.wrap(CpuBackend.create(1))) {
      for (TimedBackend timed : List.of(two, one)) {
        for (int i = 0; i < 3; i++) timed.gemm(false, false, 1f, a, b, 0f, Tensor.zeros(64, 512));
        timed.gemm(false, false, 1f, small, small, 0f, Tensor.zeros(4, 4));
      }
      OpTime big = two.snapshot().get(0);
      assertEquals("gemm 64x784x512", big.op());
      // Cut by depth: the partial products, then their sums, two runs a call.
      assertEquals(6, big.slices().runs());
      assertTrue(big.slices().callerNanos() > 0 && big.slices().workerNanos() > 0, big.toString());
      assertTrue(big.slices().callerNanos() + big.slices().waitNanos() <= big.nanos(), big.toString());
      assertEquals(null, two.snapshot().get(1).slices(), "a product too small to split");
      assertEquals(null, one.snapshot().get(0).slices(), "one thread");
    }
  }

  @Test
  void theSnapshotIsACopyThatLaterCallsLeaveAlone() {
    try (TimedBackend timed = TimedBackend.wrap(CpuBackend.create(1))) {
      Tensor v = Tensor.zeros(7);
      timed.axpy(2f, Tensor.zeros(7).fill(1f), v);
      List<OpTime> first = timed.snapshot();
      timed.axpy(2f, Tensor.zeros(7).fill(1f), v);
      assertEquals(1, first.get(0).calls());
      assertEquals("axpy 7", first.get(0).op());
      assertEquals(2, timed.snapshot().get(0).calls());
      assertThrows(UnsupportedOperationException.class, () -> first.add(first.get(0)));
      assertArrayEquals(new float[] {4, 4, 4, 4, 4, 4, 4}, v.data());
    }
  }

  @Test
  void keysTellShapesAndTransposesApartAndSurviveTheTableGrowing() {
    try (TimedBackend timed = TimedBackend.wrap(CpuBackend.create(1))) {
      // 100 shapes: more than the first table holds at half load.
      for (int n = 1; n <= 100; n++) {
        Tensor m = Tensor.zeros(2, n);
        timed.relu(m, m);
        timed.relu(m, m);
      }
      timed.gemm(true, true, 1f, Tensor.zeros(3, 2), Tensor.zeros(4, 3), 0f, Tensor.zeros(2, 4));
      timed.gather(Tensor.zeros(50, 4), new int[] {1, 2, 3}, Tensor.zeros(3, 4));
      List<OpTime> ops = timed.snapshot();
      assertEquals(102, ops.size());
      for (int n = 1; n <= 100; n++) {
        assertEquals("relu 2x" + n, ops.get(n - 1).op());
        assertEquals(2, ops.get(n - 1).calls(), ops.get(n - 1).op());
      }
      assertEquals("gemm 2x3x4:tt", ops.get(100).op());
      assertEquals("gather 3x4 from 50 rows", ops.get(101).op());
    }
  }

  @Test
  void aCallTheWrappedBackendRejectsIsNotCounted() {
    try (TimedBackend timed = TimedBackend.wrap(CpuBackend.create(1))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> timed.gemm(false, false, 1f, Tensor.zeros(2, 3), Tensor.zeros(4, 5), 0f, Tensor.zeros(2, 5)));
      assertTrue(e.getMessage().contains("shape mismatch"), e.getMessage());
      assertEquals(List.of(), timed.snapshot());
    }
  }

  @Test
  void onlyTheCpuBackendIsTimed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TimedBackend.wrap(new ReferenceBackend()));
    assertTrue(e.getMessage().contains("cpu backend only"), e.getMessage());
    try (TimedBackend timed = TimedBackend.wrap(CpuBackend.create(1))) {
      assertThrows(IllegalArgumentException.class, () -> TimedBackend.wrap(timed));
    }
  }

  /** The whole kernel suite through the wrapper. */
  @Nested
  class KernelSuite extends BackendOpsSuite {
    @Override
    protected Backend createBackend() {
      return TimedBackend.wrap(CpuBackend.create(2));
    }

    @Override
    protected Backend createOracle() {
      return new ReferenceBackend();
    }

    @Override
    protected double tolerance() {
      return 1e-5;
    }
  }

  private static long flops(List<OpTime> ops, String op) {
    return ops.stream().filter(o -> o.op().equals(op)).findFirst().orElseThrow().flops();
  }

  private static void sgd(Tensor value, Tensor grad) {
    float[] v = value.data(), g = grad.data();
    for (int i = 0; i < v.length; i++) v[i] -= 0.1f * g[i];
  }

  private static Tensor batch(int rows, int cols, long seed) {
    Random r = new Random(seed);
    Tensor t = Tensor.zeros(rows, cols);
    for (int i = 0; i < t.size(); i++) t.data()[i] = (float) r.nextGaussian();
    return t;
  }
}
