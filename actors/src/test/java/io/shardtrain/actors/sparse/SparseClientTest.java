package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.INIT;
import static io.shardtrain.actors.sparse.SparseTestSupport.assertBitsEqual;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparseClientTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseClientTest", SparseTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void distinctIdsAreRoutedWithoutHashingExactlyAsTheGeneralRoutingDoes() {
    TableSpec spec = TableSpec.of("r", 3, 1_000_000, 2, INIT, RowOptimizer.sgd(1f));
    long[] ids = java.util.stream.LongStream.range(0, 500).map(k -> k * 1999 % 1_000_000).toArray();
    BatchRouting general = BatchRouting.of(spec, ids);
    BatchRouting fast = BatchRouting.ofDistinct(spec, ids);
    float[][] rows = new float[3][];
    float[] grads = new float[ids.length * 2];
    for (int k = 0; k < grads.length; k++) grads[k] = k * 0.5f;
    for (int s = 0; s < 3; s++) {
      assertArrayEquals(general.ids(s), fast.ids(s), "shard " + s);
      assertArrayEquals(general.scatter(grads, s), fast.scatter(grads, s), "gradients of shard " + s);
      rows[s] = new float[general.ids(s).length * 2];
      for (int k = 0; k < rows[s].length; k++) rows[s][k] = s * 10_000 + k;
    }
    assertArrayEquals(general.gather(rows), fast.gather(rows));
    assertThrows(IllegalArgumentException.class, () -> BatchRouting.ofDistinct(spec, new long[] {1, 1_000_000}));
  }

  @Test
  void batchRoutingSendsEachIdOnceToItsShardGathersInBatchOrderAndSumsRepeatedGradients() {
    TableSpec spec = TableSpec.of("r", 3, 1000, 2, INIT, RowOptimizer.sgd(1f));
    long[] ids = {10, 11, 10, 500, 77};
    BatchRouting routing = BatchRouting.of(spec, ids);
    int total = 0;
    for (int s = 0; s < 3; s++) {
      for (long id : routing.ids(s)) assertEquals(s, spec.shardOf(id));
      total += routing.ids(s).length;
    }
    assertEquals(4, total, "10 once");
    float[][] rows = new float[3][];
    for (int s = 0; s < 3; s++) {
      rows[s] = new float[routing.ids(s).length * 2];
      for (int k = 0; k < routing.ids(s).length; k++) rows[s][2 * k] = routing.ids(s)[k];
    }
    float[] gathered = routing.gather(rows);
    for (int k = 0; k < ids.length; k++) assertEquals(ids[k], gathered[2 * k]);
    float[] grads = {1f, 1f, 2f, 2f, 4f, 4f, 8f, 8f, 16f, 16f};
    int s10 = spec.shardOf(10);
    long[] mine = routing.ids(s10);
    float[] g = routing.scatter(grads, s10);
    for (int k = 0; k < mine.length; k++) {
      if (mine[k] == 10) assertEquals(5f, g[2 * k], "positions 0 and 2 summed");
    }
    var outside = assertThrows(IllegalArgumentException.class, () -> BatchRouting.of(spec, new long[] {3, 1000}));
    assertTrue(outside.getMessage().contains("row id 1000 at position 1"), outside.getMessage());
  }

  @Test
  void twoTrainersThroughTheClientGetOneApplyOfTheirMeanOnEveryShardAndPullTheirBatchInOrder() throws Exception {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 3, 1000, 2, INIT, RowOptimizer.sgd(1f));
    Map<Integer, ActorRef<Command>> shards = new HashMap<>();
    for (int s = 0; s < 3; s++) {
      ActorRef<Command> ref = kit.spawn(SparseShard.create(spec.entityId(s), SparseTestSupport.settings()));
      shards.put(s, ref);
      var init = kit.<SparseProtocol.InitReply>createTestProbe();
      ref.tell(new SparseProtocol.InitShard(spec, s, init.ref()));
      init.expectMessage(new SparseProtocol.ShardReady(0));
      var members = kit.<SparseProtocol.MembershipReply>createTestProbe();
      ref.tell(new SparseProtocol.UpdateMembership(1, List.of("a", "b"), members.ref()));
      members.expectMessage(new SparseProtocol.MembershipInForce(1));
    }
    Duration t = Duration.ofSeconds(5);
    SparseClient a = new SparseClient(spec, "a", t, kit.system().scheduler(), shards::get);
    SparseClient b = new SparseClient(spec, "b", t, kit.system().scheduler(), shards::get);
    long[] batchA = {10, 11, 10, 500};
    float[] gradA = {1f, 2f, 3f, 4f, 5f, 6f, 7f, 8f};
    long[] batchB = {11, 77};
    float[] gradB = {-1f, 1f, 0.5f, 0.25f};
    var pushedA = a.push(1, 0, 3f, batchA, gradA).toCompletableFuture();
    List<PushReply> repliesB = b.push(1, 0, 1f, batchB, gradB).toCompletableFuture().get();
    List<PushReply> repliesA = pushedA.get();
    assertEquals(3, repliesA.size());
    for (PushReply r : repliesB) assertInstanceOf(SparseProtocol.Applied.class, r);
    for (PushReply r : repliesA) assertEquals(new SparseProtocol.Accepted(1), r);

    long[] ask = {77, 10, 11, 10, 999};
    SparseClient.Pulled pulled = b.pull(ask, 1).toCompletableFuture().get();
    // The mean over all 4 examples: row 10 = 3 (1+5, 2+6) / 4, row 11 = (3 (3, 4) + (-1, 1)) / 4, ...
    Map<Long, float[]> mean = Map.of(
        10L, new float[] {3f * 6f / 4f, 3f * 8f / 4f},
        11L, new float[] {(3f * 3f + -1f) / 4f, (3f * 4f + 1f) / 4f},
        77L, new float[] {0.5f / 4f, 0.25f / 4f},
        999L, new float[] {0f, 0f});
    for (int k = 0; k < ask.length; k++) {
      float[] start = new float[2];
      INIT.fill(ask[k], start, 0, 2);
      float[] m = mean.get(ask[k]);
      float[] expected = {start[0] - m[0], start[1] - m[1]};
      assertBitsEqual(expected, java.util.Arrays.copyOfRange(pulled.rows(), 2 * k, 2 * k + 2), "row " + ask[k]);
    }
    assertEquals(1, pulled.version());

    // Sent again after a lost answer: every shard acknowledges without applying it twice.
    var again = b.push(1, 0, 1f, batchB, gradB).toCompletableFuture().get();
    for (PushReply r : again) assertEquals(new SparseProtocol.Duplicate(1), r);
    assertArrayEquals(pulled.rows(), b.pull(ask, 1).toCompletableFuture().get().rows());

    var ahead = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> a.push(3, 2, 1f, new long[] {10}, new float[] {1f, 1f}).toCompletableFuture().get());
    SparseClient.ShardRefused refused = assertInstanceOf(SparseClient.ShardRefused.class,
        ahead.getCause() instanceof CompletionException ? ahead.getCause().getCause() : ahead.getCause());
    assertEquals(SparseProtocol.Problem.AHEAD, refused.refused().problem());
  }
}
