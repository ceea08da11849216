package io.shardtrain.actors.ps;

import static io.shardtrain.actors.ps.BlockTestSupport.GA;
import static io.shardtrain.actors.ps.BlockTestSupport.INIT;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.block;
import static io.shardtrain.actors.ps.BlockTestSupport.init;
import static io.shardtrain.actors.ps.BlockTestSupport.push;
import static io.shardtrain.actors.ps.BlockTestSupport.settings;
import static io.shardtrain.actors.ps.BlockTestSupport.sgdSpec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.ReplicaPublished;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.Publish;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** An all-reduce block keeps the values replicas publish, and nothing else. */
class ParameterBlockPublishTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockPublishTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static StatusReply<Long> publish(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, long step,
      long examples, float[] values) {
    return publishAs(tk, "t1", step, 1, examples, values).reply();
  }

  @Test
  void publishedValuesAreTheBlocksNextVersionAnswerWaitingPullsAndSurviveARestart() {
    BlockSpec spec = sgdSpec(BlockSpec.Mode.ALLREDUCE);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, settings());
    init(tk, spec, INIT);
    TestProbe<StatusReply<BlockValues>> waiting = kit.createTestProbe();
    tk.runCommand(new Pull(100, waiting.ref()));
    float[] at100 = {1f, 2f, 3f, 4f, 5f};
    EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, BlockState, StatusReply<Long>> r =
        tk.runCommand(c -> new Publish("t1", 100, 1, 6400, at100, c));
    assertEquals(100L, r.reply().getValue());
    ReplicaPublished event = r.eventOfType(ReplicaPublished.class);
    assertEquals(100, event.step());
    assertEquals(6400, event.examples());
    assertEquals(1, event.ringEpoch());
    BlockValues v = waiting.receiveMessage().getValue();
    assertEquals(100, v.version());
    assertBitsEqual(at100, v.values(), "pulled");

    // The other member's publication of the same step in the same ring, and an older one, change nothing.
    for (long step : new long[] {100, 50}) {
      EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, BlockState, StatusReply<Long>> again =
          tk.runCommand(c -> new Publish("t2", step, 1, 6400, new float[] {9f, 9f, 9f, 9f, 9f}, c));
      assertEquals(100L, again.reply().getValue());
      assertTrue(again.events().isEmpty(), "events: " + again.events());
    }
    assertBitsEqual(at100, tk.getState().values(), "kept");

    tk.restart();
    BlockState recovered = tk.getState();
    assertEquals(100, recovered.version());
    assertEquals(6400, recovered.examplesApplied());
    assertBitsEqual(at100, recovered.values(), "recovered");
  }

  /**
   * A member applies and publishes step 100, then dies; the ring re-formed without it (epoch 2)
   * redoes step 100 without its batch. The survivors' values replace the dead member's; a late
   * publication of the old ring and the other survivor's of the same step change nothing, also
   * after a restart.
   */
  @Test
  void aReFormedRingsPublicationReplacesTheSameStepOfAnOlderRing() {
    BlockSpec spec = sgdSpec(BlockSpec.Mode.ALLREDUCE);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, settings());
    init(tk, spec, INIT);
    float[] dead = {1f, 1f, 1f, 1f, 1f};
    float[] redone = {2f, 2f, 2f, 2f, 2f};
    assertEquals(100L, publishAs(tk, "dead", 100, 1, 6400, dead).reply().getValue());
    EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, BlockState, StatusReply<Long>> r =
        publishAs(tk, "s1", 100, 2, 6336, redone);
    assertEquals(100L, r.reply().getValue());
    assertEquals(2, r.eventOfType(ReplicaPublished.class).ringEpoch());
    assertBitsEqual(redone, tk.getState().values(), "the re-formed ring's step");
    assertEquals(6336, tk.getState().examplesApplied());

    for (int round = 0; round < 2; round++) {
      assertTrue(publishAs(tk, "dead", 100, 1, 6400, dead).events().isEmpty(), "the old ring's late publication");
      assertTrue(publishAs(tk, "s2", 100, 2, 6336, new float[] {3f, 3f, 3f, 3f, 3f}).events().isEmpty(),
          "the same ring's second publication");
      assertBitsEqual(redone, tk.getState().values(), "kept, round " + round);
      tk.restart();
    }
  }

  /** The same from a snapshot: a block recovered from one taken at a publication knows that publication's ring. */
  @Test
  void aRecoveredSnapshotKeepsTheRingOfItsPublication() {
    BlockSpec spec = sgdSpec(BlockSpec.Mode.ALLREDUCE);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk =
        block(kit, spec, settings(1, java.time.Duration.ofSeconds(5), PsSettings.NonFinitePolicy.REJECT));
    init(tk, spec, INIT);
    publishAs(tk, "dead", 100, 1, 6400, new float[] {1f, 1f, 1f, 1f, 1f});
    publishAs(tk, "s1", 100, 2, 6336, new float[] {2f, 2f, 2f, 2f, 2f});
    tk.restart();
    assertEquals(2, tk.getState().publishedEpoch, "recovered from the snapshot");
    assertTrue(publishAs(tk, "s1", 100, 2, 6336, new float[] {3f, 3f, 3f, 3f, 3f}).events().isEmpty());
    float[] third = {4f, 4f, 4f, 4f, 4f};
    assertEquals(3, publishAs(tk, "s2", 100, 3, 6272, third).eventOfType(ReplicaPublished.class).ringEpoch());
    assertBitsEqual(third, tk.getState().values(), "a third ring's step");
  }

  private static EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, BlockState, StatusReply<Long>>
      publishAs(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, String trainer, long step, long ringEpoch,
      long examples, float[] values) {
    return tk.runCommand(c -> new Publish(trainer, step, ringEpoch, examples, values, c));
  }

  @Test
  void aPublicationThatDoesNotFitIsRefusedWithItsReasonAndChangesNothing() {
    BlockSpec spec = sgdSpec(BlockSpec.Mode.ALLREDUCE);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, settings());
    assertTrue(publish(tk, 1, 8, INIT).getError().getMessage().contains("the block is not initialised"));
    init(tk, spec, INIT);
    assertTrue(publish(tk, 1, 8, new float[3]).getError().getMessage().contains("3 values, the block holds 5"));
    assertTrue(publish(tk, 1, 8, new float[] {0f, Float.NaN, 0f, 0f, 0f}).getError().getMessage()
        .contains("non-finite value NaN at index 1"));
    assertTrue(publish(tk, 0, 8, INIT).getError().getMessage().contains("step must be >= 1"));
    assertEquals(0, tk.getState().version());
    assertBitsEqual(INIT, tk.getState().values(), "values");
  }

  @Test
  void anAllReduceBlockRefusesGradientsAndAParameterServerBlockRefusesPublications() {
    BlockSpec ring = sgdSpec(BlockSpec.Mode.ALLREDUCE);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, ring, settings());
    init(tk, ring, INIT);
    assertTrue(push(tk, "t1", 1, 0, 1f, GA).getError().getMessage().contains("all-reduce mode and takes no gradients"));

    BlockSpec sync = sgdSpec(BlockSpec.Mode.SYNC);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> ps = block(kit, sync, settings());
    init(ps, sync, INIT);
    assertTrue(publish(ps, 1, 8, GA).getError().getMessage()
        .contains("the block is in SYNC mode; only all-reduce blocks keep published values"));
    assertEquals(0, ps.getState().version());
  }
}
