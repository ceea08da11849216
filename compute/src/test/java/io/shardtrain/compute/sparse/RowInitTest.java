package io.shardtrain.compute.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RowInitTest {

  @Test
  void theSameSeedAndIdGiveTheSameFloatsAndAnotherIdOrSeedOthers() {
    RowInit a = new RowInit(RowInit.Kind.UNIFORM, 0.1f, 42);
    float[] x = new float[8];
    float[] y = new float[10];
    a.fill(123_456_789L, x, 0, 8);
    a.fill(123_456_789L, y, 2, 8);
    assertArrayEquals(x, Arrays.copyOfRange(y, 2, 10));
    float[] other = new float[8];
    a.fill(123_456_790L, other, 0, 8);
    assertFalse(Arrays.equals(x, other));
    new RowInit(RowInit.Kind.UNIFORM, 0.1f, 43).fill(123_456_789L, other, 0, 8);
    assertFalse(Arrays.equals(x, other));
  }

  @Test
  void uniformStaysInItsRangeAndNormalHasItsScaleAsStandardDeviation() {
    RowInit u = new RowInit(RowInit.Kind.UNIFORM, 0.05f, 1);
    RowInit n = new RowInit(RowInit.Kind.NORMAL, 0.5f, 1);
    float[] row = new float[16];
    double sum = 0;
    double sq = 0;
    int count = 0;
    for (long id = 0; id < 5000; id++) {
      u.fill(id, row, 0, 16);
      for (float v : row) assertTrue(v >= -0.05f && v < 0.05f, "uniform value " + v);
      n.fill(id, row, 0, 16);
      for (float v : row) {
        sum += v;
        sq += v * v;
        count++;
      }
    }
    double mean = sum / count;
    double std = Math.sqrt(sq / count - mean * mean);
    assertEquals(0, mean, 0.01);
    assertEquals(0.5, std, 0.01);
  }
}
