package io.shardtrain.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link NumericChecks} finds NaN and both infinities at their index and passes finite data. */
class NumericChecksTest {

  @Test
  void finiteArraysPassIncludingExtremesAndEmpty() {
    float[] values = {0f, -0f, 1f, -1f, Float.MAX_VALUE, -Float.MAX_VALUE, Float.MIN_VALUE, 1e-40f};
    assertEquals(-1, NumericChecks.firstNonFinite(values));
    assertTrue(NumericChecks.allFinite(values));
    assertTrue(NumericChecks.allFinite(new float[0]));
    NumericChecks.requireFinite("gradient", values);
  }

  @Test
  void nanAndBothInfinitiesAreFoundAtTheirIndex() {
    float[] bads = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
    for (float bad : bads) {
      for (int at : new int[] {0, 7, 16, 36}) {
        float[] values = new float[37];
        for (int i = 0; i < values.length; i++) values[i] = i * 0.5f - 9f;
        values[at] = bad;
        assertEquals(at, NumericChecks.firstNonFinite(values), "value " + bad);
        assertFalse(NumericChecks.allFinite(values));
      }
    }
  }

  @Test
  void longArraysAreSearchedInEveryChunkFromAnyOffset() {
    float[] bads = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
    for (float bad : bads) {
      for (int at : new int[] {3, 1023, 1024, 1025, 2050, 4095, 4999}) {
        float[] values = new float[5000];
        for (int i = 0; i < values.length; i++) values[i] = (i % 7) * 1e30f - 3e30f;
        assertEquals(-1, NumericChecks.firstNonFinite(values, 3, 4997));
        values[at] = bad;
        assertEquals(at, NumericChecks.firstNonFinite(values, 3, 4997), "value " + bad + " at " + at);
        assertEquals(-1, NumericChecks.firstNonFinite(values, at + 1, 4999 - at));
        if (at > 3) assertEquals(-1, NumericChecks.firstNonFinite(values, 3, at - 3));
      }
    }
  }

  @Test
  void firstNonFiniteReportsTheFirstOfSeveral() {
    float[] values = {1f, 2f, Float.POSITIVE_INFINITY, Float.NaN};
    assertEquals(2, NumericChecks.firstNonFinite(values));
  }

  @Test
  void rangedSearchLooksOnlyInsideTheRange() {
    float[] values = {Float.NaN, 1f, 2f, 3f, Float.NEGATIVE_INFINITY, 5f};
    assertEquals(-1, NumericChecks.firstNonFinite(values, 1, 3));
    assertEquals(4, NumericChecks.firstNonFinite(values, 1, 4));
    assertEquals(0, NumericChecks.firstNonFinite(values, 0, 1));
  }

  @Test
  void requireFiniteNamesWhatValueAndIndex() {
    float[] values = {1f, 2f, Float.NaN};
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> NumericChecks.requireFinite("push from trainer-3", values));
    assertTrue(e.getMessage().contains("push from trainer-3"), e.getMessage());
    assertTrue(e.getMessage().contains("NaN"), e.getMessage());
    assertTrue(e.getMessage().contains("index 2"), e.getMessage());
  }
}
