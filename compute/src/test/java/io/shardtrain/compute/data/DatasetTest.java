package io.shardtrain.compute.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class DatasetTest {
  private static Dataset fourByTwo() {
    return Dataset.classification(new float[] {0, 1, 10, 11, 20, 21, 30, 31}, 2, new int[] {0, 1, 2, 1}, 3);
  }

  @Test
  void copyFeaturesFollowsTheGivenIndexOrder() {
    float[] dst = new float[6];
    fourByTwo().copyFeatures(new int[] {9, 3, 0, 2}, 1, 3, dst);
    assertArrayEquals(new float[] {30, 31, 0, 1, 20, 21}, dst);
    int[] labels = new int[3];
    fourByTwo().copyLabels(new int[] {9, 3, 0, 2}, 1, 3, labels);
    assertArrayEquals(new int[] {1, 0, 2}, labels);
  }

  @Test
  void copyFeatureColumnsWritesOnlyThoseColumnsOfEachRow() {
    Dataset d = Dataset.classification(new float[] {0, 1, 2, 10, 11, 12, 20, 21, 22}, 3, new int[] {0, 1, 2}, 3);
    float[] dst = {-1, -1, -1, -1, -1, -1};
    d.copyFeatureColumns(new int[] {2, 0}, 0, 2, 1, 3, dst);
    assertArrayEquals(new float[] {-1, 21, 22, -1, 1, 2}, dst);
    d.copyFeatureColumns(new int[] {2, 0}, 0, 2, 0, 1, dst);
    assertArrayEquals(new float[] {20, 21, 22, 0, 1, 2}, dst);
    assertEquals("columns [2, 4) of rows of dim 3", assertThrows(IllegalArgumentException.class,
        () -> d.copyFeatureColumns(new int[] {0}, 0, 1, 2, 4, dst)).getMessage());
    assertEquals("columns [2, 1) of rows of dim 3", assertThrows(IllegalArgumentException.class,
        () -> d.copyFeatureColumns(new int[] {0}, 0, 1, 2, 1, dst)).getMessage());
    assertArrayEquals(new float[] {20, 21, 22, 0, 1, 2}, dst, "a refused copy writes nothing");
  }

  @Test
  void sliceIsAViewWithShiftedIndices() {
    Dataset s = fourByTwo().slice(1, 3);
    assertEquals(2, s.size());
    assertEquals(3, s.numClasses());
    assertArrayEquals(new float[] {10, 11}, s.row(0));
    assertEquals(2, s.label(1));
    assertEquals(21f, s.slice(1, 2).feature(0, 1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.label(2));
    assertEquals("example index 2 is outside [0, 2)", e.getMessage());
  }

  @Test
  void concatCopiesPartsInOrder() {
    Dataset d = Dataset.concat(fourByTwo().slice(2, 4), fourByTwo().slice(0, 1));
    assertEquals(3, d.size());
    assertArrayEquals(new float[] {20, 21}, d.row(0));
    assertArrayEquals(new float[] {0, 1}, d.row(2));
    assertEquals(1, d.label(1));
    Dataset t = Dataset.withTargets(new float[] {1, 2}, 2, new float[] {0.5f});
    assertThrows(IllegalArgumentException.class, () -> Dataset.concat(fourByTwo(), t));
  }

  @Test
  void inconsistentArraysAndLabelsAreRejected() {
    assertEquals("features of length 5 do not hold 2 examples of dim 2",
        assertThrows(IllegalArgumentException.class,
            () -> Dataset.classification(new float[5], 2, new int[2], 2)).getMessage());
    assertEquals("label 2 of example 1 is outside [0, 2)",
        assertThrows(IllegalArgumentException.class,
            () -> Dataset.classification(new float[4], 2, new int[] {0, 2}, 2)).getMessage());
  }
}
