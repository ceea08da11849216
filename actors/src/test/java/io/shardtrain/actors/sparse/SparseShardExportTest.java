package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.INIT;
import static io.shardtrain.actors.sparse.SparseTestSupport.init;
import static io.shardtrain.actors.sparse.SparseTestSupport.settings;
import static io.shardtrain.actors.sparse.SparseTestSupport.shard;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.ExportReply;
import io.shardtrain.actors.sparse.SparseProtocol.RowsPage;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.compute.sparse.SparseTable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A shard gives its stored rows in pages of ascending id, values without optimizer slots, each row once. */
class SparseShardExportTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseShardExportTest", SparseTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static ExportReply export(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, long after, int limit) {
    return tk.<ExportReply>runCommand(r -> new SparseProtocol.ExportRows(after, limit, r)).reply();
  }

  @Test
  void storedRowsComeInPagesOfAscendingIdWithTheirValuesOnly() {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 1, 100, 2, INIT, RowOptimizer.adagrad(0.5f, 0.1f))
        .withMode(TableSpec.Mode.ASYNC, 10);
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 0, settings());
    init(tk, spec, 0);
    tk.<SparseProtocol.PushReply>runCommand(r -> new SparseProtocol.PushRows("a", 1, 0, 1f, new long[] {42, 7, 99}, new float[6], r));
    tk.<SparseProtocol.PushReply>runCommand(r -> new SparseProtocol.PushRows("a", 2, 1, 1f, new long[] {3}, new float[] {1f, -1f}, r));
    RowsPage first = (RowsPage) export(tk, -1, 3);
    assertArrayEquals(new long[] {3, 7, 42}, first.ids());
    assertTrue(first.more());
    assertEquals(2, first.version());
    float[] row3 = new float[2];
    tk.getState().table.read(3, row3, 0);
    assertArrayEquals(row3, java.util.Arrays.copyOfRange(first.values(), 0, 2));
    assertEquals(6, first.values().length);
    tk.restart();
    RowsPage rest = (RowsPage) export(tk, 42, 3);
    assertArrayEquals(new long[] {99}, rest.ids());
    assertFalse(rest.more());
  }

  @Test
  void anUninitialisedShardRefusesNamingItself() {
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, SparseTestSupport.oneShard(), 0, settings());
    var refused = (SparseProtocol.Refused) export(tk, -1, 10);
    assertEquals(SparseProtocol.Problem.NOT_INITIALISED, refused.problem());
  }

  @Test
  void pagesAfterTheTableChangedStillAscendFromTheLastIdGiven() {
    SparseTable table = new SparseTable(1, INIT, RowOptimizer.sgd(1f), 1, 1, 1, 0);
    for (long id : new long[] {50, 10, 30}) table.apply(id, new float[] {1f}, 0, 1, 1);
    RowsExport export = new RowsExport();
    assertArrayEquals(new long[] {10, 30}, export.page(table, 1, -1, 2).ids());
    table.apply(20, new float[] {1f}, 0, 1, 2);
    table.apply(40, new float[] {1f}, 0, 1, 2);
    RowsExport.Page rest = export.page(table, 2, 30, 10);
    assertArrayEquals(new long[] {40, 50}, rest.ids());
    assertFalse(rest.more());
  }

  private static SparseProtocol.LoadReply load(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, long[] ids,
      float[] values) {
    return tk.<SparseProtocol.LoadReply>runCommand(r -> new SparseProtocol.LoadRows(ids, values, r)).reply();
  }

  @Test
  void loadedRowsAreStoredWithFreshSlotsSurviveARestartAndAreRefusedOnceTheTableTrained() {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 1, 100, 2, INIT, RowOptimizer.adagrad(0.5f, 0.1f))
        .withMode(TableSpec.Mode.ASYNC, 10);
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 0, settings());
    init(tk, spec, 0);
    assertEquals(new SparseProtocol.RowsStored(2), load(tk, new long[] {5, 9}, new float[] {1f, 2f, 3f, 4f}));
    tk.restart();
    RowsPage page = (RowsPage) export(tk, -1, 10);
    assertArrayEquals(new long[] {5, 9}, page.ids());
    assertArrayEquals(new float[] {1f, 2f, 3f, 4f}, page.values());
    var store = tk.getState().table.store();
    int row = store.find(9);
    // AdaGrad's accumulators start at its initial value, as for a row a push creates.
    assertEquals(0.1f, store.page(row)[store.base(row) + 2]);
    var bad = (SparseProtocol.Refused) load(tk, new long[] {7}, new float[] {Float.NaN, 0f});
    assertEquals(SparseProtocol.Problem.NON_FINITE, bad.problem());
    tk.<SparseProtocol.PushReply>runCommand(r -> new SparseProtocol.PushRows("a", 1, 0, 1f, new long[] {5},
        new float[] {1f, 1f}, r));
    var late = (SparseProtocol.Refused) load(tk, new long[] {7}, new float[] {1f, 1f});
    assertTrue(late.message().contains("rows load before a table trains, and this one is at version 1"), late.message());
  }

  @Test
  void aLoadIsJournaledInEventsUnderTheByteLimit() {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 1, 1000, 2, INIT, RowOptimizer.sgd(0.5f));
    // 8,208 bytes an event, 4,096 of them overhead: 257 rows of 16 bytes (an id and 2 floats).
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 0, settings(1000, 8208));
    init(tk, spec, 0);
    long[] ids = java.util.stream.LongStream.range(0, 600).toArray();
    var result = tk.<SparseProtocol.LoadReply>runCommand(r -> new SparseProtocol.LoadRows(ids, new float[1200], r));
    assertEquals(new SparseProtocol.RowsStored(600), result.reply());
    assertEquals(3, result.events().size()); // 257 + 257 + 86
    assertEquals(257, ((SparseEvents.RowsLoaded) result.events().get(0)).ids().length);
  }
}
