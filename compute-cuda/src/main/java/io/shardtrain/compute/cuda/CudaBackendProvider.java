package io.shardtrain.compute.cuda;

import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.BackendProvider;

/** Registers {@link CudaBackend} as {@code cuda} with {@link io.shardtrain.compute.backend.Backends}. */
public final class CudaBackendProvider implements BackendProvider {
  @Override
  public String name() {
    return "cuda";
  }

  @Override
  public Availability probe() {
    return CudaProbe.probe();
  }

  @Override
  public Backend create(int threads) {
    return CudaBackend.create(threads);
  }
}
