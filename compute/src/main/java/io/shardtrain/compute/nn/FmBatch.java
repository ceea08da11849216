package io.shardtrain.compute.nn;

import io.shardtrain.compute.sparse.BatchRows;

/**
 * One batch of a {@link FactorizationMachine} with its buffers, in the order a trainer works: index
 * the batch's ids ({@link #index}), fill {@link #rows()} with the values of {@link #rowIds()}
 * (from a local table or a pull), then {@link #trainStep} or {@link #predict}; after a training
 * step {@link #rowGrad()} holds one summed gradient per distinct row, ready to apply or push.
 * Buffers grow to the largest batch and are reused (so they may be longer than this batch needs).
 */
public final class FmBatch {
  private final FactorizationMachine fm;
  private final BatchRows batchRows = new BatchRows();
  private int n;
  private float[] rows = new float[0];
  private float[] rowGrad = new float[0];
  private float[] logits = new float[0];
  private float[] gradLogits = new float[0];

  public FmBatch(FactorizationMachine fm) {
    this.fm = fm;
  }

  /** Takes the ids of {@code n} examples ({@code n * fields}); afterwards fill {@link #rows()}. */
  public void index(int[] ids, int n) {
    this.n = n;
    batchRows.index(ids, n * fm.fields());
    int need = batchRows.distinctCount() * fm.rowWidth();
    if (rows.length < need) {
      rows = new float[need];
      rowGrad = new float[need];
    }
    if (logits.length < n) {
      logits = new float[n];
      gradLogits = new float[n];
    }
  }

  /** The distinct ids of the batch, in the order of their rows. */
  public BatchRows rowIds() {
    return batchRows;
  }

  /** Row values, {@code rowWidth} floats per distinct id, to be filled after {@link #index}. */
  public float[] rows() {
    return rows;
  }

  /** The summed gradient per distinct row after {@link #trainStep}, in the layout of {@link #rows()}. */
  public float[] rowGrad() {
    return rowGrad;
  }

  /** Forward, mean log loss and backward; returns the loss. {@code denseGrad} is overwritten. */
  public double trainStep(float[] x, float[] labels, float[] dense, float[] denseGrad) {
    float[] r = rows;
    fm.forward(n, batchRows.slots(), r, x, dense, logits);
    double loss = FactorizationMachine.meanLogLoss(n, logits, labels, gradLogits, null);
    fm.backward(n, batchRows.slots(), r, x, dense, gradLogits, rowGrad, denseGrad);
    return loss;
  }

  /** Click probabilities of the batch into {@code probs[0, n)}. */
  public void predict(float[] x, float[] dense, float[] probs) {
    fm.forward(n, batchRows.slots(), rows, x, dense, logits);
    for (int i = 0; i < n; i++) probs[i] = (float) FactorizationMachine.sigmoid(logits[i]);
  }
}
