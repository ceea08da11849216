package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import java.util.List;

/**
 * One differentiable step of a model, with forward and backward side by side.
 *
 * <p>{@link #forward} keeps what {@link #backward} needs (a reference to its input or its own
 * output), so the caller must not change the input until backward has run. Both return a buffer
 * the layer owns and reuses on the next call (it is reallocated only when the batch size
 * changes): read or copy it before calling the layer again. {@link #backward} overwrites, never
 * accumulates, the gradient of each of the layer's parameters.
 */
public interface Layer {

  /** Output for a batch {@code input} of shape {@code [batch, inputWidth]}. */
  Tensor forward(Tensor input);

  /**
   * Given the loss gradient with respect to the last forward's output, writes each parameter's
   * gradient and returns the gradient with respect to that forward's input.
   */
  Tensor backward(Tensor gradOutput);

  /** This layer's parameters in a stable order; empty for parameter-free layers. */
  List<Parameter> parameters();
}
