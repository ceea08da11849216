package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.assertSameRecord;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.ExtendedActorSystem;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.SerializationExtension;
import io.shardtrain.actors.sparse.SparseEvents.GradientApplied;
import io.shardtrain.actors.sparse.SparseEvents.MembershipUpdated;
import io.shardtrain.actors.sparse.SparseEvents.RowsExpired;
import io.shardtrain.actors.sparse.SparseEvents.RowsSaved;
import io.shardtrain.actors.sparse.SparseEvents.ShardHeader;
import io.shardtrain.actors.sparse.SparseEvents.ShardInitialized;
import io.shardtrain.actors.sparse.SparseEvents.SketchSaved;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotBegun;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotCompleted;
import io.shardtrain.actors.sparse.SparseEvents.StepCommitted;
import io.shardtrain.actors.sparse.SparseProtocol.Problem;
import io.shardtrain.actors.transport.WireTimings;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.io.NotSerializableException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparseSerializerTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseSerializerTest");
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static final float[] VALUES = {1.5f, -0f, Float.MIN_VALUE, -3.25e7f, 0.1f, 7f};

  private static TableSpec spec() {
    return new TableSpec("emb", 8, 1L << 40, 3, new RowInit(RowInit.Kind.NORMAL, 0.01f, -9),
        RowOptimizer.ftrl(0.05f, 0.001f, 0.2f, 1f), TableSpec.Mode.ASYNC, 4, 3, 2, 1 << 20, 500);
  }

  /** {@code m} through the serializer the configuration binds it to, which must be the sparse one; compared field by field. */
  private static void roundTrip(Object m) {
    var serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
    assertEquals(SparseSerializer.IDENTIFIER, serialization.findSerializerFor(m).identifier(),
        m.getClass().getName() + " is bound to another serializer");
    Object back = kit.serializationTestKit().verifySerialization(m, false);
    assertSameRecord(m, back);
  }

  @Test
  void everyCommandAndReplyRoundTripsThroughTheSparseSerializer() {
    ActorRef<Object> ref = kit.createTestProbe().ref();
    long[] ids = {0, 5, Long.MAX_VALUE};
    List<Object> messages = List.of(
        new SparseProtocol.InitShard(spec(), 7, ref.unsafeUpcast()),
        new SparseProtocol.PullRows(ids, 12, ref.unsafeUpcast()),
        new SparseProtocol.PushRows("trainer-1", 3, 2, 64f, new long[] {1, 2}, VALUES, ref.unsafeUpcast()),
        new SparseProtocol.UpdateMembership(4, List.of("a", "b"), ref.unsafeUpcast()),
        new SparseProtocol.GetStats(ref.unsafeUpcast()),
        new SparseProtocol.ExportRows(-1, 16_384, ref.unsafeUpcast()),
        new SparseProtocol.LoadRows(new long[] {4, 8}, VALUES, ref.unsafeUpcast()),
        new SparseProtocol.RowsStored(77),
        new SparseProtocol.ShardReady(9),
        new SparseProtocol.RowsPage(2, 40, new long[] {4, 8}, VALUES, true),
        new SparseProtocol.Rows("emb", 3, 10, new long[] {4, 8}, VALUES),
        new SparseProtocol.Applied(1), new SparseProtocol.Accepted(2), new SparseProtocol.Duplicate(3),
        new SparseProtocol.Stale(4), new SparseProtocol.MembershipInForce(5),
        new SparseProtocol.Refused(Problem.WRONG_DIM, "3 rows of dim 4 need 12 floats, got 11"),
        new SparseProtocol.ShardStats("emb/3", true, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, List.of("b"), 11, 12, 13));
    for (Object m : messages) roundTrip(m);
  }

  @Test
  void everyEventAndTheSnapshotHeaderRoundTripBitForBit() {
    List<Object> events = List.of(
        new ShardInitialized(spec(), 5),
        new StepCommitted(7, 1, 3, new long[] {3, 9}, VALUES, new int[] {1, 2}, 96, List.of("a", "b")),
        new GradientApplied("a", 4, 0, 1, 32f, new long[] {3, 9}, VALUES),
        new MembershipUpdated(2, List.of("a")),
        new RowsExpired(12, new long[] {1, 2, 3}),
        new SparseEvents.RowsLoaded(new long[] {5, 6}, VALUES),
        new SnapshotBegun(3, 118),
        new RowsSaved(3, new long[] {5, 6}, VALUES, new long[] {10, 11}),
        new SketchSaved(3, 4096, new int[] {0, 1, Integer.MAX_VALUE}),
        new SnapshotCompleted(3, 2),
        new ShardHeader(spec(), 5, 12, 2, List.of("a", "b"), Map.of("a", 4L, "b", 7L), 96, 10, 20, 30, 3, 118),
        new ShardHeader(null, -1, 0, 0, List.of(), Map.of(), 0, 0, 0, 0, 0, 0));
    for (Object e : events) roundTrip(e);
  }

  @Test
  void truncatedOrForeignBytesFailNamingTheManifest() {
    SparseSerializer s = new SparseSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    byte[] bytes = s.toBinary(new RowsSaved(1, new long[] {5}, new float[] {1f, 2f}, new long[] {3}));
    var truncated = assertThrows(NotSerializableException.class,
        () -> s.fromBinary(Arrays.copyOf(bytes, bytes.length - 3), "RowsSaved"));
    assertTrue(truncated.getMessage().contains("RowsSaved"), truncated.getMessage());
    // A count larger than the bytes behind it is refused before anything is allocated.
    byte[] huge = bytes.clone();
    huge[9] = 0x7f;
    huge[10] = 0x7f;
    assertThrows(NotSerializableException.class, () -> s.fromBinary(huge, "RowsSaved"));
    assertThrows(NotSerializableException.class, () -> s.fromBinary(bytes, "NoSuchThing"));
    assertEquals(717_010, s.identifier(), "journals store this id with every event and snapshot");
  }

  @Test
  void messagesCountAsWireSerializationWhileTimedAndEventsDoNot() throws Exception {
    SparseSerializer serializer = new SparseSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    Object push = new SparseProtocol.PushRows("t1", 3, 2, 64f, new long[] {5, 9}, VALUES,
        kit.<SparseProtocol.PushReply>createTestProbe().ref());
    Object event = new RowsExpired(4, new long[] {5, 9});
    WireTimings.reset();
    WireTimings.enable(true);
    try {
      byte[] bytes = serializer.toBinary(push);
      serializer.fromBinary(bytes, serializer.manifest(push));
      serializer.fromBinary(serializer.toBinary(event), serializer.manifest(event));
      var figures = WireTimings.snapshot();
      assertEquals(1, figures.get(WireTimings.Kind.SERIALIZE).calls());
      assertEquals(1, figures.get(WireTimings.Kind.DESERIALIZE).calls());
      assertEquals(bytes.length, WireTimings.bytesSent());
    } finally {
      WireTimings.enable(false);
      WireTimings.reset();
    }
  }
}
