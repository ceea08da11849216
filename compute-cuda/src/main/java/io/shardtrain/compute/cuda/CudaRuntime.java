package io.shardtrain.compute.cuda;

import io.shardtrain.compute.backend.BackendProvider.Availability;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * What one process shares on device 0: the primary context (the one the CUDA runtime, and so
 * cuBLAS, also uses), the kernel module loaded from our PTX, and its functions. Opened on first
 * use, after {@link CudaProbe} said yes; every thread that calls in makes the context current.
 */
final class CudaRuntime {
  private static CudaRuntime instance;

  private final CUcontext context = new CUcontext();
  private final CUmodule module = new CUmodule();
  private final Map<String, CUfunction> functions = new HashMap<>();
  private final int smCount;
  private final String ptxName;

  private CudaRuntime() {
    CUdevice dev = new CUdevice();
    JCudaDriver.cuDeviceGet(dev, 0);
    JCudaDriver.cuDevicePrimaryCtxRetain(context, dev);
    JCudaDriver.cuCtxSetCurrent(context);
    int[] v = new int[1];
    JCudaDriver.cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    smCount = v[0];
    JCudaDriver.cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    // sm_90 PTX on Hopper and newer; the compute_75 PTX (JIT-compiled by the driver) elsewhere.
    ptxName = v[0] >= 9 ? "kernels-sm90.ptx" : "kernels-sm75.ptx";
    byte[] ptx = readPtx(ptxName);
    JCudaDriver.cuModuleLoadData(module, ptx);
  }

  /** The shared runtime; throws {@link IllegalStateException} with the probe's reason if none. */
  static synchronized CudaRuntime get() {
    if (instance == null) {
      Availability a = CudaProbe.probe();
      if (!a.available()) throw new IllegalStateException("CUDA unavailable: " + a.reason());
      instance = new CudaRuntime();
    }
    instance.makeCurrent();
    return instance;
  }

  private static byte[] readPtx(String name) {
    try (InputStream in = CudaRuntime.class.getResourceAsStream(name)) {
      if (in == null) throw new IllegalStateException("PTX resource " + name + " missing from the jar");
      byte[] text = in.readAllBytes();
      byte[] z = java.util.Arrays.copyOf(text, text.length + 1); // cuModuleLoadData wants a C string
      return z;
    } catch (IOException e) {
      throw new IllegalStateException("cannot read PTX resource " + name + ": " + e.getMessage(), e);
    }
  }

  void makeCurrent() {
    JCudaDriver.cuCtxSetCurrent(context);
  }

  String ptxName() {
    return ptxName;
  }

  int smCount() {
    return smCount;
  }

  synchronized CUfunction function(String name) {
    return functions.computeIfAbsent(name, n -> {
      CUfunction f = new CUfunction();
      JCudaDriver.cuModuleGetFunction(f, module, n);
      return f;
    });
  }

  /** Blocks for a grid-stride kernel over {@code n} elements: enough to fill the GPU, no more. */
  int gridFor(long n, int block) {
    long blocks = (n + block - 1) / block;
    return (int) Math.max(1, Math.min(blocks, 32L * smCount));
  }

  /**
   * Launches {@code name} on {@code stream}. Arguments: Integer, Float, Long (a raw address),
   * DeviceBuffer (its address) or null (a null pointer).
   */
  void launch(String name, int gridX, int gridY, int block, CUstream stream, Object... args) {
    Pointer[] params = new Pointer[args.length];
    for (int i = 0; i < args.length; i++) {
      Object a = args[i];
      if (a instanceof Integer) params[i] = Pointer.to(new int[] {(Integer) a});
      else if (a instanceof Float) params[i] = Pointer.to(new float[] {(Float) a});
      else if (a instanceof Long) params[i] = Pointer.to(new long[] {(Long) a});
      else if (a instanceof DeviceBuffer) params[i] = Pointer.to(new long[] {((DeviceBuffer) a).address()});
      else if (a == null) params[i] = Pointer.to(new long[] {0L});
      else throw new IllegalArgumentException("kernel argument of type " + a.getClass());
    }
    JCudaDriver.cuLaunchKernel(function(name), gridX, gridY, 1, block, 1, 1, 0, stream,
        Pointer.to(params), null);
  }
}
