package io.shardtrain.compute.sparse;

import java.util.Arrays;

/**
 * The distinct sparse ids of a batch and, per id occurrence, the index (slot) of its distinct row,
 * so that each row is read, sent and updated once per batch however many examples carry it.
 * Distinct ids keep the order of their first occurrence. Reuses its arrays across batches; an
 * open-addressing table sized to twice the batch's occurrences keeps the lookups short.
 */
public final class BatchRows {
  private long[] distinct = new long[0];
  private int distinctCount;
  private int[] slots = new int[0];
  private int slotCount;
  private int[] keys = new int[0];
  private int[] values = new int[0];

  /** Finds the distinct ids of {@code ids[0, count)}; ids must be non-negative. */
  public void index(int[] ids, int count) {
    if (count < 0 || count > ids.length) {
      throw new IllegalArgumentException("count " + count + " is outside [0, " + ids.length + "]");
    }
    int capacity = Integer.highestOneBit(Math.max(16, count * 2 - 1)) << 1;
    if (keys.length < capacity) {
      keys = new int[capacity];
      values = new int[capacity];
    }
    if (distinct.length < count) distinct = new long[count];
    if (slots.length < count) slots = new int[count];
    Arrays.fill(keys, 0, capacity, -1);
    int mask = capacity - 1;
    distinctCount = 0;
    for (int k = 0; k < count; k++) {
      int id = ids[k];
      if (id < 0) throw new IllegalArgumentException("sparse id " + id + " at position " + k + " is negative");
      int h = (int) RowHash.mix(id) & mask;
      while (keys[h] != -1 && keys[h] != id) h = (h + 1) & mask;
      if (keys[h] == -1) {
        keys[h] = id;
        values[h] = distinctCount;
        distinct[distinctCount++] = id;
      }
      slots[k] = values[h];
    }
    slotCount = count;
  }

  /** Distinct ids of the last indexed batch. */
  public int distinctCount() {
    return distinctCount;
  }

  /** The i-th distinct id. */
  public long id(int i) {
    return distinct[i];
  }

  /** The distinct ids, in order of first occurrence (a copy). */
  public long[] ids() {
    return Arrays.copyOf(distinct, distinctCount);
  }

  /** Slot per occurrence: {@code slots()[k]} is the distinct index of the batch's k-th id. Shared, read-only. */
  public int[] slots() {
    return slots;
  }

  /** Occurrences in the last indexed batch. */
  public int occurrences() {
    return slotCount;
  }
}
