package io.shardtrain.compute.nn;

import java.util.Arrays;

/**
 * A second-order factorization machine for click-through prediction, split so that the part
 * indexed by sparse ids can live in a sparse table and the rest in ordinary parameters.
 *
 * <p>Each example has {@code fields} categorical ids and {@code denseDim} dense features. A sparse
 * row is {@code [w, v_1..v_k]} ({@link #rowWidth()} floats): the id's linear weight and its latent
 * vector. The dense parameters are one flat array of {@link #denseSize()} floats:
 * {@code [bias, wd_1..wd_D, u_1 (k floats) .. u_D (k floats)]}, the dense features' linear weights
 * and latent vectors. The logit of an example is
 * {@code bias + sum_f w_f + wd . x + 1/2 sum_c ((sum_i a_ic)^2 - sum_i a_ic^2)}, where the {@code a_i}
 * run over the categorical latent vectors and the dense ones scaled by their feature ({@code u_j x_j}):
 * Rendle's O(k n) form of all pairwise interactions.
 *
 * <p>A batch names its rows by slot: the caller gathers the batch's distinct rows into one array
 * ({@code rows}, {@code rowWidth()} floats per distinct row) and passes, per example and field, the
 * index of the row in it. Backward accumulates into a row gradient of the same layout, so a row
 * several examples share gets one summed gradient. Plain arrays, no backend: the work per example
 * is a few hundred flops, far too little to pay for a kernel launch.
 */
public final class FactorizationMachine {
  private final int fields;
  private final int denseDim;
  private final int factors;
  // Per example of the last forward: the latent sums S_c, for backward.
  private float[] sums = new float[0];

  public FactorizationMachine(int fields, int denseDim, int factors) {
    if (fields < 1 || denseDim < 0 || factors < 1) {
      throw new IllegalArgumentException("a factorization machine needs fields >= 1, denseDim >= 0 and factors >= 1;"
          + " got fields=" + fields + ", denseDim=" + denseDim + ", factors=" + factors);
    }
    this.fields = fields;
    this.denseDim = denseDim;
    this.factors = factors;
  }

  public int fields() {
    return fields;
  }

  public int denseDim() {
    return denseDim;
  }

  public int factors() {
    return factors;
  }

  /** Floats per sparse row: the linear weight and the latent vector. */
  public int rowWidth() {
    return 1 + factors;
  }

  /** Floats of the dense parameters: bias, dense linear weights, dense latent vectors. */
  public int denseSize() {
    return 1 + denseDim + denseDim * factors;
  }

  /** Initial dense parameters: zero bias and weights, latent vectors N(0, std^2) from {@code seed}. */
  public float[] initialDense(float std, long seed) {
    float[] d = new float[denseSize()];
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    for (int i = 1 + denseDim; i < d.length; i++) {
      double u1 = 1.0 - r.nextDouble();
      double u2 = r.nextDouble();
      d[i] = (float) (Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2) * std);
    }
    return d;
  }

  /**
   * Writes the logits of examples {@code [0, n)} into {@code logits}. {@code slots[i * fields + f]}
   * is the row of example i's field f in {@code rows}; {@code x} holds {@code n * denseDim} features.
   */
  public void forward(int n, int[] slots, float[] rows, float[] x, float[] dense, float[] logits) {
    check(n, slots, rows, x, dense);
    if (logits.length < n) throw new IllegalArgumentException("logits hold " + logits.length + " < " + n + " examples");
    if (sums.length < n * factors) sums = new float[n * factors];
    int w = rowWidth();
    int uBase = 1 + denseDim;
    float[] s = new float[factors];
    for (int i = 0; i < n; i++) {
      Arrays.fill(s, 0f);
      double linear = dense[0];
      double squares = 0;
      for (int f = 0; f < fields; f++) {
        int r = slots[i * fields + f] * w;
        linear += rows[r];
        for (int c = 0; c < factors; c++) {
          float v = rows[r + 1 + c];
          s[c] += v;
          squares += v * v;
        }
      }
      for (int j = 0; j < denseDim; j++) {
        float xj = x[i * denseDim + j];
        linear += dense[1 + j] * xj;
        int u = uBase + j * factors;
        for (int c = 0; c < factors; c++) {
          float a = dense[u + c] * xj;
          s[c] += a;
          squares += a * a;
        }
      }
      double square = 0;
      for (int c = 0; c < factors; c++) square += s[c] * s[c];
      System.arraycopy(s, 0, sums, i * factors, factors);
      logits[i] = (float) (linear + 0.5 * (square - squares));
    }
  }

  /**
   * Given {@code gradLogits} (dLoss/dlogit per example) for the last forward's batch, writes the
   * row gradients into {@code rowGrad} (same layout as {@code rows}, zeroed here first) and the
   * dense gradient into {@code denseGrad} (overwritten). Call with the arguments of that forward.
   */
  public void backward(int n, int[] slots, float[] rows, float[] x, float[] dense, float[] gradLogits,
      float[] rowGrad, float[] denseGrad) {
    check(n, slots, rows, x, dense);
    if (sums.length < n * factors) throw new IllegalStateException("backward before forward");
    if (rowGrad.length < rows.length || denseGrad.length < denseSize()) {
      throw new IllegalArgumentException("gradient arrays of " + rowGrad.length + " and " + denseGrad.length
          + " floats are smaller than the rows (" + rows.length + ") and dense parameters (" + denseSize() + ")");
    }
    Arrays.fill(rowGrad, 0, rows.length, 0f);
    Arrays.fill(denseGrad, 0, denseSize(), 0f);
    int w = rowWidth();
    int uBase = 1 + denseDim;
    for (int i = 0; i < n; i++) {
      float g = gradLogits[i];
      if (g == 0f) continue;
      int sBase = i * factors;
      denseGrad[0] += g;
      for (int f = 0; f < fields; f++) {
        int r = slots[i * fields + f] * w;
        rowGrad[r] += g;
        for (int c = 0; c < factors; c++) {
          rowGrad[r + 1 + c] += g * (sums[sBase + c] - rows[r + 1 + c]);
        }
      }
      for (int j = 0; j < denseDim; j++) {
        float xj = x[i * denseDim + j];
        if (xj == 0f) continue;
        denseGrad[1 + j] += g * xj;
        int u = uBase + j * factors;
        for (int c = 0; c < factors; c++) {
          denseGrad[u + c] += g * xj * (sums[sBase + c] - dense[u + c] * xj);
        }
      }
    }
  }

  /**
   * The mean binary cross-entropy of {@code logits[0, n)} against 0/1 {@code labels}, and its
   * gradient per logit into {@code gradLogits} ({@code (sigmoid(z) - y) / n}); the probabilities go
   * to {@code probs} when it is not null. Computed from the logits, so it stays finite for any z.
   */
  public static double meanLogLoss(int n, float[] logits, float[] labels, float[] gradLogits, float[] probs) {
    double loss = 0;
    for (int i = 0; i < n; i++) {
      double z = logits[i];
      double y = labels[i];
      loss += Math.max(z, 0) - z * y + Math.log1p(Math.exp(-Math.abs(z)));
      double p = sigmoid(z);
      if (gradLogits != null) gradLogits[i] = (float) ((p - y) / n);
      if (probs != null) probs[i] = (float) p;
    }
    return loss / n;
  }

  /** The logistic function, exact at both tails. */
  public static double sigmoid(double z) {
    if (z >= 0) return 1.0 / (1.0 + Math.exp(-z));
    double e = Math.exp(z);
    return e / (1.0 + e);
  }

  private void check(int n, int[] slots, float[] rows, float[] x, float[] dense) {
    if (n < 0 || (long) n * fields > slots.length || (long) n * denseDim > x.length || dense.length < denseSize()) {
      throw new IllegalArgumentException("batch of " + n + " examples needs " + (long) n * fields + " slots (has "
          + slots.length + "), " + (long) n * denseDim + " dense features (has " + x.length + ") and "
          + denseSize() + " dense parameters (has " + dense.length + ")");
    }
    int rowCount = rows.length / rowWidth();
    for (int k = 0; k < n * fields; k++) {
      if (slots[k] < 0 || slots[k] >= rowCount) {
        throw new IllegalArgumentException("slot " + slots[k] + " at position " + k + " is outside the batch's "
            + rowCount + " rows");
      }
    }
  }
}
