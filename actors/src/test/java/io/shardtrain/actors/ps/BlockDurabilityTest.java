package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
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
  void exactJournalsEveryEventAndChangesNothingItself() {
    BlockState s = started();
    List<Event> events = step(1);
    PendingCaptures captures = new PendingCaptures();
    captures.add(new Checkpoint(1, 0, null));
    assertSame(events, new BlockDurability.Exact().record(s, events, captures));
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
