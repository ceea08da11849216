package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import java.util.Objects;

/**
 * Softmax over each row of a {@code [batch, classes]} logit matrix and the mean cross-entropy
 * against class labels. Forward computes the probabilities and the gradient in the same pass
 * (it costs one subtraction more), so {@link #backward()} only hands it out.
 */
public final class SoftmaxCrossEntropyLoss {
  private final Backend backend;
  private Tensor probs;
  private Tensor grad;
  private boolean ready;

  public SoftmaxCrossEntropyLoss(Backend backend) {
    this.backend = Objects.requireNonNull(backend, "backend");
  }

  /** The mean loss over the batch; labels are class indices in {@code [0, classes)}. */
  public float forward(Tensor logits, int[] labels) {
    if (logits.rank() != 2 || logits.rows() == 0) {
      throw new IllegalArgumentException("softmax cross-entropy needs logits [batch >= 1, classes], got "
          + logits.shapeString());
    }
    probs = Buffers.ensureLike(probs, logits);
    grad = Buffers.ensureLike(grad, logits);
    ready = false;
    float loss = backend.softmaxCrossEntropy(logits, labels, probs, grad);
    ready = true;
    return loss;
  }

  /** Gradient of the mean loss with respect to the last forward's logits. */
  public Tensor backward() {
    requireReady();
    return grad;
  }

  /** Softmax probabilities of the last forward, same shape as its logits. */
  public Tensor probabilities() {
    requireReady();
    return probs;
  }

  private void requireReady() {
    if (!ready) throw new IllegalStateException("softmax cross-entropy: no successful forward yet");
  }
}
