package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Contributor;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockProtocol.Checkpoint;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The two durabilities on their own: what they journal and what they change. No actor system. */
class BlockDurabilityTest {

  private static BlockSpec spec(BlockSpec.Mode mode) {
    return new BlockSpec("w", 0, 0, 2, OptimizerSpec.defaults(OptimizerSpec.Kind.SGD), "constant", 0.1f, mode, -1);
  }

  private static BlockState started() {
    BlockState s = new BlockState().apply(new Initialized(spec(BlockSpec.Mode.SYNC), new float[] {1f, 1f}));
    return s.apply(new MembershipUpdated(1, List.of("a")));
  }

  private static List<Event> step(long step) {
    return List.of(new GradientReceived("a", step, 1f, new float[] {1f, 2f}), new StepApplied(step));
  }

  @Test
  void exactHoldsSyncContributionsInMemoryAndJournalsEachStepAsTheMeanItApplies() {
    BlockState s = started().apply(new MembershipUpdated(2, List.of("a", "b")));
    BlockDurability exact = new BlockDurability.Exact();
    PendingCaptures captures = new PendingCaptures();
    assertEquals(List.of(), exact.record(s, List.of(new GradientReceived("a", 1, 3f, new float[] {1f, 2f})), captures));
    assertEquals(List.of("a"), s.barrier().contributors());
    assertEquals(0, s.version());

    List<Event> journaled = exact.record(s,
        List.of(new GradientReceived("b", 1, 1f, new float[] {5f, -2f}), new StepApplied(1)), captures);
    assertEquals(1, journaled.size());
    StepCommitted c = (StepCommitted) journaled.get(0);
    assertEquals(1, c.step());
    // (3 * [1, 2] + 1 * [5, -2]) / 4
    assertArrayEquals(new float[] {2f, 1f}, c.mean(), 0f);
    assertEquals(4, c.examples());
    assertEquals(List.of(new Contributor("a", null), new Contributor("b", null)), c.contributors());
    // Applied only by the journal's event handler: SGD at 0.1 on [1, 1].
    assertEquals(0, s.version());
    s.apply(c);
    assertEquals(1, s.version());
    assertArrayEquals(new float[] {0.8f, 0.9f}, s.values(), 1e-7f);
    assertEquals(4, s.examplesApplied());
    assertEquals(List.of(), s.pending());
  }

  @Test
  void exactJournalsAsyncGradientsAsTheyCome() {
    BlockState s = new BlockState().apply(new Initialized(spec(BlockSpec.Mode.ASYNC), new float[] {1f, 1f}));
    List<Event> events = List.of(new GradientApplied("a", 1, new float[] {1f, 2f}));
    assertSame(events, new BlockDurability.Exact().record(s, events, new PendingCaptures()));
    assertEquals(0, s.version());
  }

  @Test
  void checkpointsAppliesGradientsInMemoryAndJournalsOnlyMembershipsAndCaptures() {
    BlockState s = started();
    PendingCaptures captures = new PendingCaptures();
    BlockDurability d = new BlockDurability.Checkpoints();
    MembershipUpdated m = new MembershipUpdated(2, List.of("a"));
    assertEquals(List.of(m), d.record(s, List.of(m, step(1).get(0), step(1).get(1)), captures));
    // Applied at once: SGD at 0.1 on [1, 2].
    assertEquals(1, s.version());
    assertArrayEquals(new float[] {0.9f, 0.8f}, s.values(), 0f);

    captures.add(new Checkpoint(2, 1, null));
    List<Event> journaled = d.record(s, step(2), captures);
    assertEquals(1, journaled.size());
    CheckpointTaken t = (CheckpointTaken) journaled.get(0);
    assertEquals(2, t.step());
    assertEquals(1, t.keepFrom());
    assertSame(s.values, t.values());
    assertEquals(2, t.updates());
  }

  @Test
  void exactHoldsItsCaptureInMemoryOnlyAtTheCurrentVersion() {
    BlockState s = started();
    for (Event e : step(1)) s.apply(e);
    BlockDurability exact = new BlockDurability.Exact();
    assertNotNull(exact.captured(s, 1, 1));
    assertEquals(List.of(1L), s.checkpointSteps(), "keepFrom 1 dropped checkpoint 0");
    assertNull(exact.captured(s, 0, 0), "a step passed without a capture");
    assertNull(new BlockDurability.Checkpoints().captured(started(), 3, 0));
  }

  @Test
  void checkpointsRefusesAsyncBlocksAndPushesOfAnotherTimeline() {
    BlockDurability d = new BlockDurability.Checkpoints();
    assertNull(d.refusal(spec(BlockSpec.Mode.SYNC)));
    assertTrue(d.refusal(spec(BlockSpec.Mode.ASYNC)).contains("needs sync mode"));
    assertNull(new BlockDurability.Exact().refusal(spec(BlockSpec.Mode.ASYNC)));

    BlockState s = BlockState.restore(started(), java.util.Map.of(), 2);
    assertTrue(d.leftBehind(s, new PushGradient("a", 1, 0, 1, 1f, new float[2], 1, null)), "older generation");
    assertTrue(d.leftBehind(s, new PushGradient("a", 2, 0, 1, 1f, new float[2], 2, null)), "a step not reached");
    assertFalse(d.leftBehind(s, new PushGradient("a", 1, 0, 1, 1f, new float[2], 2, null)));
    assertFalse(new BlockDurability.Exact().leftBehind(s, new PushGradient("a", 1, 0, 1, 1f, new float[2], 0, null)));
  }
}
