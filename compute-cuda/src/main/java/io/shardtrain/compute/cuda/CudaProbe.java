package io.shardtrain.compute.cuda;

import io.shardtrain.compute.backend.BackendProvider.Availability;
import jcuda.CudaException;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.JCudaDriver;

/**
 * Answers once per process whether the CUDA driver API works here, and why not.
 *
 * <p>On a machine without {@code libcuda.so.1} the first touch of {@link JCudaDriver} throws
 * {@link UnsatisfiedLinkError} and every later touch {@link NoClassDefFoundError}, so the first
 * answer is cached and {@link JCudaDriver} is never touched again after a failure. Nothing here
 * throws: a CPU machine gets {@code unavailable} and a one-line reason.
 */
public final class CudaProbe {
  private static Availability cached;

  private CudaProbe() {}

  /** The cached answer, probing on first call. */
  public static synchronized Availability probe() {
    if (cached == null) cached = run();
    return cached;
  }

  private static Availability run() {
    try {
      JCudaDriver.setExceptionsEnabled(true);
      JCudaDriver.cuInit(0);
      int[] count = new int[1];
      JCudaDriver.cuDeviceGetCount(count);
      if (count[0] == 0) return Availability.no("the CUDA driver loaded but reports no device");
      CUdevice dev = new CUdevice();
      JCudaDriver.cuDeviceGet(dev, 0);
      byte[] name = new byte[256];
      JCudaDriver.cuDeviceGetName(name, name.length, dev);
      int[] major = new int[1], minor = new int[1], driver = new int[1];
      JCudaDriver.cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      JCudaDriver.cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      JCudaDriver.cuDriverGetVersion(driver);
      if (major[0] < 7 || (major[0] == 7 && minor[0] < 5)) {
        return Availability.no("GPU " + cString(name) + " is sm_" + major[0] + minor[0]
            + "; the kernels are built for sm_75 and newer");
      }
      return Availability.yes("CUDA on " + cString(name) + " (sm_" + major[0] + minor[0] + ", "
          + count[0] + " device(s), driver API " + driver[0] / 1000 + "." + (driver[0] % 1000) / 10 + ")");
    } catch (LinkageError e) {
      return Availability.no("no usable CUDA driver (" + oneLine(e) + ")");
    } catch (CudaException e) {
      return Availability.no("CUDA driver error (" + oneLine(e) + ")");
    } catch (RuntimeException e) {
      return Availability.no("CUDA probe failed (" + oneLine(e) + ")");
    }
  }

  static String cString(byte[] b) {
    int n = 0;
    while (n < b.length && b[n] != 0) n++;
    return new String(b, 0, n, java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** First line of a throwable's message, short enough for one log line. */
  static String oneLine(Throwable t) {
    String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getClass().getSimpleName() + ": " + t.getMessage();
    // JCuda's UnsatisfiedLinkError nests the dynamic linker's answer in a stack-trace dump:
    // that answer (e.g. "libcuda.so.1: cannot open shared object file") is the useful part.
    for (String line : m.split("\n")) {
      int at = line.indexOf(": cannot open shared object file");
      if (at < 0) at = line.indexOf(": undefined symbol");
      if (at >= 0) {
        int so = line.lastIndexOf(".so: ", at);
        return (so >= 0 ? line.substring(so + 5) : line).strip();
      }
    }
    int nl = m.indexOf('\n');
    if (nl >= 0) m = m.substring(0, nl);
    m = m.strip();
    return m.length() > 240 ? m.substring(0, 240) + "..." : m;
  }
}
