package io.shardtrain.compute.optim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The block update rule against numbers worked out by hand; the comments show the arithmetic. */
class BlockUpdateTest {

  private record G(float weight, float[] values) implements WeightedGradient {}

  private static BlockUpdate sgd(float lr) {
    return new BlockUpdate(new Sgd(), LearningRateSchedule.constant(lr));
  }

  @Test
  void twoContributionsOfWeightOneAndThreeGiveTheirWeightedMean() {
    // (1 * [1, -2, 0.5] + 3 * [5, 2, 0.25]) / 4 = [16, 4, 1.25] / 4
    float[] mean = BlockUpdate.weightedMean(3,
        List.of(new G(1f, new float[] {1f, -2f, 0.5f}), new G(3f, new float[] {5f, 2f, 0.25f})));
    assertArrayEquals(new float[] {4f, 1f, 0.3125f}, mean, 0f);
  }

  @Test
  void gradientsOfZeroWeightTakeNoPartInTheMean() {
    // A skipped trainer contributes weight 0 and no values.
    float[] mean = BlockUpdate.weightedMean(2,
        List.of(new G(2f, new float[] {3f, -1f}), new G(0f, new float[0]), new G(2f, new float[] {1f, 5f})));
    // (2 * [3, -1] + 2 * [1, 5]) / 4 = [8, 8] / 4
    assertArrayEquals(new float[] {2f, 2f}, mean, 0f);
  }

  @Test
  void meanIsSummedInListOrder() {
    // In float, (1e8 + 1) - 1e8 = 0 but (1e8 - 1e8) + 1 = 1: the order is part of the result.
    G big = new G(1f, new float[] {1e8f});
    G one = new G(1f, new float[] {1f});
    G minusBig = new G(1f, new float[] {-1e8f});
    assertArrayEquals(new float[] {0f}, BlockUpdate.weightedMean(1, List.of(big, one, minusBig)), 0f);
    assertArrayEquals(new float[] {1f / 3f}, BlockUpdate.weightedMean(1, List.of(big, minusBig, one)), 0f);
  }

  @Test
  void noPositiveWeightMeansNoStepAndTheSameArray() {
    BlockUpdate rule = sgd(0.1f);
    float[] values = {1f, 2f};
    OptimizerState state = rule.newState(2);
    assertNull(BlockUpdate.weightedMean(2, List.of(new G(0f, new float[0]))));
    assertSame(values, rule.applyMean(values, state, List.of(new G(0f, new float[0]))));
    assertSame(values, rule.applyMean(values, state, List.of()));
    assertEquals(0, state.updates(), "no update counted");
  }

  @Test
  void sgdAtRateOneTenthMovesEachValueByATenthOfTheGradient() {
    BlockUpdate rule = sgd(0.1f);
    float[] values = {1f, -2f};
    OptimizerState state = rule.newState(2);
    float[] next = rule.apply(values, state, new float[] {0.5f, -1f});
    // [1 - 0.1 * 0.5, -2 - 0.1 * -1]
    assertArrayEquals(new float[] {0.95f, -1.9f}, next, 0f);
    assertEquals(1, state.updates());
  }

  @Test
  void applyMeanStepsOnTheWeightedMean() {
    BlockUpdate rule = sgd(0.1f);
    float[] values = {1f, 1f, 1f};
    OptimizerState state = rule.newState(3);
    float[] next = rule.applyMean(values, state,
        List.of(new G(1f, new float[] {1f, -2f, 0.5f}), new G(3f, new float[] {5f, 2f, 0.25f})));
    // mean [4, 1, 0.3125] as above; 1 - 0.1 * mean, each in float
    assertArrayEquals(new float[] {1f - 0.1f * 4f, 1f - 0.1f * 1f, 1f - 0.1f * 0.3125f}, next, 0f);
    assertArrayEquals(new float[] {0.6f, 0.9f, 0.96875f}, next, 1e-7f);
    assertEquals(1, state.updates());
  }

  @Test
  void valuesPassedInAreNeverChanged() {
    BlockUpdate rule = sgd(0.1f);
    float[] values = {1f, -2f};
    OptimizerState state = rule.newState(2);
    float[] next = rule.apply(values, state, new float[] {0.5f, -1f});
    float[] after = rule.applyMean(next, state, List.of(new G(1f, new float[] {1f, 1f})));
    assertArrayEquals(new float[] {1f, -2f}, values, 0f);
    assertArrayEquals(new float[] {0.95f, -1.9f}, next, 0f);
    assertNotSame(next, after);
  }

  @Test
  void theScheduleRunsOnTheBlocksUpdateCount() {
    // step:1:0.5 halves the rate after every update: 0.1, then 0.05.
    BlockUpdate rule = new BlockUpdate(new Sgd(), LearningRateSchedule.parse("step:1:0.5", 0.1f));
    OptimizerState state = rule.newState(1);
    float[] once = rule.apply(new float[] {1f}, state, new float[] {1f});
    float[] twice = rule.apply(once, state, new float[] {1f});
    // 1 - 0.1 * 1, then that - 0.05 * 1
    assertArrayEquals(new float[] {0.9f}, once, 0f);
    assertArrayEquals(new float[] {0.9f - 0.05f}, twice, 0f);
    assertEquals(2, state.updates());
  }

  @Test
  void sameGradientsInTheSameOrderGiveTheSameBitsAsTheOptimizerCalledDirectly() {
    OptimizerSpec adam = OptimizerSpec.defaults(OptimizerSpec.Kind.ADAM);
    BlockUpdate rule = new BlockUpdate(adam.create(), LearningRateSchedule.constant(0.01f));
    float[][] grads = {{0.1f, -0.2f, 0.3f}, {-0.4f, 0.25f, 0.7f}, {1.5f, 0.01f, -0.9f}};
    float[] values = {0.5f, -1.25f, 2f};
    OptimizerState state = rule.newState(3);
    for (float[] g : grads) values = rule.apply(values, state, g);

    Optimizer direct = adam.create();
    OptimizerState expectedState = OptimizerState.create(direct, 3);
    float[] expected = {0.5f, -1.25f, 2f};
    for (float[] g : grads) expectedState.step(direct, LearningRateSchedule.constant(0.01f), expected, g);
    for (int i = 0; i < expected.length; i++) {
      assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(values[i]), "value " + i);
    }
    for (int s = 0; s < direct.slotCount(); s++) {
      assertArrayEquals(expectedState.slots()[s], state.slots()[s], 0f, "slot " + s);
    }
  }

  @Test
  void aGradientOfAnotherLengthIsRefused() {
    assertThrows(IllegalArgumentException.class,
        () -> BlockUpdate.weightedMean(2, List.of(new G(1f, new float[] {1f, 2f, 3f}))));
    BlockUpdate rule = sgd(0.1f);
    assertThrows(IllegalArgumentException.class,
        () -> rule.apply(new float[] {1f, 2f}, rule.newState(2), new float[] {1f}));
  }
}
