package io.shardtrain.compute.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class RowIdsTest {

  @Test
  void idsWithoutRepeatsComeBackAsTheSameArray() {
    long[] ids = {5, 1L << 40, 0, 17};
    assertSame(ids, RowIds.distinct(ids));
    long[] none = {};
    assertSame(none, RowIds.distinct(none));
  }

  @Test
  void repeatsAreDroppedAndEachIdKeepsItsFirstPlace() {
    assertArrayEquals(new long[] {9, 3, 4}, RowIds.distinct(new long[] {9, 3, 9, 4, 3, 3}));
    SplittableRandom rnd = new SplittableRandom(3);
    long[] ids = new long[5000];
    for (int k = 0; k < ids.length; k++) ids[k] = rnd.nextInt(1500) * 1024L;
    assertArrayEquals(LongStream.of(ids).distinct().toArray(), RowIds.distinct(ids));
  }

  @Test
  void aNegativeIdIsRefusedWithItsPosition() {
    var e = assertThrows(IllegalArgumentException.class, () -> RowIds.distinct(new long[] {1, -4}));
    assertEquals("row id -4 at position 1 is negative", e.getMessage());
  }
}
