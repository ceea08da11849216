package io.shardtrain.compute.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SparseTableTest {
  private static final RowInit INIT = new RowInit(RowInit.Kind.UNIFORM, 0.1f, 3);

  @Test
  void aRowSeenFewerThanKTimesIsNeverStoredAndTheKthSightingCreatesItFromItsInitialValues() {
    SparseTable t = new SparseTable(4, INIT, RowOptimizer.sgd(1f), 3, 4, 1 << 16, 0);
    float[] g = {1f, 2f, 3f, 4f};
    // 2000 ids, each seen twice: none is stored.
    for (int round = 0; round < 2; round++) {
      for (long id = 0; id < 2000; id++) assertEquals(SparseTable.Applied.NOT_ADMITTED, t.apply(id, g, 0, 1, round + 1));
    }
    assertEquals(0, t.store().size());
    // A third sighting of id 7 admits it; only that push's gradient is applied.
    assertEquals(SparseTable.Applied.CREATED, t.apply(7, g, 0, 1, 3));
    assertEquals(1, t.store().size());
    float[] start = new float[4];
    INIT.fill(7, start, 0, 4);
    float[] row = new float[4];
    t.read(7, row, 0);
    for (int j = 0; j < 4; j++) assertEquals(start[j] - g[j], row[j]);
    // An id seen twice in one push counts both sightings.
    assertEquals(SparseTable.Applied.NOT_ADMITTED, t.apply(5000, g, 0, 2, 4));
    assertEquals(SparseTable.Applied.CREATED, t.apply(5000, g, 0, 1, 5));
  }

  @Test
  void aPullOfAnAbsentRowGetsItsInitialValuesAndCreatesNothing() {
    SparseTable t = new SparseTable(3, INIT, RowOptimizer.adagrad(0.1f, 0f), 1, 4, 16, 0);
    float[] row = new float[3];
    t.read(99, row, 0);
    float[] expected = new float[3];
    INIT.fill(99, expected, 0, 3);
    assertArrayEquals(expected, row);
    assertEquals(0, t.store().size());
    assertEquals(null, t.sketch());
  }

  @Test
  void rowsUntouchedForTheExpiryAreEvictedAndComeBackFromTheirInitialValues() {
    SparseTable t = new SparseTable(2, INIT, RowOptimizer.sgd(0.5f), 1, 4, 16, 3);
    float[] g = {1f, 1f};
    t.apply(1, g, 0, 1, 1);
    t.apply(2, g, 0, 1, 2);
    t.apply(1, g, 0, 1, 3);
    // At step 5 row 2 was untouched for 3 steps, row 1 for 2.
    assertArrayEquals(new long[0], t.expiredAt(4));
    assertArrayEquals(new long[] {2}, t.expiredAt(5));
    assertEquals(1, t.evict(t.expiredAt(5)));
    assertEquals(1, t.store().size());
    assertTrue(t.store().find(2) < 0);
    float[] row = new float[2];
    float[] init = new float[2];
    t.read(2, row, 0);
    INIT.fill(2, init, 0, 2);
    assertArrayEquals(init, row);
  }

  @Test
  void theSketchNeverCountsLessThanTheTrueSightingsAndIsExactWhenWideEnough() {
    CountMinSketch narrow = new CountMinSketch(3, 64);
    CountMinSketch wide = new CountMinSketch(4, 1 << 16);
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(1);
    int[] truth = new int[500];
    for (int i = 0; i < 5000; i++) {
      int id = rnd.nextInt(500);
      truth[id]++;
      narrow.add(id, 1);
      wide.add(id, 1);
    }
    long over = 0;
    for (int id = 0; id < 500; id++) {
      assertTrue(narrow.estimate(id) >= truth[id]);
      over += narrow.estimate(id) - truth[id];
      assertEquals(truth[id], wide.estimate(id), "id " + id);
    }
    // 500 ids on 64 counters a line: about 7 ids share each counter, so the narrow one overcounts.
    assertTrue(over > 0);
  }

  @Test
  void aLoadedRowHasTheGivenValuesAndFreshSlotsAndTrainsFromThem() {
    SparseTable t = new SparseTable(2, INIT, RowOptimizer.adagrad(0.5f, 0.25f), 1, 4, 16, 0);
    t.load(9, new float[] {7f, 1f, -2f}, 1, 3);
    float[] row = new float[2];
    t.read(9, row, 0);
    assertArrayEquals(new float[] {1f, -2f}, row);
    var store = t.store();
    int r = store.find(9);
    assertArrayEquals(new float[] {1f, -2f, 0.25f, 0.25f},
        java.util.Arrays.copyOfRange(store.page(r), store.base(r), store.base(r) + 4));
    assertEquals(3, store.touched(r));
    assertEquals(SparseTable.Applied.UPDATED, t.apply(9, new float[] {1f, 1f}, 0, 1, 4));
  }
}
