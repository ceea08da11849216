package io.shardtrain.compute.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RowGradientSumTest {

  @Test
  void rowsOfSeveralPushesAreSummedByWeightAndDividedByAllTheStepsExamples() {
    RowGradientSum sum = new RowGradientSum(2);
    // Trainer a (3 examples) carries rows 5 and 9; trainer b (1 example) rows 9 and 2; c is idle.
    sum.add(3f, new long[] {5, 9}, new float[] {1f, 2f, 0.5f, -1f});
    sum.add(1f, new long[] {9, 2}, new float[] {2f, 4f, 8f, 8f});
    sum.add(0f, new long[0], new float[0]);
    assertArrayEquals(new long[] {5, 9, 2}, sum.ids());
    assertArrayEquals(new float[] {0.75f, 1.5f, 0.875f, 0.25f, 2f, 2f}, sum.mean());
    assertArrayEquals(new int[] {1, 2, 1}, sum.sightings());
    assertEquals(4f, sum.weight());
  }

  @Test
  void anIdTwiceInOnePushIsOneSightingWithItsGradientsSummed() {
    RowGradientSum sum = new RowGradientSum(1);
    sum.add(2f, new long[] {7, 7, 8}, new float[] {1f, 3f, 1f});
    sum.add(2f, new long[] {7}, new float[] {4f});
    assertArrayEquals(new long[] {7, 8}, sum.ids());
    assertArrayEquals(new float[] {(2f * 1f + 2f * 3f + 2f * 4f) / 4f, 0.5f}, sum.mean());
    assertArrayEquals(new int[] {2, 1}, sum.sightings());
  }
}
