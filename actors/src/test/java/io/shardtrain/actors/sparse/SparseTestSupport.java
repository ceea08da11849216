package io.shardtrain.actors.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.compute.sparse.RowStore;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/** Shared setup of the sparse shard tests: journal and snapshots through the real serializer. */
final class SparseTestSupport {
  private SparseTestSupport() {}

  private static final AtomicInteger IDS = new AtomicInteger();

  static final Config CONFIG = ConfigFactory.parseString(
          "akka.persistence.testkit.events.serialize = on\n"
              + "akka.persistence.testkit.snapshots.serialize = on\n")
      .withFallback(PersistenceTestKitSnapshotPlugin.config())
      .withFallback(EventSourcedBehaviorTestKit.config());

  static final RowInit INIT = new RowInit(RowInit.Kind.UNIFORM, 0.1f, 11);

  /** Settings with snapshots after {@code snapshotEvery} events and events of at most {@code maxEventBytes}. */
  static SparseSettings settings(int snapshotEvery, int maxEventBytes) {
    return new SparseSettings(snapshotEvery, maxEventBytes, Duration.ofSeconds(5), 4, 1024);
  }

  static SparseSettings settings() {
    return settings(1000, 4 << 20);
  }

  /** A fresh table name, so tests never share a persistence id. */
  static String freshTable() {
    return "t" + IDS.incrementAndGet();
  }

  /** A sync AdaGrad table of one shard over ids [0, 1000), rows of 3 floats. */
  static TableSpec oneShard() {
    return TableSpec.of(freshTable(), 1, 1000, 3, INIT, RowOptimizer.adagrad(0.1f, 0.01f));
  }

  static EventSourcedBehaviorTestKit<Command, Event, ShardState> shard(akka.actor.testkit.typed.javadsl.ActorTestKit kit,
      TableSpec spec, int shard, SparseSettings settings) {
    // Commands and events go through the serializer; the state is never serialized whole (its header is).
    return EventSourcedBehaviorTestKit.create(kit.system(), SparseShard.create(spec.entityId(shard), settings),
        EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyState(false));
  }

  static SparseProtocol.InitReply init(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, TableSpec spec,
      int shard) {
    return tk.<SparseProtocol.InitReply>runCommand(r -> new SparseProtocol.InitShard(spec, shard, r)).reply();
  }

  static SparseProtocol.MembershipReply members(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, long epoch,
      String... trainers) {
    return tk.<SparseProtocol.MembershipReply>runCommand(
        r -> new SparseProtocol.UpdateMembership(epoch, java.util.List.of(trainers), r)).reply();
  }

  static SparseProtocol.PullReply pull(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, long minVersion,
      long... ids) {
    return tk.<SparseProtocol.PullReply>runCommand(r -> new SparseProtocol.PullRows(ids, minVersion, r)).reply();
  }

  /** Rows, slots and step of every stored row, the admission counters, version and counts agree bit for bit. */
  static void assertSameState(ShardState expected, ShardState actual) {
    assertEquals(expected.spec, actual.spec);
    assertEquals(expected.shard, actual.shard);
    assertEquals(expected.version, actual.version, "version");
    assertEquals(expected.epoch, actual.epoch, "epoch");
    assertEquals(expected.members, actual.members, "members");
    assertEquals(expected.lastSteps, actual.lastSteps, "last steps");
    assertEquals(expected.examplesApplied, actual.examplesApplied, "examples");
    assertEquals(expected.rowsCreated, actual.rowsCreated, "rows created");
    assertEquals(expected.rowsNotAdmitted, actual.rowsNotAdmitted, "rows not admitted");
    assertEquals(expected.rowsExpired, actual.rowsExpired, "rows expired");
    RowStore e = expected.table.store();
    RowStore a = actual.table.store();
    assertEquals(e.size(), a.size(), "rows stored");
    for (int row = 0; row < e.size(); row++) {
      long id = e.id(row);
      int other = a.find(id);
      assertEquals(true, other >= 0, "row " + id + " is stored after recovery");
      assertEquals(e.touched(row), a.touched(other), "step row " + id + " was last touched at");
      float[] x = Arrays.copyOfRange(e.page(row), e.base(row), e.base(row) + e.width());
      float[] y = Arrays.copyOfRange(a.page(other), a.base(other), a.base(other) + a.width());
      assertBitsEqual(x, y, "row " + id);
    }
    if (expected.table.sketch() != null) {
      assertArrayEquals(expected.table.sketch().counters(), actual.table.sketch().counters(), "admission counters");
    }
  }

  static void assertBitsEqual(float[] expected, float[] actual, String what) {
    assertEquals(expected.length, actual.length, what + " length");
    for (int i = 0; i < expected.length; i++) {
      assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]),
          what + "[" + i + "]: expected " + expected[i] + ", got " + actual[i]);
    }
  }

  /** Two records of the same type agree component by component, arrays by content. */
  static void assertSameRecord(Object expected, Object actual) {
    assertEquals(expected.getClass(), actual.getClass());
    if (!expected.getClass().isRecord()) {
      assertEquals(expected, actual);
      return;
    }
    for (RecordComponent c : expected.getClass().getRecordComponents()) {
      try {
        Object x = c.getAccessor().invoke(expected);
        Object y = c.getAccessor().invoke(actual);
        assertEquals(true, Arrays.deepEquals(new Object[] {x}, new Object[] {y}),
            expected.getClass().getSimpleName() + "." + c.getName() + ": " + x + " vs " + y);
      } catch (ReflectiveOperationException ex) {
        throw new AssertionError(ex);
      }
    }
  }
}
