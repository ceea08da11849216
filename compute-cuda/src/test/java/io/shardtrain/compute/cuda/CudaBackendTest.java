package io.shardtrain.compute.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.BackendOpsSuite;
import io.shardtrain.compute.backend.BackendProvider.Availability;
import io.shardtrain.compute.backend.CpuBackend;
import org.junit.jupiter.api.Nested;

/**
 * The shared kernel suite on {@link CudaBackend} with cuBLAS when the shim loads (else the PTX
 * GEMM, which the class's output says), and again with the PTX GEMM forced; the CPU backend is the
 * oracle at {@code 1e-4}. Skipped, with the probe's reason, where there is no GPU.
 */
class CudaBackendTest extends BackendOpsSuite {
  static CudaBackend gpuOrSkip(CudaBackend.GemmChoice choice) {
    Availability a = CudaProbe.probe();
    System.out.println("CUDA probe: " + (a.available() ? "available: " : "unavailable: ") + a.reason());
    assumeTrue(a.available(), () -> "no GPU here: " + a.reason());
    CudaBackend be = CudaBackend.create(1, choice);
    System.out.println("CUDA backend: gemm " + be.gemmName() + ", " + be.ptxName());
    return be;
  }

  @Override
  protected Backend createBackend() {
    return gpuOrSkip(CudaBackend.GemmChoice.AUTO);
  }

  @Override
  protected Backend createOracle() {
    return CpuBackend.create(1);
  }

  @Override
  protected double tolerance() {
    return 1e-4;
  }

  @Nested
  class PtxGemm extends BackendOpsSuite {
    @Override
    protected Backend createBackend() {
      return gpuOrSkip(CudaBackend.GemmChoice.PTX);
    }

    @Override
    protected Backend createOracle() {
      return CpuBackend.create(1);
    }

    @Override
    protected double tolerance() {
      return 1e-4;
    }
  }
}
