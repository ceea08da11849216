package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.ValuesWanted;
import io.shardtrain.actors.ps.BlockProtocol.WithValues;
import io.shardtrain.actors.transport.WirePrecision;
import java.time.Duration;
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
import static io.shardtrain.actors.ps.BlockTestSupport.settings;
import static io.shardtrain.actors.ps.BlockTestSupport.stats;
import static io.shardtrain.actors.ps.BlockTestSupport.sgdSpec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** A pull that travels with a push ({@link ValuesWanted}): the block's values come back with the ack. */
class ParameterBlockValuesWithAckTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockValuesWithAckTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static EventSourcedBehaviorTestKit<Command, Event, BlockState> started(BlockSpec spec, PsSettings s,
      String... trainers) {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, s);
    assertEquals(0L, init(tk, spec, INIT).getValue());
    if (trainers.length > 0) assertEquals(1L, membership(tk, 1, trainers).getValue());
    return tk;
  }

  /** Sends {@code trainer}'s push of {@code step}, wanting the block's values at {@code minVersion} or later. */
  private static TestProbe<StatusReply<PushAck>> sendWanting(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk,
      String trainer, long step, float[] g, long minVersion) {
    TestProbe<StatusReply<PushAck>> probe = kit.createTestProbe();
    tk.runCommand(new PushGradient(trainer, step, step - 1, 1, 1f, g, 0, null, probe.ref(), WirePrecision.FP32,
        new ValuesWanted(minVersion, null)));
    return probe;
  }

  private static BlockValues pulled(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, long minVersion) {
    return tk.<StatusReply<BlockValues>>runCommand(r -> new Pull(minVersion, r)).reply().getValue();
  }

  @Test
  void aSyncPushWantingTheStepsValuesIsAnsweredWithThemOnceTheStepIsApplied() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk =
        started(sgdSpec(BlockSpec.Mode.SYNC), settings(), "a", "b");
    TestProbe<StatusReply<PushAck>> a = sendWanting(tk, "a", 1, GA, 1);
    a.expectNoMessage(Duration.ofMillis(50));
    // Held with its step, it counts as a waiting pull.
    assertEquals(1, stats(tk).pendingPulls());

    TestProbe<StatusReply<PushAck>> b = sendWanting(tk, "b", 1, GB, 1);
    WithValues toB = (WithValues) b.receiveMessage().getValue();
    WithValues toA = (WithValues) a.receiveMessage().getValue();
    assertEquals(new Applied(1), toB.ack());
    assertEquals(new Accepted(1), toA.ack());
    assertEquals(0, stats(tk).pendingPulls());
    // The version-1 values a pull gets, SGD at 0.1 on the mean of the two gradients, by reference.
    BlockValues v1 = pulled(tk, 1);
    assertEquals(1, toA.values().version());
    assertSame(v1.values(), toA.values().values());
    assertSame(v1.values(), toB.values().values());
    for (int i = 0; i < INIT.length; i++) {
      assertEquals(INIT[i] - 0.1f * ((GA[i] + GB[i]) / 2f), v1.values()[i], 1e-6f, "value " + i);
    }

    // A resent push is a duplicate, and still brings the values it wants.
    WithValues again = (WithValues) sendWanting(tk, "a", 1, GA, 1).receiveMessage().getValue();
    assertEquals(new Duplicate(1), again.ack());
    assertSame(v1.values(), again.values().values());
  }

  @Test
  void aSyncPushAcknowledgedBeforeItsStepUnderCheckpointDurabilityComesWithoutValues() {
    PsSettings checkpoints = settings().withDurability(PsSettings.Durability.CHECKPOINT);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(sgdSpec(BlockSpec.Mode.SYNC), checkpoints,
        "a", "b");
    // Acknowledged as it arrives, at version 0: the values of version 1 do not exist yet.
    assertEquals(new Accepted(0), sendWanting(tk, "a", 1, GA, 1).receiveMessage().getValue());
    // The push that completes the step is answered at version 1, with its values.
    WithValues closing = (WithValues) sendWanting(tk, "b", 1, GB, 1).receiveMessage().getValue();
    assertEquals(new Applied(1), closing.ack());
    assertBitsEqual(pulled(tk, 1).values(), closing.values().values(), "values of version 1");
  }

  @Test
  void anAsyncPushIsAnsweredWithTheValuesItsOwnUpdateMade() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(sgdSpec(BlockSpec.Mode.ASYNC), settings());
    WithValues first = (WithValues) sendWanting(tk, "a", 1, GA, 0).receiveMessage().getValue();
    assertEquals(new Applied(1), first.ack());
    assertEquals(1, first.values().version());
    for (int i = 0; i < INIT.length; i++) assertEquals(INIT[i] - 0.1f * GA[i], first.values().values()[i], 1e-6f);
    // Without a wanted version the ack comes alone, as before.
    PushAck plain = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("b", 1, 1, 1, 1f, GB, r)).reply()
        .getValue();
    assertEquals(new Applied(2), plain);
  }
}
