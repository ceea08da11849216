package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import java.util.Objects;

/**
 * Sigmoid of a single logit per example and the mean binary cross-entropy against labels in
 * {@code [0, 1]} (soft labels allowed). Logits come as a vector {@code [batch]} or a column
 * {@code [batch, 1]}. Computed from the logits in the stable form, so saturated logits give a
 * finite loss; forward also computes the gradient, which {@link #backward()} hands out.
 */
public final class BinaryCrossEntropyLoss {
  private final Backend backend;
  private Tensor probs;
  private Tensor grad;
  private boolean ready;

  public BinaryCrossEntropyLoss(Backend backend) {
    this.backend = Objects.requireNonNull(backend, "backend");
  }

  /** The mean loss over the batch. */
  public float forward(Tensor logits, float[] labels) {
    boolean column = logits.rank() == 2 && logits.cols() == 1;
    if ((logits.rank() != 1 && !column) || logits.size() == 0) {
      throw new IllegalArgumentException("binary cross-entropy needs logits [batch] or [batch, 1], got "
          + logits.shapeString());
    }
    probs = Buffers.ensureLike(probs, logits);
    grad = Buffers.ensureLike(grad, logits);
    ready = false;
    float loss = backend.logisticLoss(logits, labels, probs, grad);
    ready = true;
    return loss;
  }

  /** Gradient of the mean loss with respect to the last forward's logits, their shape. */
  public Tensor backward() {
    requireReady();
    return grad;
  }

  /** Sigmoid probabilities of the last forward. */
  public Tensor probabilities() {
    requireReady();
    return probs;
  }

  private void requireReady() {
    if (!ready) throw new IllegalStateException("binary cross-entropy: no successful forward yet");
  }
}
