package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.transport.Bf16;
import io.shardtrain.actors.transport.WirePrecision;
import org.junit.jupiter.api.Test;

/** Error feedback keeps the sum of bf16 pushes on the sum of the true gradients. */
class ErrorFeedbackTest {
  /** 1 + 2^-9: bf16 rounds it to 1, dropping 2^-9 every step. */
  private static final float G = 1f + 0x1p-9f;
  /** One bf16 ulp at 1. */
  private static final double ULP = 0x1p-7;
  private static final int STEPS = 1000;

  /** The sum, in double, of what {@code STEPS} pushes of a constant gradient deliver. */
  private static double deliveredSum(ErrorFeedback feedback, boolean withFeedback) {
    double sum = 0;
    for (int step = 0; step < STEPS; step++) {
      float[] g = {G};
      float sent = withFeedback ? feedback.compensate("w#0", g)[0] : Bf16.round(G);
      assertEquals(sent, Bf16.round(sent), "every pushed value is a bf16 value");
      sum += sent;
    }
    return sum;
  }

  @Test
  void withFeedbackTheDeliveredSumStaysWithinOneUlpOfTheTrueSumWithoutItDriftsByTheLostMass() {
    double trueSum = (double) G * STEPS; // 1001.953125
    double fed = deliveredSum(new ErrorFeedback(WirePrecision.BF16), true);
    double plain = deliveredSum(null, false);
    assertTrue(Math.abs(fed - trueSum) <= ULP, "with feedback: " + fed + " vs " + trueSum);
    assertEquals(1000.0, plain, "without feedback every push delivers 1");
    assertEquals(1.953125, trueSum - plain, 1e-9, "the mass plain rounding loses");
    // Every 4 pushes deliver 1, 1, 1 + 2^-7, 1: exactly 4 G.
    assertEquals(1001.953125, fed);
  }

  @Test
  void blocksKeepTheirOwnResidualsAndARollbackDropsThem() {
    ErrorFeedback f = new ErrorFeedback(WirePrecision.BF16);
    // Residuals of 2^-9 add up: the third push of G carries 1 + 3 * 2^-9, which rounds to 1 + 2^-7.
    assertEquals(1f, f.compensate("a", new float[] {G})[0]);
    assertEquals(1f, f.compensate("a", new float[] {G})[0]);
    // Block b has no residual of its own yet.
    assertEquals(1f, f.compensate("b", new float[] {G})[0]);
    assertEquals(1f + 0x1p-7f, f.compensate("a", new float[] {G})[0]);
    // a now owes -2^-9; after the rollback it starts from 0, so its third push carries the carry again
    // (kept, the owed -2^-9 would delay that to the fourth).
    f.clear();
    assertEquals(1f, f.compensate("a", new float[] {G})[0]);
    assertEquals(1f, f.compensate("a", new float[] {G})[0]);
    assertEquals(1f + 0x1p-7f, f.compensate("a", new float[] {G})[0]);
  }

  @Test
  void aNonFinitePushDoesNotPoisonTheOnesAfterIt() {
    ErrorFeedback f = new ErrorFeedback(WirePrecision.BF16);
    f.compensate("w", new float[] {G, G});
    float[] bad = f.compensate("w", new float[] {Float.NaN, Float.MAX_VALUE});
    assertTrue(Float.isNaN(bad[0]));
    assertEquals(Float.POSITIVE_INFINITY, bad[1], "past bf16's range");
    float[] next = f.compensate("w", new float[] {2f, 2f});
    assertArrayEquals(new float[] {2f, 2f}, next, "the residuals restarted at 0");
  }

  @Test
  void fp32LeavesTheGradientUntouched() {
    float[] g = {G, (float) Math.PI};
    assertSame(g, new ErrorFeedback(WirePrecision.FP32).compensate("w", g));
    assertArrayEquals(new float[] {G, (float) Math.PI}, g);
  }
}
