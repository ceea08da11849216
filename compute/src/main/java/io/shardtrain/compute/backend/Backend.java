package io.shardtrain.compute.backend;

import io.shardtrain.compute.RowSlices;
import io.shardtrain.compute.Shapes;
import io.shardtrain.compute.Tensor;

/**
 * The numeric kernels every model, loss and optimizer here is built from.
 *
 * <p>All tensors are row-major. Outputs are passed in, so a training step allocates nothing;
 * an output may be the same tensor as an input where the operation is element-wise. Every method
 * checks shapes first and throws {@link IllegalArgumentException} naming the shapes involved.
 * Implementations: {@link CpuBackend} (JDK Vector API) and, on GPU machines, a CUDA backend.
 */
public interface Backend extends AutoCloseable {

  /** Short name for logs and reports, e.g. {@code cpu}. */
  String name();

  /** Threads this backend may use for one operation. */
  int threads();

  /** {@code C = alpha * op(A) * op(B) + beta * C}, where op(X) is X or its transpose. */
  void gemm(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c);

  /**
   * {@code C = max(A B + bias, 0)}, the bias added to every row: a dense layer's forward into the
   * rectifier. The same values as C's rows set to the bias, {@link #gemm} with beta 1, and then
   * {@link #relu} on C. A backend that splits the product may finish each part of C on the thread
   * that computed it. Shapes are checked before C is written.
   */
  default void gemmBiasRelu(Tensor a, Tensor b, Tensor bias, Tensor c) {
    OpChecks.gemm(false, false, a, b, c);
    int n = c.cols();
    Shapes.requireSize("gemmBiasRelu bias of output " + c.shapeString(), bias, n);
    float[] cs = c.data();
    Merges.biasRows(bias.data(), n, c.rows(), cs, 0, n);
    gemm(false, false, 1f, a, b, 1f, c);
    relu(c, c);
  }

  /**
   * {@code C = alpha * op(A) * op(B) + beta * C where gate > 0, else 0}: {@link #gemm} and then
   * {@link #reluBackward} with {@code gate} as the rectifier's output, the same values; the input
   * gradient of a dense layer whose input {@code gate} the rectifier wrote. {@code gate} has C's
   * shape, checked before C is written.
   */
  default void gemmReluBackward(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c,
      Tensor gate) {
    Shapes.requireSame("gemmReluBackward gate and output", gate, c);
    gemm(transA, transB, alpha, a, b, beta, c);
    reluBackward(gate, c, c);
  }

  /** {@code y += alpha * x}. */
  void axpy(float alpha, Tensor x, Tensor y);

  /** {@code x *= alpha}. */
  void scale(float alpha, Tensor x);

  /** {@code out = a + b}, element-wise. */
  void add(Tensor a, Tensor b, Tensor out);

  /** {@code out = a * b}, element-wise. */
  void mul(Tensor a, Tensor b, Tensor out);

  /** {@code m[r, :] += v} for every row r (bias add); v has {@code m.cols()} elements. */
  void addRowVector(Tensor m, Tensor v);

  /** {@code out[c] = sum over r of m[r, c]} (the bias gradient). */
  void columnSums(Tensor m, Tensor out);

  /** {@code out[r] = sum over c of m[r, c]}. */
  void rowSums(Tensor m, Tensor out);

  /** {@code out[r] = max over c of m[r, c]}. */
  void rowMax(Tensor m, Tensor out);

  /** {@code out[r] = argmax over c of m[r, c]} (first index on ties). */
  void rowArgmax(Tensor m, int[] out);

  /** {@code out = max(x, 0)}. */
  void relu(Tensor x, Tensor out);

  /** {@code gradIn = gradOut where x > 0, else 0}. */
  void reluBackward(Tensor x, Tensor gradOut, Tensor gradIn);

  /** {@code out = tanh(x)}. */
  void tanh(Tensor x, Tensor out);

  /** {@code gradIn = gradOut * (1 - y^2)}, with y the forward output. */
  void tanhBackward(Tensor y, Tensor gradOut, Tensor gradIn);

  /** {@code out = 1 / (1 + exp(-x))}. */
  void sigmoid(Tensor x, Tensor out);

  /** {@code gradIn = gradOut * y * (1 - y)}, with y the forward output. */
  void sigmoidBackward(Tensor y, Tensor gradOut, Tensor gradIn);

  /**
   * Softmax over each row of {@code logits} and the mean cross-entropy against {@code labels}
   * (class indices). Writes the probabilities to {@code probs} and the gradient of the mean loss
   * with respect to the logits, {@code (probs - onehot) / rows}, to {@code gradLogits}; either may
   * be null when not wanted. Returns the mean loss.
   */
  float softmaxCrossEntropy(Tensor logits, int[] labels, Tensor probs, Tensor gradLogits);

  /**
   * Sigmoid of each logit (one column, or a vector) and the mean binary cross-entropy against
   * {@code labels} in [0, 1]. Writes probabilities and the gradient of the mean loss,
   * {@code (p - y) / n}, when those tensors are not null. Returns the mean loss.
   */
  float logisticLoss(Tensor logits, float[] labels, Tensor probs, Tensor gradLogits);

  /** {@code out[i, :] = table[ids[i], :]} (embedding lookup). */
  void gather(Tensor table, int[] ids, Tensor out);

  /** {@code tableGrad[ids[i], :] += grad[i, :]}; repeated ids accumulate. */
  void scatterAdd(Tensor grad, int[] ids, Tensor tableGrad);

  /**
   * Runs {@code body} over row ranges covering {@code [0, rows)} of a {@code rows x columns}
   * matrix. A backend that splits a product of that shape by rows runs each range on the thread
   * that computes those rows, so an update of a layer's weights touches them and their gradient
   * where the weight-gradient product left them; the default runs one range on the caller.
   */
  default void forEachRowSlice(int rows, int columns, RowSlices.Range body) {
    body.run(0, rows);
  }

  /** Releases threads or device memory. */
  @Override
  default void close() {}
}
