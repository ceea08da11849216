package io.shardtrain.compute.backend;

import io.shardtrain.compute.RowSlices;
import io.shardtrain.compute.Shapes;
import io.shardtrain.compute.Tensor;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The CPU backend. GEMM is a packed, register-blocked JDK Vector API kernel split over
 * {@code threads} threads for large shapes ({@link VectorGemm}); the element-wise operations are
 * memory-bound loops the JIT vectorizes well, so they stay plain and single-threaded, except the
 * rectifier's ({@link Rectifier}), written with the Vector API because the JIT left its select a
 * branch, and applied by each thread of a parallel product to its part of C when it ends one
 * ({@link #gemmBiasRelu}, {@link #gemmReluBackward}).
 */
public final class CpuBackend implements Backend {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private final VectorGemm gemm;

  private CpuBackend(int threads) {
    this.gemm = new VectorGemm(threads);
  }

  /** What this backend's parallel products took, slice by slice ({@link GemmCrew#totals()}); null with one thread. */
  long[] crewTotals() {
    return gemm.crewTotals();
  }

  /**
   * The whole training step of a dense ReLU stack {@code widths[0] -> ... -> widths[n]} with softmax
   * cross-entropy on top, run by this backend's threads together ({@link CrewStep}); null with one
   * thread or without a hidden layer.
   */
  public CrewStep crewStep(int... widths) {
    if (gemm.threads() == 1 || widths.length < 3) return null;
    for (int w : widths) {
      if (w < 1) throw new IllegalArgumentException("layer widths must be positive: " + Arrays.toString(widths));
    }
    return new CrewStep(gemm, widths);
  }

  /** A CPU backend that uses up to {@code threads} threads for one GEMM. */
  public static CpuBackend create(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("compute threads must be at least 1, got " + threads);
    }
    return new CpuBackend(threads);
  }

  /**
   * Starts compiling the kernels on a daemon thread, once per JVM, so that the first training
   * steps run compiled code ({@link KernelWarmUp}); returns at once. Call it before reading the
   * data: the warm-up then runs beside the read.
   */
  public static void warmUp() {
    KernelWarmUp.startOnce();
  }

  @Override
  public String name() {
    return "cpu";
  }

  @Override
  public int threads() {
    return gemm.threads();
  }

  @Override
  public void gemm(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c) {
    OpChecks.GemmDims d = OpChecks.gemm(transA, transB, a, b, c);
    gemm.gemm(transA, transB, d.m(), d.n(), d.k(), alpha, a.data(), a.cols(), b.data(), b.cols(), beta, c.data(),
        d.n());
  }

  @Override
  public void gemmBiasRelu(Tensor a, Tensor b, Tensor bias, Tensor c) {
    OpChecks.GemmDims d = OpChecks.gemm(false, false, a, b, c);
    Shapes.requireSize("gemmBiasRelu bias of output " + c.shapeString(), bias, d.n());
    gemm.gemmBias(d.m(), d.n(), d.k(), a.data(), a.cols(), b.data(), b.cols(), bias.data(), c.data(), d.n(),
        Rectifier.FORWARD);
  }

  @Override
  public void gemmReluBackward(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c,
      Tensor gate) {
    OpChecks.GemmDims d = OpChecks.gemm(transA, transB, a, b, c);
    Shapes.requireSame("gemmReluBackward gate and output", gate, c);
    gemm.gemm(transA, transB, d.m(), d.n(), d.k(), alpha, a.data(), a.cols(), b.data(), b.cols(), beta, c.data(),
        d.n(), Rectifier.gatedBy(gate.data()));
  }

  @Override
  public void forEachRowSlice(int rows, int columns, RowSlices.Range body) {
    gemm.forEachRowSlice(rows, columns, body);
  }

  @Override
  public void axpy(float alpha, Tensor x, Tensor y) {
    Shapes.requireSame("axpy", x, y);
    float[] xs = x.data();
    float[] ys = y.data();
    for (int i = 0; i < ys.length; i++) ys[i] += alpha * xs[i];
  }

  @Override
  public void scale(float alpha, Tensor x) {
    float[] xs = x.data();
    for (int i = 0; i < xs.length; i++) xs[i] *= alpha;
  }

  @Override
  public void add(Tensor a, Tensor b, Tensor out) {
    Shapes.requireSame("add", a, b);
    Shapes.requireSame("add", a, out);
    float[] as = a.data(), bs = b.data(), os = out.data();
    for (int i = 0; i < os.length; i++) os[i] = as[i] + bs[i];
  }

  @Override
  public void mul(Tensor a, Tensor b, Tensor out) {
    Shapes.requireSame("mul", a, b);
    Shapes.requireSame("mul", a, out);
    float[] as = a.data(), bs = b.data(), os = out.data();
    for (int i = 0; i < os.length; i++) os[i] = as[i] * bs[i];
  }

  @Override
  public void addRowVector(Tensor m, Tensor v) {
    int cols = m.cols();
    Shapes.requireSize("addRowVector " + m.shapeString() + " + vector", v, cols);
    float[] ms = m.data(), vs = v.data();
    for (int off = 0; off < ms.length; off += cols) {
      for (int c = 0; c < cols; c++) ms[off + c] += vs[c];
    }
  }

  @Override
  public void columnSums(Tensor m, Tensor out) {
    int cols = m.cols();
    Shapes.requireSize("columnSums of " + m.shapeString(), out, cols);
    columnSums(m.data(), m.size() / Math.max(cols, 1), cols, 0, cols, out.data());
  }

  /**
   * {@code out[c] = sum over r of m[r, c]} for columns {@code [c0, c1)} of a {@code rows x cols}
   * matrix: each column summed down the rows in order, so any split of the columns gives the same bits.
   */
  static void columnSums(float[] m, int rows, int cols, int c0, int c1, float[] out) {
    // A vector of column sums at a time, down the rows: one store per column instead of one per element.
    int c = c0;
    for (int bound = c0 + SPECIES.loopBound(c1 - c0); c < bound; c += SPECIES.length()) {
      FloatVector sum = FloatVector.zero(SPECIES);
      for (int r = 0; r < rows; r++) sum = sum.add(FloatVector.fromArray(SPECIES, m, r * cols + c));
      sum.intoArray(out, c);
    }
    for (; c < c1; c++) {
      float sum = 0f;
      for (int r = 0; r < rows; r++) sum += m[r * cols + c];
      out[c] = sum;
    }
  }

  @Override
  public void rowSums(Tensor m, Tensor out) {
    int rows = m.rows(), cols = m.cols();
    Shapes.requireSize("rowSums of " + m.shapeString(), out, rows);
    float[] ms = m.data(), os = out.data();
    for (int r = 0; r < rows; r++) {
      float s = 0f;
      for (int c = 0, off = r * cols; c < cols; c++) s += ms[off + c];
      os[r] = s;
    }
  }

  @Override
  public void rowMax(Tensor m, Tensor out) {
    int rows = m.rows(), cols = m.cols();
    Shapes.requireSize("rowMax of " + m.shapeString(), out, rows);
    float[] ms = m.data(), os = out.data();
    for (int r = 0; r < rows; r++) {
      float best = Float.NEGATIVE_INFINITY;
      for (int c = 0, off = r * cols; c < cols; c++) best = Math.max(best, ms[off + c]);
      os[r] = best;
    }
  }

  @Override
  public void rowArgmax(Tensor m, int[] out) {
    int rows = m.rows(), cols = m.cols();
    Shapes.requireLength("rowArgmax of " + m.shapeString(), rows, out.length);
    float[] ms = m.data();
    for (int r = 0; r < rows; r++) {
      int off = r * cols, best = 0;
      for (int c = 1; c < cols; c++) if (ms[off + c] > ms[off + best]) best = c;
      out[r] = best;
    }
  }

  @Override
  public void relu(Tensor x, Tensor out) {
    Shapes.requireSame("relu", x, out);
    Rectifier.max(x.data(), out.data(), 0, out.size());
  }

  @Override
  public void reluBackward(Tensor x, Tensor gradOut, Tensor gradIn) {
    Shapes.requireSame("reluBackward", x, gradOut);
    Shapes.requireSame("reluBackward", x, gradIn);
    Rectifier.gate(x.data(), gradOut.data(), gradIn.data(), 0, gradIn.size());
  }

  @Override
  public void tanh(Tensor x, Tensor out) {
    Shapes.requireSame("tanh", x, out);
    float[] xs = x.data(), os = out.data();
    for (int i = 0; i < os.length; i++) os[i] = (float) Math.tanh(xs[i]);
  }

  @Override
  public void tanhBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    Shapes.requireSame("tanhBackward", y, gradOut);
    Shapes.requireSame("tanhBackward", y, gradIn);
    float[] ys = y.data(), g = gradOut.data(), gi = gradIn.data();
    for (int i = 0; i < gi.length; i++) gi[i] = g[i] * (1f - ys[i] * ys[i]);
  }

  @Override
  public void sigmoid(Tensor x, Tensor out) {
    Shapes.requireSame("sigmoid", x, out);
    float[] xs = x.data(), os = out.data();
    for (int i = 0; i < os.length; i++) os[i] = sigmoid(xs[i]);
  }

  static float sigmoid(float x) {
    // Two branches keep exp's argument negative, so neither side overflows.
    if (x >= 0f) return (float) (1.0 / (1.0 + Math.exp(-x)));
    double e = Math.exp(x);
    return (float) (e / (1.0 + e));
  }

  @Override
  public void sigmoidBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    Shapes.requireSame("sigmoidBackward", y, gradOut);
    Shapes.requireSame("sigmoidBackward", y, gradIn);
    float[] ys = y.data(), g = gradOut.data(), gi = gradIn.data();
    for (int i = 0; i < gi.length; i++) gi[i] = g[i] * ys[i] * (1f - ys[i]);
  }

  @Override
  public float softmaxCrossEntropy(Tensor logits, int[] labels, Tensor probs, Tensor gradLogits) {
    OpChecks.softmaxCrossEntropy(logits, labels, probs, gradLogits);
    int rows = logits.rows(), cols = logits.cols();
    float[] z = logits.data();
    float[] p = probs != null ? probs.data() : null;
    float[] g = gradLogits != null ? gradLogits.data() : null;
    double total = 0;
    float invRows = 1f / rows;
    for (int r = 0; r < rows; r++) {
      int off = r * cols;
      int y = labels[r];
      float max = Float.NEGATIVE_INFINITY;
      for (int c = 0; c < cols; c++) max = Math.max(max, z[off + c]);
      // One exp per logit: kept in an output row (gradient or probabilities) until the sum is known.
      float[] e = g != null ? g : p;
      double sum = 0;
      for (int c = 0; c < cols; c++) {
        double ec = Math.exp(z[off + c] - max);
        sum += ec;
        if (e != null) e[off + c] = (float) ec;
      }
      total += Math.log(sum) - (z[off + y] - max);
      if (e != null) {
        double inv = 1.0 / sum;
        for (int c = 0; c < cols; c++) {
          float pc = (float) (e[off + c] * inv);
          if (p != null) p[off + c] = pc;
          if (g != null) g[off + c] = (pc - (c == y ? 1f : 0f)) * invRows;
        }
      }
    }
    return (float) (total / rows);
  }

  @Override
  public float logisticLoss(Tensor logits, float[] labels, Tensor probs, Tensor gradLogits) {
    OpChecks.logisticLoss(logits, labels, probs, gradLogits);
    int n = logits.size();
    float[] z = logits.data();
    double total = 0;
    float invN = 1f / n;
    for (int i = 0; i < n; i++) {
      float x = z[i];
      float y = labels[i];
      // log(1 + exp(-|x|)) + max(x, 0) - x*y: the stable form of binary cross-entropy on logits.
      total += Math.log1p(Math.exp(-Math.abs(x))) + Math.max(x, 0f) - x * y;
      float p = sigmoid(x);
      if (probs != null) probs.data()[i] = p;
      if (gradLogits != null) gradLogits.data()[i] = (p - y) * invN;
    }
    return (float) (total / n);
  }

  @Override
  public void gather(Tensor table, int[] ids, Tensor out) {
    OpChecks.tableRows("gather", "output", out, ids, table);
    int dim = table.cols();
    float[] t = table.data(), o = out.data();
    for (int i = 0; i < ids.length; i++) System.arraycopy(t, ids[i] * dim, o, i * dim, dim);
  }

  @Override
  public void scatterAdd(Tensor grad, int[] ids, Tensor tableGrad) {
    // Every id is checked before the first row is added, so a bad one changes nothing.
    OpChecks.tableRows("scatterAdd", "gradient", grad, ids, tableGrad);
    int dim = tableGrad.cols();
    float[] g = grad.data(), t = tableGrad.data();
    for (int i = 0; i < ids.length; i++) {
      int id = ids[i];
      int src = i * dim, dst = id * dim;
      for (int c = 0; c < dim; c++) t[dst + c] += g[src + c];
    }
  }
}
