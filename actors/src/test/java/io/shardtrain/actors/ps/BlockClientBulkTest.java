package io.shardtrain.actors.ps;

import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import io.shardtrain.actors.ps.BlockClient.Delivery;
import io.shardtrain.actors.ps.BlockClient.PullRequest;
import io.shardtrain.actors.ps.BlockClient.PushRequest;
import io.shardtrain.actors.ps.BlockClient.Result;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A {@link BlockClient} in an actor on a client node, against blocks on a {@code ps} node of the
 * same cluster: the path its requests take, and what it does when a letter bounces.
 */
class BlockClientBulkTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final int LENGTH = 5000;
  private static ActorTestKit ps;
  private static ActorTestKit client;

  /** Runs {@code action} on the client actor's thread. */
  private record Run(Consumer<BlockClient<Object>> action) {}

  /** A reply the client actor got, its outcome, and whether the block has a letter route after it. */
  private record Seen(Object reply, Result<?> result, boolean routed) {}

  @BeforeAll
  static void start() {
    ActorTestKit[] kits = ParameterBlockBulkTest.cluster("BlockClientBulkTest", true);
    ps = kits[0];
    client = kits[1];
  }

  @AfterAll
  static void stop() {
    client.shutdownTestKit();
    ps.shutdownTestKit();
  }

  private static Behavior<Object> clientActor(String block, ActorRef<Seen> seen) {
    return Behaviors.setup(ctx -> {
      BlockClient<Object> c = new BlockClient<>(ctx, "t0", TIMEOUT, TIMEOUT, p -> p, p -> p);
      return Behaviors.receive(Object.class)
          .onMessage(Run.class, r -> {
            r.action().accept(c);
            return Behaviors.same();
          })
          .onMessage(BlockClient.Pushed.class, m -> {
            Result<?> r = c.outcome(m);
            seen.tell(new Seen(m, r, c.routes().get(block) != null));
            return Behaviors.same();
          })
          .onMessage(BlockClient.Pulled.class, m -> {
            Result<?> r = c.outcome(m);
            seen.tell(new Seen(m, r, c.routes().get(block) != null));
            return Behaviors.same();
          })
          .build();
    });
  }

  /** A fresh sync block of {@link #LENGTH} zeros whose only trainer is t0. */
  private static String zeroBlock() throws Exception {
    BlockSpec spec = BlockSpec.of(new BlockSlice(BlockTestSupport.freshParameter(), 0, 0, LENGTH),
        OptimizerSpec.defaults(OptimizerSpec.Kind.SGD), "constant", 0.5f, BlockSpec.Mode.SYNC,
        PsSettings.create(ps.system()));
    EntityRef<Command> b = ParameterBlock.entityRef(client.system(), spec.entityId());
    b.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, new float[LENGTH], r), TIMEOUT)
        .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    b.<Long>askWithStatus(r -> new BlockProtocol.UpdateMembership(1, List.of("t0"), r), TIMEOUT)
        .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    return spec.entityId();
  }

  private static float[] ones() {
    float[] g = new float[LENGTH];
    java.util.Arrays.fill(g, 1f);
    return g;
  }

  private static BlockStats stats(String block) throws Exception {
    return ParameterBlock.entityRef(client.system(), block).<BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT)
        .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static BlockClient.Pushed pushed(Seen s) {
    return (BlockClient.Pushed) s.reply();
  }

  private static BlockClient.Pulled pulled(Seen s) {
    return (BlockClient.Pulled) s.reply();
  }

  @Test
  void theFirstPullGoesThroughShardingAndNamesTheRouteForLetterPushesAndPulls() throws Exception {
    String block = zeroBlock();
    TestProbe<Seen> seen = client.createTestProbe();
    ActorRef<Object> actor = client.spawn(clientActor(block, seen.ref()));

    actor.tell(new Run(c -> c.pull(new PullRequest(block, 0, 0))));
    Seen first = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertFalse(pulled(first).byLetter(), "the first pull goes through sharding");
    assertEquals(Delivery.DELIVERED, first.result().delivery());
    assertTrue(first.routed(), "its reply names the block's actor and node");

    actor.tell(new Run(c -> c.push(new PushRequest(block, 1, 0, 1, 32f, ones(), 0, null))));
    Seen push = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertTrue(pushed(push).byLetter());
    assertEquals(Delivery.DELIVERED, push.result().delivery());
    assertEquals(new BlockProtocol.Applied(1), push.result().value());

    actor.tell(new Run(c -> c.pull(new PullRequest(block, 1, 0))));
    Seen second = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertTrue(pulled(second).byLetter());
    BlockValues v = (BlockValues) second.result().value();
    assertEquals(1, v.version());
    float[] expected = new float[LENGTH];
    java.util.Arrays.fill(expected, -0.5f); // one SGD step of lr 0.5 on a gradient of ones
    assertBitsEqual(expected, v.values(), "values after the letter push");

    BlockStats stats = stats(block);
    assertEquals(1, stats.bulkPushes());
    assertEquals(2, stats.bulkPulls(), "both pulls answered by letter");
  }

  @Test
  void valuesWantedWithAPushComeBackWithItsAckInlineThenByLetterAndNameTheBlocksRoute() throws Exception {
    String block = zeroBlock();
    TestProbe<Seen> seen = client.createTestProbe();
    ActorRef<Object> actor = client.spawn(clientActor(block, seen.ref()));

    // No route yet: through sharding, the values inline in the ack's Artery message.
    actor.tell(new Run(c -> c.push(new PushRequest(block, 1, 0, 1, 32f, ones(), 0, null, WirePrecision.FP32, 1))));
    Seen first = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertFalse(pushed(first).byLetter());
    assertEquals(new BlockProtocol.Applied(1), first.result().value());
    float[] expected = new float[LENGTH];
    java.util.Arrays.fill(expected, -0.5f); // one SGD step of lr 0.5 on a gradient of ones
    assertEquals(1, pushed(first).values().version());
    assertBitsEqual(expected, pushed(first).values().values(), "values with the first ack");
    assertTrue(first.routed(), "the values name the block's actor and node, as a pull's do");

    // Routed: the push goes by letter, and the values come back as the ack letter's floats.
    actor.tell(new Run(c -> c.push(new PushRequest(block, 2, 1, 1, 32f, ones(), 0, null, WirePrecision.FP32, 2))));
    Seen second = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertTrue(pushed(second).byLetter());
    assertEquals(new BlockProtocol.Applied(2), second.result().value());
    java.util.Arrays.fill(expected, -1f);
    assertEquals(2, pushed(second).values().version());
    assertBitsEqual(expected, pushed(second).values().values(), "values with the ack letter");

    // A push that wants nothing back gets the ack alone.
    actor.tell(new Run(c -> c.push(new PushRequest(block, 3, 2, 1, 32f, ones(), 0, null))));
    Seen third = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertEquals(new BlockProtocol.Applied(3), third.result().value());
    assertNull(pushed(third).values());

    BlockStats stats = stats(block);
    assertEquals(2, stats.bulkPushes());
    assertEquals(1, stats.bulkPulls(), "the second ack's values went by letter");
  }

  @Test
  void aTrainerOnTheBlocksOwnNodeExchangesArraysByReferenceWithNothingSerialized() throws Exception {
    String block = zeroBlock();
    TestProbe<Seen> seen = ps.createTestProbe();
    // A client on the ps node itself, as a trainer on a node with roles ps and trainer.
    ActorRef<Object> actor = ps.spawn(clientActor(block, seen.ref()));
    float[] gradient = ones();
    io.shardtrain.actors.transport.WireTimings.reset();
    io.shardtrain.actors.transport.WireTimings.enable(true);
    try {
      actor.tell(new Run(c -> c.pull(new PullRequest(block, 0, 0))));
      Seen first = seen.expectMessageClass(Seen.class, TIMEOUT);
      assertFalse(pulled(first).byLetter());
      assertFalse(first.routed(), "no letters to a block on the client's own node");
      actor.tell(new Run(c -> c.push(new PushRequest(block, 1, 0, 1, 32f, gradient, 0, null))));
      Seen push = seen.expectMessageClass(Seen.class, TIMEOUT);
      assertFalse(pushed(push).byLetter());
      assertEquals(new BlockProtocol.Applied(1), push.result().value());
      float[][] pulledArrays = new float[2][];
      for (int i = 0; i < 2; i++) {
        actor.tell(new Run(c -> c.pull(new PullRequest(block, 1, 0))));
        pulledArrays[i] = ((BlockValues) seen.expectMessageClass(Seen.class, TIMEOUT).result().value()).values();
      }
      // Both pulls of version 1 get the version's own array, which no update changes (copy on write).
      assertSame(pulledArrays[0], pulledArrays[1]);
      float[] expected = new float[LENGTH];
      java.util.Arrays.fill(expected, -0.5f);
      assertBitsEqual(expected, pulledArrays[0], "values after the local push");
      for (var e : io.shardtrain.actors.transport.WireTimings.snapshot().entrySet()) {
        assertEquals(0, e.getValue().calls(), e.getKey() + ": a local push or pull was serialized or copied");
      }
    } finally {
      io.shardtrain.actors.transport.WireTimings.enable(false);
    }
    BlockStats stats = stats(block);
    assertEquals(0, stats.bulkPushes());
    assertEquals(0, stats.bulkPulls());
  }

  @Test
  void aBf16PushByLetterOrInlineIsAppliedAsItsRoundedFp32Gradient() throws Exception {
    // Neither 1 + 3 * 2^-8 (a tie, up to even: 1 + 2^-6) nor pi is a bf16 value.
    float[] gradient = ones();
    java.util.Arrays.fill(gradient, 1.01171875f);
    gradient[0] = (float) Math.PI;
    float[] expected = new float[LENGTH];
    java.util.Arrays.fill(expected, -0.5f * 1.015625f); // one SGD step of lr 0.5
    expected[0] = -0.5f * 3.140625f;

    String byLetter = zeroBlock();
    String inline = zeroBlock();
    TestProbe<Seen> seen = client.createTestProbe();
    ActorRef<Object> actor = client.spawn(clientActor(byLetter, seen.ref()));
    actor.tell(new Run(c -> c.pull(new PullRequest(byLetter, 0, 0))));
    assertTrue(seen.expectMessageClass(Seen.class, TIMEOUT).routed());
    actor.tell(new Run(c -> {
      c.push(new PushRequest(byLetter, 1, 0, 1, 32f, gradient, 0, null, WirePrecision.BF16));
      // No pull yet, so no route: through sharding, inline in the Artery message.
      c.push(new PushRequest(inline, 1, 0, 1, 32f, gradient, 0, null, WirePrecision.BF16));
    }));
    for (int i = 0; i < 2; i++) {
      Seen push = seen.expectMessageClass(Seen.class, TIMEOUT);
      assertEquals(pushed(push).request().block().equals(byLetter), pushed(push).byLetter());
      assertEquals(new BlockProtocol.Applied(1), push.result().value());
    }
    for (String block : List.of(byLetter, inline)) {
      actor.tell(new Run(c -> c.pull(new PullRequest(block, 1, 0))));
      BlockValues v = (BlockValues) seen.expectMessageClass(Seen.class, TIMEOUT).result().value();
      assertBitsEqual(expected, v.values(), "values after a bf16 push " + (block.equals(byLetter) ? "by letter"
          : "inline"));
    }
    assertEquals(1, stats(byLetter).bulkPushes());
    assertEquals(0, stats(inline).bulkPushes());
  }

  @Test
  void aBouncedPushOrPullGoesAgainThroughShardingAndItsAnswerFollows() throws Exception {
    String block = zeroBlock();
    TestProbe<Seen> seen = client.createTestProbe();
    ActorRef<Object> actor = client.spawn(clientActor(block, seen.ref()));
    actor.tell(new Run(c -> c.pull(new PullRequest(block, 0, 0))));
    BlockValues head = (BlockValues) seen.expectMessageClass(Seen.class, TIMEOUT).result().value();
    // A route to the block's actor that has stopped, as after its shard moved to another node.
    ActorRef<Command> stopped = ps.spawn(Behaviors.stopped());
    ps.createTestProbe().expectTerminated(stopped, TIMEOUT);
    ActorRef<Command> gone = ActorRefResolver.get(client.system())
        .resolveActorRef(ActorRefResolver.get(ps.system()).toSerializationFormat(stopped));
    Result<BlockValues> stale = Result.delivered(
        new BlockValues(head.parameter(), head.index(), head.offset(), 0, null, head.node(), gone));

    actor.tell(new Run(c -> {
      c.routes().afterPull(block, stale);
      c.push(new PushRequest(block, 1, 0, 1, 32f, ones(), 0, null));
    }));
    Seen bounced = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertTrue(pushed(bounced).byLetter());
    assertEquals(Delivery.BOUNCED, bounced.result().delivery());
    assertFalse(bounced.routed(), "a bounce forgets the route");
    Seen again = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertFalse(pushed(again).byLetter(), "sent again through sharding");
    assertEquals(pushed(bounced).request(), pushed(again).request());
    assertEquals(new BlockProtocol.Applied(1), again.result().value());

    actor.tell(new Run(c -> {
      c.routes().afterPull(block, stale);
      c.pull(new PullRequest(block, 1, 0));
    }));
    Seen pullBounced = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertTrue(pulled(pullBounced).byLetter());
    assertEquals(Delivery.BOUNCED, pullBounced.result().delivery());
    Seen pullAgain = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertFalse(pulled(pullAgain).byLetter());
    assertEquals(Delivery.DELIVERED, pullAgain.result().delivery());
    assertEquals(1, ((BlockValues) pullAgain.result().value()).version());
    assertTrue(pullAgain.routed(), "the pull through sharding names the live actor's route");
    assertEquals(head.block(), ((BlockValues) pullAgain.result().value()).block());

    BlockStats stats = stats(block);
    assertEquals(1, stats.pushes(), "the bounced letter never reached the block");
    assertEquals(0, stats.bulkPushes());
    seen.expectNoMessage(Duration.ofMillis(200));
  }
}
