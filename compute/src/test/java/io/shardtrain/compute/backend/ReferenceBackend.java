package io.shardtrain.compute.backend;

import io.shardtrain.compute.Tensor;

/**
 * The test oracle: every {@link Backend} operation as the plainest loop that states it, with
 * double accumulation and one rounding to float per output element. It is slow on purpose and
 * has no cleverness to get wrong; faster backends are compared against it.
 *
 * <p>It checks only what it needs to stay in bounds (sizes, ids, labels) and throws
 * {@link IllegalArgumentException} otherwise; the exact messages are the tested backend's job.
 */
public final class ReferenceBackend implements Backend {

  @Override
  public String name() {
    return "reference";
  }

  @Override
  public int threads() {
    return 1;
  }

  @Override
  public void gemm(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c) {
    int m = transA ? a.cols() : a.rows();
    int k = transA ? a.rows() : a.cols();
    int kb = transB ? b.cols() : b.rows();
    int n = transB ? b.rows() : b.cols();
    require(k == kb && c.rows() == m && c.cols() == n, "gemm shapes");
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        double s = 0;
        for (int p = 0; p < k; p++) {
          double aip = transA ? a.get(p, i) : a.get(i, p);
          double bpj = transB ? b.get(j, p) : b.get(p, j);
          s += aip * bpj;
        }
        // BLAS convention: beta == 0 means C is not read, so stale NaNs in C do not leak through.
        double old = beta == 0f ? 0.0 : (double) beta * c.get(i, j);
        c.set(i, j, (float) (alpha * s + old));
      }
    }
  }

  @Override
  public void axpy(float alpha, Tensor x, Tensor y) {
    requireSameSize(x, y);
    for (int i = 0; i < y.size(); i++) y.data()[i] = (float) (y.data()[i] + (double) alpha * x.data()[i]);
  }

  @Override
  public void scale(float alpha, Tensor x) {
    for (int i = 0; i < x.size(); i++) x.data()[i] = (float) ((double) alpha * x.data()[i]);
  }

  @Override
  public void add(Tensor a, Tensor b, Tensor out) {
    requireSameSize(a, b);
    requireSameSize(a, out);
    for (int i = 0; i < out.size(); i++) out.data()[i] = (float) ((double) a.data()[i] + b.data()[i]);
  }

  @Override
  public void mul(Tensor a, Tensor b, Tensor out) {
    requireSameSize(a, b);
    requireSameSize(a, out);
    for (int i = 0; i < out.size(); i++) out.data()[i] = (float) ((double) a.data()[i] * b.data()[i]);
  }

  @Override
  public void addRowVector(Tensor m, Tensor v) {
    require(v.size() == m.cols(), "addRowVector sizes");
    for (int r = 0; r < m.rows(); r++) {
      for (int c = 0; c < m.cols(); c++) {
        m.set(r, c, (float) ((double) m.get(r, c) + v.get(c)));
      }
    }
  }

  @Override
  public void columnSums(Tensor m, Tensor out) {
    require(out.size() == m.cols(), "columnSums sizes");
    for (int c = 0; c < m.cols(); c++) {
      double s = 0;
      for (int r = 0; r < m.rows(); r++) s += m.get(r, c);
      out.data()[c] = (float) s;
    }
  }

  @Override
  public void rowSums(Tensor m, Tensor out) {
    require(out.size() == m.rows(), "rowSums sizes");
    for (int r = 0; r < m.rows(); r++) {
      double s = 0;
      for (int c = 0; c < m.cols(); c++) s += m.get(r, c);
      out.data()[r] = (float) s;
    }
  }

  @Override
  public void rowMax(Tensor m, Tensor out) {
    require(out.size() == m.rows(), "rowMax sizes");
    for (int r = 0; r < m.rows(); r++) {
      float best = Float.NEGATIVE_INFINITY;
      for (int c = 0; c < m.cols(); c++) {
        if (m.get(r, c) > best) best = m.get(r, c);
      }
      out.data()[r] = best;
    }
  }

  @Override
  public void rowArgmax(Tensor m, int[] out) {
    require(out.length == m.rows(), "rowArgmax sizes");
    for (int r = 0; r < m.rows(); r++) {
      int best = 0;
      for (int c = 1; c < m.cols(); c++) {
        if (m.get(r, c) > m.get(r, best)) best = c;
      }
      out[r] = best;
    }
  }

  @Override
  public void relu(Tensor x, Tensor out) {
    requireSameSize(x, out);
    for (int i = 0; i < out.size(); i++) out.data()[i] = x.data()[i] > 0f ? x.data()[i] : 0f;
  }

  @Override
  public void reluBackward(Tensor x, Tensor gradOut, Tensor gradIn) {
    requireSameSize(x, gradOut);
    requireSameSize(x, gradIn);
    for (int i = 0; i < gradIn.size(); i++) gradIn.data()[i] = x.data()[i] > 0f ? gradOut.data()[i] : 0f;
  }

  @Override
  public void tanh(Tensor x, Tensor out) {
    requireSameSize(x, out);
    for (int i = 0; i < out.size(); i++) out.data()[i] = (float) Math.tanh(x.data()[i]);
  }

  @Override
  public void tanhBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    requireSameSize(y, gradOut);
    requireSameSize(y, gradIn);
    for (int i = 0; i < gradIn.size(); i++) {
      double yi = y.data()[i];
      gradIn.data()[i] = (float) (gradOut.data()[i] * (1.0 - yi * yi));
    }
  }

  @Override
  public void sigmoid(Tensor x, Tensor out) {
    requireSameSize(x, out);
    for (int i = 0; i < out.size(); i++) out.data()[i] = (float) sigmoid(x.data()[i]);
  }

  @Override
  public void sigmoidBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    requireSameSize(y, gradOut);
    requireSameSize(y, gradIn);
    for (int i = 0; i < gradIn.size(); i++) {
      double yi = y.data()[i];
      gradIn.data()[i] = (float) (gradOut.data()[i] * yi * (1.0 - yi));
    }
  }

  @Override
  public float softmaxCrossEntropy(Tensor logits, int[] labels, Tensor probs, Tensor gradLogits) {
    int rows = logits.rows(), cols = logits.cols();
    require(labels.length == rows, "softmaxCrossEntropy labels");
    double total = 0;
    for (int r = 0; r < rows; r++) {
      int y = labels[r];
      require(y >= 0 && y < cols, "softmaxCrossEntropy label " + y);
      double max = Double.NEGATIVE_INFINITY;
      for (int c = 0; c < cols; c++) max = Math.max(max, logits.get(r, c));
      double sum = 0;
      for (int c = 0; c < cols; c++) sum += Math.exp(logits.get(r, c) - max);
      total += -(logits.get(r, y) - max - Math.log(sum));
      for (int c = 0; c < cols; c++) {
        double p = Math.exp(logits.get(r, c) - max) / sum;
        if (probs != null) probs.set(r, c, (float) p);
        if (gradLogits != null) gradLogits.set(r, c, (float) ((p - (c == y ? 1 : 0)) / rows));
      }
    }
    return (float) (total / rows);
  }

  @Override
  public float logisticLoss(Tensor logits, float[] labels, Tensor probs, Tensor gradLogits) {
    int n = logits.size();
    require(labels.length == n, "logisticLoss labels");
    double total = 0;
    for (int i = 0; i < n; i++) {
      double x = logits.data()[i];
      double y = labels[i];
      require(y >= 0 && y <= 1, "logisticLoss label " + y);
      double p = sigmoid(x);
      // -[y log p + (1-y) log(1-p)], with log p = -log(1+e^-x) and log(1-p) = -x - log(1+e^-x).
      double softplusNegX = x >= 0 ? Math.log1p(Math.exp(-x)) : -x + Math.log1p(Math.exp(x));
      total += y * softplusNegX + (1 - y) * (x + softplusNegX);
      if (probs != null) probs.data()[i] = (float) p;
      if (gradLogits != null) gradLogits.data()[i] = (float) ((p - y) / n);
    }
    return (float) (total / n);
  }

  @Override
  public void gather(Tensor table, int[] ids, Tensor out) {
    int dim = table.cols();
    require(out.size() == ids.length * dim, "gather sizes");
    for (int i = 0; i < ids.length; i++) {
      require(ids[i] >= 0 && ids[i] < table.rows(), "gather id " + ids[i]);
      for (int c = 0; c < dim; c++) out.data()[i * dim + c] = table.get(ids[i], c);
    }
  }

  @Override
  public void scatterAdd(Tensor grad, int[] ids, Tensor tableGrad) {
    int dim = tableGrad.cols();
    require(grad.size() == ids.length * dim, "scatterAdd sizes");
    for (int i = 0; i < ids.length; i++) {
      require(ids[i] >= 0 && ids[i] < tableGrad.rows(), "scatterAdd id " + ids[i]);
      for (int c = 0; c < dim; c++) {
        tableGrad.set(ids[i], c, (float) ((double) tableGrad.get(ids[i], c) + grad.data()[i * dim + c]));
      }
    }
  }

  private static double sigmoid(double x) {
    return x >= 0 ? 1.0 / (1.0 + Math.exp(-x)) : Math.exp(x) / (1.0 + Math.exp(x));
  }

  private static void requireSameSize(Tensor a, Tensor b) {
    require(a.size() == b.size(), "sizes " + a.shapeString() + " and " + b.shapeString());
  }

  private static void require(boolean ok, String what) {
    if (!ok) throw new IllegalArgumentException("reference backend: bad " + what);
  }
}
