package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.GetTaskMark;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import io.shardtrain.actors.ps.BlockProtocol.TaskProgress;
import io.shardtrain.compute.optim.OptimizerSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.GA;
import static io.shardtrain.actors.ps.BlockTestSupport.GB;
import static io.shardtrain.actors.ps.BlockTestSupport.INIT;
import static io.shardtrain.actors.ps.BlockTestSupport.block;
import static io.shardtrain.actors.ps.BlockTestSupport.init;
import static io.shardtrain.actors.ps.BlockTestSupport.membership;
import static io.shardtrain.actors.ps.BlockTestSupport.settings;
import static io.shardtrain.actors.ps.BlockTestSupport.stats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How far a block holds each data task's examples ({@link TaskMark} on pushes, {@link GetTaskMark}):
 * what the master asks every block when a trainer left before reporting its last steps.
 */
class ParameterBlockTaskMarkTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockTaskMarkTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static EventSourcedBehaviorTestKit<Command, Event, BlockState> started(BlockSpec.Mode mode, PsSettings s) {
    BlockSpec spec = new BlockSpec(BlockTestSupport.freshParameter(), 0, 0, INIT.length,
        OptimizerSpec.defaults(OptimizerSpec.Kind.MOMENTUM), "constant", 0.1f, mode, -1);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, s);
    assertEquals(0L, init(tk, spec, INIT).getValue());
    if (mode == BlockSpec.Mode.SYNC) assertEquals(1L, membership(tk, 1, "a", "b").getValue());
    return tk;
  }

  private static PushAck push(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, String trainer, long step,
      long base, float weight, float[] g, TaskMark mark) {
    return tk.<StatusReply<PushAck>>runCommand(
        r -> new PushGradient(trainer, step, base, 1, weight, g, 0, mark, r)).reply().getValue();
  }

  /** A sync push that does not complete its step: its acknowledgement comes with the step. */
  private static TestProbe<StatusReply<PushAck>> send(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk,
      String trainer, long step, long base, float weight, float[] g, TaskMark mark) {
    TestProbe<StatusReply<PushAck>> probe = kit.createTestProbe();
    tk.runCommand(new PushGradient(trainer, step, base, 1, weight, g, 0, mark, probe.ref()));
    return probe;
  }

  private static TaskProgress mark(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, int epoch, int task) {
    return tk.<StatusReply<TaskProgress>>runCommand(r -> new GetTaskMark(epoch, task, r)).reply().getValue();
  }

  @Test
  void aSyncBlockHoldsATaskUpToItsNewestPushReceivedEvenBeforeTheStepIsApplied() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(BlockSpec.Mode.SYNC, settings());
    assertEquals(new TaskProgress(0, 0), mark(tk, 0, 1));
    TestProbe<StatusReply<PushAck>> a1 = send(tk, "a", 1, 0, 8f, GA, new TaskMark(0, 1, 8));
    // Waiting for "b": it will be applied (or, if this block fails first, sent again, never having
    // been acknowledged), so the block holds those examples.
    assertEquals(new TaskProgress(8, 1), mark(tk, 0, 1));
    assertEquals(new Applied(1), push(tk, "b", 1, 0, 8f, GB, new TaskMark(0, 0, 8)));
    assertEquals(new Accepted(1), a1.receiveMessage().getValue());
    send(tk, "a", 2, 1, 8f, GB, new TaskMark(0, 1, 16));
    assertEquals(new TaskProgress(16, 2), mark(tk, 0, 1));
    assertEquals(new TaskProgress(8, 1), mark(tk, 0, 0));
    // A push without data (the block had the batch already) moves no mark.
    assertEquals(new Applied(2), push(tk, "b", 2, 1, 0f, new float[0], null));
    assertEquals(new TaskProgress(8, 1), mark(tk, 0, 0));
    assertEquals(24, stats(tk).examplesApplied(), "8 + 8 examples in step 1, 8 + none in step 2");
  }

  @Test
  void marksSurviveARestartThroughTheJournalAndTheSnapshot() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(BlockSpec.Mode.SYNC,
        settings(2, java.time.Duration.ofSeconds(5), PsSettings.NonFinitePolicy.REJECT));
    for (int step = 1; step <= 5; step++) {
      send(tk, "a", step, step - 1, 4f, GA, new TaskMark(1, 0, 4L * step));
      push(tk, "b", step, step - 1, 4f, GB, new TaskMark(1, 1, 4L * step));
    }
    send(tk, "a", 6, 5, 4f, GA, new TaskMark(1, 0, 24));
    assertEquals(new TaskProgress(24, 6), mark(tk, 1, 0));
    tk.restart();
    assertEquals(new TaskProgress(20, 5), mark(tk, 1, 0), "a's push for step 6 was never acknowledged");
    assertEquals(new TaskProgress(20, 5), mark(tk, 1, 1));
  }

  @Test
  void marksOfEpochsTwoBeforeTheNewestAreDropped() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(BlockSpec.Mode.ASYNC, settings());
    push(tk, "a", 1, 0, 4f, GA, new TaskMark(3, 0, 40));
    push(tk, "a", 2, 1, 4f, GA, new TaskMark(4, 0, 4));
    assertEquals(new TaskProgress(40, 1), mark(tk, 3, 0));
    push(tk, "a", 3, 2, 4f, GA, new TaskMark(5, 0, 4));
    assertEquals(new TaskProgress(0, 0), mark(tk, 3, 0));
    assertEquals(new TaskProgress(4, 2), mark(tk, 4, 0));
  }

  @Test
  void anAsyncBlockAcknowledgesAPushWithoutDataAsADuplicateAndAppliesNothing() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(BlockSpec.Mode.ASYNC, settings());
    assertEquals(new Applied(1), push(tk, "a", 1, 0, 4f, GA, new TaskMark(0, 0, 4)));
    float[] before = tk.getState().values();
    var idle = tk.<StatusReply<PushAck>>runCommand(
        r -> new PushGradient("b", 1, 1, 1, 0f, new float[0], 0, null, r));
    assertEquals(new Duplicate(1), idle.reply().getValue());
    assertTrue(idle.hasNoEvents());
    BlockTestSupport.assertBitsEqual(before, tk.getState().values(), "values");
    assertEquals(new TaskProgress(4, 1), mark(tk, 0, 0));
  }

  @Test
  void aRollbackForgetsTheMarksWithTheMastersOffsets() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(BlockSpec.Mode.SYNC,
        settings().withDurability(PsSettings.Durability.CHECKPOINT));
    push(tk, "a", 1, 0, 4f, GA, new TaskMark(0, 0, 4));
    push(tk, "b", 1, 0, 4f, GB, new TaskMark(0, 1, 4));
    assertEquals(new TaskProgress(4, 1), mark(tk, 0, 0));
    assertEquals(0L, tk.<StatusReply<Long>>runCommand(r -> new BlockProtocol.RollBack(0, 1, r)).reply().getValue());
    assertEquals(new TaskProgress(0, 0), mark(tk, 0, 0));
  }
}
