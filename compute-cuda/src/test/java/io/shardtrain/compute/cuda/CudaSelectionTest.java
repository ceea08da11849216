package io.shardtrain.compute.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.BackendProvider.Availability;
import io.shardtrain.compute.backend.Backends;
import org.junit.jupiter.api.Test;

/**
 * Selection with compute-cuda on the class path: the provider is found through ServiceLoader,
 * the probe never throws and caches its one-line answer, and the outcome follows it. On a CPU
 * machine (this project's build machines) the "unavailable" tests run and the GPU one is
 * skipped; on a GPU machine the other way round.
 */
class CudaSelectionTest {
  @Test
  void providerIsFoundThroughServiceLoader() {
    assertTrue(Backends.provider("cuda").isPresent());
    assertTrue(Backends.provider("cuda").get() instanceof CudaBackendProvider);
  }

  @Test
  void probeAnswersOnceWithAOneLineReasonAndNeverThrows() {
    Availability first = CudaProbe.probe();
    Availability second = CudaProbe.probe();
    assertSame(first, second);
    assertFalse(first.reason().isBlank());
    assertFalse(first.reason().contains("\n"), first.reason());
    System.out.println("CUDA probe: " + first);
  }

  @Test
  void withoutGpuCudaFailsWithOneLineNamingTheReason() {
    Availability a = CudaProbe.probe();
    assumeFalse(a.available(), "a GPU is present");
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> Backends.create("cuda", 1));
    assertTrue(e.getMessage().startsWith("backend 'cuda' cannot run here: "), e.getMessage());
    assertTrue(e.getMessage().contains(a.reason()), e.getMessage());
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
    // Asking again gives the same answer: the cached probe, not a NoClassDefFoundError.
    IllegalStateException again = assertThrows(IllegalStateException.class, () -> CudaBackend.create(1));
    assertTrue(again.getMessage().contains(a.reason()), again.getMessage());
  }

  @Test
  void withoutGpuAutoFallsBackToCpuAndSaysWhy() {
    Availability a = CudaProbe.probe();
    assumeFalse(a.available(), "a GPU is present");
    Backends.Choice c = Backends.create("auto", 2);
    try (Backend b = c.backend()) {
      assertEquals("cpu", b.name());
      assertEquals("auto: CUDA unavailable (" + a.reason() + "), using the CPU", c.reason());
    }
  }

  @Test
  void withGpuAutoChoosesCuda() {
    Availability a = CudaProbe.probe();
    assumeTrue(a.available(), () -> "no GPU here: " + a.reason());
    Backends.Choice c = Backends.create("auto", 1);
    try (Backend b = c.backend()) {
      assertEquals("cuda", b.name());
      assertTrue(c.reason().startsWith("auto: CUDA on "), c.reason());
    }
  }
}
