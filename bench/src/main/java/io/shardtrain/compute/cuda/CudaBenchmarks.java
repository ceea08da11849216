package io.shardtrain.compute.cuda;

import io.shardtrain.bench.Median;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.BackendProvider.Availability;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.data.Mnist;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.Sgd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.function.Consumer;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.JCudaDriver;

/**
 * GPU benchmarks, one JSON object per line prefixed {@code RESULT }, for scripts/gpu-check.sh and
 * later the CLI:
 * <ul>
 *   <li>{@code gemm [n] [warmup] [iters]}: cuBLAS (or PTX) SGEMM at n^3, median of CUDA-event
 *       timings after warm-up, in TFLOP/s;
 *   <li>{@code mlp [batch] [steps]}: one training step of a 784-512-256-10 ReLU MLP with SGD, the
 *       resident {@link CudaMlpStep} against {@link Mlp} on {@link CpuBackend} with every core;
 *   <li>{@code trainer-step [batch] [steps]}: a trainer's forward and backward with the gradients
 *       on the host, on the CPU and on the GPU through host-tensor operations and resident.
 *   <li>{@code mnist [dir|synthetic] [epochs]}: epoch time at batch 512 on the GPU, with the MNIST
 *       files from {@code dir}, or a synthetic MNIST-shaped set (60000 x 784, 10 classes).
 * </ul>
 *
 * <p>Lives in module {@code bench}, not in {@code compute-cuda}'s jar, but keeps the backend's
 * package: {@code gemm} times the device GEMM on device buffers through package-private parts of
 * the backend ({@code CudaRuntime}, {@code CudaStream}, {@code DeviceBuffer}, {@code Gemm}), which
 * stay package-private instead of becoming API for one benchmark. Runs from the class path.
 */
public final class CudaBenchmarks {
  private CudaBenchmarks() {}

  public static void main(String[] args) throws Exception {
    Availability a = CudaProbe.probe();
    if (!a.available()) {
      System.out.println("RESULT {\"bench\":\"probe\",\"available\":false,\"reason\":\"" + esc(a.reason()) + "\"}");
      System.exit(3);
    }
    String mode = args.length > 0 ? args[0] : "gemm";
    try (CudaBackend be = CudaBackend.create(1)) {
      System.out.println("RESULT {\"bench\":\"probe\",\"available\":true,\"reason\":\"" + esc(a.reason())
          + "\",\"gemm\":\"" + esc(be.gemmName()) + "\",\"ptx\":\"" + be.ptxName() + "\"}");
      switch (mode) {
        case "probe":
          break;
        case "gemm":
          gemm(be, arg(args, 1, 4096), arg(args, 2, 3), arg(args, 3, 10));
          break;
        case "gemm-ptx":
          try (CudaBackend ptx = CudaBackend.create(1, CudaBackend.GemmChoice.PTX)) {
            gemm(ptx, arg(args, 1, 4096), arg(args, 2, 2), arg(args, 3, 5));
          }
          break;
        case "mlp":
          mlp(be, arg(args, 1, 512), arg(args, 2, 50));
          break;
        case "trainer-step":
          trainerStep(be, arg(args, 1, 64), arg(args, 2, 50));
          break;
        case "mnist":
          mnist(be, args.length > 1 ? args[1] : "synthetic", arg(args, 2, 1));
          break;
        default:
          throw new IllegalArgumentException("unknown benchmark '" + mode + "': expected gemm, gemm-ptx, mlp, trainer-step or mnist");
      }
    }
  }

  private static int arg(String[] args, int i, int dflt) {
    return args.length > i ? Integer.parseInt(args[i]) : dflt;
  }

  static void gemm(CudaBackend be, int n, int warmup, int iters) {
    CudaRuntime rt = be.runtime();
    rt.makeCurrent();
    Random rnd = new Random(1);
    float[] host = new float[n * n];
    for (int i = 0; i < host.length; i++) host[i] = rnd.nextFloat() * 2 - 1;
    try (DeviceBuffer a = DeviceBuffer.floats((long) n * n); DeviceBuffer b = DeviceBuffer.floats((long) n * n);
         DeviceBuffer c = DeviceBuffer.floats((long) n * n)) {
      JCudaDriver.cuMemcpyHtoD(a, Pointer.to(host), 4L * host.length);
      JCudaDriver.cuMemcpyHtoD(b, Pointer.to(host), 4L * host.length);
      Gemm g = be.gemmImpl();
      for (int i = 0; i < warmup; i++) g.sgemm(false, false, n, n, n, 1f, a.address(), n, b.address(), n, 0f, c.address(), n);
      be.stream().synchronize();
      CUevent start = new CUevent(), stop = new CUevent();
      JCudaDriver.cuEventCreate(start, 0);
      JCudaDriver.cuEventCreate(stop, 0);
      double[] ms = new double[iters];
      for (int i = 0; i < iters; i++) {
        JCudaDriver.cuEventRecord(start, be.stream());
        g.sgemm(false, false, n, n, n, 1f, a.address(), n, b.address(), n, 0f, c.address(), n);
        JCudaDriver.cuEventRecord(stop, be.stream());
        JCudaDriver.cuEventSynchronize(stop);
        float[] t = new float[1];
        JCudaDriver.cuEventElapsedTime(t, start, stop);
        ms[i] = t[0];
      }
      JCudaDriver.cuEventDestroy(start);
      JCudaDriver.cuEventDestroy(stop);
      double med = Median.of(ms);
      double tflops = 2.0 * n * n * n / (med * 1e-3) / 1e12;
      System.out.printf(Locale.ROOT, "RESULT {\"bench\":\"gemm\",\"n\":%d,\"impl\":\"%s\",\"median_ms\":%.4f,\"best_ms\":%.4f,\"tflops\":%.3f}%n",
          n, esc(be.gemmName()), med, Arrays.stream(ms).min().getAsDouble(), tflops);
    }
  }

  /**
   * A trainer's forward and backward (784-512-256-10, the default model) at {@code batch}, with
   * the gradients on the host afterwards, as the parameter server needs them: the CPU backend
   * with one thread (a trainer's default) and with every core, the CUDA backend's host-tensor
   * operations (each copies its operands), and the resident {@link GradientStep}, which uploads
   * the parameters and downloads the gradients once per step; the resident step once more with
   * each gradient copied into a fresh array as it is handed out (what a push's encoding does at
   * least), which the device's backward of the layers below can hide. Median milliseconds per step.
   */
  static void trainerStep(CudaBackend be, int batch, int steps) {
    Random rnd = new Random(7);
    Tensor x = Tensor.zeros(batch, 784);
    for (int i = 0; i < x.size(); i++) x.data()[i] = rnd.nextFloat();
    int[] y = new int[batch];
    for (int i = 0; i < batch; i++) y[i] = rnd.nextInt(10);
    int cores = Runtime.getRuntime().availableProcessors();
    double cpu1, cpuAll, hostApi, resident, residentCopying;
    try (CpuBackend one = CpuBackend.create(1); CpuBackend all = CpuBackend.create(cores)) {
      cpu1 = timeSteps(Mlp.create(one, 784, new int[] {512, 256}, 10, Activation.RELU, 3), x, y, steps);
      cpuAll = timeSteps(Mlp.create(all, 784, new int[] {512, 256}, 10, Activation.RELU, 3), x, y, steps);
    }
    Mlp onGpu = Mlp.create(be, 784, new int[] {512, 256}, 10, Activation.RELU, 3);
    hostApi = timeSteps(onGpu, x, y, steps);
    try (GradientStep step = GradientStep.of(onGpu, batch)) {
      resident = timeSteps(step, x, y, steps);
      residentCopying = timeSteps(step, x, y, steps, p -> p.grad().data().clone());
    }
    System.out.printf(Locale.ROOT, "RESULT {\"bench\":\"trainer-step\",\"batch\":%d,\"layers\":\"784-512-256-10\","
        + "\"cpu_1_thread_ms\":%.4f,\"cpu_%d_threads_ms\":%.4f,\"cuda_host_ops_ms\":%.4f,\"cuda_resident_ms\":%.4f,"
        + "\"cuda_resident_copying_ms\":%.4f}%n", batch, cpu1, cores, cpuAll, hostApi, resident, residentCopying);
  }

  private static double timeSteps(GradientStep step, Tensor x, int[] y, int steps) {
    return timeSteps(step, x, y, steps, p -> { });
  }

  private static double timeSteps(GradientStep step, Tensor x, int[] y, int steps, Consumer<Parameter> onGradient) {
    for (int i = 0; i < 3; i++) step.forwardBackward(x, y, onGradient);
    double[] t = new double[steps];
    for (int i = 0; i < steps; i++) {
      long t0 = System.nanoTime();
      step.forwardBackward(x, y, onGradient);
      t[i] = (System.nanoTime() - t0) / 1e6;
    }
    return Median.of(t);
  }

  static void mlp(CudaBackend be, int batch, int steps) {
    int threads = Runtime.getRuntime().availableProcessors();
    Random rnd = new Random(2);
    Tensor x = Tensor.zeros(batch, 784);
    for (int i = 0; i < x.size(); i++) x.data()[i] = rnd.nextFloat();
    int[] y = new int[batch];
    for (int i = 0; i < batch; i++) y[i] = rnd.nextInt(10);
    Sgd sgd = new Sgd();
    double gpuMs, cpuMs;
    float gpuLoss;
    try (CpuBackend cpu = CpuBackend.create(threads)) {
      Mlp model = Mlp.create(cpu, 784, new int[] {512, 256}, 10, Activation.RELU, 3);
      try (CudaMlpStep step = CudaMlpStep.create(be, model, Activation.RELU, batch, sgd)) {
        for (int i = 0; i < 5; i++) step.trainStep(x, y, 0.01f);
        double[] t = new double[steps];
        float l = 0;
        for (int i = 0; i < steps; i++) {
          long t0 = System.nanoTime();
          l = step.trainStep(x, y, 0.01f);
          t[i] = (System.nanoTime() - t0) / 1e6;
        }
        gpuMs = Median.of(t);
        gpuLoss = l;
      }
      int cpuSteps = Math.max(5, Math.min(steps, 20));
      float[][] noSlots = new float[0][];
      double[] t = new double[cpuSteps];
      for (int i = -2; i < cpuSteps; i++) {
        long t0 = System.nanoTime();
        model.forwardBackward(x, y, p -> { });
        for (Parameter p : model.parameters()) sgd.apply(p.value().data(), p.grad().data(), noSlots, 1, 0.01f);
        if (i >= 0) t[i] = (System.nanoTime() - t0) / 1e6;
      }
      cpuMs = Median.of(t);
    }
    System.out.printf(Locale.ROOT, "RESULT {\"bench\":\"mlp\",\"batch\":%d,\"layers\":\"784-512-256-10\",\"gpu_step_ms\":%.4f,"
        + "\"cpu_step_ms\":%.4f,\"cpu_threads\":%d,\"speedup\":%.2f,\"gpu_loss\":%.5f}%n",
        batch, gpuMs, cpuMs, threads, cpuMs / gpuMs, gpuLoss);
  }

  static void mnist(CudaBackend be, String source, int epochs) throws Exception {
    Dataset train;
    String kind;
    if (!source.equals("synthetic") && Files.isDirectory(Path.of(source))) {
      train = Mnist.load(Path.of(source)).train();
      kind = "mnist files in " + source;
    } else {
      // MNIST-shaped: 60000 images of 784 pixels in [0, 1], 10 classes, a planted linear rule.
      Random rnd = new Random(4);
      int n = 60000;
      float[] f = new float[n * 784];
      int[] labels = new int[n];
      float[] w = new float[784 * 10];
      for (int i = 0; i < w.length; i++) w[i] = (float) rnd.nextGaussian();
      for (int i = 0; i < n; i++) {
        float best = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < 784; j++) f[i * 784 + j] = rnd.nextFloat();
        for (int c = 0; c < 10; c++) {
          float s = 0;
          for (int j = 0; j < 784; j++) s += f[i * 784 + j] * w[j * 10 + c];
          if (s > best) { best = s; labels[i] = c; }
        }
      }
      train = Dataset.classification(f, 784, labels, 10);
      kind = "synthetic (60000 x 784, planted linear labels)";
    }
    int batch = 512, n = train.size();
    try (CpuBackend cpu = CpuBackend.create(1)) {
      Mlp model = Mlp.create(cpu, 784, new int[] {512, 256}, 10, Activation.RELU, 5);
      try (CudaMlpStep step = CudaMlpStep.create(be, model, Activation.RELU, batch, new Sgd())) {
        Tensor full = Tensor.zeros(batch, 784);
        int[] order = new int[n];
        for (int i = 0; i < n; i++) order[i] = i;
        Random shuffle = new Random(6);
        for (int e = 1; e <= epochs; e++) {
          for (int i = n - 1; i > 0; i--) {
            int j = shuffle.nextInt(i + 1), tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
          }
          long t0 = System.nanoTime();
          double lossSum = 0;
          int batches = 0;
          for (int s = 0; s < n; s += batch) {
            int rows = Math.min(batch, n - s);
            Tensor x = rows == batch ? full : Tensor.zeros(rows, 784);
            int[] y = new int[rows];
            for (int r = 0; r < rows; r++) {
              int ex = order[s + r];
              for (int j = 0; j < 784; j++) x.data()[r * 784 + j] = train.feature(ex, j);
              y[r] = train.label(ex);
            }
            lossSum += step.trainStep(x, y, 0.05f);
            batches++;
          }
          double sec = (System.nanoTime() - t0) / 1e9;
          System.out.printf(Locale.ROOT, "RESULT {\"bench\":\"mnist\",\"data\":\"%s\",\"epoch\":%d,\"batch\":%d,"
              + "\"epoch_seconds\":%.3f,\"mean_loss\":%.4f}%n", esc(kind), e, batch, sec, lossSum / batches);
        }
      }
    }
  }

  private static String esc(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }
}
