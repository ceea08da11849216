package io.shardtrain.compute.sparse;

import java.util.Arrays;

/**
 * The gradient of one sync step of a sparse shard from its trainers' pushes: for every row any
 * push carried, {@code sum_i w_i g_i / sum_i w_i} over all the step's pushes (a push that did not
 * carry the row adds zero to it), which is the gradient of the mean loss over all the step's
 * examples, as one process on the concatenated batches computes it. Pushes are summed in the order
 * {@link #add} is called and rows kept in the order first seen: a caller that adds the same pushes in
 * the same order gets the same floats.
 * Also counts how many pushes carried each row (its sightings, for admission).
 */
public final class RowGradientSum {
  private final int dim;
  private final RowStore sums;
  private int[] sightings;
  private float weight;
  /** Pushes added so far, plus one: a row's step in {@link #sums} is the last push that carried it. */
  private long pushes = 1;

  public RowGradientSum(int dim) {
    this(dim, 0);
  }

  /** A sum that takes up to {@code expectedRows} distinct rows without growing. */
  public RowGradientSum(int dim, int expectedRows) {
    this.dim = dim;
    this.sums = new RowStore(dim, expectedRows);
    this.sightings = new int[Math.max(16, expectedRows)];
  }

  /**
   * Adds a push of {@code weight} examples whose row {@code ids[k]} has gradient
   * {@code grads[k * dim, (k + 1) * dim)}; an id twice in one push counts once, its gradients summed.
   */
  public void add(float weight, long[] ids, float[] grads) {
    if (ids.length * dim != grads.length) {
      throw new IllegalArgumentException(ids.length + " ids need " + ids.length * dim + " gradient floats, not "
          + grads.length);
    }
    this.weight += weight;
    for (int k = 0; k < ids.length; k++) {
      int row = sums.find(ids[k]);
      if (row < 0) {
        row = sums.insert(ids[k], pushes);
        if (row == sightings.length) sightings = Arrays.copyOf(sightings, row * 2);
        sightings[row] = 1;
      } else if (sums.touched(row) != pushes) {
        sightings[row]++;
        sums.touch(row, pushes);
      }
      float[] page = sums.page(row);
      int base = sums.base(row);
      for (int j = 0; j < dim; j++) page[base + j] += weight * grads[k * dim + j];
    }
    pushes++;
  }

  /** The rows carried, in the order first seen. */
  public long[] ids() {
    long[] out = new long[sums.size()];
    for (int r = 0; r < out.length; r++) out[r] = sums.id(r);
    return out;
  }

  /** The mean gradient of the rows of {@link #ids()}, {@code dim} floats each; zeros when no push had weight. */
  public float[] mean() {
    float[] out = new float[sums.size() * dim];
    float total = weight;
    for (int r = 0; r < sums.size(); r++) {
      float[] page = sums.page(r);
      int base = sums.base(r);
      for (int j = 0; j < dim; j++) out[r * dim + j] = total > 0f ? page[base + j] / total : 0f;
    }
    return out;
  }

  /** How many pushes carried each row of {@link #ids()}. */
  public int[] sightings() {
    return Arrays.copyOf(sightings, sums.size());
  }

  /** The pushes' weights summed. */
  public float weight() {
    return weight;
  }
}
