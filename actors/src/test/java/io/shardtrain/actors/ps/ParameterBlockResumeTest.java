package io.shardtrain.actors.ps;

import static io.shardtrain.actors.ps.BlockTestSupport.GA;
import static io.shardtrain.actors.ps.BlockTestSupport.GB;
import static io.shardtrain.actors.ps.BlockTestSupport.INIT;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.block;
import static io.shardtrain.actors.ps.BlockTestSupport.init;
import static io.shardtrain.actors.ps.BlockTestSupport.membership;
import static io.shardtrain.actors.ps.BlockTestSupport.push;
import static io.shardtrain.actors.ps.BlockTestSupport.send;
import static io.shardtrain.actors.ps.BlockTestSupport.settings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.Resumed;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.Resume;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A block resumed from another block's state at a step continues exactly as that block does. */
class ParameterBlockResumeTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockResumeTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  /** Adam with a step schedule over the examples applied: both its slots and its counts matter. */
  private static BlockSpec spec(String parameter, BlockSpec.Mode mode) {
    return new BlockSpec(parameter, 0, 0, INIT.length, OptimizerSpec.defaults(OptimizerSpec.Kind.ADAM), "step:2:0.5",
        0.01f, mode, -1, 3);
  }

  private static void step(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, long step) {
    var a = send(kit, tk, "a", step, step - 1, 1f, GA);
    assertEquals(new Applied(step), push(tk, "b", step, step - 1, 2f, GB).getValue());
    assertEquals(new Accepted(step), a.receiveMessage().getValue());
  }

  private static StatusReply<Long> resume(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, Resumed state) {
    return tk.<StatusReply<Long>>runCommand(r -> new Resume(state, r)).reply();
  }

  @Test
  void aBlockResumedFromAnothersStateAtStep3TakesTheNextStepsBitForBitAsThatBlockAndReplaysThere() {
    BlockSpec originalSpec = spec(BlockTestSupport.freshParameter(), BlockSpec.Mode.SYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> original = block(kit, originalSpec, settings());
    assertEquals(0L, init(original, originalSpec, INIT).getValue());
    membership(original, 1, "a", "b");
    for (long s = 1; s <= 3; s++) step(original, s);
    BlockState at3 = original.getState();

    BlockSpec spec = spec(BlockTestSupport.freshParameter(), BlockSpec.Mode.SYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> resumed = block(kit, spec, settings());
    Resumed state = new Resumed(spec, 3, at3.values(), at3.slots(), at3.updates(), at3.examplesApplied());
    assertEquals(3L, resume(resumed, state).getValue());
    // Idempotent, like Initialize.
    assertEquals(3L, resume(resumed, state).getValue());
    assertEquals(List.of(3L), resumed.getState().checkpointSteps());
    membership(resumed, 1, "a", "b");
    for (long s = 4; s <= 6; s++) {
      step(original, s);
      step(resumed, s);
    }
    // Replay reads the Resumed event back through the journal serializer.
    resumed.restart();
    BlockState a = original.getState();
    BlockState b = resumed.getState();
    assertEquals(List.of(6L, 6L, 18L), List.of(b.version(), b.updates(), b.examplesApplied()));
    assertEquals(List.of(a.version(), a.updates(), a.examplesApplied()),
        List.of(b.version(), b.updates(), b.examplesApplied()));
    assertBitsEqual(a.values(), b.values(), "values");
    assertEquals(2, b.slots().length);
    for (int k = 0; k < 2; k++) assertBitsEqual(a.slots()[k], b.slots()[k], "slot " + k);
  }

  @Test
  void aResumeWithAnotherOptimizersSlotsIsRefusedAndLeavesTheBlockUninitialised() {
    BlockSpec spec = spec(BlockTestSupport.freshParameter(), BlockSpec.Mode.SYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, settings());
    StatusReply<Long> r = resume(tk, new Resumed(spec, 3, INIT, new float[][] {INIT.clone()}, 3, 9));
    assertTrue(r.isError());
    assertEquals("Resume of block " + spec.entityId() + ": 1 optimizer slots, ADAM keeps 2", r.getError().getMessage());
    assertTrue(!tk.getState().isInitialised());
  }

  @Test
  void anAsyncBlockDoesNotResume() {
    BlockSpec spec = spec(BlockTestSupport.freshParameter(), BlockSpec.Mode.ASYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, settings());
    StatusReply<Long> r = resume(tk, new Resumed(spec, 3, INIT, new float[][] {INIT.clone(), INIT.clone()}, 3, 9));
    assertEquals("Resume of block " + spec.entityId() + ": only a sync block resumes from a checkpoint, not ASYNC",
        r.getError().getMessage());
  }
}
