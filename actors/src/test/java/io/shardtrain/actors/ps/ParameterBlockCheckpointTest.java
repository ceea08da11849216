package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.RolledBackTo;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Captured;
import io.shardtrain.actors.ps.BlockProtocol.Checkpoint;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.ReadCheckpoint;
import io.shardtrain.actors.ps.BlockProtocol.RollBack;
import io.shardtrain.actors.ps.BlockProtocol.RolledBack;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.GA;
import static io.shardtrain.actors.ps.BlockTestSupport.GB;
import static io.shardtrain.actors.ps.BlockTestSupport.INIT;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.block;
import static io.shardtrain.actors.ps.BlockTestSupport.init;
import static io.shardtrain.actors.ps.BlockTestSupport.membership;
import static io.shardtrain.actors.ps.BlockTestSupport.send;
import static io.shardtrain.actors.ps.BlockTestSupport.push;
import static io.shardtrain.actors.ps.BlockTestSupport.settings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Checkpoints of a sync block, and checkpoint durability: only checkpoints are journaled, rollback returns to one. */
class ParameterBlockCheckpointTest {
  private static ActorTestKit kit;


  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockCheckpointTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static BlockSpec adamSpec(BlockSpec.Mode mode) {
    return new BlockSpec(BlockTestSupport.freshParameter(), 0, 0, INIT.length,
        OptimizerSpec.defaults(OptimizerSpec.Kind.ADAM), "constant", 0.01f, mode, -1);
  }

  private static PsSettings checkpointDurability() {
    return settings().withDurability(PsSettings.Durability.CHECKPOINT);
  }

  private static EventSourcedBehaviorTestKit<Command, Event, BlockState> started(PsSettings s) {
    BlockSpec spec = adamSpec(BlockSpec.Mode.SYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, s);
    assertEquals(0L, init(tk, spec, INIT).getValue());
    assertEquals(1L, membership(tk, 1, "a", "b").getValue());
    return tk;
  }

  /** Both trainers push step {@code step} to a block of exact durability, which answers the first push with the step. */
  private static void step(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, long step) {
    TestProbe<StatusReply<PushAck>> a = send(kit, tk, "a", step, step - 1, 1f, GA);
    assertEquals(new Applied(step), push(tk, "b", step, step - 1, 2f, GB).getValue());
    assertEquals(new Accepted(step), a.receiveMessage().getValue());
  }

  /** The same with checkpoint durability, which answers a push as it arrives. */
  private static void checkpointStep(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, long step) {
    assertEquals(new Accepted(step - 1), push(tk, "a", step, step - 1, 1f, GA).getValue());
    assertEquals(new Applied(step), push(tk, "b", step, step - 1, 2f, GB).getValue());
  }

  private static BlockValues read(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, long step, int part) {
    return tk.<StatusReply<BlockValues>>runCommand(r -> new ReadCheckpoint(step, part, r)).reply().getValue();
  }

  @Test
  void checkpointRequestedAheadCapturesTheStateOfExactlyThatStep() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(settings());
    TestProbe<StatusReply<Captured>> probe = kit.createTestProbe();
    tk.runCommand(new Checkpoint(2, 0, probe.ref()));
    step(tk, 1);
    probe.expectNoMessage(java.time.Duration.ofMillis(50));
    step(tk, 2);
    assertEquals(new Captured(tk.getState().spec().entityId(), 2, 2, 2, 6), probe.receiveMessage().getValue());
    // getState() is the live, mutable state: keep copies.
    float[] values2 = tk.getState().values();
    float[][] slots2 = tk.getState().slots();
    step(tk, 3);
    assertTrue(tk.getState().version() == 3);
    BlockValues values = read(tk, 2, 0);
    assertEquals(2, values.version());
    assertBitsEqual(values2, values.values(), "checkpoint values");
    assertBitsEqual(slots2[0], read(tk, 2, 1).values(), "checkpoint slot 0");
    assertBitsEqual(slots2[1], read(tk, 2, 2).values(), "checkpoint slot 1");
    assertTrue(tk.<StatusReply<BlockValues>>runCommand(r -> new ReadCheckpoint(2, 3, r)).reply().isError());
  }

  @Test
  void checkpointOfAStepAlreadyPassedOrOfAnAsyncBlockIsAnError() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(settings());
    step(tk, 1);
    step(tk, 2);
    var past = tk.<StatusReply<Captured>>runCommand(r -> new Checkpoint(1, 0, r)).reply();
    assertTrue(past.isError());
    assertTrue(past.getError().getMessage().contains("past checkpoint step 1"), past.getError().getMessage());

    BlockSpec async = adamSpec(BlockSpec.Mode.ASYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> a = block(kit, async, settings());
    init(a, async, INIT);
    var refused = a.<StatusReply<Captured>>runCommand(r -> new Checkpoint(0, 0, r)).reply();
    assertTrue(refused.isError() && refused.getError().getMessage().contains("sync mode"));
  }

  @Test
  void checkpointDurabilityJournalsNoGradientAndRecoversTheNewestCheckpoint() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(checkpointDurability());
    var first = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("a", 1, 0, 1, 1f, GA, r));
    assertTrue(first.hasNoEvents(), "a gradient is not journaled: " + first.events());
    assertEquals(new Applied(1), push(tk, "b", 1, 0, 2f, GB).getValue());
    var captured = tk.<StatusReply<Captured>>runCommand(r -> new Checkpoint(1, 0, r));
    assertEquals(1, captured.events().size());
    assertTrue(captured.events().get(0) instanceof CheckpointTaken);
    float[] values1 = tk.getState().values();
    float[][] slots1 = tk.getState().slots();
    checkpointStep(tk, 2);
    checkpointStep(tk, 3);
    assertEquals(3, tk.getState().version());

    tk.restart();
    BlockState recovered = tk.getState();
    assertEquals(1, recovered.version(), "the journal ends at the checkpoint of step 1");
    assertEquals(1, recovered.updates());
    assertBitsEqual(values1, recovered.values(), "recovered values");
    assertBitsEqual(slots1[1], recovered.slots()[1], "recovered slot 1");
    assertEquals(List.of(0L, 1L), recovered.checkpointSteps());
  }

  @Test
  void contributionsToTheNextStepSurviveACaptureAtTheCurrentOne() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(checkpointDurability());
    checkpointStep(tk, 1);
    assertEquals(new Accepted(1), push(tk, "a", 2, 1, 1f, GA).getValue());
    assertTrue(tk.<StatusReply<Captured>>runCommand(r -> new Checkpoint(1, 0, r)).reply().isSuccess());
    assertEquals(new Applied(2), push(tk, "b", 2, 1, 2f, GB).getValue());
  }

  @Test
  void rollBackReturnsToTheCheckpointAndRefusesPushesOfTheAbandonedTimeline() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(checkpointDurability());
    checkpointStep(tk, 1);
    checkpointStep(tk, 2);
    tk.<StatusReply<Captured>>runCommand(r -> new Checkpoint(2, 0, r));
    // getState() is the live, mutable state: keep copies.
    float[] values2 = tk.getState().values();
    float[][] slots2 = tk.getState().slots();
    checkpointStep(tk, 3);
    checkpointStep(tk, 4);
    // A checkpoint never committed by the master; rollback goes past it to step 2.
    tk.<StatusReply<Captured>>runCommand(r -> new Checkpoint(4, 2, r));

    var rolled = tk.<StatusReply<Long>>runCommand(r -> new RollBack(2, 1, r));
    assertEquals(2L, rolled.reply().getValue());
    assertEquals(List.of(new RolledBackTo(2, 1)), rolled.events());
    assertBitsEqual(values2, tk.getState().values(), "values after the rollback");
    assertEquals(List.of(2L), tk.getState().checkpointSteps());
    assertEquals(2, tk.getState().updates());

    // An old-timeline push (generation 0), even one for the next step: refused, not an error.
    var old = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("a", 3, 2, 1, 1f, GA, 0, r));
    assertEquals(new RolledBack(2), old.reply().getValue());
    assertTrue(old.hasNoEvents());
    // The same rollback again (the master re-sends until all answered) changes nothing.
    assertTrue(tk.<StatusReply<Long>>runCommand(r -> new RollBack(2, 1, r)).hasNoEvents());
    var a = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("a", 3, 2, 1, 1f, GA, 1, r));
    assertEquals(new Accepted(2), a.reply().getValue());
    var b = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("b", 3, 2, 1, 2f, GB, 1, r));
    assertEquals(new Applied(3), b.reply().getValue());

    tk.restart();
    assertEquals(2, tk.getState().version(), "recovery lands on the rollback's checkpoint");
    assertEquals(1, tk.getState().generation());
    assertBitsEqual(values2, tk.getState().values(), "recovered values");
  }

  @Test
  void rollBackNeedsCheckpointDurabilityAndAHeldCheckpoint() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> exact = started(settings());
    assertTrue(exact.<StatusReply<Long>>runCommand(r -> new RollBack(0, 1, r)).reply().isError());
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(checkpointDurability());
    var missing = tk.<StatusReply<Long>>runCommand(r -> new RollBack(5, 1, r)).reply();
    assertTrue(missing.isError() && missing.getError().getMessage().contains("holds checkpoints [0]"),
        missing.getError().getMessage());
  }

  @Test
  void asyncBlocksRefuseCheckpointDurability() {
    BlockSpec async = adamSpec(BlockSpec.Mode.ASYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> a = block(kit, async, checkpointDurability());
    StatusReply<Long> r = init(a, async, INIT);
    assertTrue(r.isError() && r.getError().getMessage().contains("needs sync mode"), String.valueOf(r));
  }
}
