package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.INIT;
import static io.shardtrain.actors.sparse.SparseTestSupport.init;
import static io.shardtrain.actors.sparse.SparseTestSupport.settings;
import static io.shardtrain.actors.sparse.SparseTestSupport.shard;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.metrics.NodeMetrics;
import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.actors.sparse.SparseProtocol.PushRows;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A sparse shard's rows on its node's metrics (a registry without an endpoint: no port is opened). */
class SparseShardMetricsTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseShardMetricsTest",
        ConfigFactory.parseString("shardtrain.metrics { port = 1, retired-series-for = 1s }")
            .withFallback(SparseTestSupport.CONFIG));
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static PushReply push(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, long step, long[] ids) {
    return tk.<PushReply>runCommand(r -> new PushRows("a", step, step - 1, 8f, ids, new float[ids.length * 2], r))
        .reply();
  }

  private static void assertRows(String shard, int rows) {
    String text = NodeMetrics.get(kit.system()).scrape();
    assertTrue(Pattern.compile("(?m)^shardtrain_sparse_rows\\{[^}]*shard=\"" + Pattern.quote(shard) + "\"[^}]*} "
        + rows + "\\.0$").matcher(text).find(), "want " + rows + " rows of " + shard + " in:\n" + text);
  }

  @Test
  void theRowsGaugeFollowsTheRowsTheShardCreates() {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 1, 100, 2, INIT, RowOptimizer.sgd(0.5f))
        .withMode(TableSpec.Mode.ASYNC, 1);
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 0, settings());
    init(tk, spec, 0);
    assertRows(spec.entityId(0), 0);
    push(tk, 1, new long[] {3, 7, 3});
    assertRows(spec.entityId(0), 2);
    push(tk, 2, new long[] {7, 9, 11});
    assertRows(spec.entityId(0), 4);
  }

  @Test
  void aShardThatLeavesTheNodeLeavesTheExportAfterTheRetiredSeriesTime() throws Exception {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 1, 100, 2, INIT, RowOptimizer.sgd(0.5f))
        .withMode(TableSpec.Mode.ASYNC, 1);
    var shard = kit.spawn(SparseShard.create(spec.entityId(0), settings()));
    var probe = kit.<SparseProtocol.InitReply>createTestProbe();
    shard.tell(new SparseProtocol.InitShard(spec, 0, probe.getRef()));
    probe.expectMessageClass(SparseProtocol.ShardReady.class);
    assertRows(spec.entityId(0), 0);
    push(shard, spec);
    assertRows(spec.entityId(0), 1);
    shard.tell(new SparseProtocol.Retire());
    kit.createTestProbe().expectTerminated(shard);
    // It holds no rows here now; its series stay for a last scrape, then leave.
    assertRows(spec.entityId(0), 0);
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (NodeMetrics.get(kit.system()).scrape().contains(spec.entityId(0)) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertTrue(!NodeMetrics.get(kit.system()).scrape().contains(spec.entityId(0)), "series of the stopped shard stay");
  }

  private static void push(akka.actor.typed.ActorRef<Command> shard, TableSpec spec) {
    var probe = kit.<PushReply>createTestProbe();
    shard.tell(new PushRows("a", 1, 0, 8f, new long[] {3}, new float[2], probe.getRef()));
    probe.expectMessageClass(SparseProtocol.Applied.class);
  }
}
