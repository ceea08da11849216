package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.INIT;
import static io.shardtrain.actors.sparse.SparseTestSupport.assertBitsEqual;
import static io.shardtrain.actors.sparse.SparseTestSupport.assertSameState;
import static io.shardtrain.actors.sparse.SparseTestSupport.init;
import static io.shardtrain.actors.sparse.SparseTestSupport.pull;
import static io.shardtrain.actors.sparse.SparseTestSupport.settings;
import static io.shardtrain.actors.sparse.SparseTestSupport.shard;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseProtocol.Applied;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.Duplicate;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.actors.sparse.SparseProtocol.PushRows;
import io.shardtrain.actors.sparse.SparseProtocol.Rows;
import io.shardtrain.actors.sparse.SparseProtocol.Stale;
import io.shardtrain.compute.sparse.RowOptimizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparseShardAsyncTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseShardAsyncTest", SparseTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static PushReply push(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, String trainer, long step,
      long base, long[] ids, float[] grads) {
    return tk.<PushReply>runCommand(r -> new PushRows(trainer, step, base, 8f, ids, grads, r)).reply();
  }

  @Test
  void eachPushIsAppliedAtOnceInArrivalOrderAndAnIdTwiceInAPushGetsItsGradientsSummed() {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 1, 100, 2, INIT, RowOptimizer.sgd(0.5f))
        .withMode(TableSpec.Mode.ASYNC, 1);
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 0, settings());
    init(tk, spec, 0);
    assertEquals(new Applied(1), push(tk, "a", 1, 0, new long[] {3, 3}, new float[] {1f, 2f, 3f, 4f}));
    assertEquals(new Applied(2), push(tk, "b", 1, 1, new long[] {3}, new float[] {-2f, 0f}));
    float[] start = new float[2];
    INIT.fill(3, start, 0, 2);
    // Row 3: -0.5 * (1 + 3, 2 + 4), then -0.5 * (-2, 0).
    float[] expected = {start[0] - 0.5f * 4f - 0.5f * -2f, start[1] - 0.5f * 6f - 0.5f * 0f};
    assertBitsEqual(expected, ((Rows) pull(tk, 2, 3)).values(), "row 3");
    assertEquals(new Duplicate(2), push(tk, "a", 1, 0, new long[] {3}, new float[] {9f, 9f}));
    // Base version 0 lags version 2 by 2, beyond the table's bound of 1.
    assertEquals(new Stale(2), push(tk, "a", 2, 0, new long[] {3}, new float[] {9f, 9f}));
    assertBitsEqual(expected, ((Rows) pull(tk, 0, 3)).values(), "row 3 after a duplicate and a stale push");
    ShardState before = tk.getState();
    assertEquals(java.util.Map.of("a", 1L, "b", 1L), before.lastSteps);
    tk.restart();
    assertSameState(before, tk.getState());
    assertTrue(tk.getState().table.store().find(3) >= 0);
  }
}
