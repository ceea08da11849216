package io.shardtrain.compute.cuda;

import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/** A CUDA stream whose raw handle can be handed to cuBLAS through the shim. */
final class CudaStream extends CUstream implements AutoCloseable {
  private boolean destroyed;

  CudaStream() {
    JCudaDriver.cuStreamCreate(this, 0);
  }

  long handle() {
    return getNativePointer();
  }

  void synchronize() {
    JCudaDriver.cuStreamSynchronize(this);
  }

  @Override
  public void close() {
    if (!destroyed) {
      destroyed = true;
      JCudaDriver.cuStreamDestroy(this);
    }
  }
}
