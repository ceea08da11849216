package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The shared kernel suite on {@link CpuBackend}, with two threads (the split GEMM path) and one,
 * against {@link ReferenceBackend} at {@code 1e-5}.
 */
class CpuBackendOpsTest extends BackendOpsSuite {
  @Override
  protected Backend createBackend() {
    return CpuBackend.create(2);
  }

  @Override
  protected Backend createOracle() {
    return new ReferenceBackend();
  }

  @Override
  protected double tolerance() {
    return 1e-5;
  }

  @Test
  void threadCountBelowOneIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CpuBackend.create(0));
    assertTrue(e.getMessage().contains("0"), e.getMessage());
  }

  @Nested
  class SingleThread extends BackendOpsSuite {
    @Override
    protected Backend createBackend() {
      return CpuBackend.create(1);
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
}
