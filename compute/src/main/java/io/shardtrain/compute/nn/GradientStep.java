package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import java.util.function.Consumer;

/**
 * One forward and backward pass of an {@link Mlp} with the contract of
 * {@link Mlp#forwardBackward}: it reads the model's current parameter values, writes its
 * gradients, hands each parameter to {@code onGradient} last layer first (weight, then bias) and
 * returns the mean loss. On the CPU that is the model itself; a backend with a device keeps a
 * resident copy of the model ({@link ResidentMlpBackend}) and moves only the batch, the
 * parameters and the gradients.
 */
public interface GradientStep extends AutoCloseable {
  float forwardBackward(Tensor x, int[] labels, Consumer<Parameter> onGradient);

  /** Frees what the step holds on its device; the model stays usable. */
  @Override
  default void close() {}

  /**
   * The step for {@code model} on its own backend, for batches of up to {@code maxBatch} rows:
   * resident when the backend offers it, else {@link Mlp#forwardBackward}.
   */
  static GradientStep of(Mlp model, int maxBatch) {
    if (model.backend() instanceof ResidentMlpBackend device) return device.residentStep(model, maxBatch);
    return model::forwardBackward;
  }
}
