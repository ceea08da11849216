package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.compute.optim.OptimizerState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The block as a sharded entity on a one-node cluster, every message forced through serialization. */
class ParameterBlockShardingTest {
  private static ActorTestKit kit;
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockShardingTest", ConfigFactory.parseString(
            "akka.actor.provider = cluster\n"
                + "akka.remote.artery.canonical.port = 0\n"
                + "akka.remote.artery.canonical.hostname = 127.0.0.1\n"
                + "akka.cluster.roles = [ps]\n"
                + "akka.cluster.jmx.multi-mbeans-in-same-jvm = on\n"
                + "akka.actor.serialize-messages = on\n"
                + "akka.actor.no-serialization-verification-needed-class-prefix = [\"akka.\"]\n"
                + "shardtrain.ps.idle-passivation = 1s\n")
        .withFallback(PersistenceTestKitPlugin.config())
        .withFallback(PersistenceTestKitSnapshotPlugin.config()));
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    ParameterBlock.init(kit.system());
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void shardedBlockInitialisesAppliesAPushAndServesAPull() throws Exception {
    BlockSpec spec = BlockSpec.of(new BlockSlice("w", 2, 8, 3), OptimizerSpec.defaults(OptimizerSpec.Kind.MOMENTUM),
        "constant", 0.1f, BlockSpec.Mode.SYNC, PsSettings.create(kit.system()));
    float[] init = {1f, 2f, 3f};
    float[] grad = {0.5f, -0.5f, 0.25f};
    EntityRef<Command> block = ParameterBlock.entityRef(kit.system(), spec.entityId());

    long version = block.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, init, r), TIMEOUT)
        .toCompletableFuture().get();
    assertEquals(0L, version);
    assertEquals(1L, block.<Long>askWithStatus(r -> new BlockProtocol.UpdateMembership(1, List.of("t1"), r), TIMEOUT)
        .toCompletableFuture().get());
    PushAck ack = block.<PushAck>askWithStatus(r -> new BlockProtocol.PushGradient("t1", 1, 0, 1, 8f, grad, r),
        TIMEOUT).toCompletableFuture().get();
    assertEquals(new Applied(1), ack);
    BlockValues values = block.<BlockValues>askWithStatus(r -> new BlockProtocol.Pull(1, r), TIMEOUT)
        .toCompletableFuture().get();

    Optimizer momentum = spec.optimizer().create();
    OptimizerState st = OptimizerState.create(momentum, 3);
    float[] expected = init.clone();
    float[] mean = new float[3];
    for (int j = 0; j < 3; j++) mean[j] = 8f * grad[j] / 8f;
    st.step(momentum, spec.schedule(), expected, mean);
    assertEquals(1, values.version());
    assertEquals(8, values.offset());
    assertBitsEqual(expected, values.values(), "pulled values");
  }

  @Test
  void aRetiredBlockAnswersThePullsSentRightBehindTheRetirementAndRecoversWhenAskedAgain() throws Exception {
    BlockSpec spec = BlockSpec.of(new BlockSlice("retired", 0, 0, 2), OptimizerSpec.defaults(OptimizerSpec.Kind.SGD),
        "constant", 0.1f, BlockSpec.Mode.SYNC, PsSettings.create(kit.system()));
    EntityRef<Command> block = ParameterBlock.entityRef(kit.system(), spec.entityId());
    block.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, new float[] {4f, 5f}, r), TIMEOUT)
        .toCompletableFuture().get();
    block.tell(new BlockProtocol.Retire());
    // Behind the retirement in the same mailbox: sharding keeps them for the block's next incarnation.
    List<java.util.concurrent.CompletableFuture<BlockValues>> pulls = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      pulls.add(block.<BlockValues>askWithStatus(r -> new BlockProtocol.Pull(0, r), TIMEOUT).toCompletableFuture());
    }
    for (var pull : pulls) assertBitsEqual(new float[] {4f, 5f}, pull.get().values(), "pulled after the retirement");
    // A new incarnation replayed the block's one event (the old one had replayed none).
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    long replayed = 0;
    while (replayed == 0 && System.nanoTime() < deadline) {
      block.tell(new BlockProtocol.Retire());
      replayed = block.<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT).toCompletableFuture().get()
          .eventsReplayed();
    }
    assertEquals(1, replayed);
  }

  /**
   * A block whose membership is empty (its job ended, every trainer left) leaves memory once nothing
   * reached it for shardtrain.ps.idle-passivation (1 s here), and recovers when asked again; one
   * with a member trainer stays.
   */
  @Test
  void aBlockNoTrainerTakesPartInLeavesMemoryOnceIdleAndOneWithATrainerStays() throws Exception {
    EntityRef<Command> unused = membership("unused", List.of());
    EntityRef<Command> used = membership("used", List.of("t1"));
    Thread.sleep(3000);
    // The old incarnations had replayed nothing; a new one replays Initialized and MembershipUpdated.
    assertEquals(2, unused.<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT).toCompletableFuture()
        .get().eventsReplayed());
    assertEquals(0, used.<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT).toCompletableFuture()
        .get().eventsReplayed());
  }

  /** An initialised block of parameter {@code name} whose membership (epoch 1) is {@code trainers}. */
  private static EntityRef<Command> membership(String name, List<String> trainers) throws Exception {
    BlockSpec spec = BlockSpec.of(new BlockSlice(name, 0, 0, 2), OptimizerSpec.defaults(OptimizerSpec.Kind.SGD),
        "constant", 0.1f, BlockSpec.Mode.SYNC, PsSettings.create(kit.system()));
    EntityRef<Command> block = ParameterBlock.entityRef(kit.system(), spec.entityId());
    block.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, new float[] {4f, 5f}, r), TIMEOUT)
        .toCompletableFuture().get();
    block.<Long>askWithStatus(r -> new BlockProtocol.UpdateMembership(1, trainers, r), TIMEOUT).toCompletableFuture()
        .get();
    return block;
  }
}
