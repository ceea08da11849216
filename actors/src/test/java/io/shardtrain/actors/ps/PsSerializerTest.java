package io.shardtrain.actors.ps;

import akka.actor.ExtendedActorSystem;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.serialization.Serializers;
import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.RolledBackTo;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.GetStats;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.Skipped;
import io.shardtrain.actors.ps.BlockProtocol.Stale;
import io.shardtrain.actors.ps.BlockProtocol.UpdateMembership;
import io.shardtrain.actors.ps.BlockState.Contribution;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.io.NotSerializableException;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.assertSameState;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PsSerializerTest {
  private static ActorTestKit kit;

  private static final float[] VALUES = {1.5f, -0f, Float.MIN_VALUE, -3.25e7f, 0.1f};

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("PsSerializerTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static BlockSpec spec() {
    OptimizerSpec adamw = new OptimizerSpec(OptimizerSpec.Kind.ADAM, 0.25f, false, 0.8f, 0.99f, 1e-7f, 0.01f, 0.002f,
        true, 0.3f);
    return new BlockSpec("layer.w", 3, 786_432, 5, adamw, "warmup:10,cosine:1000:0.001", 0.003f,
        BlockSpec.Mode.ASYNC, 7);
  }

  @SuppressWarnings("unchecked")
  private static <T> T roundTrip(T message) {
    ExtendedActorSystem classic = (ExtendedActorSystem) Adapter.toClassic(kit.system());
    assertEquals(PsSerializer.IDENTIFIER, SerializationExtension.get(classic).findSerializerFor(message).identifier(),
        message.getClass().getName() + " is bound to another serializer");
    return kit.serializationTestKit().verifySerialization(message, false);
  }

  private static final BlockProtocol.TaskMark MARK = new BlockProtocol.TaskMark(2, 1, 96);

  /** An event or snapshot as a journal holds it: manifest and bytes (base64) under serializer 717002. */
  private record Stored(String manifest, Object message, String base64) {}

  private static BlockState fullState() {
    BlockState state = BlockState.restore(spec(), VALUES.clone(), new float[][] {VALUES.clone(), {5f, 4f, 3f, 2f, 1f}},
        17, 9, 3, List.of("a", "b"), List.of(new Contribution("a", 2f, new float[] {1f, 2f, 3f, 4f, 5f}),
            new Contribution("b", 0f, new float[0])), Map.of("a", 10L, "b", 9L), 576);
    BlockState.restore(state, Map.of(5L, new BlockState.Held(VALUES, new float[][] {{5f, 4f, 3f, 2f, 1f}, VALUES}, 5)),
        4);
    return BlockState.restoreMarks(state, Map.of(BlockState.taskKey(2, 1), new BlockProtocol.TaskProgress(96, 5)));
  }

  /** Format 6, the format journals written today hold. */
  private static final List<Stored> STORED = List.of(
      new Stored("Initialized", new Initialized(spec(), VALUES),
          "BgcAAABsYXllci53AwAAAAAADAAFAAAABAAAAEFEQU0AAIA+AM3MTD+kcH0/lb/WMwrXIzxvEgM7AZqZmT4bAAAAd2Fy"
          + "bXVwOjEwLGNvc2luZToxMDAwOjAuMDAxpptEOwUAAABBU1lOQwcAAAAAAAAABQAAAAAAwD8AAACAAQAAAJD098vNzMw9"),
      new Stored("GradientReceived", new GradientReceived("a", 9, 32f, VALUES, MARK),
          "BgEAAABhCQAAAAAAAAAAAABCBQAAAAAAwD8AAACAAQAAAJD098vNzMw9AQIAAAABAAAAYAAAAAAAAAA="),
      new Stored("GradientReceived", new GradientReceived("a", 9, 32f, VALUES),
          "BgEAAABhCQAAAAAAAAAAAABCBQAAAAAAwD8AAACAAQAAAJD098vNzMw9AA=="),
      new Stored("GradientSkipped", new GradientSkipped("c", 11, MARK),
          "BgEAAABjCwAAAAAAAAABAgAAAAEAAABgAAAAAAAAAA=="),
      new Stored("StepApplied", new StepApplied(12),
          "BgwAAAAAAAAA"),
      new Stored("GradientApplied", new GradientApplied("b", 10, VALUES, MARK),
          "BgEAAABiCgAAAAAAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0BAgAAAAEAAABgAAAAAAAAAA=="),
      new Stored("MembershipUpdated", new MembershipUpdated(4, List.of("a", "c")),
          "BgQAAAAAAAAAAgAAAAEAAABhAQAAAGM="),
      new Stored("CheckpointTaken", new CheckpointTaken(40, 30, VALUES, new float[][] {{1f, 2f, 3f, 4f, 5f}, VALUES}, 39),
          "BigAAAAAAAAAHgAAAAAAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0CAAAABQAAAAAAgD8AAABAAABAQAAAgEAAAKBA"
          + "BQAAAAAAwD8AAACAAQAAAJD098vNzMw9JwAAAAAAAAA="),
      new Stored("RolledBackTo", new RolledBackTo(30, 2),
          "Bh4AAAAAAAAAAgAAAAAAAAA="),
      new Stored("State", fullState(),
          "BgEHAAAAbGF5ZXIudwMAAAAAAAwABQAAAAQAAABBREFNAACAPgDNzEw/pHB9P5W/1jMK1yM8bxIDOwGamZk+GwAAAHdh"
          + "cm11cDoxMCxjb3NpbmU6MTAwMDowLjAwMaabRDsFAAAAQVNZTkMHAAAAAAAAAAUAAAAAAMA/AAAAgAEAAACQ9PfLzczM"
          + "PQIAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0FAAAAAACgQAAAgEAAAEBAAAAAQAAAgD8RAAAAAAAAAAkAAAAAAAAA"
          + "AwAAAAAAAAACAAAAAQAAAGEBAAAAYgIAAAABAAAAYQAAAEAFAAAAAACAPwAAAEAAAEBAAACAQAAAoEABAAAAYgAAAAAA"
          + "AAAAAgAAAAEAAABhCgAAAAAAAAABAAAAYgkAAAAAAAAAQAIAAAAAAAABAAAABQAAAAAAAAAFAAAAAADAPwAAAIABAAAA"
          + "kPT3y83MzD0CAAAABQAAAAAAoEAAAIBAAABAQAAAAEAAAIA/BQAAAAAAwD8AAACAAQAAAJD098vNzMw9BQAAAAAAAAAE"
          + "AAAAAAAAAAEAAAABAAAAAgAAAGAAAAAAAAAABQAAAAAAAAA="),
      new Stored("State", new BlockState(),
          "BgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));

  @Test
  void storedEventsAndSnapshotsAreReadUnderTheirIdentifierAndWrittenByteForByte() {
    assertEquals(717_002, PsSerializer.IDENTIFIER, "journals store this id with every event and snapshot");
    Serialization serialization = SerializationExtension.get((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    for (Stored s : STORED) {
      byte[] bytes = Base64.getDecoder().decode(s.base64());
      Serializer serializer = serialization.findSerializerFor(s.message());
      assertEquals(PsSerializer.IDENTIFIER, serializer.identifier(), s.manifest());
      assertEquals(s.manifest(), Serializers.manifestFor(serializer, s.message()), "the stored manifest");
      assertArrayEquals(bytes, serializer.toBinary(s.message()), s.manifest() + " is written as journals hold it");
      Object back = serialization.deserialize(bytes, PsSerializer.IDENTIFIER, s.manifest()).get();
      assertArrayEquals(bytes, serializer.toBinary(back), s.manifest() + " reads back whole");
    }
  }

  @Test
  void commandsRoundTripWithTheirFloatsAndReplyRefs() {
    TestProbe<Object> probe = kit.createTestProbe();
    Initialize init = roundTrip(new Initialize(spec(), VALUES, probe.ref().unsafeUpcast()));
    assertEquals(spec(), init.spec());
    assertBitsEqual(VALUES, init.values(), "Initialize values");
    assertEquals(probe.ref(), init.replyTo());

    PushGradient push = roundTrip(new PushGradient("trainer-ü", 42, 41, 3, 64f, VALUES, probe.ref().unsafeUpcast()));
    assertEquals("trainer-ü", push.trainerId());
    assertEquals(42, push.step());
    assertEquals(41, push.baseVersion());
    assertEquals(3, push.membershipEpoch());
    assertEquals(64f, push.weight());
    assertBitsEqual(VALUES, push.values(), "PushGradient values");
    assertEquals(probe.ref(), push.replyTo());

    Pull pull = new Pull(17, probe.ref().unsafeUpcast());
    assertEquals(pull, roundTrip(pull));
    UpdateMembership members = new UpdateMembership(5, List.of("a", "b"), probe.ref().unsafeUpcast());
    assertEquals(members, roundTrip(members));
    GetStats stats = new GetStats(probe.ref().unsafeUpcast());
    assertEquals(stats, roundTrip(stats));
  }

  @Test
  void repliesRoundTrip() {
    for (Object ack : List.of(new Applied(3), new Accepted(4), new Duplicate(5), new Stale(6), new Skipped(7))) {
      assertEquals(ack, roundTrip(ack));
    }
    BlockValues values = roundTrip(new BlockValues("layer.w", 3, 786_432, 12, VALUES));
    assertEquals(List.of("layer.w", 3, 786_432, 12L), List.of(values.parameter(), values.index(), values.offset(),
        values.version()));
    assertBitsEqual(VALUES, values.values(), "BlockValues values");
    BlockStats stats = new BlockStats("layer.w#3", true, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, List.of("b", "c"),
        14, 15, 16, 17, 18, 19);
    assertEquals(stats, roundTrip(stats));
  }

  @Test
  void bulkAddressesAndBlockReferencesRoundTripInPullsAndValues() {
    TestProbe<Object> probe = kit.createTestProbe();
    BulkAddress address = new BulkAddress("127.0.0.1", 51_000);
    Pull pull = new Pull(9, address, probe.ref().unsafeUpcast());
    assertEquals(pull, roundTrip(pull));

    TestProbe<BlockProtocol.Command> block = kit.createTestProbe();
    BlockValues withNode = roundTrip(new BlockValues("b", 0, 0, 3, VALUES, address, block.ref()));
    assertBitsEqual(VALUES, withNode.values(), "inline values");
    assertEquals(address, withNode.node());
    assertEquals(block.ref(), withNode.block());
    BlockValues withoutBlock = roundTrip(new BlockValues("b", 0, 0, 3, VALUES, address, null));
    assertEquals(address, withoutBlock.node());
    assertNull(withoutBlock.block());
  }

  @Test
  void lettersRoundTripWithoutTheirFloats() {
    TestProbe<Object> probe = kit.createTestProbe();
    TestProbe<BlockProtocol.Command> block = kit.createTestProbe();
    BulkAddress address = new BulkAddress("10.1.2.4", 40_200);
    BlockProtocol.TaskMark mark = new BlockProtocol.TaskMark(1, 4, 640);
    BlockProtocol.PushLetter push = roundTrip(new BlockProtocol.PushLetter(block.ref(), address,
        new PushGradient("t-2", 7, 6, 3, 64f, null, 2, mark, probe.ref().unsafeUpcast())));
    assertEquals(block.ref(), push.block());
    assertEquals(address, push.replyBulk());
    PushGradient p = push.push();
    assertEquals(List.of("t-2", 7L, 6L, 3L, 64f, 2L), List.of(p.trainerId(), p.step(), p.baseVersion(),
        p.membershipEpoch(), p.weight(), p.generation()));
    assertEquals(mark, p.mark());
    assertNull(p.values(), "the gradient travels as the frame's floats");
    assertEquals(probe.ref(), p.replyTo());

    BlockProtocol.PullLetter pull = new BlockProtocol.PullLetter(block.ref(),
        new Pull(11, address, probe.ref().unsafeUpcast()));
    assertEquals(pull, roundTrip(pull));

    for (BlockProtocol.PushAck ack : List.<BlockProtocol.PushAck>of(new Applied(3), new Accepted(4),
        new Duplicate(5), new Stale(6), new Skipped(7), new BlockProtocol.RolledBack(8))) {
      BlockProtocol.AckLetter letter = new BlockProtocol.AckLetter(probe.ref().unsafeUpcast(), ack);
      assertEquals(letter, roundTrip(letter));
    }

    BlockProtocol.ValuesLetter values = roundTrip(new BlockProtocol.ValuesLetter(probe.ref().unsafeUpcast(),
        new BlockValues("layer.w", 1, 262_144, 8, null, address, block.ref())));
    BlockValues v = values.values();
    assertEquals(List.of("layer.w", 1, 262_144, 8L), List.of(v.parameter(), v.index(), v.offset(), v.version()));
    assertNull(v.values(), "the values travel as the frame's floats");
    assertEquals(address, v.node());
    assertEquals(block.ref(), v.block());
    assertEquals(probe.ref(), values.replyTo());
    BlockValues opened = (BlockValues) ((akka.pattern.StatusReply<?>) values.open(VALUES)).getValue();
    assertBitsEqual(VALUES, opened.values(), "a values letter opens to its frame's floats");
    assertEquals(block.ref(), opened.block());
  }

  @Test
  void formatFiveStatsAreReadWithoutTheirBulkFailureCount() throws Exception {
    PsSerializer serializer = new PsSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    BlockStats stats = new BlockStats("layer.w#3", true, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, List.of("b"),
        14, 15, 16, 17, 18, 19);
    byte[] now = serializer.toBinary(stats);
    // Format 5 had a bulk failure count between the bulk pulls and the examples applied (the last 8 bytes).
    byte[] v5 = new byte[now.length + 8];
    System.arraycopy(now, 0, v5, 0, now.length - 8);
    v5[now.length - 1] = 99;
    System.arraycopy(now, now.length - 8, v5, now.length, 8);
    v5[0] = 5;
    assertEquals(stats, serializer.fromBinary(v5, PsSerializer.STATS));
  }

  @Test
  void aPushByBulkReferenceFromAnOlderNodeIsRefusedNamingWhy() throws Exception {
    TestProbe<Object> probe = kit.createTestProbe();
    PsSerializer serializer = new PsSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    byte[] push = serializer.toBinary(new PushGradient("t", 3, 2, 1, 8f, VALUES, probe.ref().unsafeUpcast()));
    int kind = 1 + 4 + 1 + 8 + 8 + 8 + 4; // format, trainer id "t", step, base, epoch, weight
    assertEquals(0, push[kind], "inline");
    push[kind] = 1; // formats 2 to 5: a bulk reference followed
    push[0] = 5;
    NotSerializableException e = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(push, PsSerializer.PUSH));
    assertTrue(e.getMessage().contains("bulk reference") && e.getMessage().contains("no longer read"),
        e.getMessage());
  }

  @Test
  void formatOnePayloadsAreStillRead() throws Exception {
    TestProbe<Object> probe = kit.createTestProbe();
    PsSerializer serializer = new PsSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    byte[] now = serializer.toBinary(new GradientReceived("a", 9, 32f, VALUES));
    assertEquals(6, now[0], "current format version");
    // Formats before 4 had no task mark (here: its presence byte, last).
    byte[] event = Arrays.copyOf(now, now.length - 1);
    event[0] = 1;
    GradientReceived received = (GradientReceived) serializer.fromBinary(event, PsSerializer.RECEIVED);
    assertBitsEqual(VALUES, received.values(), "format 1 GradientReceived values");

    // Format 1 pushes had no presence byte before the inline floats.
    byte[] v4 = serializer.toBinary(new PushGradient("t", 3, 2, 1, 8f, VALUES, probe.ref().unsafeUpcast()));
    int presence = 1 + 4 + 1 + 8 + 8 + 8 + 4;
    assertEquals(0, v4[presence]);
    int generation = presence + 1 + 4 + 4 * VALUES.length;
    // Format 3 had no task mark after the generation (here: its presence byte).
    assertEquals(0, v4[generation + 8]);
    byte[] v3 = new byte[v4.length - 1];
    System.arraycopy(v4, 0, v3, 0, generation + 8);
    System.arraycopy(v4, generation + 9, v3, generation + 8, v4.length - generation - 9);
    v3[0] = 3;
    assertEquals(0, ((PushGradient) serializer.fromBinary(v3, PsSerializer.PUSH)).generation());
    // Format 2 had no generation after the payload.
    byte[] v2 = new byte[v3.length - 8];
    System.arraycopy(v3, 0, v2, 0, generation);
    System.arraycopy(v3, generation + 8, v2, generation, v3.length - generation - 8);
    v2[0] = 2;
    PushGradient push2 = (PushGradient) serializer.fromBinary(v2, PsSerializer.PUSH);
    assertEquals(0, push2.generation());
    assertBitsEqual(VALUES, push2.values(), "format 2 push values");
    byte[] v1 = new byte[v2.length - 1];
    System.arraycopy(v2, 0, v1, 0, presence);
    System.arraycopy(v2, presence + 1, v1, presence, v2.length - presence - 1);
    v1[0] = 1;
    PushGradient push = (PushGradient) serializer.fromBinary(v1, PsSerializer.PUSH);
    assertBitsEqual(VALUES, push.values(), "format 1 push values");
    assertEquals(probe.ref(), push.replyTo());

    byte[] unknown = now.clone();
    unknown[0] = 7;
    NotSerializableException e = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(unknown, PsSerializer.RECEIVED));
    assertTrue(e.getMessage().contains("format version 7"), e.getMessage());
  }

  @Test
  void formatTwoSnapshotsAreReadWithoutAnExampleCount() throws Exception {
    // Format 2 ended before the example count (8 bytes), the held checkpoints (none: a 4-byte count),
    // the rollback generation (8 bytes) and the task marks (none: a 4-byte count).
    BlockState old = olderSnapshot(24, 2);
    assertEquals(List.of(4L, 0L), List.of(old.version(), old.examplesApplied()));
  }

  /** A snapshot written now with its last {@code cut} bytes dropped, read back as format {@code format}. */
  private static BlockState olderSnapshot(int cut, int format) throws Exception {
    PsSerializer serializer = new PsSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    BlockState state = BlockState.restore(spec(), VALUES.clone(), new float[0][], 4, 4, 1, List.of("a"), List.of(),
        Map.of("a", 4L), 128);
    byte[] now = serializer.toBinary(state);
    byte[] old = Arrays.copyOf(now, now.length - cut);
    old[0] = (byte) format;
    return (BlockState) serializer.fromBinary(old, PsSerializer.STATE);
  }

  @Test
  void formatThreePayloadsAreReadWithoutTaskMarks() throws Exception {
    PsSerializer serializer = new PsSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    // Format 3 ended before the mark's presence byte (events) or the marks' count (state).
    byte[] received = serializer.toBinary(new GradientReceived("a", 9, 32f, VALUES));
    byte[] v3 = Arrays.copyOf(received, received.length - 1);
    v3[0] = 3;
    GradientReceived old = (GradientReceived) serializer.fromBinary(v3, PsSerializer.RECEIVED);
    assertEquals(List.of("a", 9L, 32f), List.of(old.trainerId(), old.step(), old.weight()));
    assertNull(old.mark());
    BlockState back = olderSnapshot(4, 3);
    assertEquals(List.of(4L, 128L, 0L), List.of(back.version(), back.examplesApplied(), back.taskProgress(0, 0).offset()));
  }

  @Test
  void taskMarksRoundTripInPushesEventsStateAndQueries() {
    TestProbe<Object> probe = kit.createTestProbe();
    BlockProtocol.TaskMark mark = new BlockProtocol.TaskMark(2, 1, 96);
    PushGradient push = roundTrip(new PushGradient("t", 5, 4, 2, 32f, VALUES, 3, mark, probe.ref().unsafeUpcast()));
    assertEquals(mark, push.mark());
    assertEquals(3, push.generation());
    assertEquals(mark, roundTrip(new GradientReceived("a", 9, 32f, VALUES, mark)).mark());
    assertEquals(mark, roundTrip(new GradientApplied("a", 9, VALUES, mark)).mark());
    assertEquals(new GradientSkipped("a", 9, mark), roundTrip(new GradientSkipped("a", 9, mark)));
    BlockProtocol.GetTaskMark get = new BlockProtocol.GetTaskMark(2, 1, probe.ref().unsafeUpcast());
    assertEquals(get, roundTrip(get));
    assertEquals(new BlockProtocol.TaskProgress(96, 5), roundTrip(new BlockProtocol.TaskProgress(96, 5)));

    BlockState state = BlockState.restore(spec(), VALUES.clone(), new float[0][], 4, 4, 1, List.of("a"), List.of(), Map.of(), 0);
    BlockState.restoreMarks(state, Map.of(BlockState.taskKey(2, 1), new BlockProtocol.TaskProgress(96, 5),
        BlockState.taskKey(3, 0), new BlockProtocol.TaskProgress(32, 6)));
    BlockState back = roundTrip(state);
    assertEquals(new BlockProtocol.TaskProgress(96, 5), back.taskProgress(2, 1));
    assertEquals(new BlockProtocol.TaskProgress(32, 6), back.taskProgress(3, 0));
    assertEquals(new BlockProtocol.TaskProgress(0, 0), back.taskProgress(3, 1));
  }

  @Test
  void eventsRoundTrip() {
    Initialized init = roundTrip(new Initialized(spec(), VALUES));
    assertEquals(spec(), init.spec());
    assertBitsEqual(VALUES, init.values(), "Initialized values");
    GradientReceived received = roundTrip(new GradientReceived("a", 9, 32f, VALUES));
    assertEquals(List.of("a", 9L, 32f), List.of(received.trainerId(), received.step(), received.weight()));
    assertBitsEqual(VALUES, received.values(), "GradientReceived values");
    GradientApplied applied = roundTrip(new GradientApplied("b", 10, VALUES));
    assertEquals(List.of("b", 10L), List.of(applied.trainerId(), applied.step()));
    assertBitsEqual(VALUES, applied.values(), "GradientApplied values");
    assertEquals(new GradientSkipped("c", 11), roundTrip(new GradientSkipped("c", 11)));
    assertEquals(new StepApplied(12), roundTrip(new StepApplied(12)));
    assertEquals(new MembershipUpdated(4, List.of("a", "c")), roundTrip(new MembershipUpdated(4, List.of("a", "c"))));
  }

  @Test
  void stateRoundTripsWithSlotsMembershipPendingContributionsAndLastSteps() {
    BlockSpec spec = spec();
    float[][] slots = {VALUES.clone(), {5f, 4f, 3f, 2f, 1f}};
    BlockState state = BlockState.restore(spec, VALUES.clone(), slots, 17, 9, 3, List.of("a", "b", "c"),
        List.of(new Contribution("a", 2f, new float[] {1f, 2f, 3f, 4f, 5f}), new Contribution("c", 0f, new float[0])),
        Map.of("a", 10L, "b", 9L, "c", 10L), 576);
    BlockState back = roundTrip(state);
    assertSameState(state, back);
    assertEquals(17, back.updates());
    assertEquals(576, back.examplesApplied());

    BlockState empty = roundTrip(new BlockState());
    assertTrue(!empty.isInitialised() && empty.version() == 0 && empty.members().isEmpty());
  }

  @Test
  void checkpointMessagesAndEventsRoundTrip() {
    TestProbe<Object> probe = kit.createTestProbe();
    BlockProtocol.Checkpoint c = roundTrip(new BlockProtocol.Checkpoint(40, 30, probe.ref().unsafeUpcast()));
    assertEquals(List.of(40L, 30L), List.of(c.step(), c.keepFrom()));
    assertEquals(probe.ref(), c.replyTo());
    BlockProtocol.ReadCheckpoint r = roundTrip(new BlockProtocol.ReadCheckpoint(40, 2, probe.ref().unsafeUpcast()));
    assertEquals(List.of(40L, 2), List.of(r.step(), r.part()));
    BlockProtocol.RollBack b = roundTrip(new BlockProtocol.RollBack(30, 2, probe.ref().unsafeUpcast()));
    assertEquals(List.of(30L, 2L), List.of(b.step(), b.generation()));
    assertEquals(new BlockProtocol.Captured("w#1", 40, 39, 2), roundTrip(new BlockProtocol.Captured("w#1", 40, 39, 2)));
    assertEquals(new BlockProtocol.RolledBack(30), roundTrip(new BlockProtocol.RolledBack(30)));
    assertEquals(new BlockEvents.RolledBackTo(30, 2), roundTrip(new BlockEvents.RolledBackTo(30, 2)));
    BlockEvents.CheckpointTaken t = roundTrip(
        new BlockEvents.CheckpointTaken(40, 30, VALUES, new float[][] {{1f, 2f, 3f, 4f, 5f}, VALUES}, 39));
    assertEquals(List.of(40L, 30L, 39L), List.of(t.step(), t.keepFrom(), t.updates()));
    assertBitsEqual(VALUES, t.values(), "CheckpointTaken values");
    assertBitsEqual(VALUES, t.slots()[1], "CheckpointTaken slot 1");
    PushGradient push = roundTrip(new PushGradient("t", 5, 4, 2, 32f, VALUES, 3, probe.ref().unsafeUpcast()));
    assertEquals(3, push.generation());
  }

  @Test
  void stateRoundTripsWithHeldCheckpointsAndGeneration() {
    BlockState state = BlockState.restore(spec(), VALUES.clone(), new float[][] {VALUES.clone()}, 7, 9, 3, List.of("a"),
        List.of(), Map.of(), 288);
    BlockState.restore(state, Map.of(5L, new BlockState.Held(VALUES, new float[][] {{5f, 4f, 3f, 2f, 1f}}, 5),
        9L, new BlockState.Held(new float[5], new float[][] {VALUES}, 9)), 4);
    BlockState back = roundTrip(state);
    assertSameState(state, back);
    assertEquals(List.of(5L, 9L), back.checkpointSteps());
    assertEquals(4, back.generation());
    assertEquals(288, back.examplesApplied());
    assertBitsEqual(new float[] {5f, 4f, 3f, 2f, 1f}, back.checkpoint(5).slots()[0], "held slot");
    assertEquals(9, back.checkpoint(9).updates());
  }

  @Test
  void malformedBytesFailNamingTheManifest() {
    PsSerializer serializer = new PsSerializer((ExtendedActorSystem) Adapter.toClassic(kit.system()));
    byte[] bytes = serializer.toBinary(new GradientReceived("a", 9, 32f, VALUES));
    NotSerializableException truncated = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(Arrays.copyOf(bytes, bytes.length - 3), PsSerializer.RECEIVED));
    assertTrue(truncated.getMessage().contains("GradientReceived"), truncated.getMessage());
    byte[] longer = Arrays.copyOf(bytes, bytes.length + 2);
    NotSerializableException trailing = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(longer, PsSerializer.RECEIVED));
    assertTrue(trailing.getMessage().contains("trailing"), trailing.getMessage());
    byte[] hugeCount = bytes.clone();
    hugeCount[1] = (byte) 0xff; // the trainer id's length, little-endian: now about 2^31
    hugeCount[4] = (byte) 0x7f;
    NotSerializableException count = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(hugeCount, PsSerializer.RECEIVED));
    assertTrue(count.getMessage().contains("GradientReceived") && count.getMessage().contains("exceeds"),
        count.getMessage());
    NotSerializableException unknown = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(bytes, "Nope"));
    assertTrue(unknown.getMessage().contains("Nope"), unknown.getMessage());
  }
}
