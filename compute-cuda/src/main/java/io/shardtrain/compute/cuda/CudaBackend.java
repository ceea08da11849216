package io.shardtrain.compute.cuda;

import io.shardtrain.compute.Shapes;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.OpChecks;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.nn.ResidentMlpBackend;
import io.shardtrain.compute.optim.Sgd;
import java.util.function.Consumer;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

/**
 * The CUDA backend over host tensors: each call uploads its inputs to scratch device buffers,
 * runs the kernel on this backend's own stream, and copies the outputs back. That is correct
 * and lets every model and test written against {@link Backend} run on the GPU, but it moves
 * every operand across PCIe on every call; training on the GPU for speed goes through
 * {@link CudaMlpStep}, which keeps parameters, activations and gradients on the device.
 *
 * <p>GEMM is cuBLAS through {@link CublasShim} when the shim and a {@code libcublas} load, else
 * the tiled PTX kernel; {@link #gemmName()} says which. Shapes are checked on the host first,
 * with the same messages as {@link io.shardtrain.compute.backend.CpuBackend}. One backend per
 * trainer (one stream each); not thread-safe.
 */
public final class CudaBackend implements Backend, ResidentMlpBackend {
  /** Which GEMM to use. */
  public enum GemmChoice { AUTO, CUBLAS, PTX }

  private static final int BLOCK = 256;

  private final CudaRuntime rt;
  private final CudaStream stream;
  private final Gemm gemm;
  private final int threads;
  private final DeviceBuffer[] scratch = new DeviceBuffer[6];
  private boolean closed;

  private CudaBackend(int threads, GemmChoice choice) {
    this.rt = CudaRuntime.get();
    this.threads = threads;
    this.stream = new CudaStream();
    this.gemm = openGemm(rt, stream, choice);
  }

  /** A backend with cuBLAS if it loads, else the PTX GEMM. */
  public static CudaBackend create(int threads) {
    return create(threads, GemmChoice.AUTO);
  }

  /**
   * A backend with the given GEMM. Throws {@link IllegalStateException} when CUDA is unavailable
   * (the message carries the probe's reason) or when {@code CUBLAS} is asked for and cannot load.
   */
  public static CudaBackend create(int threads, GemmChoice choice) {
    if (threads < 1) throw new IllegalArgumentException("compute threads must be at least 1, got " + threads);
    return new CudaBackend(threads, choice);
  }

  private static Gemm openGemm(CudaRuntime rt, CudaStream stream, GemmChoice choice) {
    if (choice == GemmChoice.PTX) return new PtxGemm(rt, stream, "asked for");
    String err = CublasShim.load();
    if (err == null) return CublasShim.open(stream);
    if (choice == GemmChoice.CUBLAS) throw new IllegalStateException("cuBLAS GEMM unavailable: " + err);
    return new PtxGemm(rt, stream, err);
  }

  /** Which GEMM runs: cuBLAS via the shim, or the PTX kernel and why. */
  public String gemmName() {
    return gemm.name();
  }

  /** Which PTX the module was loaded from. */
  public String ptxName() {
    return rt.ptxName();
  }

  CudaRuntime runtime() {
    return rt;
  }

  CudaStream stream() {
    return stream;
  }

  Gemm gemmImpl() {
    return gemm;
  }

  @Override
  public String name() {
    return "cuda";
  }

  @Override
  public int threads() {
    return threads;
  }

  // ---- host <-> scratch ----

  private DeviceBuffer slot(int i, long floats) {
    DeviceBuffer b = scratch[i];
    if (b == null || b.bytes() < 4 * floats) {
      if (b != null) b.close();
      b = DeviceBuffer.floats(Math.max(floats, b == null ? 0 : b.bytes() / 2));
      scratch[i] = b;
    }
    return b;
  }

  private DeviceBuffer in(int i, float[] data) {
    DeviceBuffer b = slot(i, data.length);
    if (data.length > 0) JCudaDriver.cuMemcpyHtoD(b, Pointer.to(data), 4L * data.length);
    return b;
  }

  private DeviceBuffer inInts(int i, int[] data) {
    DeviceBuffer b = slot(i, data.length);
    if (data.length > 0) JCudaDriver.cuMemcpyHtoD(b, Pointer.to(data), 4L * data.length);
    return b;
  }

  private DeviceBuffer in(int i, float[] data, boolean upload) {
    return upload ? in(i, data) : slot(i, data.length);
  }

  // Synchronous copies on the legacy stream wait for this (blocking) stream's kernels.
  private void out(DeviceBuffer b, float[] data) {
    if (data.length > 0) JCudaDriver.cuMemcpyDtoH(Pointer.to(data), b, 4L * data.length);
  }

  private void enter() {
    if (closed) throw new IllegalStateException("cuda backend is closed");
    rt.makeCurrent();
  }

  private void elementwise(String kernel, int n, Object... args) {
    if (n == 0) return;
    Object[] all = new Object[args.length + 1];
    all[0] = n;
    System.arraycopy(args, 0, all, 1, args.length);
    rt.launch(kernel, rt.gridFor(n, BLOCK), 1, BLOCK, stream, all);
  }

  private void perRowWarp(String kernel, int rows, Object... args) {
    if (rows == 0) return;
    int warpsPerBlock = BLOCK / 32;
    rt.launch(kernel, (rows + warpsPerBlock - 1) / warpsPerBlock, 1, BLOCK, stream, args);
  }

  // ---- Backend ----

  @Override
  public void gemm(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c) {
    OpChecks.GemmDims dims = OpChecks.gemm(transA, transB, a, b, c);
    int m = dims.m(), n = dims.n(), k = dims.k();
    enter();
    DeviceBuffer da = in(0, a.data()), db = in(1, b.data()), dc = in(2, c.data(), beta != 0f);
    if (k == 0) {
      // No products to add: C = beta C, which the kernels would skip reading for beta = 0.
      if (beta == 0f) java.util.Arrays.fill(c.data(), 0f);
      else scale(beta, c);
      return;
    }
    gemm.sgemm(transA, transB, m, n, k, alpha, da.address(), a.cols(), db.address(), b.cols(), beta,
        dc.address(), n);
    out(dc, c.data());
  }

  @Override
  public void axpy(float alpha, Tensor x, Tensor y) {
    Shapes.requireSame("axpy", x, y);
    enter();
    DeviceBuffer dx = in(0, x.data()), dy = in(1, y.data());
    elementwise("st_axpy", y.size(), alpha, dx, dy);
    out(dy, y.data());
  }

  @Override
  public void scale(float alpha, Tensor x) {
    enter();
    DeviceBuffer dx = in(0, x.data());
    elementwise("st_scale", x.size(), alpha, dx);
    out(dx, x.data());
  }

  @Override
  public void add(Tensor a, Tensor b, Tensor out) {
    Shapes.requireSame("add", a, b);
    Shapes.requireSame("add", a, out);
    binary("st_add", a, b, out);
  }

  @Override
  public void mul(Tensor a, Tensor b, Tensor out) {
    Shapes.requireSame("mul", a, b);
    Shapes.requireSame("mul", a, out);
    binary("st_mul", a, b, out);
  }

  private void binary(String kernel, Tensor a, Tensor b, Tensor out) {
    enter();
    DeviceBuffer da = in(0, a.data()), db = in(1, b.data()), dout = slot(2, out.size());
    elementwise(kernel, out.size(), da, db, dout);
    out(dout, out.data());
  }

  @Override
  public void addRowVector(Tensor m, Tensor v) {
    int cols = m.cols();
    Shapes.requireSize("addRowVector " + m.shapeString() + " + vector", v, cols);
    enter();
    DeviceBuffer dm = in(0, m.data()), dv = in(1, v.data());
    int rows = m.size() / Math.max(cols, 1);
    if (m.size() > 0) rt.launch("st_add_row_vector", rt.gridFor(m.size(), BLOCK), 1, BLOCK, stream, rows, cols, dm, dv);
    out(dm, m.data());
  }

  @Override
  public void columnSums(Tensor m, Tensor out) {
    int cols = m.cols();
    Shapes.requireSize("columnSums of " + m.shapeString(), out, cols);
    enter();
    int rows = m.size() / Math.max(cols, 1);
    DeviceBuffer dm = in(0, m.data()), dout = slot(1, cols);
    if (cols > 0) rt.launch("st_column_sums", (cols + BLOCK - 1) / BLOCK, 1, BLOCK, stream, rows, cols, dm, dout);
    out(dout, out.data());
  }

  @Override
  public void rowSums(Tensor m, Tensor out) {
    Shapes.requireSize("rowSums of " + m.shapeString(), out, m.rows());
    rowReduce("st_row_sums", m, out);
  }

  @Override
  public void rowMax(Tensor m, Tensor out) {
    Shapes.requireSize("rowMax of " + m.shapeString(), out, m.rows());
    rowReduce("st_row_max", m, out);
  }

  private void rowReduce(String kernel, Tensor m, Tensor out) {
    enter();
    DeviceBuffer dm = in(0, m.data()), dout = slot(1, m.rows());
    perRowWarp(kernel, m.rows(), m.rows(), m.cols(), dm, dout);
    out(dout, out.data());
  }

  @Override
  public void rowArgmax(Tensor m, int[] out) {
    int rows = m.rows();
    Shapes.requireLength("rowArgmax of " + m.shapeString(), rows, out.length);
    enter();
    DeviceBuffer dm = in(0, m.data()), dout = slot(1, rows);
    perRowWarp("st_row_argmax", rows, rows, m.cols(), dm, dout);
    if (rows > 0) JCudaDriver.cuMemcpyDtoH(Pointer.to(out), dout, 4L * rows);
  }

  @Override
  public void relu(Tensor x, Tensor out) {
    Shapes.requireSame("relu", x, out);
    unary("st_relu", x, out);
  }

  @Override
  public void reluBackward(Tensor x, Tensor gradOut, Tensor gradIn) {
    Shapes.requireSame("reluBackward", x, gradOut);
    Shapes.requireSame("reluBackward", x, gradIn);
    binaryBackward("st_relu_backward", x, gradOut, gradIn);
  }

  @Override
  public void tanh(Tensor x, Tensor out) {
    Shapes.requireSame("tanh", x, out);
    unary("st_tanh", x, out);
  }

  @Override
  public void tanhBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    Shapes.requireSame("tanhBackward", y, gradOut);
    Shapes.requireSame("tanhBackward", y, gradIn);
    binaryBackward("st_tanh_backward", y, gradOut, gradIn);
  }

  @Override
  public void sigmoid(Tensor x, Tensor out) {
    Shapes.requireSame("sigmoid", x, out);
    unary("st_sigmoid", x, out);
  }

  @Override
  public void sigmoidBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    Shapes.requireSame("sigmoidBackward", y, gradOut);
    Shapes.requireSame("sigmoidBackward", y, gradIn);
    binaryBackward("st_sigmoid_backward", y, gradOut, gradIn);
  }

  private void unary(String kernel, Tensor x, Tensor out) {
    enter();
    DeviceBuffer dx = in(0, x.data()), dout = slot(1, out.size());
    elementwise(kernel, out.size(), dx, dout);
    out(dout, out.data());
  }

  private void binaryBackward(String kernel, Tensor y, Tensor g, Tensor gi) {
    enter();
    DeviceBuffer dy = in(0, y.data()), dg = in(1, g.data()), dgi = slot(2, gi.size());
    elementwise(kernel, gi.size(), dy, dg, dgi);
    out(dgi, gi.data());
  }

  @Override
  public float softmaxCrossEntropy(Tensor logits, int[] labels, Tensor probs, Tensor gradLogits) {
    OpChecks.softmaxCrossEntropy(logits, labels, probs, gradLogits);
    int rows = logits.rows(), cols = logits.cols();
    enter();
    DeviceBuffer dz = in(0, logits.data()), dl = inInts(1, labels);
    DeviceBuffer dp = probs == null ? null : slot(2, probs.size());
    DeviceBuffer dg = gradLogits == null ? null : slot(3, gradLogits.size());
    DeviceBuffer loss = slot(4, rows), mean = slot(5, 1);
    perRowWarp("st_softmax_xent", rows, rows, cols, dz, dl, dp, dg, loss);
    rt.launch("st_sum", 1, 1, 1024, stream, rows, loss, 1f / rows, mean);
    if (dp != null) out(dp, probs.data());
    if (dg != null) out(dg, gradLogits.data());
    float[] m = new float[1];
    out(mean, m);
    return m[0];
  }

  @Override
  public float logisticLoss(Tensor logits, float[] labels, Tensor probs, Tensor gradLogits) {
    OpChecks.logisticLoss(logits, labels, probs, gradLogits);
    int n = logits.size();
    enter();
    DeviceBuffer dz = in(0, logits.data()), dy = in(1, labels);
    DeviceBuffer dp = probs == null ? null : slot(2, n);
    DeviceBuffer dg = gradLogits == null ? null : slot(3, n);
    DeviceBuffer loss = slot(4, n), mean = slot(5, 1);
    elementwise("st_logistic_loss", n, dz, dy, dp, dg, loss);
    rt.launch("st_sum", 1, 1, 1024, stream, n, loss, 1f / n, mean);
    if (dp != null) out(dp, probs.data());
    if (dg != null) out(dg, gradLogits.data());
    float[] m = new float[1];
    out(mean, m);
    return m[0];
  }

  @Override
  public void gather(Tensor table, int[] ids, Tensor out) {
    OpChecks.tableRows("gather", "output", out, ids, table);
    int dim = table.cols();
    enter();
    DeviceBuffer dt = in(0, table.data()), di = inInts(1, ids), dout = slot(2, out.size());
    if (out.size() > 0) rt.launch("st_gather", rt.gridFor(out.size(), BLOCK), 1, BLOCK, stream, ids.length, dim, dt, di, dout);
    out(dout, out.data());
  }

  @Override
  public void scatterAdd(Tensor grad, int[] ids, Tensor tableGrad) {
    OpChecks.tableRows("scatterAdd", "gradient", grad, ids, tableGrad);
    int dim = tableGrad.cols();
    enter();
    DeviceBuffer dg = in(0, grad.data()), di = inInts(1, ids), dt = in(2, tableGrad.data());
    if (grad.size() > 0) rt.launch("st_scatter_add", rt.gridFor(grad.size(), BLOCK), 1, BLOCK, stream, ids.length, dim, dg, di, dt);
    out(dt, tableGrad.data());
  }

  /** Waits for everything queued on this backend's stream. */
  public void synchronize() {
    enter();
    stream.synchronize();
  }

  @Override
  public void close() {
    if (closed) return;
    rt.makeCurrent();
    stream.synchronize();
    gemm.close();
    for (DeviceBuffer b : scratch) if (b != null) b.close();
    stream.close();
    closed = true;
  }

  /**
   * The model resident on this backend's device ({@link CudaMlpStep}): parameters go up and
   * gradients come down once per step instead of each operation's operands. The optimizer stays
   * where the caller applies it (the parameter server, or the host in a single process).
   */
  @Override
  public GradientStep residentStep(Mlp model, int maxBatch) {
    return new ResidentStep(model, CudaMlpStep.create(this, model, model.activation(), maxBatch, new Sgd()));
  }

  /**
   * {@link #residentStep}: the model's forward and backward through its {@link CudaMlpStep}. Each
   * {@link #forwardLayer} uploads that layer's parameters and queues its forward without waiting;
   * {@link #finishForwardBackward} queues the rest and hands out each layer's gradients as soon as
   * they are back on the host.
   */
  static final class ResidentStep implements GradientStep {
    private final Mlp model;
    private final CudaMlpStep step;

    ResidentStep(Mlp model, CudaMlpStep step) {
      this.model = model;
      this.step = step;
    }

    @Override
    public void beginForward(Tensor x) {
      step.beginForward(x);
    }

    @Override
    public void forwardLayer(int layer) {
      step.forwardLayer(model, layer);
    }

    @Override
    public float finishForwardBackward(int[] labels, Consumer<Parameter> onGradient) {
      return step.finishForwardBackward(model, labels, onGradient);
    }

    @Override
    public void close() {
      step.close();
    }
  }
}
