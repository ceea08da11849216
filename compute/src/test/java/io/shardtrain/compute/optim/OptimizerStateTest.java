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

  /** Hands out rows [0, 2), [2, 5) and [5, rows), as a backend with three threads might. */
  private static final io.shardtrain.compute.RowSlices THREE_SLICES = (rows, columns, body) -> {
    body.run(5, rows);
    body.run(0, 2);
    body.run(2, 5);
  };

  @Test
  void aStepInRowSlicesGivesTheValuesOfAWholeStepAndCountsOnce() {
    List<Optimizer> optimizers = List.of(new Sgd(0.01f), new Momentum(0.9f, true, 0.01f),
        new AdaGrad(1e-10f, 0.1f, 0.01f), new Adam(0.9f, 0.999f, 1e-8f, 0.01f, true),
        new Lars(0.9f, 0.001f, 0.01f, 1e-9f));
    java.util.SplittableRandom random = new java.util.SplittableRandom(5);
    for (Optimizer opt : optimizers) {
      float[] whole = new float[6 * 4];
      float[] grad = new float[whole.length];
      for (int i = 0; i < whole.length; i++) {
        whole[i] = (float) random.nextDouble(-1, 1);
        grad[i] = (float) random.nextDouble(-1, 1);
      }
      float[] sliced = whole.clone();
      float[] before = whole.clone();
      OptimizerState a = OptimizerState.create(opt, whole.length);
      OptimizerState b = OptimizerState.create(opt, whole.length);
      for (int step = 0; step < 3; step++) {
        a.step(opt, 0.1f, whole, grad);
        b.step(opt, 0.1f, sliced, grad, 4, THREE_SLICES);
      }
      assertArrayEquals(whole, sliced, 0f, opt.name());
      for (int slot = 0; slot < opt.slotCount(); slot++) {
        assertArrayEquals(a.slots()[slot], b.slots()[slot], 0f, opt.name() + " slot " + slot);
      }
      assertEquals(3, b.updates(), opt.name());
      for (int i = 0; i < whole.length; i++) assertTrue(whole[i] != before[i], opt.name() + " value " + i);
    }
  }

  @Test
  void aStepInRowSlicesChecksItsInputBeforeAnyValueChanges() {
    Optimizer sgd = new Sgd(0f);
    OptimizerState state = OptimizerState.create(sgd, 8);
    float[] w = {1, 2, 3, 4, 5, 6, 7, 8};
    var e = assertThrows(IllegalArgumentException.class,
        () -> state.step(sgd, 0.5f, w, new float[7], 2, THREE_SLICES));
    assertTrue(e.getMessage().contains("grad of length 7"), e.getMessage());
    assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, w, 0f);
    assertEquals(0, state.updates());
  }

  @Test
  void anOptimizerUpdatesOnlyTheRangeItIsGivenAndOnlyAnElementWiseOneTakesARange() {
    float[] w = {1, 1, 1, 1};
    new Sgd(0f).applyRange(w, new float[] {1, 1, 1, 1}, new float[0][], 1, 0.5f, 1, 3);
    assertArrayEquals(new float[] {1f, 0.5f, 0.5f, 1f}, w, 0f);
    var outside = assertThrows(IllegalArgumentException.class,
        () -> new Sgd(0f).applyRange(w, new float[4], new float[0][], 1, 0.5f, 2, 5));
    assertTrue(outside.getMessage().contains("[2, 5)"), outside.getMessage());
    Lars lars = new Lars(0.9f, 0.001f, 0f, 1e-9f);
    assertTrue(!lars.elementwise());
    assertThrows(UnsupportedOperationException.class,
        () -> lars.applyRange(w, new float[4], new float[][] {new float[4]}, 1, 0.5f, 0, 2));
  }
}
