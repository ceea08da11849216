package io.shardtrain.compute.backend;

import io.shardtrain.compute.Shapes;
import io.shardtrain.compute.Tensor;

/**
 * The argument checks every {@link Backend} runs before an operation, in one place, so every
 * backend rejects the same bad input with the same message, and does so before it writes anything.
 */
public final class OpChecks {
  private OpChecks() {}

  /** The sizes of {@code C[m x n] = op(A)[m x k] * op(B)[k x n]}. */
  public record GemmDims(int m, int n, int k) {}

  public static GemmDims gemm(boolean transA, boolean transB, Tensor a, Tensor b, Tensor c) {
    Shapes.requireMatrix("gemm A", a);
    Shapes.requireMatrix("gemm B", b);
    Shapes.requireMatrix("gemm C", c);
    int m = transA ? a.cols() : a.rows();
    int k = transA ? a.rows() : a.cols();
    int kb = transB ? b.cols() : b.rows();
    int n = transB ? b.rows() : b.cols();
    if (k != kb || c.rows() != m || c.cols() != n) {
      throw new IllegalArgumentException("gemm: shape mismatch op(A)=" + a.shapeString()
          + (transA ? "^T" : "") + " op(B)=" + b.shapeString() + (transB ? "^T" : "")
          + " C=" + c.shapeString());
    }
    return new GemmDims(m, n, k);
  }

  /** Shapes of logits, probabilities and gradient, and every label a class index of the logits. */
  public static void softmaxCrossEntropy(Tensor logits, int[] labels, Tensor probs, Tensor gradLogits) {
    Shapes.requireMatrix("softmaxCrossEntropy", logits);
    int rows = logits.rows(), cols = logits.cols();
    Shapes.requireLength("softmaxCrossEntropy labels for logits " + logits.shapeString(), rows, labels.length);
    if (probs != null) Shapes.requireSame("softmaxCrossEntropy probs", logits, probs);
    if (gradLogits != null) Shapes.requireSame("softmaxCrossEntropy grad", logits, gradLogits);
    for (int r = 0; r < rows; r++) {
      int y = labels[r];
      if (y < 0 || y >= cols) {
        throw new IllegalArgumentException("softmaxCrossEntropy: label " + y + " at row " + r
            + " is outside [0, " + cols + ")");
      }
    }
  }

  /** Shapes of logits, probabilities and gradient, and every label in [0, 1]. */
  public static void logisticLoss(Tensor logits, float[] labels, Tensor probs, Tensor gradLogits) {
    int n = logits.size();
    Shapes.requireLength("logisticLoss labels for logits " + logits.shapeString(), n, labels.length);
    if (probs != null) Shapes.requireSame("logisticLoss probs", logits, probs);
    if (gradLogits != null) Shapes.requireSame("logisticLoss grad", logits, gradLogits);
    for (int i = 0; i < n; i++) {
      float y = labels[i];
      if (!(y >= 0f && y <= 1f)) {
        throw new IllegalArgumentException("logisticLoss: label " + y + " at index " + i + " is outside [0, 1]");
      }
    }
  }

  /**
   * {@code rowsTensor} (named {@code what}: gather's output, scatterAdd's gradient) holds one row of
   * {@code table} per id, and every id is a row of {@code table}.
   */
  public static void tableRows(String op, String what, Tensor rowsTensor, int[] ids, Tensor table) {
    Shapes.requireMatrix(op + " table", table);
    int dim = table.cols(), rows = table.rows();
    if (rowsTensor.size() != ids.length * dim) {
      throw new IllegalArgumentException(op + ": " + what + " " + rowsTensor.shapeString() + " does not hold "
          + ids.length + " rows of table " + table.shapeString());
    }
    for (int id : ids) {
      if (id < 0 || id >= rows) {
        throw new IllegalArgumentException(op + ": id " + id + " outside table " + table.shapeString());
      }
    }
  }
}
