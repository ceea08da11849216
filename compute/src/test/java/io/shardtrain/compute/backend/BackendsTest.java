package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Backend selection in a build without {@code compute-cuda} on the class path. */
class BackendsTest {
  @Test
  void cpuIsChosenWhenAsked() {
    try (Backend b = Backends.create("CPU", 2).backend()) {
      assertEquals("cpu", b.name());
      assertEquals(2, b.threads());
    }
  }

  @Test
  void autoFallsBackToCpuAndSaysThereIsNoCudaProvider() {
    assertTrue(Backends.provider("cuda").isEmpty());
    Backends.Choice c = Backends.create("auto", 1);
    try (Backend b = c.backend()) {
      assertEquals("cpu", b.name());
      assertTrue(c.reason().contains("no CUDA backend on the class path"), c.reason());
    }
  }

  @Test
  void cudaWithoutProviderFailsWithOneLine() {
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> Backends.create("cuda", 1));
    assertTrue(e.getMessage().contains("not in this build"), e.getMessage());
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
  }

  @Test
  void unknownNameIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Backends.create("tpu", 1));
    assertTrue(e.getMessage().contains("'tpu'") && e.getMessage().contains("auto, cpu or cuda"), e.getMessage());
  }
}
