package io.shardtrain.compute.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class BatchRowsTest {
  @Test
  void eachIdGetsOneRowInFirstOccurrenceOrderAndEveryOccurrenceItsSlot() {
    BatchRows rows = new BatchRows();
    rows.index(new int[] {7, 3, 7, 1048575, 3, 0, 99}, 6);
    assertArrayEquals(new long[] {7, 3, 1048575, 0}, rows.ids());
    assertEquals(6, rows.occurrences());
    assertArrayEquals(new int[] {0, 1, 0, 2, 1, 3}, java.util.Arrays.copyOf(rows.slots(), 6));
    // Reused for a larger batch: nothing of the previous one remains.
    int[] big = new int[1000];
    for (int k = 0; k < big.length; k++) big[k] = (k * 37) % 250;
    rows.index(big, big.length);
    assertEquals(250, rows.distinctCount());
    for (int k = 0; k < big.length; k++) assertEquals(big[k], rows.id(rows.slots()[k]));
  }
}
