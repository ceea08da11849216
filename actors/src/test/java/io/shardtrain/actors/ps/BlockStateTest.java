package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.RolledBackTo;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.assertSameState;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The block's state and its event handlers on their own: no actor system. */
class BlockStateTest {

  private static BlockSpec spec(OptimizerSpec.Kind kind, BlockSpec.Mode mode) {
    return new BlockSpec("w", 0, 0, 2, OptimizerSpec.defaults(kind), "constant", 0.1f, mode, -1);
  }

  private static BlockState started(OptimizerSpec.Kind kind, BlockSpec.Mode mode, String... trainers) {
    BlockState s = new BlockState().apply(new Initialized(spec(kind, mode), new float[] {1f, 1f}));
    return s.apply(new MembershipUpdated(1, List.of(trainers)));
  }

  @Test
  void initializedStartsAtVersionZeroWithTheInitialValuesHeldAsCheckpointZero() {
    BlockState s = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, "a");
    assertEquals(0, s.version());
    assertEquals(0, s.updates());
    assertArrayEquals(new float[] {1f, 1f}, s.values(), 0f);
    assertEquals(List.of(0L), s.checkpointSteps());
    assertEquals(List.of(), started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.ASYNC).checkpointSteps());
  }

  @Test
  void stepAppliedMovesTheValuesByTheWeightedMeanOfTheContributions() {
    BlockState s = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, "a", "b");
    s.apply(new GradientReceived("a", 1, 1f, new float[] {1f, -2f}));
    s.apply(new GradientReceived("b", 1, 3f, new float[] {5f, 2f}));
    assertEquals(2, s.pending().size());
    assertArrayEquals(new float[] {1f, 1f}, s.values(), 0f, "nothing applied before the step");
    s.apply(new StepApplied(1));
    // mean = (1 * [1, -2] + 3 * [5, 2]) / 4 = [4, 1]; SGD at 0.1: [1 - 0.4, 1 - 0.1]
    assertArrayEquals(new float[] {1f - 0.1f * 4f, 1f - 0.1f * 1f}, s.values(), 0f);
    assertArrayEquals(new float[] {0.6f, 0.9f}, s.values(), 1e-7f);
    assertEquals(1, s.version());
    assertEquals(1, s.updates());
    assertEquals(4, s.examplesApplied());
    assertEquals(List.of(), s.pending());
    assertEquals(1L, s.lastSteps().get("b"));
  }

  @Test
  void aSyncStepSumsItsContributionsInTrainerOrderWhicheverArrivedFirst() {
    // 1e8 + -1e8 + 1 is 1 in this order, but 0 with the 1 added to 1e8 first (floats 8 apart there).
    float[][] g = {{1e8f, 2f}, {-1e8f, 2f}, {1f, 2f}};
    String[] trainers = {"a", "b", "c"};
    int[][] arrivals = {{0, 1, 2}, {2, 0, 1}, {1, 2, 0}};
    float[] expected = {1f - 0.1f * (1f / 3f), 1f - 0.1f * 2f};
    for (int[] order : arrivals) {
      BlockState applied = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, trainers);
      BlockState committed = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, trainers);
      for (int i : order) {
        applied.apply(new GradientReceived(trainers[i], 1, 1f, g[i]));
        committed.apply(new GradientReceived(trainers[i], 1, 1f, g[i]));
      }
      String what = "arrivals " + java.util.Arrays.toString(order);
      applied.apply(new StepApplied(1));
      assertArrayEquals(expected, applied.values(), 0f, what + ", StepApplied");
      BlockEvents.StepCommitted step = committed.commit(1);
      assertArrayEquals(new float[] {1f / 3f, 2f}, step.mean(), 0f, what);
      assertEquals(List.of("a", "b", "c"),
          step.contributors().stream().map(BlockEvents.Contributor::trainerId).toList());
      committed.apply(step);
      assertArrayEquals(expected, committed.values(), 0f, what + ", StepCommitted");
    }
  }

  @Test
  void aStepOfSkippedContributionsOnlyAdvancesTheVersion() {
    BlockState s = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, "a");
    float[] before = s.values;
    s.apply(new GradientSkipped("a", 1));
    s.apply(new StepApplied(1));
    assertSame(before, s.values, "no new array when nothing was applied");
    assertEquals(1, s.version());
    assertEquals(0, s.updates());
    assertEquals(0, s.examplesApplied());
  }

  @Test
  void gradientAppliedTakesOneSgdStepAtOnce() {
    BlockState s = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.ASYNC);
    s.apply(new GradientApplied("a", 7, new float[] {0.5f, -1f}));
    // [1 - 0.1 * 0.5, 1 - 0.1 * -1]
    assertArrayEquals(new float[] {0.95f, 1.1f}, s.values(), 0f);
    assertEquals(1, s.version());
    assertEquals(7L, s.lastSteps().get("a"));
  }

  @Test
  void aPublishedValuesArrayIsNeverChanged() {
    BlockState s = started(OptimizerSpec.Kind.MOMENTUM, BlockSpec.Mode.ASYNC);
    float[] published = s.values;
    s.apply(new GradientApplied("a", 1, new float[] {0.5f, -1f}));
    assertNotSame(published, s.values);
    assertArrayEquals(new float[] {1f, 1f}, published, 0f);
  }

  @Test
  void aCopyIsIndependentOfTheOriginal() {
    BlockState s = started(OptimizerSpec.Kind.MOMENTUM, BlockSpec.Mode.SYNC, "a", "b");
    s.apply(new GradientReceived("a", 1, 1f, new float[] {1f, 1f}));
    s.apply(new GradientReceived("b", 1, 1f, new float[] {1f, 1f}));
    s.apply(new StepApplied(1));
    s.apply(new GradientReceived("a", 2, 1f, new float[] {2f, 2f}));
    BlockState copy = s.copy();
    assertSameState(s, copy);

    s.apply(new GradientReceived("b", 2, 1f, new float[] {2f, 2f}));
    s.apply(new StepApplied(2));
    s.apply(new MembershipUpdated(2, List.of("a")));
    s.holdCapture(0);
    assertEquals(1, copy.version());
    assertEquals(1, copy.updates());
    assertEquals(1, copy.pending().size());
    assertEquals(List.of("a", "b"), copy.members());
    assertEquals(List.of(0L), copy.checkpointSteps());
    // Momentum's velocity after one step on [1, 1] is [1, 1]; the original's moved on.
    assertArrayEquals(new float[] {1f, 1f}, copy.slots()[0], 0f);
    assertTrue(s.slots()[0][0] != 1f);
  }

  @Test
  void replayingTheSameEventsRebuildsTheSameBits() {
    List<Event> events = List.of(
        new Initialized(spec(OptimizerSpec.Kind.ADAM, BlockSpec.Mode.SYNC), new float[] {0.5f, -1.25f}),
        new MembershipUpdated(1, List.of("a", "b")),
        new GradientReceived("a", 1, 3f, new float[] {0.1f, -0.2f}),
        new GradientReceived("b", 1, 1f, new float[] {-0.4f, 0.25f}),
        new StepApplied(1),
        new GradientReceived("b", 2, 2f, new float[] {0.3f, 0.05f}),
        new GradientReceived("a", 2, 5f, new float[] {0.7f, -0.9f}),
        new StepApplied(2));
    BlockState first = new BlockState();
    BlockState second = new BlockState();
    for (Event e : events) first.apply(e);
    for (Event e : events) second.apply(e);
    assertSameState(first, second);
    assertEquals(2, first.updates());
  }

  @Test
  void holdCaptureKeepsTheLiveStateAndDropsCheckpointsOlderThanKeepFrom() {
    BlockState s = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, "a");
    s.apply(new GradientReceived("a", 1, 1f, new float[] {1f, 1f}));
    s.apply(new StepApplied(1));
    s.holdCapture(0);
    assertEquals(List.of(0L, 1L), s.checkpointSteps());
    s.apply(new GradientReceived("a", 2, 1f, new float[] {1f, 1f}));
    s.apply(new StepApplied(2));
    s.holdCapture(1);
    assertEquals(List.of(1L, 2L), s.checkpointSteps());
    assertSame(s.values, s.checkpoint(2).values(), "the capture shares the version's array");
    assertEquals(2, s.checkpoint(2).updates());
  }

  @Test
  void rollingBackReturnsToTheCheckpointAndForgetsWhatCameAfterIt() {
    BlockState s = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, "a", "b");
    s.apply(new GradientReceived("a", 1, 1f, new float[] {1f, 1f}));
    s.apply(new GradientReceived("b", 1, 1f, new float[] {1f, 1f}));
    s.apply(new StepApplied(1));
    BlockState.Held one = s.capture();
    s.apply(new CheckpointTaken(1, 0, one.values(), one.slots(), one.updates()));
    s.apply(new GradientReceived("a", 2, 1f, new float[] {1f, 1f}));
    s.apply(new GradientReceived("b", 2, 1f, new float[] {1f, 1f}));
    s.apply(new StepApplied(2));
    s.holdCapture(0);
    s.apply(new GradientReceived("a", 3, 1f, new float[] {1f, 1f}));

    s.apply(new RolledBackTo(1, 1));
    assertEquals(1, s.version());
    assertEquals(1, s.updates());
    assertEquals(1, s.generation());
    assertBitsEqual(one.values(), s.values(), "values");
    assertEquals(List.of(0L, 1L), s.checkpointSteps());
    assertEquals(List.of(), s.pending());
    assertEquals(java.util.Map.of(), s.lastSteps());
  }

  @Test
  void checkpointDurabilitySnapshotIsTheNewestCheckpointAndLeavesTheLiveStateAlone() {
    BlockState s = started(OptimizerSpec.Kind.SGD, BlockSpec.Mode.SYNC, "a");
    s.apply(new GradientReceived("a", 1, 1f, new float[] {1f, 1f}));
    s.apply(new StepApplied(1));
    s.holdCapture(0);
    float[] atOne = s.values();
    s.apply(new GradientReceived("a", 2, 1f, new float[] {1f, 1f}));
    s.apply(new StepApplied(2));
    s.apply(new GradientReceived("a", 3, 1f, new float[] {1f, 1f}));

    BlockState snapshot = s.asOfNewestCheckpoint();
    assertEquals(1, snapshot.version());
    assertBitsEqual(atOne, snapshot.values(), "snapshot values");
    assertEquals(List.of(), snapshot.pending());
    assertEquals(2, s.version());
    assertEquals(1, s.pending().size());
    assertEquals(List.of(), s.copyWithoutCheckpoints().checkpointSteps());
    assertEquals(List.of(0L, 1L), s.checkpointSteps());
  }

  /** A block whose rate halves with every planned update: {@code step:1:0.5} from 1.0, SGD. */
  private static BlockState halving(BlockSpec.Mode mode, long examplesPerUpdate, String... trainers) {
    BlockSpec spec = new BlockSpec("w", 0, 0, 1, OptimizerSpec.defaults(OptimizerSpec.Kind.SGD), "step:1:0.5", 1f,
        mode, -1, examplesPerUpdate);
    BlockState s = new BlockState().apply(new Initialized(spec, new float[] {0f}));
    return s.apply(new MembershipUpdated(1, List.of(trainers)));
  }

  @Test
  void aSyncScheduleRunsOnTheExamplesAppliedSoOneTrainerLeftTakesTwiceTheStepsToDecay() {
    // Planned for 2 trainers of batch 4: an update covers 8 examples. Only "a" is left, 4 per step.
    BlockState s = halving(BlockSpec.Mode.SYNC, 8, "a");
    float[] rates = new float[4];
    for (int step = 1; step <= 4; step++) {
      float before = s.values()[0];
      s.apply(new GradientReceived("a", step, 4f, new float[] {1f}));
      s.apply(new StepApplied(step));
      rates[step - 1] = before - s.values()[0];
    }
    // Positions 0, 0, 1, 1 (4, 8, 12 examples before steps 2-4): rates 1, 1, 0.5, 0.5.
    assertArrayEquals(new float[] {1f, 1f, 0.5f, 0.5f}, rates, 0f);
    assertEquals(4, s.updates());
    assertEquals(16, s.examplesApplied());
    assertEquals(2, s.schedulePosition());
    // Both trainers again (a joined): a full update per step, as planned.
    s.apply(new MembershipUpdated(2, List.of("a", "b")));
    s.apply(new GradientReceived("a", 5, 4f, new float[] {1f}));
    s.apply(new GradientReceived("b", 5, 4f, new float[] {1f}));
    float before = s.values()[0];
    s.apply(new StepApplied(5));
    assertEquals(0.25f, before - s.values()[0], 0f);
    assertEquals(3, s.schedulePosition());
  }

  @Test
  void anAsyncScheduleRunsOnTheExamplesOfEachPushWhicheverTrainerSentIt() {
    // Planned: an update is one batch of 4.
    BlockState s = halving(BlockSpec.Mode.ASYNC, 4);
    float[] rates = new float[4];
    String[] from = {"a", "b", "a", "a"};
    float[] weights = {4f, 4f, 2f, 2f};
    for (int i = 0; i < 4; i++) {
      float before = s.values()[0];
      s.apply(new GradientApplied(from[i], i + 1, weights[i], new float[] {1f}, null));
      rates[i] = before - s.values()[0];
    }
    // Positions 0, 1, 2, 2 (0, 4, 8, 10 examples): a half batch moves the schedule half as far.
    assertArrayEquals(new float[] {1f, 0.5f, 0.25f, 0.25f}, rates, 0f);
    assertEquals(12, s.examplesApplied());
  }

  @Test
  void aSpecThatPlansNoExamplesRunsTheScheduleOnTheUpdateCount() {
    BlockState s = halving(BlockSpec.Mode.SYNC, 0, "a");
    s.apply(new GradientReceived("a", 1, 4f, new float[] {1f}));
    s.apply(new StepApplied(1));
    s.apply(new GradientReceived("a", 2, 4f, new float[] {1f}));
    float before = s.values()[0];
    s.apply(new StepApplied(2));
    assertEquals(0.5f, before - s.values()[0], 0f);
    assertEquals(2, s.schedulePosition());
  }

  @Test
  void aRollbackTakesTheExamplesAppliedBackToTheCheckpointsSoTheScheduleResumesThere() {
    BlockState s = halving(BlockSpec.Mode.SYNC, 4, "a");
    s.apply(new GradientReceived("a", 1, 4f, new float[] {1f}));
    s.apply(new StepApplied(1));
    BlockState.Held h = s.capture();
    s.apply(new CheckpointTaken(1, 0, h.values(), h.slots(), h.updates(), h.examples()));
    s.apply(new GradientReceived("a", 2, 4f, new float[] {1f}));
    s.apply(new StepApplied(2));
    assertEquals(8, s.examplesApplied());
    s.apply(new RolledBackTo(1, 1));
    assertEquals(4, s.examplesApplied());
    assertEquals(1, s.schedulePosition());
  }
}
