package io.shardtrain.compute.data;

import java.util.Arrays;

/**
 * Click-through examples: {@code fields} sparse ids per example (row-major, {@code n * fields}),
 * {@code denseDim} dense features per example, a 0/1 click label, and the true click probability
 * under the model that generated the data (see {@link CtrGenerator}).
 *
 * <p>The arrays are shared, not copied; treat them as read-only. {@link #asDataset()} exposes the
 * dense part and labels to a {@link BatchReader}; a trainer then fetches the sparse ids of each
 * batch with {@link #copyIds}.
 */
public record CtrDataset(
    int fields, int denseDim, int hashSpace, int[] ids, float[] dense, float[] labels, float[] probabilities) {

  public CtrDataset {
    int n = labels.length;
    if ((long) n * fields != ids.length || (long) n * denseDim != dense.length || probabilities.length != n) {
      throw new IllegalArgumentException("inconsistent CTR arrays: " + n + " labels, " + ids.length + " ids for "
          + fields + " fields, " + dense.length + " dense values for dim " + denseDim + ", "
          + probabilities.length + " probabilities");
    }
  }

  /** Number of examples. */
  public int size() {
    return labels.length;
  }

  /** How many rows of the id space {@code [0, hashSpace)} the examples' ids use. */
  public int rowsUsed() {
    java.util.BitSet used = new java.util.BitSet(hashSpace);
    for (int id : ids) used.set(id);
    return used.cardinality();
  }

  /** The dense features with the click labels as 0/1 targets; a view, no copy. */
  public Dataset asDataset() {
    return Dataset.withTargets(dense, denseDim, labels);
  }

  /** Examples {@code [from, to)} as a new data set (arrays copied). */
  public CtrDataset slice(int from, int to) {
    if (from < 0 || to < from || to > size()) {
      throw new IllegalArgumentException("slice [" + from + ", " + to + ") is outside [0, " + size() + ")");
    }
    return new CtrDataset(fields, denseDim, hashSpace, Arrays.copyOfRange(ids, from * fields, to * fields),
        Arrays.copyOfRange(dense, from * denseDim, to * denseDim), Arrays.copyOfRange(labels, from, to),
        Arrays.copyOfRange(probabilities, from, to));
  }

  /**
   * A checksum of the ids, dense features and labels (CRC-32C over their bytes): two processes that
   * built the same examples in the same order agree on it, so a trainer can tell that its data is
   * the data a job was planned on.
   */
  public long fingerprint() {
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(1 << 16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (int v : ids) {
      if (buf.remaining() < 4) flush(crc, buf);
      buf.putInt(v);
    }
    for (float v : dense) {
      if (buf.remaining() < 4) flush(crc, buf);
      buf.putFloat(v);
    }
    for (float v : labels) {
      if (buf.remaining() < 4) flush(crc, buf);
      buf.putFloat(v);
    }
    flush(crc, buf);
    return crc.getValue() ^ ((long) size() << 32);
  }

  private static void flush(java.util.zip.CRC32C crc, java.nio.ByteBuffer buf) {
    buf.flip();
    crc.update(buf);
    buf.clear();
  }

  /** Copies the ids of examples {@code indices[from, from+count)} into {@code dst[0, count*fields)}. */
  public void copyIds(int[] indices, int from, int count, int[] dst) {
    if (from < 0 || count < 0 || from > indices.length - count || (long) count * fields > dst.length) {
      throw new IllegalArgumentException("cannot copy ids of indices[" + from + ", " + (from + count)
          + ") from an index array of length " + indices.length + " into " + dst.length + " slots");
    }
    for (int k = 0; k < count; k++) {
      int i = indices[from + k];
      if (i < 0 || i >= size()) {
        throw new IllegalArgumentException("example index " + i + " is outside [0, " + size() + ")");
      }
      System.arraycopy(ids, i * fields, dst, k * fields, fields);
    }
  }

  /**
   * The AUC of the true probabilities against the sampled labels: the best AUC any model can
   * expect on this data, up to sampling noise. Ties count one half. NaN when one class is absent
   * or the probabilities are unknown (data read from a file).
   */
  public double bayesAuc() {
    int n = size();
    for (float p : probabilities) {
      if (Float.isNaN(p)) return Double.NaN;
    }
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) order[i] = i;
    Arrays.sort(order, (a, b) -> Float.compare(probabilities[a], probabilities[b]));
    double rankSumPos = 0;
    long pos = 0;
    int i = 0;
    while (i < n) {
      int j = i;
      while (j + 1 < n && probabilities[order[j + 1]] == probabilities[order[i]]) j++;
      double midRank = (i + j) / 2.0 + 1; // tied scores share their average rank
      for (int k = i; k <= j; k++) {
        if (labels[order[k]] > 0.5f) {
          rankSumPos += midRank;
          pos++;
        }
      }
      i = j + 1;
    }
    long neg = n - pos;
    if (pos == 0 || neg == 0) return Double.NaN;
    return (rankSumPos - pos * (pos + 1) / 2.0) / ((double) pos * neg);
  }
}
