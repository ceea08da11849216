package io.shardtrain.compute.sparse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RowStoreTest {

  @Test
  void insertsFindsAndRemovesLikeAHashMapThroughResizesAndPageRelease() {
    RowStore store = new RowStore(3);
    Map<Long, Float> reference = new HashMap<>();
    SplittableRandom rnd = new SplittableRandom(7);
    for (int op = 0; op < 60_000; op++) {
      // Sequential-ish ids collide in a poorly mixed table; a third of them are removed again.
      long id = rnd.nextInt(20_000) * 1024L;
      int row = store.find(id);
      assertEquals(reference.containsKey(id), row >= 0, "presence of " + id + " at op " + op);
      if (rnd.nextInt(3) == 0) {
        assertEquals(reference.remove(id) != null, store.remove(id));
      } else if (row < 0) {
        int r = store.insert(id, op);
        store.page(r)[store.base(r) + 1] = op;
        reference.put(id, (float) op);
      }
    }
    assertEquals(reference.size(), store.size());
    for (Map.Entry<Long, Float> e : reference.entrySet()) {
      int row = store.find(e.getKey());
      assertTrue(row >= 0, "row " + e.getKey());
      assertEquals(e.getValue(), store.page(row)[store.base(row) + 1]);
      assertEquals(e.getKey(), store.id(row));
    }
    for (long id : reference.keySet()) assertTrue(store.remove(id));
    assertEquals(0, store.size());
    assertFalse(store.remove(0));
    assertEquals(-1, store.find(1024));
  }

  @Test
  void aStoreSizedForItsRowsHasTheIndexForThemFromTheStart() {
    RowStore sized = new RowStore(2, 3000);
    RowStore grown = new RowStore(2);
    // 3,000 rows at most 3/4 full: 4,096 index slots of 4 bytes, against the 16 an unsized store starts with.
    assertEquals(4 * (4096 - 16), sized.bytesAllocated() - grown.bytesAllocated());
    for (long id = 0; id < 3000; id++) {
      sized.insert(id * 7919, id);
      grown.insert(id * 7919, id);
    }
    // The unsized one doubled its way to the same index; the sized one never doubled.
    assertEquals(grown.bytesAllocated(), sized.bytesAllocated());
    for (long id = 0; id < 3000; id++) assertEquals(id, sized.find(id * 7919));
    assertEquals(-1, sized.find(5));
    assertThrows(IllegalArgumentException.class, () -> new RowStore(2, -1));
  }

  @Test
  void aRowOfSixteenFloatsCostsAtMostOneAndAHalfTimesItsRawFloatsAtAnyFill() {
    // Just below and just above an index doubling (3/4 of 2^18 = 196,608), and a page edge.
    for (int rows : new int[] {196_607, 196_609, 3 * RowStore.PAGE_ROWS * 16 + 1, 300_000}) {
      RowStore store = new RowStore(16);
      for (int i = 0; i < rows; i++) store.insert(i * 31L + 5, 0);
      double bytesPerRow = (double) store.bytesAllocated() / rows;
      double raw = 16 * 4;
      assertTrue(bytesPerRow <= 1.5 * raw, rows + " rows: " + bytesPerRow + " bytes per row, raw " + raw);
    }
  }

  @Test
  void slotsBesideTheRowCountAsRawFloatsOfTheirOwn() {
    // AdaGrad: 16 values and 16 accumulators. The bound is 1.5x the values plus the slots.
    RowStore store = new RowStore(32);
    int rows = 196_609;
    for (int i = 0; i < rows; i++) store.insert(i, 0);
    double bytesPerRow = (double) store.bytesAllocated() / rows;
    assertTrue(bytesPerRow <= 1.5 * 64 + 64, bytesPerRow + " bytes per row");
  }

  @Test
  void removingARowMovesTheLastRowIntoItsPlaceWithItsFloatsAndStep() {
    RowStore store = new RowStore(2);
    for (long id = 10; id < 13; id++) {
      int r = store.insert(id, id * 100);
      store.page(r)[store.base(r)] = id;
    }
    assertTrue(store.remove(10));
    int row = store.find(12);
    assertEquals(0, row);
    assertEquals(12f, store.page(row)[store.base(row)]);
    assertEquals(1200, store.touched(row));
    assertEquals(2, store.size());
  }
}
