package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.serialization.Serializers;
import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Contributor;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.ReplicaPublished;
import io.shardtrain.actors.ps.BlockEvents.RolledBackTo;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockState.Contribution;
import java.io.NotSerializableException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.assertSameState;
import static io.shardtrain.actors.ps.SerializerTestSupport.VALUES;
import static io.shardtrain.actors.ps.SerializerTestSupport.classic;
import static io.shardtrain.actors.ps.SerializerTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JournalSerializerTest {
  private static ActorTestKit kit;

  private static final BlockProtocol.TaskMark MARK = new BlockProtocol.TaskMark(2, 1, 96);

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("JournalSerializerTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static <T> T roundTrip(T message) {
    return SerializerTestSupport.roundTrip(kit, message, JournalSerializer.IDENTIFIER);
  }

  private static JournalSerializer serializer() {
    return new JournalSerializer(classic(kit));
  }

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

  /** Format 6, as journals written before format 7 hold it. */
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
      new Stored("GradientApplied", new GradientApplied("b", 10, 0f, VALUES, MARK),
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

  /** Format 7, as journals written before format 8 hold it. */
  private static final List<Stored> STORED_7 = List.of(
      new Stored("ReplicaPublished", new ReplicaPublished(12, -1, 96, VALUES),
          "BwwAAAAAAAAAYAAAAAAAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0="),
      new Stored("Initialized", new Initialized(specPlanningExamples(), VALUES), "BwcAAABsYXllci53AwAAAAAADAAFAAAABAAAAEFEQU0AAIA+AM3MTD+kcH0/lb/WMwrXIzxvEgM7AZqZmT4bAAAAd2Fy"
          + "bXVwOjEwLGNvc2luZToxMDAwOjAuMDAxpptEOwUAAABBU1lOQwcAAAAAAAAAgAAAAAAAAAAFAAAAAADAPwAAAIABAAAA"
          + "kPT3y83MzD0="),
      new Stored("GradientApplied", new GradientApplied("b", 10, 24f, VALUES, MARK), "BwEAAABiCgAAAAAAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0BAgAAAAEAAABgAAAAAAAAAAAAwEE="),
      new Stored("CheckpointTaken", new CheckpointTaken(40, 30, VALUES, new float[][] {{1f, 2f, 3f, 4f, 5f}}, 39, 2496),
          "BygAAAAAAAAAHgAAAAAAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0BAAAABQAAAAAAgD8AAABAAABAQAAAgEAAAKBA"
          + "JwAAAAAAAADACQAAAAAAAA=="),
      new Stored("StepCommitted", new StepCommitted(12, new float[] {1.5f, -2f}, 96,
          List.of(new Contributor("a", MARK), new Contributor("b", null))), "BwwAAAAAAAAAAQIAAAAAAMA/AAAAwGAAAAAAAAAAAgAAAAEAAABhAQIAAAABAAAAYAAAAAAAAAABAAAAYgA="),
      new Stored("StepCommitted", new StepCommitted(13, null, 0, List.of(new Contributor("a", null))), "Bw0AAAAAAAAAAAAAAAAAAAAAAQAAAAEAAABhAA=="),
      new Stored("State", fullStateWithMarks(), "BwEHAAAAbGF5ZXIudwMAAAAAAAwABQAAAAQAAABBREFNAACAPgDNzEw/pHB9P5W/1jMK1yM8bxIDOwGamZk+GwAAAHdh"
          + "cm11cDoxMCxjb3NpbmU6MTAwMDowLjAwMaabRDsFAAAAQVNZTkMHAAAAAAAAAIAAAAAAAAAABQAAAAAAwD8AAACAAQAA"
          + "AJD098vNzMw9AQAAAAUAAAAAAMA/AAAAgAEAAACQ9PfLzczMPREAAAAAAAAACQAAAAAAAAADAAAAAAAAAAIAAAABAAAA"
          + "YQEAAABiAgAAAAEAAABhAAAAQAUAAAAAAIA/AAAAQAAAQEAAAIBAAACgQAECAAAAAQAAAGAAAAAAAAAAAQAAAGIAAAAA"
          + "AAAAAAACAAAAAQAAAGEKAAAAAAAAAAEAAABiCQAAAAAAAABAAgAAAAAAAAEAAAAFAAAAAAAAAAUAAAAAAMA/AAAAgAEA"
          + "AACQ9PfLzczMPQEAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0FAAAAAAAAAEABAAAAAAAAAAAAAAAAAAAAAAAA"));

  /**
   * Format 8, the format journals written today hold: the two layouts it changed. The others are
   * format 7's with the format byte 8 ({@link #asWrittenToday}).
   */
  private static final List<Stored> STORED_8 = List.of(
      new Stored("ReplicaPublished", new ReplicaPublished(12, 3, 96, VALUES),
          "CAwAAAAAAAAAYAAAAAAAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0DAAAAAAAAAA=="),
      new Stored("State", BlockState.restorePublishedEpoch(fullStateWithMarks(), 3),
          "CAEHAAAAbGF5ZXIudwMAAAAAAAwABQAAAAQAAABBREFNAACAPgDNzEw/pHB9P5W/1jMK1yM8bxIDOwGamZk+GwAAAHdh"
          + "cm11cDoxMCxjb3NpbmU6MTAwMDowLjAwMaabRDsFAAAAQVNZTkMHAAAAAAAAAIAAAAAAAAAABQAAAAAAwD8AAACAAQAA"
          + "AJD098vNzMw9AQAAAAUAAAAAAMA/AAAAgAEAAACQ9PfLzczMPREAAAAAAAAACQAAAAAAAAADAAAAAAAAAAIAAAABAAAA"
          + "YQEAAABiAgAAAAEAAABhAAAAQAUAAAAAAIA/AAAAQAAAQEAAAIBAAACgQAECAAAAAQAAAGAAAAAAAAAAAQAAAGIAAAAA"
          + "AAAAAAACAAAAAQAAAGEKAAAAAAAAAAEAAABiCQAAAAAAAABAAgAAAAAAAAEAAAAFAAAAAAAAAAUAAAAAAMA/AAAAgAEA"
          + "AACQ9PfLzczMPQEAAAAFAAAAAADAPwAAAIABAAAAkPT3y83MzD0FAAAAAAAAAEABAAAAAAAAAAAAAAAAAAAAAAAAAwAA"
          + "AAAAAAA="));

  /** A format-7 event whose layout format 8 kept, as it is written today. */
  private static Stored asWrittenToday(Stored s) {
    byte[] bytes = Base64.getDecoder().decode(s.base64());
    bytes[0] = 8;
    return new Stored(s.manifest(), s.message(), Base64.getEncoder().encodeToString(bytes));
  }

  /** {@link SerializerTestSupport#spec()} with its schedule on the examples, 128 to an update. */
  private static BlockSpec specPlanningExamples() {
    BlockSpec s = spec();
    return new BlockSpec(s.parameter(), s.index(), s.offset(), s.length(), s.optimizer(), s.lrSchedule(), s.lr(),
        s.mode(), s.maxStaleness(), 128);
  }

  private static BlockState fullStateWithMarks() {
    BlockState state = BlockState.restore(specPlanningExamples(), VALUES.clone(), new float[][] {VALUES.clone()}, 17, 9,
        3, List.of("a", "b"), List.of(new Contribution("a", 2f, new float[] {1f, 2f, 3f, 4f, 5f}, MARK),
            new Contribution("b", 0f, new float[0], null)), Map.of("a", 10L, "b", 9L), 576);
    return BlockState.restore(state, Map.of(5L, new BlockState.Held(VALUES, new float[][] {VALUES}, 5, 320)), 0);
  }

  @Test
  void storedEventsAndSnapshotsAreReadUnderTheirIdentifierAndWrittenByteForByte() {
    assertEquals(717_002, JournalSerializer.IDENTIFIER, "journals store this id with every event and snapshot");
    Serialization serialization = SerializationExtension.get(classic(kit));
    List<Stored> today = new ArrayList<>(STORED_8);
    for (Stored s : STORED_7) {
      if (!List.of("ReplicaPublished", "State").contains(s.manifest())) today.add(asWrittenToday(s));
    }
    for (Stored s : today) {
      Serializer serializer = serialization.findSerializerFor(s.message());
      assertEquals(JournalSerializer.IDENTIFIER, serializer.identifier(), s.manifest());
      assertEquals(s.manifest(), Serializers.manifestFor(serializer, s.message()), "the stored manifest");
      byte[] written = serializer.toBinary(s.message());
      assertEquals(s.base64(), Base64.getEncoder().encodeToString(written), s.manifest() + " is written as journals hold it");
      Object back = serialization.deserialize(written, JournalSerializer.IDENTIFIER, s.manifest()).get();
      assertArrayEquals(written, serializer.toBinary(back), s.manifest() + " reads back whole");
    }
    BlockState state = (BlockState) serialization.deserialize(Base64.getDecoder().decode(STORED_8.get(1).base64()),
        JournalSerializer.IDENTIFIER, "State").get();
    assertEquals(MARK, state.pending().get(0).mark());
    assertNull(state.pending().get(1).mark());
    assertEquals(3, state.publishedEpoch);
  }

  @Test
  void formatSevenEventsAndSnapshotsAreReadWithoutARingEpoch() {
    Serialization serialization = SerializationExtension.get(classic(kit));
    for (Stored s : STORED_7) {
      Serializer serializer = serialization.findSerializerFor(s.message());
      Object back = serialization.deserialize(Base64.getDecoder().decode(s.base64()), JournalSerializer.IDENTIFIER,
          s.manifest()).get();
      assertArrayEquals(serializer.toBinary(s.message()), serializer.toBinary(back), s.manifest() + " reads back whole");
      if (back instanceof ReplicaPublished p) assertEquals(-1, p.ringEpoch());
      if (back instanceof BlockState state) assertEquals(-1, state.publishedEpoch);
    }
  }

  @Test
  void formatSixEventsAndSnapshotsAreStillRead() {
    Serialization serialization = SerializationExtension.get(classic(kit));
    for (Stored s : STORED) {
      byte[] bytes = Base64.getDecoder().decode(s.base64());
      Serializer serializer = serialization.findSerializerFor(s.message());
      assertEquals(s.manifest(), Serializers.manifestFor(serializer, s.message()), "the stored manifest");
      Object back = serialization.deserialize(bytes, JournalSerializer.IDENTIFIER, s.manifest()).get();
      // Read into what it was written from (what format 7 added has its old default).
      assertArrayEquals(serializer.toBinary(s.message()), serializer.toBinary(back), s.manifest() + " reads back whole");
      if (back instanceof BlockState state) assertSameState((BlockState) s.message(), state);
    }
  }

  @Test
  void eventsRoundTrip() {
    Initialized init = roundTrip(new Initialized(spec(), VALUES));
    assertEquals(spec(), init.spec());
    assertBitsEqual(VALUES, init.values(), "Initialized values");
    GradientReceived received = roundTrip(new GradientReceived("a", 9, 32f, VALUES));
    assertEquals(List.of("a", 9L, 32f), List.of(received.trainerId(), received.step(), received.weight()));
    assertBitsEqual(VALUES, received.values(), "GradientReceived values");
    GradientApplied applied = roundTrip(new GradientApplied("b", 10, 24f, VALUES, null));
    assertEquals(List.of("b", 10L, 24f), List.of(applied.trainerId(), applied.step(), applied.weight()));
    assertBitsEqual(VALUES, applied.values(), "GradientApplied values");
    assertEquals(new GradientSkipped("c", 11), roundTrip(new GradientSkipped("c", 11)));
    assertEquals(new StepApplied(12), roundTrip(new StepApplied(12)));
    assertEquals(new MembershipUpdated(4, List.of("a", "c")), roundTrip(new MembershipUpdated(4, List.of("a", "c"))));
  }

  @Test
  void checkpointEventsRoundTrip() {
    assertEquals(new RolledBackTo(30, 2), roundTrip(new RolledBackTo(30, 2)));
    CheckpointTaken t = roundTrip(
        new CheckpointTaken(40, 30, VALUES, new float[][] {{1f, 2f, 3f, 4f, 5f}, VALUES}, 39, 2496));
    assertEquals(List.of(40L, 30L, 39L, 2496L), List.of(t.step(), t.keepFrom(), t.updates(), t.examples()));
    assertBitsEqual(VALUES, t.values(), "CheckpointTaken values");
    assertBitsEqual(VALUES, t.slots()[1], "CheckpointTaken slot 1");
    BlockEvents.Resumed r = roundTrip(new BlockEvents.Resumed(specPlanningExamples(), 40, VALUES,
        new float[][] {{1f, 2f, 3f, 4f, 5f}, VALUES}, 39, 2496));
    assertEquals(specPlanningExamples(), r.spec());
    assertEquals(List.of(40L, 39L, 2496L), List.of(r.step(), r.updates(), r.examples()));
    assertBitsEqual(VALUES, r.values(), "Resumed values");
    assertBitsEqual(new float[] {1f, 2f, 3f, 4f, 5f}, r.slots()[0], "Resumed slot 0");
    assertBitsEqual(VALUES, r.slots()[1], "Resumed slot 1");
  }

  @Test
  void taskMarksRoundTripInEventsAndState() {
    BlockProtocol.TaskMark mark = new BlockProtocol.TaskMark(2, 1, 96);
    assertEquals(mark, roundTrip(new GradientReceived("a", 9, 32f, VALUES, mark)).mark());
    assertEquals(mark, roundTrip(new GradientApplied("a", 9, 32f, VALUES, mark)).mark());
    assertEquals(new GradientSkipped("a", 9, mark), roundTrip(new GradientSkipped("a", 9, mark)));

    BlockState state = BlockState.restore(spec(), VALUES.clone(), new float[0][], 4, 4, 1, List.of("a"), List.of(), Map.of(), 0);
    BlockState.restoreMarks(state, Map.of(BlockState.taskKey(2, 1), new BlockProtocol.TaskProgress(96, 5),
        BlockState.taskKey(3, 0), new BlockProtocol.TaskProgress(32, 6)));
    BlockState back = roundTrip(state);
    assertEquals(new BlockProtocol.TaskProgress(96, 5), back.taskProgress(2, 1));
    assertEquals(new BlockProtocol.TaskProgress(32, 6), back.taskProgress(3, 0));
    assertEquals(new BlockProtocol.TaskProgress(0, 0), back.taskProgress(3, 1));
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
  void formatOnePayloadsAreStillRead() throws Exception {
    JournalSerializer serializer = serializer();
    byte[] now = serializer.toBinary(new GradientReceived("a", 9, 32f, VALUES));
    assertEquals(8, now[0], "current format version");
    // Formats before 4 had no task mark (here: its presence byte, last).
    byte[] event = Arrays.copyOf(now, now.length - 1);
    event[0] = 1;
    GradientReceived received = (GradientReceived) serializer.fromBinary(event, "GradientReceived");
    assertBitsEqual(VALUES, received.values(), "format 1 GradientReceived values");

    byte[] unknown = now.clone();
    unknown[0] = 9;
    NotSerializableException e = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(unknown, "GradientReceived"));
    assertTrue(e.getMessage().contains("format version 9"), e.getMessage());
  }

  @Test
  void formatTwoSnapshotsAreReadWithoutAnExampleCount() throws Exception {
    // Format 2 ended before the example count (8 bytes), the held checkpoints (none: a 4-byte count),
    // the rollback generation (8 bytes), the task marks (none: a 4-byte count) and the ring epoch (8 bytes).
    BlockState old = olderSnapshot(32, 2);
    assertEquals(List.of(4L, 0L), List.of(old.version(), old.examplesApplied()));
  }

  /**
   * A snapshot written now with its last {@code cut} bytes dropped, read back as format
   * {@code format} (before 7: also without the spec's examples per update, its last 8 bytes).
   */
  private static BlockState olderSnapshot(int cut, int format) throws Exception {
    JournalSerializer serializer = serializer();
    BlockState state = BlockState.restore(spec(), VALUES.clone(), new float[0][], 4, 4, 1, List.of("a"), List.of(),
        Map.of("a", 4L), 128);
    byte[] now = serializer.toBinary(state);
    // Initialized is the format byte, the spec, and the values' count (4 bytes) with no values.
    int specEnd = 2 + serializer.toBinary(new Initialized(spec(), new float[0])).length - 1 - 4;
    byte[] old = new byte[now.length - 8 - cut];
    System.arraycopy(now, 0, old, 0, specEnd - 8);
    System.arraycopy(now, specEnd, old, specEnd - 8, old.length - (specEnd - 8));
    old[0] = (byte) format;
    return (BlockState) serializer.fromBinary(old, "State");
  }

  @Test
  void formatThreePayloadsAreReadWithoutTaskMarks() throws Exception {
    JournalSerializer serializer = serializer();
    // Format 3 ended before the mark's presence byte (events) or the marks' count and the ring epoch (state).
    byte[] received = serializer.toBinary(new GradientReceived("a", 9, 32f, VALUES));
    byte[] v3 = Arrays.copyOf(received, received.length - 1);
    v3[0] = 3;
    GradientReceived old = (GradientReceived) serializer.fromBinary(v3, "GradientReceived");
    assertEquals(List.of("a", 9L, 32f), List.of(old.trainerId(), old.step(), old.weight()));
    assertNull(old.mark());
    BlockState back = olderSnapshot(12, 3);
    assertEquals(List.of(4L, 128L, 0L), List.of(back.version(), back.examplesApplied(), back.taskProgress(0, 0).offset()));
  }

  @Test
  void malformedBytesFailNamingTheManifest() {
    JournalSerializer serializer = serializer();
    byte[] bytes = serializer.toBinary(new GradientReceived("a", 9, 32f, VALUES));
    NotSerializableException truncated = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(Arrays.copyOf(bytes, bytes.length - 3), "GradientReceived"));
    assertTrue(truncated.getMessage().contains("GradientReceived"), truncated.getMessage());
    byte[] longer = Arrays.copyOf(bytes, bytes.length + 2);
    NotSerializableException trailing = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(longer, "GradientReceived"));
    assertTrue(trailing.getMessage().contains("trailing"), trailing.getMessage());
    byte[] hugeCount = bytes.clone();
    hugeCount[1] = (byte) 0xff; // the trainer id's length, little-endian: now about 2^31
    hugeCount[4] = (byte) 0x7f;
    NotSerializableException count = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(hugeCount, "GradientReceived"));
    assertTrue(count.getMessage().contains("GradientReceived") && count.getMessage().contains("exceeds"),
        count.getMessage());
    NotSerializableException unknown = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(bytes, "Nope"));
    assertTrue(unknown.getMessage().contains("Nope"), unknown.getMessage());
  }
}
