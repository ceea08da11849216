package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.INIT;
import static io.shardtrain.actors.sparse.SparseTestSupport.assertBitsEqual;
import static org.junit.jupiter.api.Assertions.assertEquals;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Sparse shards as sharded entities on a one-node cluster, every message forced through serialization. */
class SparseShardingTest {
  private static ActorTestKit kit;
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseShardingTest", ConfigFactory.parseString(
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
    SparseShard.init(kit.system());
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aTrainerThroughShardingPushesABatchOverTwoShardsAndPullsItBack() throws Exception {
    TableSpec spec = TableSpec.of("sharded", 2, 1 << 20, 3, INIT, RowOptimizer.sgd(0.5f));
    for (int s = 0; s < 2; s++) {
      int shard = s;
      var ref = SparseShard.entityRef(kit.system(), spec.entityId(s));
      assertEquals(new SparseProtocol.ShardReady(0), ref.<SparseProtocol.InitReply>ask(
          r -> new SparseProtocol.InitShard(spec, shard, r), TIMEOUT).toCompletableFuture().get());
      assertEquals(new SparseProtocol.MembershipInForce(1), ref.<SparseProtocol.MembershipReply>ask(
          r -> new SparseProtocol.UpdateMembership(1, List.of("a"), r), TIMEOUT).toCompletableFuture().get());
    }
    SparseClient client = new SparseClient(kit.system(), spec, "a", TIMEOUT);
    long[] ids = {7, 1 << 19, 7, 123_456};
    float[] grads = {1f, 2f, 3f, 0.5f, 0.5f, 0.5f, 1f, 1f, 1f, -4f, 0f, 4f};
    List<SparseProtocol.PushReply> replies = client.push(1, 0, 8f, ids, grads).toCompletableFuture().get();
    assertEquals(List.of(new SparseProtocol.Applied(1), new SparseProtocol.Applied(1)), replies);
    SparseClient.Pulled pulled = client.pull(ids, 1).toCompletableFuture().get();
    // One trainer: the step's mean is its own gradient, row 7's two positions summed.
    float[][] g = {{2f, 3f, 4f}, {0.5f, 0.5f, 0.5f}, {2f, 3f, 4f}, {-4f, 0f, 4f}};
    for (int k = 0; k < ids.length; k++) {
      float[] start = new float[3];
      INIT.fill(ids[k], start, 0, 3);
      float[] expected = {start[0] - 0.5f * g[k][0], start[1] - 0.5f * g[k][1], start[2] - 0.5f * g[k][2]};
      assertBitsEqual(expected, java.util.Arrays.copyOfRange(pulled.rows(), 3 * k, 3 * k + 3), "position " + k);
    }
    assertEquals(1, pulled.version());
  }

  @Test
  void aRetiredShardAnswersThePullsSentRightBehindTheRetirementAndRecoversWhenAskedAgain() throws Exception {
    TableSpec spec = TableSpec.of("retired", 1, 1 << 20, 3, INIT, RowOptimizer.sgd(0.5f));
    var ref = SparseShard.entityRef(kit.system(), spec.entityId(0));
    ref.<SparseProtocol.InitReply>ask(r -> new SparseProtocol.InitShard(spec, 0, r), TIMEOUT).toCompletableFuture().get();
    ref.tell(new SparseProtocol.Retire());
    // Behind the retirement in the same mailbox: sharding keeps them for the shard's next incarnation.
    List<java.util.concurrent.CompletableFuture<SparseProtocol.PullReply>> pulls = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      pulls.add(ref.<SparseProtocol.PullReply>ask(r -> new SparseProtocol.PullRows(new long[] {42}, 0, r), TIMEOUT)
          .toCompletableFuture());
    }
    float[] expected = new float[3];
    INIT.fill(42, expected, 0, 3);
    for (var pull : pulls) assertBitsEqual(expected, ((SparseProtocol.Rows) pull.get()).values(), "pulled after retiring");
    // A new incarnation replayed the shard's one event (the old one had replayed none).
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    long replayed = 0;
    while (replayed == 0 && System.nanoTime() < deadline) {
      ref.tell(new SparseProtocol.Retire());
      replayed = ref.<SparseProtocol.ShardStats>ask(SparseProtocol.GetStats::new, TIMEOUT).toCompletableFuture().get()
          .eventsReplayed();
    }
    assertEquals(1, replayed);
  }

  /** A shard whose membership is empty leaves memory once idle for 1 s here; one with a member trainer stays. */
  @Test
  void aShardNoTrainerTakesPartInLeavesMemoryOnceIdleAndOneWithATrainerStays() throws Exception {
    var unused = shardWith("unused", List.of());
    var used = shardWith("used", List.of("a"));
    Thread.sleep(3000);
    // The old incarnations had replayed nothing; a new one replays ShardInitialized and MembershipUpdated.
    assertEquals(2, unused.<SparseProtocol.ShardStats>ask(SparseProtocol.GetStats::new, TIMEOUT).toCompletableFuture()
        .get().eventsReplayed());
    assertEquals(0, used.<SparseProtocol.ShardStats>ask(SparseProtocol.GetStats::new, TIMEOUT).toCompletableFuture()
        .get().eventsReplayed());
  }

  private static akka.cluster.sharding.typed.javadsl.EntityRef<SparseProtocol.Command> shardWith(String table,
      List<String> trainers) throws Exception {
    TableSpec spec = TableSpec.of(table, 1, 1 << 20, 3, INIT, RowOptimizer.sgd(0.5f));
    var ref = SparseShard.entityRef(kit.system(), spec.entityId(0));
    ref.<SparseProtocol.InitReply>ask(r -> new SparseProtocol.InitShard(spec, 0, r), TIMEOUT).toCompletableFuture().get();
    ref.<SparseProtocol.MembershipReply>ask(r -> new SparseProtocol.UpdateMembership(1, trainers, r), TIMEOUT)
        .toCompletableFuture().get();
    return ref;
  }
}
