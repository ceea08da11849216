package io.shardtrain.compute.sparse;

import java.util.Arrays;

/** Row ids as requests carry them. */
public final class RowIds {
  private RowIds() {}

  /**
   * {@code ids} without repeats, each id where it first occurs; {@code ids} itself when it has none
   * (what every batch-routed request carries). Ids must be non-negative.
   */
  public static long[] distinct(long[] ids) {
    // Open addressing over ids (-1 marks a free slot): no boxed id per entry.
    int capacity = Integer.highestOneBit(Math.max(16, ids.length * 2 - 1)) << 1;
    int mask = capacity - 1;
    long[] keys = new long[capacity];
    Arrays.fill(keys, -1L);
    long[] out = null;
    int n = 0;
    for (int k = 0; k < ids.length; k++) {
      long id = ids[k];
      if (id < 0) throw new IllegalArgumentException("row id " + id + " at position " + k + " is negative");
      int h = (int) RowHash.mix(id) & mask;
      while (keys[h] != -1L && keys[h] != id) h = (h + 1) & mask;
      if (keys[h] == id) {
        // The first repeat: the ids before it are all distinct and stay where they are.
        if (out == null) out = Arrays.copyOf(ids, ids.length);
        continue;
      }
      keys[h] = id;
      if (out != null) out[n] = id;
      n++;
    }
    return out == null ? ids : Arrays.copyOf(out, n);
  }
}
