package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import java.util.Random;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

class KernelWarmUpTest {

  @Test
  void startsOneDaemonThreadOnceAndNoneWhileTurnedOff() throws InterruptedException {
    KernelWarmUp warmUp = new KernelWarmUp();
    assertNull(warmUp.start(false, 1), "turned off");
    Thread t = warmUp.start(true, 1);
    assertNotNull(t);
    assertTrue(t.isDaemon(), "a daemon: it must not keep a finished program alive");
    assertEquals("shardtrain-kernel-warm-up", t.getName());
    assertNull(warmUp.start(true, 1), "a second start");
    assertTrue(KernelWarmUp.running() || !t.isAlive(), "running until it ends");
    t.join(120_000);
    assertFalse(t.isAlive());
    assertFalse(KernelWarmUp.running(), "ended");
  }

  @Test
  void productsComputedWhileTheWarmUpRunsAreBitForBitThoseComputedBefore() throws InterruptedException {
    // The warm-up shares the static kernels and runs on its own workspace; a trainer's products
    // on another backend at the same time must not see any of it. The input gradient takes the
    // tiles while the warm-up runs and TransposedGemm before and after: the same bits.
    Random rng = new Random(7);
    Tensor a = random(rng, 64, 300);
    Tensor b = random(rng, 300, 96);
    Tensor g = random(rng, 64, 96);
    CpuBackend backend = CpuBackend.create(1);
    Tensor forward = Tensor.zeros(64, 96);
    Tensor weightGrad = Tensor.zeros(300, 96);
    Tensor w = random(rng, 300, 96);
    Tensor inputGrad = Tensor.zeros(64, 300);
    assertTrue(TransposedGemm.takes(false, true, 64, 300, 96) || FloatVector.SPECIES_PREFERRED.length() < 16);
    backend.gemm(false, false, 1f, a, b, 0f, forward);
    backend.gemm(true, false, 1f, a, g, 0f, weightGrad);
    backend.gemm(false, true, 1f, g, w, 0f, inputGrad);
    float[] forwardBefore = forward.data().clone();
    float[] weightGradBefore = weightGrad.data().clone();
    float[] inputGradBefore = inputGrad.data().clone();

    Thread t = new KernelWarmUp().start(true, 50);
    int rounds = 0;
    while (t.isAlive() || rounds < 20) {
      backend.gemm(false, false, 1f, a, b, 0f, forward);
      backend.gemm(true, false, 1f, a, g, 0f, weightGrad);
      assertArrayEquals(forwardBefore, forward.data(), "forward, round " + rounds);
      assertArrayEquals(weightGradBefore, weightGrad.data(), "weight gradient, round " + rounds);
      backend.gemm(false, true, 1f, g, w, 0f, inputGrad);
      assertArrayEquals(inputGradBefore, inputGrad.data(), "input gradient, round " + rounds);
      rounds++;
    }
    t.join();
    backend.gemm(false, true, 1f, g, w, 0f, inputGrad);
    assertArrayEquals(inputGradBefore, inputGrad.data(), "input gradient after the warm-up");
  }

  private static Tensor random(Random rng, int rows, int cols) {
    Tensor t = Tensor.zeros(rows, cols);
    for (int i = 0; i < t.data().length; i++) t.data()[i] = (float) rng.nextGaussian();
    return t;
  }
}
