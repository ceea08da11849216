package io.shardtrain.compute.sparse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RowOptimizerTest {

  @Test
  void sgdSubtractsTheScaledGradientFromTheRowWhereItLies() {
    float[] data = {9f, 1f, -2f, 9f};
    RowOptimizer.sgd(0.5f).apply(data, 1, 2, new float[] {0f, 4f, 2f}, 1);
    assertEquals(-1f, data[1]);
    assertEquals(-3f, data[2]);
    assertEquals(9f, data[0]);
    assertEquals(9f, data[3]);
  }

  @Test
  void adagradAccumulatesSquaresInTheSlotBesideTheRow() {
    RowOptimizer o = RowOptimizer.adagrad(0.1f, 0.5f);
    float[] data = new float[4];
    data[0] = 1f;
    data[1] = 2f;
    o.initSlots(data, 0, 2);
    assertEquals(0.5f, data[2]);
    o.apply(data, 0, 2, new float[] {1.5f, -0.5f}, 0);
    // s = 0.5 + 2.25 = 2.75; w = 1 - 0.1 * 1.5 / sqrt(2.75)
    assertEquals(2.75f, data[2]);
    assertEquals(0.75f, data[3]);
    assertEquals(1f - 0.1f * 1.5f / (float) Math.sqrt(2.75), data[0], 1e-7f);
    assertEquals(2f + 0.1f * 0.5f / (float) Math.sqrt(0.75), data[1], 1e-7f);
  }

  @Test
  void ftrlZeroesWeightsWhoseAccumulatedGradientStaysWithinL1() {
    RowOptimizer o = RowOptimizer.ftrl(0.1f, 1f, 0.5f, 1f);
    float[] data = new float[6];
    data[0] = 0.3f;
    o.initSlots(data, 0, 2);
    o.apply(data, 0, 2, new float[] {2f, 0.5f}, 0);
    // Coordinate 0: sigma = (2 - 0) / 0.1 = 20, z = 2 - 20 * 0.3 = -4, n = 4,
    // w = -(-4 + 1) / ((1 + 2) / 0.1 + 0.5) = 3 / 30.5.
    assertEquals(-4f, data[2], 1e-6f);
    assertEquals(4f, data[4]);
    assertEquals(3f / 30.5f, data[0], 1e-6f);
    // Coordinate 1: z = 0.5 within l1 = 1, so w = 0.
    assertEquals(0.5f, data[3], 1e-7f);
    assertEquals(0f, data[1]);
  }
}
