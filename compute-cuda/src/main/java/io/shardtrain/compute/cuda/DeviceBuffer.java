package io.shardtrain.compute.cuda;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * A block of device memory. Its raw address goes into kernel parameters and the cuBLAS shim;
 * JCuda keeps the address in a protected field, which this subclass exposes.
 */
final class DeviceBuffer extends CUdeviceptr implements AutoCloseable {
  private final long bytes;
  private boolean freed;

  private DeviceBuffer(long bytes) {
    this.bytes = bytes;
  }

  /** {@code bytes} of device memory in the current context (at least 4 bytes). */
  static DeviceBuffer allocate(long bytes) {
    DeviceBuffer b = new DeviceBuffer(Math.max(4, bytes));
    JCudaDriver.cuMemAlloc(b, b.bytes);
    return b;
  }

  static DeviceBuffer floats(long n) {
    return allocate(4 * n);
  }

  long bytes() {
    return bytes;
  }

  /** The device address, for kernel parameters. */
  long address() {
    return getNativePointer();
  }

  @Override
  public void close() {
    if (!freed) {
      freed = true;
      JCudaDriver.cuMemFree(this);
    }
  }
}
