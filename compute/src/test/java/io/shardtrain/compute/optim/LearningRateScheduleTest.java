package io.shardtrain.compute.optim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LearningRateScheduleTest {
  private static final float TOL = 1e-6f;

  @Test
  void constantIsTheSameAtEveryUpdate() {
    LearningRateSchedule s = LearningRateSchedule.constant(0.1f);
    assertEquals(0.1f, s.rate(0), 0f);
    assertEquals(0.1f, s.rate(1_000_000), 0f);
  }

  @Test
  void stepDecaysByGammaEveryStepSizeUpdates() {
    LearningRateSchedule s = LearningRateSchedule.step(0.1f, 10, 0.5f);
    assertEquals(0.1f, s.rate(0), TOL);
    assertEquals(0.1f, s.rate(9), TOL);
    assertEquals(0.05f, s.rate(10), TOL);   // 0.1 * 0.5^1
    assertEquals(0.025f, s.rate(25), TOL);  // 0.1 * 0.5^2
  }

  @Test
  void exponentialDecaysEveryUpdate() {
    LearningRateSchedule s = LearningRateSchedule.exponential(1f, 0.5f);
    assertEquals(1f, s.rate(0), TOL);
    assertEquals(0.125f, s.rate(3), TOL);   // 0.5^3
  }

  @Test
  void cosineAnnealsFromLrToMinLrAndStaysThere() {
    LearningRateSchedule s = LearningRateSchedule.cosine(1f, 100, 0.1f);
    assertEquals(1f, s.rate(0), TOL);
    // 0.1 + 0.9 * (1 + cos(pi / 4)) / 2 = 0.1 + 0.9 * 0.8535534
    assertEquals(0.8681981f, s.rate(25), TOL);
    // 0.1 + 0.9 * (1 + cos(pi / 2)) / 2 = 0.1 + 0.45
    assertEquals(0.55f, s.rate(50), TOL);
    assertEquals(0.1f, s.rate(100), TOL);
    assertEquals(0.1f, s.rate(5000), TOL);
  }

  @Test
  void warmupScalesTheFollowingScheduleLinearly() {
    LearningRateSchedule s = LearningRateSchedule.warmup(LearningRateSchedule.constant(0.1f), 4);
    assertEquals(0.025f, s.rate(0), TOL);  // 0.1 * 1/4
    assertEquals(0.05f, s.rate(1), TOL);   // 0.1 * 2/4
    assertEquals(0.1f, s.rate(3), TOL);    // 0.1 * 4/4
    assertEquals(0.1f, s.rate(4), TOL);
  }

  @Test
  void warmupDoesNotShiftTheScheduleAfterIt() {
    LearningRateSchedule s = LearningRateSchedule.warmup(LearningRateSchedule.cosine(1f, 100, 0f), 10);
    assertEquals(0.1f, s.rate(0), TOL);                  // cos(0) -> 1, times 1/10
    assertEquals(0.4980287f, s.rate(4), TOL);            // (1 + cos(0.04 pi)) / 2 = 0.9960574, times 5/10
    assertEquals(0.9755283f, s.rate(10), TOL);           // (1 + cos(0.1 pi)) / 2, no warmup factor
  }

  @Test
  void parseReadsEveryForm() {
    assertEquals(0.1f, LearningRateSchedule.parse("constant", 0.1f).rate(7), 0f);
    LearningRateSchedule step = LearningRateSchedule.parse("step:1000:0.5", 0.1f);
    assertEquals(0.1f, step.rate(999), TOL);
    assertEquals(0.05f, step.rate(1000), TOL);
    LearningRateSchedule exp = LearningRateSchedule.parse("exp:0.9999", 0.1f);
    assertEquals(0.09999f, exp.rate(1), TOL);            // 0.1 * 0.9999
    LearningRateSchedule cosine = LearningRateSchedule.parse("cosine:1000", 0.5f);
    // 0.5 * (1 + cos(0.3 pi)) / 2 = 0.5 * 0.7938926
    assertEquals(0.3969463f, cosine.rate(300), TOL);
    assertEquals(0f, cosine.rate(1000), TOL);
    assertEquals(0.01f, LearningRateSchedule.parse("cosine:1000:0.01", 0.5f).rate(2000), TOL);
    LearningRateSchedule warm = LearningRateSchedule.parse("warmup:500,cosine:10000", 1f);
    assertEquals(0.002f, warm.rate(0), TOL);             // 1 * 1/500
    assertEquals(0.5f, warm.rate(5000), TOL);            // cosine half way
    LearningRateSchedule warmConstant = LearningRateSchedule.parse(" warmup:4 ", 0.1f);
    assertEquals(0.05f, warmConstant.rate(1), TOL);
    assertEquals(0.1f, warmConstant.rate(10), TOL);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "linear", "step:1000", "step:abc:0.5", "step:0:0.5", "exp:", "exp:-1",
      "cosine:-5", "cosine:10:0.1:3", "warmup:x,constant", "warmup:0", "warmup:10,bogus", "constant:3"})
  void parseRejectsBadSpecsNamingTheSpecAndTheAcceptedForms(String spec) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LearningRateSchedule.parse(spec, 0.1f));
    assertTrue(e.getMessage().contains("'" + spec + "'"), e.getMessage());
    assertTrue(e.getMessage().contains(LearningRateSchedule.ACCEPTED_FORMS), e.getMessage());
  }

  @Test
  void aCosineScheduleEndingAboveItsBaseRateIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LearningRateSchedule.parse("cosine:100:5", 0.05f));
    assertTrue(e.getMessage().contains("cosine minLr 5.0 is above the base rate 0.05: the schedule would raise the"
        + " rate, not anneal it"), e.getMessage());
    assertEquals(0.05f, LearningRateSchedule.parse("cosine:100:0.05", 0.05f).rate(50), TOL);
  }

  @Test
  void factoriesRejectBadArguments() {
    assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.constant(-0.1f));
    assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.constant(Float.NaN));
    assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.step(0.1f, 0, 0.5f));
    assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.exponential(0.1f, 0f));
    assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.cosine(0.1f, 0, 0f));
    assertThrows(IllegalArgumentException.class,
        () -> LearningRateSchedule.warmup(LearningRateSchedule.constant(0.1f), 0));
  }
}
