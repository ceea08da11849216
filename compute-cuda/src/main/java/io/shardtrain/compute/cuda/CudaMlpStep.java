package io.shardtrain.compute.cuda;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.Adam;
import io.shardtrain.compute.optim.Momentum;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.Sgd;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.JCudaDriver;

/**
 * The device-resident training path for an {@link Mlp}: weights, biases, optimizer slots,
 * activations and gradients live in device memory for the life of this object; a step moves
 * only the batch in (through a pinned buffer, asynchronously on the backend's stream) and the
 * loss out. Gradients and parameters go to and from the host (the parameter server) through
 * pinned buffers, on request: {@link #readGradients}, {@link #readParameters},
 * {@link #writeParameters}.
 *
 * <p>The arithmetic is {@link Mlp#forwardBackward} followed by the CPU optimizer's
 * {@code apply}, kernel for kernel: dense layers {@code y = x W + b} with {@code W} of shape
 * [in, out], the chosen activation between layers, mean softmax cross-entropy on top, and SGD,
 * momentum or Adam on the device. Parameters are listed as {@link Mlp#parameters()} lists them.
 * Not thread-safe; one per trainer, on that trainer's {@link CudaBackend}.
 */
public final class CudaMlpStep implements AutoCloseable {
  private final CudaBackend be;
  private final CudaRuntime rt;
  private final CudaStream stream;
  private final Activation activation;
  private final Optimizer optimizer;
  private final int maxBatch;
  private final int[] widths;
  private final List<int[]> shapes = new ArrayList<>();
  private final List<DeviceBuffer> params = new ArrayList<>();
  private final List<DeviceBuffer> grads = new ArrayList<>();
  private final List<DeviceBuffer[]> slots = new ArrayList<>();
  private final DeviceBuffer[] z; // pre-activations of each dense layer, [maxBatch, widths[i+1]]
  private final DeviceBuffer[] a; // activations of hidden layers; a[0] is the input batch
  private final DeviceBuffer[] dz; // gradient w.r.t. z
  private final DeviceBuffer da, labels, rowLoss, loss;
  private final PinnedBuffer pinnedIn, pinnedLabels, pinnedParams, pinnedLoss;
  private final int[] sizes; // each parameter's element count
  private final int[] offsets; // each parameter's float offset in pinnedParams
  private final CUevent[] gradientsDown; // per layer: its gradients are in pinnedParams
  private long step;
  private int pendingBatch; // rows of the step begun and not finished; 0 when none
  private int nextLayer;
  private boolean closed;

  private CudaMlpStep(CudaBackend be, Mlp model, Activation activation, int maxBatch, Optimizer optimizer) {
    this.be = be;
    this.rt = be.runtime();
    this.stream = be.stream();
    this.activation = activation;
    this.optimizer = optimizer;
    this.maxBatch = maxBatch;
    List<Parameter> ps = model.parameters();
    int layers = ps.size() / 2;
    widths = new int[layers + 1];
    widths[0] = model.inputDim();
    for (int i = 0; i < layers; i++) widths[i + 1] = ps.get(2 * i).value().cols();
    long totalParams = 0;
    for (Parameter p : ps) totalParams += p.size();
    z = new DeviceBuffer[layers];
    a = new DeviceBuffer[layers];
    dz = new DeviceBuffer[layers];
    int maxWidth = 0;
    for (int w : widths) maxWidth = Math.max(maxWidth, w);
    for (Parameter p : ps) {
      shapes.add(p.shape());
      params.add(DeviceBuffer.floats(p.size()));
      grads.add(DeviceBuffer.floats(p.size()));
      DeviceBuffer[] s = new DeviceBuffer[optimizer.slotCount()];
      for (int j = 0; j < s.length; j++) {
        s[j] = DeviceBuffer.floats(p.size());
        JCudaDriver.cuMemsetD32Async(s[j], 0, p.size(), stream);
      }
      slots.add(s);
    }
    a[0] = DeviceBuffer.floats((long) maxBatch * widths[0]);
    for (int i = 0; i < layers; i++) {
      z[i] = DeviceBuffer.floats((long) maxBatch * widths[i + 1]);
      dz[i] = DeviceBuffer.floats((long) maxBatch * widths[i + 1]);
      if (i + 1 < layers) a[i + 1] = DeviceBuffer.floats((long) maxBatch * widths[i + 1]);
    }
    da = DeviceBuffer.floats((long) maxBatch * maxWidth);
    labels = DeviceBuffer.allocate(4L * maxBatch);
    rowLoss = DeviceBuffer.floats(maxBatch);
    loss = DeviceBuffer.floats(1);
    pinnedIn = new PinnedBuffer(4L * maxBatch * Math.max(widths[0], 1));
    // Room for every parameter at once: a step moves them all with one wait, not one per parameter.
    pinnedParams = new PinnedBuffer(4L * totalParams);
    pinnedLoss = new PinnedBuffer(4);
    pinnedLabels = new PinnedBuffer(4L * maxBatch);
    sizes = new int[ps.size()];
    offsets = new int[ps.size()];
    for (int p = 0; p < ps.size(); p++) {
      sizes[p] = ps.get(p).size();
      if (p > 0) offsets[p] = offsets[p - 1] + sizes[p - 1];
    }
    gradientsDown = new CUevent[layers];
    for (int i = 0; i < layers; i++) {
      gradientsDown[i] = new CUevent();
      JCudaDriver.cuEventCreate(gradientsDown[i], CUevent_flags.CU_EVENT_DISABLE_TIMING);
    }
    List<Tensor> values = new ArrayList<>();
    for (Parameter p : ps) values.add(p.value());
    writeParameters(values);
  }

  /**
   * A resident copy of {@code model} (its current parameters) on {@code backend}'s device, for
   * batches of up to {@code maxBatch} rows. {@code activation} must be the one the model was
   * built with; {@code optimizer} is {@link Sgd}, {@link Momentum} or {@link Adam}.
   */
  public static CudaMlpStep create(CudaBackend backend, Mlp model, Activation activation, int maxBatch,
      Optimizer optimizer) {
    if (maxBatch < 1) throw new IllegalArgumentException("maxBatch must be at least 1, got " + maxBatch);
    if (!(optimizer instanceof Sgd || optimizer instanceof Momentum || optimizer instanceof Adam)) {
      throw new IllegalArgumentException("optimizer " + optimizer.name()
          + " has no device kernel; the GPU path supports sgd, momentum and adam");
    }
    backend.runtime().makeCurrent();
    return new CudaMlpStep(backend, model, activation, maxBatch, optimizer);
  }

  /** Forward, backward and one optimizer update at learning rate {@code lr}; the mean loss. */
  public float trainStep(Tensor x, int[] labels, float lr) {
    queueForwardBackward(x, labels);
    update(lr);
    return readLoss();
  }

  /** Forward and backward only, leaving the gradients on the device; the mean loss. */
  public float forwardBackward(Tensor x, int[] labels) {
    queueForwardBackward(x, labels);
    return readLoss();
  }

  /**
   * {@link Mlp#forwardBackward} on the device for {@code model} (the model this step was created
   * from): {@link #beginForward}, then {@link #finishForwardBackward}. The mean loss.
   */
  public float forwardBackward(Mlp model, Tensor x, int[] labels, Consumer<Parameter> onGradient) {
    beginForward(x);
    return finishForwardBackward(model, labels, onGradient);
  }

  /** Starts a step on the batch {@code x}: queues its upload; no layer runs yet. */
  public void beginForward(Tensor x) {
    if (closed) throw new IllegalStateException("CudaMlpStep is closed");
    checkInput(x);
    rt.makeCurrent();
    // The pinned buffers are reused every step: what an earlier step (perhaps one that failed
    // half-way) queued from them must be done first. After a whole step the stream is idle.
    stream.synchronize();
    pendingBatch = x.rows();
    nextLayer = 0;
    pinnedIn.upload(x.data(), pendingBatch * widths[0], a[0], stream);
  }

  /**
   * Uploads dense layer {@code layer}'s current parameter values from {@code model} and queues its
   * forward, without waiting: the device runs it while the caller fills later layers' values. The
   * layer's values are read now, so the caller may change them once this returns.
   */
  public void forwardLayer(Mlp model, int layer) {
    if (closed) throw new IllegalStateException("CudaMlpStep is closed");
    if (pendingBatch == 0) throw new IllegalStateException("forwardLayer(" + layer + ") before beginForward");
    if (layer != nextLayer || layer >= z.length) {
      throw new IllegalStateException("forward runs layer " + nextLayer + " of " + z.length + " next, not " + layer);
    }
    rt.makeCurrent();
    uploadLayer(model, layer);
    queueLayer(layer, pendingBatch);
    nextLayer++;
  }

  /** Queues the upload of dense layer {@code layer}'s weight and bias values from {@code model}. */
  private void uploadLayer(Mlp model, int layer) {
    for (int p = 2 * layer; p <= 2 * layer + 1; p++) {
      Tensor v = model.parameters().get(p).value();
      pinnedParams.upload(v.data(), v.size(), offsets[p], params.get(p), stream);
    }
  }

  /**
   * Forward through the layers not queued yet (their values uploaded from {@code model} first),
   * the loss on {@code labels} and backward. The whole backward and every gradient's download are
   * queued before the first wait; then each layer's gradients, last layer first, go into the
   * model's gradient tensors and to {@code onGradient} (weight, then bias) as soon as their own
   * download is done, so a trainer pushes them while the device still differentiates the layers
   * below. The mean loss.
   */
  public float finishForwardBackward(Mlp model, int[] labels, Consumer<Parameter> onGradient) {
    if (closed) throw new IllegalStateException("CudaMlpStep is closed");
    if (pendingBatch == 0) throw new IllegalStateException("no forward begun");
    int batch = pendingBatch;
    pendingBatch = 0;
    checkLabels(labels, batch);
    rt.makeCurrent();
    for (int i = nextLayer; i < z.length; i++) {
      uploadLayer(model, i);
      queueLayer(i, batch);
    }
    pinnedLabels.uploadInts(labels, batch, this.labels, stream);
    queueLoss(batch);
    pinnedLoss.queueDownload(loss, 1, stream);
    // A gradient's download overwrites its parameter's upload in the pinned buffer: both are on
    // the one stream, so the upload is done before the download starts. Each layer's download is
    // queued before the product that carries the gradient on to the layer below.
    for (int i = z.length - 1; i >= 0; i--) {
      queueParameterGradients(i, batch);
      for (int p = 2 * i; p <= 2 * i + 1; p++) pinnedParams.queueDownload(grads.get(p), sizes[p], offsets[p], stream);
      JCudaDriver.cuEventRecord(gradientsDown[i], stream);
      queueInputGradient(i, batch);
    }
    List<Parameter> ps = model.parameters();
    for (int i = z.length - 1; i >= 0; i--) {
      JCudaDriver.cuEventSynchronize(gradientsDown[i]);
      for (int p = 2 * i; p <= 2 * i + 1; p++) pinnedParams.read(ps.get(p).grad().data(), sizes[p], offsets[p]);
      onGradient.accept(ps.get(2 * i));
      onGradient.accept(ps.get(2 * i + 1));
    }
    stream.synchronize();
    float[] l = new float[1];
    pinnedLoss.read(l, 1);
    return l[0];
  }

  private float readLoss() {
    pinnedLoss.queueDownload(loss, 1, stream);
    stream.synchronize();
    float[] l = new float[1];
    pinnedLoss.read(l, 1);
    return l[0];
  }

  private void queueForwardBackward(Tensor x, int[] y) {
    int batch = queueForward(x, y);
    for (int i = z.length - 1; i >= 0; i--) queueBackward(i, batch);
  }

  /** Queues the batch's upload, forward with the resident parameters and the loss; the batch size. */
  private int queueForward(Tensor x, int[] y) {
    if (closed) throw new IllegalStateException("CudaMlpStep is closed");
    checkInput(x);
    int batch = x.rows();
    checkLabels(y, batch);
    pendingBatch = 0; // a step begun with beginForward is given up: its batch is overwritten
    rt.makeCurrent();
    stream.synchronize();
    pinnedIn.upload(x.data(), batch * widths[0], a[0], stream);
    pinnedLabels.uploadInts(y, batch, labels, stream);
    for (int i = 0; i < z.length; i++) queueLayer(i, batch);
    queueLoss(batch);
    return batch;
  }

  private void checkInput(Tensor x) {
    if (x.rank() != 2 || x.cols() != widths[0] || x.rows() < 1 || x.rows() > maxBatch) {
      throw new IllegalArgumentException("CudaMlpStep: input " + x.shapeString() + " must be [1.." + maxBatch
          + ", " + widths[0] + "]");
    }
  }

  private void checkLabels(int[] y, int batch) {
    if (y.length != batch) {
      throw new IllegalArgumentException("CudaMlpStep: " + y.length + " labels for a batch of " + batch + " rows");
    }
    int classes = widths[widths.length - 1];
    for (int r = 0; r < batch; r++) {
      if (y[r] < 0 || y[r] >= classes) {
        throw new IllegalArgumentException("CudaMlpStep: label " + y[r] + " at row " + r + " is outside [0, "
            + classes + ")");
      }
    }
  }

  /** Queues dense layer {@code i} and, below the top, its activation. */
  private void queueLayer(int i, int batch) {
    Gemm g = be.gemmImpl();
    int in = widths[i], out = widths[i + 1];
    g.sgemm(false, false, batch, out, in, 1f, a[i].address(), in, params.get(2 * i).address(), out, 0f,
        z[i].address(), out);
    rt.launch("st_add_row_vector", rt.gridFor((long) batch * out, 256), 1, 256, stream, batch, out, z[i],
        params.get(2 * i + 1));
    if (i + 1 < z.length) elementwise(forwardKernel(), batch * out, z[i], a[i + 1]);
  }

  /** Queues the mean softmax cross-entropy of the top layer on the uploaded labels. */
  private void queueLoss(int batch) {
    int layers = z.length, classes = widths[widths.length - 1];
    int warpsPerBlock = 8;
    rt.launch("st_softmax_xent", (batch + warpsPerBlock - 1) / warpsPerBlock, 1, 256, stream, batch, classes,
        z[layers - 1], labels, null, dz[layers - 1], rowLoss);
    rt.launch("st_sum", 1, 1, 1024, stream, batch, rowLoss, 1f / batch, loss);
  }

  /** Queues layer {@code i}'s parameter gradients and, below the first layer, the gradient of its input. */
  private void queueBackward(int i, int batch) {
    queueParameterGradients(i, batch);
    queueInputGradient(i, batch);
  }

  /** Queues layer {@code i}'s weight and bias gradients. */
  private void queueParameterGradients(int i, int batch) {
    int in = widths[i], out = widths[i + 1];
    be.gemmImpl().sgemm(true, false, in, out, batch, 1f, a[i].address(), in, dz[i].address(), out, 0f,
        grads.get(2 * i).address(), out);
    rt.launch("st_column_sums", (out + 255) / 256, 1, 256, stream, batch, out, dz[i], grads.get(2 * i + 1));
  }

  /** Below the first layer, queues the gradient of layer {@code i}'s input, through the activation below it. */
  private void queueInputGradient(int i, int batch) {
    if (i == 0) return;
    int in = widths[i], out = widths[i + 1];
    be.gemmImpl().sgemm(false, true, batch, in, out, 1f, dz[i].address(), out, params.get(2 * i).address(), out, 0f,
        da.address(), in);
    // relu's backward reads the pre-activation; tanh's and sigmoid's read the output.
    DeviceBuffer saved = activation == Activation.RELU ? z[i - 1] : a[i];
    elementwise(backwardKernel(), batch * in, saved, da, dz[i - 1]);
  }

  private String forwardKernel() {
    switch (activation) {
      case RELU: return "st_relu";
      case TANH: return "st_tanh";
      default: return "st_sigmoid";
    }
  }

  private String backwardKernel() {
    switch (activation) {
      case RELU: return "st_relu_backward";
      case TANH: return "st_tanh_backward";
      default: return "st_sigmoid_backward";
    }
  }

  private void elementwise(String kernel, int n, Object... args) {
    Object[] all = new Object[args.length + 1];
    all[0] = n;
    System.arraycopy(args, 0, all, 1, args.length);
    rt.launch(kernel, rt.gridFor(n, 256), 1, 256, stream, all);
  }

  private void update(float lr) {
    step++;
    for (int p = 0; p < params.size(); p++) {
      int n = size(shapes.get(p));
      DeviceBuffer w = params.get(p), gr = grads.get(p);
      DeviceBuffer[] s = slots.get(p);
      if (optimizer instanceof Sgd) {
        elementwise("st_sgd", n, lr, ((Sgd) optimizer).weightDecay(), w, gr);
      } else if (optimizer instanceof Momentum) {
        Momentum m = (Momentum) optimizer;
        elementwise("st_momentum", n, lr, m.momentum(), m.weightDecay(), m.nesterov() ? 1 : 0, w, gr, s[0]);
      } else {
        Adam ad = (Adam) optimizer;
        // The same scalars, computed the same way, as Adam.apply.
        double c1 = 1.0 - Math.pow(ad.beta1(), step);
        double c2 = 1.0 - Math.pow(ad.beta2(), step);
        float stepSize = (float) (lr / c1);
        float sqrtC2 = (float) Math.sqrt(c2);
        float l2 = ad.decoupled() ? 0f : ad.weightDecay();
        float shrink = ad.decoupled() ? 1f - lr * ad.weightDecay() : 1f;
        elementwise("st_adam", n, stepSize, ad.beta1(), ad.beta2(), ad.eps(), sqrtC2, l2, shrink, w, gr, s[0], s[1]);
      }
    }
  }

  private static int size(int[] shape) {
    int n = 1;
    for (int d : shape) n *= d;
    return n;
  }

  /** Copies the device gradients of the last step into {@code into}, in parameter order. */
  public void readGradients(List<Tensor> into) {
    read(grads, into, "readGradients");
  }

  /** Copies the device parameters into {@code into}, in parameter order. */
  public void readParameters(List<Tensor> into) {
    read(params, into, "readParameters");
  }

  /** Replaces the device parameters with {@code from} (e.g. fresh ones from the server). */
  public void writeParameters(List<Tensor> from) {
    checkList(from, "writeParameters");
    pendingBatch = 0; // a step begun with beginForward is given up: its layers' values are overwritten
    rt.makeCurrent();
    // Earlier copies out of the pinned buffer must be done before it is overwritten; the copies
    // queued here run before any kernel queued after them on the stream.
    stream.synchronize();
    int at = 0;
    for (int p = 0; p < params.size(); p++) {
      Tensor t = from.get(p);
      pinnedParams.upload(t.data(), t.size(), at, params.get(p), stream);
      at += t.size();
    }
  }

  private void read(List<DeviceBuffer> src, List<Tensor> into, String what) {
    checkList(into, what);
    rt.makeCurrent();
    int at = 0;
    for (int p = 0; p < src.size(); p++) {
      pinnedParams.queueDownload(src.get(p), into.get(p).size(), at, stream);
      at += into.get(p).size();
    }
    stream.synchronize();
    at = 0;
    for (int p = 0; p < src.size(); p++) {
      Tensor t = into.get(p);
      pinnedParams.read(t.data(), t.size(), at);
      at += t.size();
    }
  }

  private void checkList(List<Tensor> ts, String what) {
    if (ts.size() != shapes.size()) {
      throw new IllegalArgumentException(what + ": " + ts.size() + " tensors for " + shapes.size() + " parameters");
    }
    for (int p = 0; p < shapes.size(); p++) {
      if (!java.util.Arrays.equals(ts.get(p).shape(), shapes.get(p))) {
        throw new IllegalArgumentException(what + ": tensor " + p + " is " + ts.get(p).shapeString()
            + ", parameter is " + Tensor.shapeString(shapes.get(p)));
      }
    }
  }

  @Override
  public void close() {
    if (closed) return;
    closed = true;
    pendingBatch = 0;
    rt.makeCurrent();
    stream.synchronize();
    List<AutoCloseable> all = new ArrayList<>();
    all.addAll(params);
    all.addAll(grads);
    for (DeviceBuffer[] s : slots) all.addAll(List.of(s));
    for (DeviceBuffer[] group : new DeviceBuffer[][] {z, a, dz}) for (DeviceBuffer b : group) if (b != null) all.add(b);
    all.addAll(List.of(da, labels, rowLoss, loss, pinnedIn, pinnedLabels, pinnedParams, pinnedLoss));
    for (CUevent e : gradientsDown) JCudaDriver.cuEventDestroy(e);
    for (AutoCloseable c : all) {
      try {
        c.close();
      } catch (Exception e) {
        throw new IllegalStateException("freeing device memory failed: " + e.getMessage(), e);
      }
    }
  }
}
