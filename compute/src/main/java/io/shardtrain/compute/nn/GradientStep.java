package io.shardtrain.compute.nn;

import io.shardtrain.compute.ColumnFill;
import io.shardtrain.compute.Tensor;
import java.util.function.Consumer;

/**
 * One forward and backward pass of an {@link Mlp} with the contract of
 * {@link Mlp#forwardBackward}: it reads the model's current parameter values, writes its
 * gradients, hands each parameter to {@code onGradient} last layer first (weight, then bias) and
 * returns the mean loss. On the CPU that is the model itself; a backend with a device keeps a
 * resident copy of the model ({@link ResidentMlpBackend}) and moves only the batch, the
 * parameters and the gradients.
 *
 * <p>Forward can also go one dense layer at a time ({@link #beginForward}, {@link #forwardLayer},
 * {@link #finishForwardBackward}), so a trainer can run a layer as soon as its parameters have
 * arrived while later layers' are still on their way. {@link #forwardBackward} is those three in
 * one call.
 */
public interface GradientStep extends AutoCloseable {

  /** Starts a step on the batch {@code x}; no layer has run yet. {@code x} must not change until backward ran. */
  void beginForward(Tensor x);

  /**
   * Forward through dense layer {@code layer} (0: the first) and the activation after it, reading
   * only that layer's parameter values: the caller may still be writing later layers'. Layers run
   * in order, each once per step. A step that cannot run a single layer on its device runs it in
   * {@link #finishForwardBackward} instead.
   */
  void forwardLayer(int layer);

  /** Forward through the layers not run yet, the loss on {@code labels} and backward; as {@link #forwardBackward}. */
  float finishForwardBackward(int[] labels, Consumer<Parameter> onGradient);

  /** Forward and backward on {@code x}; the mean loss. */
  default float forwardBackward(Tensor x, int[] labels, Consumer<Parameter> onGradient) {
    beginForward(x);
    return finishForwardBackward(labels, onGradient);
  }

  /**
   * Forward and backward on {@code x}, whose features {@code fill} writes first: here all of them
   * on the caller; a step run by several threads has each thread write the columns it reads.
   */
  default float forwardBackward(Tensor x, ColumnFill fill, int[] labels, Consumer<Parameter> onGradient) {
    fill.columns(0, x.cols());
    return forwardBackward(x, labels, onGradient);
  }

  /** Frees what the step holds on its device; the model stays usable. */
  @Override
  default void close() {}

  /**
   * The step for {@code model} on its own backend, for batches of up to {@code maxBatch} rows:
   * resident when the backend offers it; on a CPU backend of several threads, a rectified model's
   * step run by all of them together ({@link CrewMlpStep}); else {@link Mlp#forwardBackward}.
   */
  static GradientStep of(Mlp model, int maxBatch) {
    if (model.backend() instanceof ResidentMlpBackend device) return device.residentStep(model, maxBatch);
    GradientStep crew = CrewMlpStep.of(model);
    return crew != null ? crew : model;
  }
}
