package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorSystem;
import akka.cluster.MemberStatus;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two ActorSystems in a cluster over loopback: {@code ps} hosts the blocks; {@code client} pulls
 * through sharding with its bulk address, then pushes and pulls by bulk letter straight to the
 * block's actor, next to a block pushed inline.
 */
class ParameterBlockBulkTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final int LENGTH = 5000;
  private static ActorTestKit ps;
  private static ActorTestKit client;

  static Config config(String roles, boolean bulk) {
    return ConfigFactory.parseString(
            "akka.actor.provider = cluster\n"
                + "akka.remote.artery.canonical.port = 0\n"
                + "akka.remote.artery.canonical.hostname = 127.0.0.1\n"
                + "akka.remote.artery.advanced.maximum-frame-size = 1MiB\n"
                + "akka.cluster.roles = " + roles + "\n"
                + "akka.cluster.jmx.multi-mbeans-in-same-jvm = on\n"
                + "akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off\n"
                + "shardtrain.transport.bulk.enabled = " + bulk + "\n"
                + "shardtrain.transport.bulk.host = 127.0.0.1\n"
                + "shardtrain.transport.bulk.min-floats = 1\n")
        .withFallback(PersistenceTestKitPlugin.config())
        .withFallback(PersistenceTestKitSnapshotPlugin.config());
  }

  /** Starts two systems (a cluster's systems share a name), the second joining the first, sharding on both. */
  static ActorTestKit[] cluster(String name, boolean bulkOnPs) {
    return cluster(name, bulkOnPs, ConfigFactory.empty());
  }

  /** As {@link #cluster(String, boolean)}, the second system's configuration overridden by {@code client}. */
  static ActorTestKit[] cluster(String name, boolean bulkOnPs, Config client) {
    ActorTestKit a = ActorTestKit.create(name, config("[ps]", bulkOnPs));
    ActorTestKit b = ActorTestKit.create(name, client.withFallback(config("[]", true)));
    Cluster ca = Cluster.get(a.system());
    ca.manager().tell(Join.create(ca.selfMember().address()));
    Cluster.get(b.system()).manager().tell(Join.create(ca.selfMember().address()));
    ParameterBlock.init(a.system());
    ParameterBlock.init(b.system());
    awaitUp(a.system(), 2);
    return new ActorTestKit[] {a, b};
  }

  static void awaitUp(ActorSystem<?> system, int members) {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      var state = Cluster.get(system).state();
      long up = 0;
      for (var m : state.getMembers()) if (m.status() == MemberStatus.up()) up++;
      if (up == members) return;
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }
    throw new IllegalStateException(members + " members did not come up within " + TIMEOUT);
  }

  @BeforeAll
  static void start() {
    ActorTestKit[] kits = cluster("ParameterBlockBulkTest", true);
    ps = kits[0];
    client = kits[1];
  }

  @AfterAll
  static void stop() {
    client.shutdownTestKit();
    ps.shutdownTestKit();
  }

  private static BlockSpec spec(String parameter) {
    return BlockSpec.of(new BlockSlice(parameter, 0, 0, LENGTH), OptimizerSpec.defaults(OptimizerSpec.Kind.ADAM),
        "constant", 0.01f, BlockSpec.Mode.SYNC, PsSettings.create(ps.system()));
  }

  private static EntityRef<Command> block(String id) {
    return ParameterBlock.entityRef(client.system(), id);
  }

  private static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  private static float[] gradient(int trainer, int step) {
    float[] g = new float[LENGTH];
    for (int i = 0; i < LENGTH; i++) g[i] = (float) Math.sin(0.37 * i + trainer * 1.3 + step * 0.71) * (trainer + 1);
    return g;
  }

  private static void initialise(EntityRef<Command> b, BlockSpec spec, float[] init) throws Exception {
    assertEquals(0L, await(b.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, init, r), TIMEOUT)));
    assertEquals(1L, await(b.<Long>askWithStatus(
        r -> new BlockProtocol.UpdateMembership(1, List.of("t0", "t1"), r), TIMEOUT)));
  }

  /** A pull through sharding that names this node's bulk address: the values come back by letter. */
  private static BlockValues pullBulk(EntityRef<Command> b, long minVersion) throws Exception {
    BulkAddress self = BulkAddress.of(BulkTransport.get(client.system()).address());
    BlockValues reply = await(b.<BlockValues>askWithStatus(r -> new BlockProtocol.Pull(minVersion, self, r), TIMEOUT));
    assertEquals(LENGTH, reply.values().length);
    assertNotNull(reply.node(), "a bulk pull reply names the block's node");
    assertNotNull(reply.block(), "a bulk pull reply names the block's actor");
    return reply;
  }

  /** A push sent by letter straight to the block's actor that {@code to} names. */
  private static PushAck pushLetter(BlockValues to, String trainer, long step, float[] g) throws Exception {
    return await(sendLetter(to, trainer, step, g));
  }

  private static java.util.concurrent.CompletionStage<PushAck> sendLetter(BlockValues to, String trainer, long step,
      float[] g) {
    BulkTransport bulk = BulkTransport.get(client.system());
    BulkAddress self = BulkAddress.of(bulk.address());
    return bulk.<PushAck>askWithStatus(to.node().socketAddress(),
        r -> new BlockLetters.PushLetter(to.block(), self,
            new BlockProtocol.PushGradient(trainer, step, step - 1, 1, 32f, null, 0, null, r)),
        g, 0, g.length, TIMEOUT);
  }

  /** A pull sent by letter straight to the block's actor; its values come back by letter. */
  private static BlockValues pullLetter(BlockValues from, long minVersion) throws Exception {
    BulkTransport bulk = BulkTransport.get(client.system());
    BulkAddress self = BulkAddress.of(bulk.address());
    return await(bulk.<BlockValues>askWithStatus(from.node().socketAddress(),
        r -> new BlockLetters.PullLetter(from.block(), new BlockProtocol.Pull(minVersion, self, r)),
        new float[0], 0, 0, TIMEOUT));
  }

  @Test
  void letterPushesAndPullsGiveTheInlineValuesBitForBit() throws Exception {
    float[] init = new float[LENGTH];
    for (int i = 0; i < LENGTH; i++) init[i] = (float) Math.sin(i * 0.003);
    BlockSpec inlineSpec = spec(BlockTestSupport.freshParameter());
    BlockSpec letterSpec = spec(BlockTestSupport.freshParameter());
    EntityRef<Command> inline = block(inlineSpec.entityId());
    initialise(inline, inlineSpec, init);
    initialise(block(letterSpec.entityId()), letterSpec, init);
    BlockValues head = pullBulk(block(letterSpec.entityId()), 0);

    for (int step = 1; step <= 3; step++) {
      long s = step;
      // A step's pushes are answered once the step is applied: send both, then compare the answers.
      List<java.util.concurrent.CompletionStage<PushAck>> inlineAcks = new java.util.ArrayList<>();
      List<java.util.concurrent.CompletionStage<PushAck>> letterAcks = new java.util.ArrayList<>();
      for (int t = 0; t < 2; t++) {
        float[] g = gradient(t, step);
        String trainer = "t" + t;
        inlineAcks.add(inline.<PushAck>askWithStatus(
            r -> new BlockProtocol.PushGradient(trainer, s, s - 1, 1, 32f, g, r), TIMEOUT));
        letterAcks.add(sendLetter(head, trainer, s, g));
      }
      for (int t = 0; t < 2; t++) {
        assertEquals(await(inlineAcks.get(t)), await(letterAcks.get(t)), "ack of trainer t" + t + " at step " + step);
      }
      BlockValues expected = await(inline.<BlockValues>askWithStatus(r -> new BlockProtocol.Pull(s, r), TIMEOUT));
      BlockValues actual = pullLetter(head, s);
      assertEquals(step, actual.version());
      assertEquals(head.block(), actual.block());
      assertBitsEqual(expected.values(), actual.values(), "values after step " + step);
    }
    // A duplicate is acknowledged by letter too, and changes nothing.
    assertEquals(new BlockProtocol.Duplicate(3), pushLetter(head, "t0", 3, gradient(0, 3)));
    BlockStats stats = await(block(letterSpec.entityId()).<BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT));
    assertEquals(3, stats.version());
    assertEquals(7, stats.bulkPushes());
    assertEquals(4, stats.bulkPulls());
    assertEquals(1, stats.duplicates());
  }

  @Test
  void aLetterReplyCompletesTheAskOnTheThreadItArrivesOnWithoutStartingOne() throws Exception {
    ZeroBlock z = zeroBlock();
    BlockValues head = z.head();
    float[] g = gradient(0, 1);
    String caller = Thread.currentThread().getName();
    // t1's push first, so t0's letter completes the step and is answered at once.
    var t1 = z.b().<PushAck>askWithStatus(r -> new BlockProtocol.PushGradient("t1", 1, 0, 1, 32f, g, r), TIMEOUT);
    // Sent after t1's push on the same route, so answered after the block took that push in: t0's
    // letter, which takes another route, cannot overtake it.
    assertEquals(1, await(z.b().<BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT)).pushes());
    // Akka's own ask stage would run this on the common pool: on two cores, a new thread per reply.
    String completedOn = await(z.bulk().<PushAck>askWithStatus(head.node().socketAddress(),
            r -> new BlockLetters.PushLetter(head.block(), z.self(),
                new BlockProtocol.PushGradient("t0", 1, 0, 1, 32f, null, 0, null, r)),
            g, 0, g.length, TIMEOUT)
        .thenApply(ack -> Thread.currentThread().getName()));
    assertTrue(completedOn.startsWith("shardtrain-bulk-") || completedOn.equals(caller), completedOn);
    assertEquals(new BlockProtocol.Accepted(1), await(t1));
  }

  @Test
  void aLetterToABlockThatIsGoneFailsAtOnceAndNamesTheActor() throws Exception {
    ZeroBlock z = zeroBlock();
    BlockValues head = z.head();
    // A block actor that stopped, as when its shard moved to another node.
    akka.actor.typed.ActorRef<Command> stopped = ps.spawn(akka.actor.typed.javadsl.Behaviors.stopped());
    ps.createTestProbe().expectTerminated(stopped, TIMEOUT);
    // As the client knows it: from a pull reply, a reference to an actor on the block's node.
    akka.actor.typed.ActorRef<Command> gone = akka.actor.typed.ActorRefResolver.get(client.system())
        .resolveActorRef(akka.actor.typed.ActorRefResolver.get(ps.system()).toSerializationFormat(stopped));
    BlockValues stale = new BlockValues(head.parameter(), head.index(), head.offset(), head.version(), null,
        head.node(), gone);
    long start = System.nanoTime();
    ExecutionException push = assertThrows(ExecutionException.class, () -> pushLetter(stale, "t0", 1, gradient(0, 1)));
    assertTrue(push.getCause().getMessage().contains("not delivered") && push.getCause().getMessage()
        .contains(gone.path().name()), push.getCause().getMessage());
    ExecutionException pull = assertThrows(ExecutionException.class, () -> pullLetter(stale, 0));
    assertTrue(pull.getCause().getMessage().contains("not delivered"), pull.getCause().getMessage());
    assertTrue(System.nanoTime() - start < TIMEOUT.toNanos() / 2, "the sender learns at once, not at its timeout");
    BlockStats stats = await(z.b().<BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT));
    assertEquals(0, stats.version());
    assertEquals(0, stats.bulkPushes());
  }

  @Test
  void aBlockThatCannotSendItsValuesLetterAnswersInlineWithTheSameValuesNamingNoRoute() throws Exception {
    BlockSpec spec = spec(BlockTestSupport.freshParameter());
    EntityRef<Command> b = block(spec.entityId());
    float[] init = gradient(1, 1);
    initialise(b, spec, init);
    int port;
    try (java.nio.channels.ServerSocketChannel probe = java.nio.channels.ServerSocketChannel.open()) {
      probe.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
      port = ((java.net.InetSocketAddress) probe.getLocalAddress()).getPort();
    }
    BulkAddress nobody = new BulkAddress("127.0.0.1", port);
    BlockValues v = await(b.<BlockValues>askWithStatus(r -> new BlockProtocol.Pull(0, nobody, r), TIMEOUT));
    assertEquals(0, v.version());
    assertBitsEqual(init, v.values(), "the values, inline");
    assertNull(v.node(), "no route to a block that cannot answer by letter");
    assertNull(v.block());
  }

  /** A fresh block of zeros, the client's bulk transport and address, and the block's first bulk pull reply. */
  private record ZeroBlock(EntityRef<Command> b, BulkTransport bulk, BulkAddress self, BlockValues head) {}

  private ZeroBlock zeroBlock() throws Exception {
    BlockSpec spec = spec(BlockTestSupport.freshParameter());
    EntityRef<Command> b = block(spec.entityId());
    initialise(b, spec, new float[LENGTH]);
    BulkTransport bulk = BulkTransport.get(client.system());
    BlockValues head = pullBulk(b, 0);
    return new ZeroBlock(b, bulk, BulkAddress.of(bulk.address()), head);
  }

  @Test
  void aPushLetterOfTheWrongLengthIsRefusedNamingBothLengths() throws Exception {
    ZeroBlock z = zeroBlock();
    ExecutionException e = assertThrows(ExecutionException.class, () -> pushLetter(z.head(), "t0", 1, new float[7]));
    assertTrue(e.getCause().getMessage().contains("length 7") && e.getCause().getMessage().contains(String.valueOf(LENGTH)),
        e.getCause().getMessage());
    BlockStats stats = await(z.b().<BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT));
    assertEquals(1, stats.rejectedBadLength());
    assertEquals(0, stats.version());
    assertEquals(-1, stats.pendingStep(), "nothing of the refused push is pending");
  }
}
