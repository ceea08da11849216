package io.shardtrain.compute.cuda;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * Page-locked host memory: the staging area for asynchronous copies on a stream, so the copy
 * engine moves data while kernels of the same trainer queue up behind it.
 */
final class PinnedBuffer implements AutoCloseable {
  private final Pointer host = new Pointer();
  private final long bytes;
  private final FloatBuffer floats;
  private final IntBuffer ints;
  private boolean freed;

  PinnedBuffer(long bytes) {
    this.bytes = Math.max(4, bytes);
    JCudaDriver.cuMemAllocHost(host, this.bytes);
    java.nio.ByteBuffer bb = host.getByteBuffer(0, this.bytes).order(ByteOrder.nativeOrder());
    this.floats = bb.asFloatBuffer();
    this.ints = bb.asIntBuffer();
  }

  long bytes() {
    return bytes;
  }

  /** Copies {@code n} floats from {@code src} in and queues their upload to {@code dst}. */
  void upload(float[] src, int n, DeviceBuffer dst, CUstream stream) {
    upload(src, n, 0, dst, stream);
  }

  /**
   * Copies {@code n} floats from {@code src} in at float offset {@code at} and queues their upload
   * to {@code dst}; several parameters share one buffer this way, with one wait for all of them.
   */
  void upload(float[] src, int n, int at, DeviceBuffer dst, CUstream stream) {
    floats.clear();
    floats.position(at);
    floats.put(src, 0, n);
    JCudaDriver.cuMemcpyHtoDAsync(dst, host.withByteOffset(4L * at), 4L * n, stream);
  }

  void uploadInts(int[] src, int n, DeviceBuffer dst, CUstream stream) {
    ints.clear();
    ints.put(src, 0, n);
    JCudaDriver.cuMemcpyHtoDAsync(dst, host, 4L * n, stream);
  }

  /** Queues a download of {@code n} floats from {@code src}; read them after the stream syncs. */
  void queueDownload(DeviceBuffer src, int n, CUstream stream) {
    queueDownload(src, n, 0, stream);
  }

  /** Queues a download of {@code n} floats from {@code src} to float offset {@code at}. */
  void queueDownload(DeviceBuffer src, int n, int at, CUstream stream) {
    JCudaDriver.cuMemcpyDtoHAsync(host.withByteOffset(4L * at), src, 4L * n, stream);
  }

  /** Copies {@code n} floats of a finished download into {@code dst}. */
  void read(float[] dst, int n) {
    read(dst, n, 0);
  }

  /** Copies {@code n} floats of a finished download at float offset {@code at} into {@code dst}. */
  void read(float[] dst, int n, int at) {
    floats.clear();
    floats.position(at);
    floats.get(dst, 0, n);
  }

  @Override
  public void close() {
    if (!freed) {
      freed = true;
      JCudaDriver.cuMemFreeHost(host);
    }
  }
}
