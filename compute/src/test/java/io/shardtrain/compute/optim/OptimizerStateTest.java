package io.shardtrain.compute.optim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class OptimizerStateTest {
  private static final float TOL = 1e-6f;

  @Test
  void stepUsesTheScheduleAtTheCountBeforeTheUpdateAndAdvancesIt() {
    Optimizer sgd = new Sgd(0f);
    OptimizerState state = OptimizerState.create(sgd, 2);
    // Rates 1.0, 0.5, 0.25 for updates 0, 1, 2.
    LearningRateSchedule schedule = LearningRateSchedule.step(1f, 1, 0.5f);
    float[] w = {0f, 0f};
    float[] g = {1f, -2f};
    state.step(sgd, schedule, w, g);
    assertEquals(1, state.updates());
    assertArrayEquals(new float[] {-1f, 2f}, w, TOL);        // -1.0 * g
    state.step(sgd, schedule, w, g);
    assertArrayEquals(new float[] {-1.5f, 3f}, w, TOL);      // -0.5 * g more
    state.step(sgd, schedule, w, g);
    assertArrayEquals(new float[] {-1.75f, 3.5f}, w, TOL);   // -0.25 * g more
    assertEquals(3, state.updates());
  }

  @Test
  void stepPassesTheOneBasedCountToTheOptimizer() {
    Adam adam = new Adam(0.9f, 0.999f, 0f, 0f, false);
    OptimizerState state = OptimizerState.of(1, new float[][] {{0.1f}, {0.001f}}, 999);
    float[] viaState = {0f};
    state.step(adam, LearningRateSchedule.constant(1f), viaState, new float[] {1f});
    float[] direct = {0f};
    adam.apply(direct, new float[] {1f}, new float[][] {{0.1f}, {0.001f}}, 1000, 1f);
    assertEquals(direct[0], viaState[0], 0f);
    assertEquals(1000, state.updates());
  }

  @Test
  void createBuildsTheSlotsTheOptimizerNeeds() {
    assertEquals(0, OptimizerState.create(new Sgd(0f), 5).slots().length);
    OptimizerState adam = OptimizerState.create(OptimizerSpec.parse("adam").create(), 5);
    assertEquals(2, adam.slots().length);
    assertArrayEquals(new float[5], adam.slots()[1], 0f);
    OptimizerState adaGrad = OptimizerState.create(new AdaGrad(1e-10f, 0.25f, 0f), 3);
    assertArrayEquals(new float[] {0.25f, 0.25f, 0.25f}, adaGrad.slots()[0], 0f);
    assertEquals(3, adaGrad.length());
    assertEquals(0, adaGrad.updates());
  }

  @Test
  void copyIsIndependentOfTheOriginal() {
    Optimizer opt = new Momentum(0.9f, false, 0f);
    OptimizerState state = OptimizerState.create(opt, 2);
    float[] w = {1f, 1f};
    state.step(opt, LearningRateSchedule.constant(0.1f), w, new float[] {1f, 2f});
    OptimizerState snapshot = state.copy();
    state.step(opt, LearningRateSchedule.constant(0.1f), w, new float[] {1f, 2f});
    assertEquals(1, snapshot.updates());
    assertArrayEquals(new float[] {1f, 2f}, snapshot.slots()[0], TOL);
    assertArrayEquals(new float[] {1.9f, 3.8f}, state.slots()[0], TOL);
  }

  @Test
  void restoredStateContinuesExactlyLikeTheOriginal() {
    Optimizer adam = OptimizerSpec.parse("adam").create();
    LearningRateSchedule lr = LearningRateSchedule.constant(0.01f);
    OptimizerState original = OptimizerState.create(adam, 3);
    float[] w = {0.5f, -0.5f, 1f};
    float[] g = {0.3f, -0.1f, 0.2f};
    original.step(adam, lr, w, g);
    original.step(adam, lr, w, g);
    OptimizerState snap = original.copy();
    OptimizerState restored = OptimizerState.of(3, snap.slots(), snap.updates());
    float[] w2 = w.clone();
    original.step(adam, lr, w, g);
    restored.step(adam, lr, w2, g);
    assertArrayEquals(w, w2, 0f);
    assertArrayEquals(original.slots()[0], restored.slots()[0], 0f);
    assertArrayEquals(original.slots()[1], restored.slots()[1], 0f);
  }

  @Test
  void ofRejectsSlotsOfTheWrongLength() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> OptimizerState.of(3, new float[][] {new float[3], new float[2]}, 0));
    assertTrue(e.getMessage().contains("slot 1 of length 2") && e.getMessage().contains("3"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> OptimizerState.of(3, new float[0][], -1));
  }

  @Test
  void failedStepLeavesTheCountAlone() {
    Optimizer opt = new Momentum(0.9f, false, 0f);
    OptimizerState state = OptimizerState.create(opt, 2);
    float[] w = {1f, 1f};
    assertThrows(IllegalArgumentException.class,
        () -> state.step(opt, LearningRateSchedule.constant(0.1f), w, new float[3]));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> state.step(opt, LearningRateSchedule.constant(0.1f), new float[4], new float[4]));
    assertTrue(e.getMessage().contains("4") && e.getMessage().contains("2"), e.getMessage());
    assertEquals(0, state.updates());
    assertArrayEquals(new float[] {1f, 1f}, w, 0f);
  }

  @Test
  void everyOptimizerRejectsMismatchedLengthsNamingThem() {
    List<Optimizer> all = List.of(new Sgd(0f), new Momentum(0.9f, true, 0f),
        new Adam(0.9f, 0.999f, 1e-8f, 0f, false), new AdaGrad(1e-10f, 0f, 0f), new Lars(0.9f, 0.001f, 0f, 0f));
    for (Optimizer opt : all) {
      IllegalArgumentException grad = assertThrows(IllegalArgumentException.class,
          () -> opt.apply(new float[3], new float[2], opt.newSlots(3), 1, 0.1f));
      assertTrue(grad.getMessage().contains("weights of length 3")
          && grad.getMessage().contains("grad of length 2"), grad.getMessage());
      IllegalArgumentException slotCount = assertThrows(IllegalArgumentException.class,
          () -> opt.apply(new float[3], new float[3], new float[opt.slotCount() + 1][3], 1, 0.1f));
      assertTrue(slotCount.getMessage().contains("needs " + opt.slotCount() + " slots"), slotCount.getMessage());
      assertThrows(IllegalArgumentException.class,
          () -> opt.apply(new float[3], new float[3], opt.newSlots(3), 0, 0.1f));
      if (opt.slotCount() > 0) {
        float[][] shortSlots = opt.newSlots(3);
        shortSlots[0] = new float[2];
        IllegalArgumentException slotLength = assertThrows(IllegalArgumentException.class,
            () -> opt.apply(new float[3], new float[3], shortSlots, 1, 0.1f));
        assertTrue(slotLength.getMessage().contains("slot 0 of length 2")
            && slotLength.getMessage().contains("weights of length 3"), slotLength.getMessage());
      }
    }
  }
}
