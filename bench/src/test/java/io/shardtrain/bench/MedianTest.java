package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MedianTest {

  @Test
  void anOddCountGivesTheMiddleValueAnEvenOneTheMeanOfTheTwoAndTheInputStaysAsItWas() {
    double[] odd = {5, 1, 3};
    assertEquals(3, Median.of(odd));
    assertArrayEquals(new double[] {5, 1, 3}, odd);
    assertEquals(2.5, Median.of(new double[] {4, 1, 3, 2}));
    long[] nanos = {40, 10, 30, 20};
    assertEquals(25, Median.of(nanos));
    assertArrayEquals(new long[] {40, 10, 30, 20}, nanos);
  }

  @Test
  void aSortedPrefixIsTakenAsItIsAndAnEmptyOrTooLongOneIsRefused() {
    double[] grown = {1, 2, 4, 8, 0, 0};
    assertEquals(3, Median.ofSorted(grown, 4));
    assertEquals(2, Median.ofSorted(grown, 3));
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> Median.ofSorted(grown, 0));
    assertTrue(none.getMessage().contains("0 of 6"), none.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Median.ofSorted(grown, 7));
    assertThrows(IllegalArgumentException.class, () -> Median.of(new double[0]));
  }
}
