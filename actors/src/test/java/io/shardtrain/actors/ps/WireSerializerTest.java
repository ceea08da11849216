package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.serialization.SerializationExtension;
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
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.actors.transport.WireTimings;
import java.io.NotSerializableException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.SerializerTestSupport.VALUES;
import static io.shardtrain.actors.ps.SerializerTestSupport.classic;
import static io.shardtrain.actors.ps.SerializerTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WireSerializerTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("WireSerializerTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static <T> T roundTrip(T message) {
    return SerializerTestSupport.roundTrip(kit, message, WireSerializer.IDENTIFIER);
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

    BlockProtocol.Publish publish = roundTrip(new BlockProtocol.Publish("t-1", 300, 4, 19_200, VALUES,
        probe.ref().unsafeUpcast()));
    assertEquals(List.of("t-1", 300L, 4L, 19_200L),
        List.of(publish.trainerId(), publish.step(), publish.ringEpoch(), publish.examples()));
    assertBitsEqual(VALUES, publish.values(), "Publish values");
    assertEquals(probe.ref(), publish.replyTo());
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
    BlockStats stats = new BlockStats("layer.w#3", true, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
        List.of("b", "c"), 15, 16, 17, 18, 19, 20,
        "gradient of length 3 from trainer b does not match block layer.w#3 of length 4", 21);
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
    BlockLetters.PushLetter push = roundTrip(new BlockLetters.PushLetter(block.ref(), address,
        new PushGradient("t-2", 7, 6, 3, 64f, null, 2, mark, probe.ref().unsafeUpcast())));
    assertEquals(block.ref(), push.block());
    assertEquals(address, push.replyBulk());
    PushGradient p = push.push();
    assertEquals(List.of("t-2", 7L, 6L, 3L, 64f, 2L), List.of(p.trainerId(), p.step(), p.baseVersion(),
        p.membershipEpoch(), p.weight(), p.generation()));
    assertEquals(mark, p.mark());
    assertNull(p.values(), "the gradient travels as the frame's floats");
    assertEquals(probe.ref(), p.replyTo());

    BlockLetters.PullLetter pull = new BlockLetters.PullLetter(block.ref(),
        new Pull(11, address, probe.ref().unsafeUpcast()));
    assertEquals(pull, roundTrip(pull));

    for (BlockProtocol.PushAck ack : List.<BlockProtocol.PushAck>of(new Applied(3), new Accepted(4),
        new Duplicate(5), new Stale(6), new Skipped(7), new BlockProtocol.RolledBack(8))) {
      BlockLetters.AckLetter letter = new BlockLetters.AckLetter(probe.ref().unsafeUpcast(), ack);
      assertEquals(letter, roundTrip(letter));
    }

    BlockLetters.PublishLetter publish = roundTrip(new BlockLetters.PublishLetter(block.ref(),
        new BlockProtocol.Publish("t-3", 200, 6, 12_800, null, probe.ref().unsafeUpcast())));
    assertEquals(block.ref(), publish.block());
    BlockProtocol.Publish kept = (BlockProtocol.Publish) publish.open(VALUES);
    assertEquals(List.of("t-3", 200L, 6L, 12_800L),
        List.of(kept.trainerId(), kept.step(), kept.ringEpoch(), kept.examples()));
    assertBitsEqual(VALUES, kept.values(), "a publish letter opens to its frame's floats");
    assertEquals(probe.ref(), kept.replyTo());

    BlockLetters.ValuesLetter values = roundTrip(new BlockLetters.ValuesLetter(probe.ref().unsafeUpcast(),
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
  void aPullThatTravelsWithAPushAndTheValuesThatComeBackWithItsAckRoundTrip() {
    TestProbe<Object> probe = kit.createTestProbe();
    TestProbe<BlockProtocol.Command> block = kit.createTestProbe();
    BulkAddress address = new BulkAddress("10.1.2.5", 40_300);
    for (BlockProtocol.ValuesWanted wanted : Arrays.asList(new BlockProtocol.ValuesWanted(7, address),
        new BlockProtocol.ValuesWanted(0, null), null)) {
      PushGradient push = roundTrip(new PushGradient("t", 7, 6, 3, 64f, VALUES, 2, null, probe.ref().unsafeUpcast(),
          WirePrecision.FP32, wanted));
      assertEquals(wanted, push.wanted());
      assertBitsEqual(VALUES, push.values(), "the gradient beside a wanted version");
      BlockLetters.PushLetter letter = roundTrip(new BlockLetters.PushLetter(block.ref(), address,
          new PushGradient("t", 7, 6, 3, 64f, null, 2, null, probe.ref().unsafeUpcast(), WirePrecision.BF16, wanted)));
      assertEquals(wanted, letter.push().wanted());
    }

    // Inline (over Artery): the ack and the values, floats included.
    BlockProtocol.WithValues inline = roundTrip(new BlockProtocol.WithValues(new Accepted(7),
        new BlockValues("layer.w", 2, 16_384, 7, VALUES, address, block.ref())));
    assertEquals(new Accepted(7), inline.ack());
    assertEquals(List.of("layer.w", 2, 16_384, 7L), List.of(inline.values().parameter(), inline.values().index(),
        inline.values().offset(), inline.values().version()));
    assertBitsEqual(VALUES, inline.values().values(), "values with an inline ack");
    assertEquals(block.ref(), inline.values().block());

    // By letter: the values travel as the frame's floats, and the letter opens to the whole reply.
    BlockLetters.AckLetter letter = roundTrip(new BlockLetters.AckLetter(probe.ref().unsafeUpcast(),
        new BlockProtocol.WithValues(new Applied(9), new BlockValues("b", 0, 0, 9, null, address, block.ref()))));
    BlockProtocol.WithValues carried = (BlockProtocol.WithValues) letter.ack();
    assertEquals(new Applied(9), carried.ack());
    assertNull(carried.values().values(), "the values travel as the frame's floats");
    assertEquals(address, carried.values().node());
    BlockProtocol.WithValues opened = (BlockProtocol.WithValues)
        ((akka.pattern.StatusReply<?>) letter.open(VALUES)).getValue();
    assertBitsEqual(VALUES, opened.values().values(), "an ack letter opens to its frame's floats");
    assertEquals(9, opened.version());
  }

  @Test
  void aBf16PushTravelsInTwoBytesPerValueAndArrivesAsTheRoundedFp32Values() {
    TestProbe<Object> probe = kit.createTestProbe();
    // A tie down to even, a tie up to even, pi, signed zero, NaN, an infinity, a value bf16 holds exactly.
    float[] gradient = {1.00390625f, 1.01171875f, (float) Math.PI, -0f, Float.NaN, Float.NEGATIVE_INFINITY, -2.5f};
    float[] expected = {1f, 1.015625f, 3.140625f, -0f, Float.NaN, Float.NEGATIVE_INFINITY, -2.5f};
    WireSerializer serializer = new WireSerializer(classic(kit));
    PushGradient fp32 = new PushGradient("t", 5, 4, 2, 32f, gradient, 3, null, probe.ref().unsafeUpcast());
    PushGradient bf16 = new PushGradient("t", 5, 4, 2, 32f, gradient, 3, null, probe.ref().unsafeUpcast(),
        WirePrecision.BF16);
    assertEquals(2 * gradient.length, serializer.toBinary(fp32).length - serializer.toBinary(bf16).length,
        "two bytes fewer per value");
    PushGradient back = roundTrip(bf16);
    assertEquals(WirePrecision.BF16, back.precision());
    assertBitsEqual(expected, back.values(), "bf16 push values decoded to fp32");
    assertEquals(List.of(5L, 4L, 2L, 32f, 3L), List.of(back.step(), back.baseVersion(), back.membershipEpoch(),
        back.weight(), back.generation()));
    PushGradient plain = roundTrip(fp32);
    assertEquals(WirePrecision.FP32, plain.precision());
    assertBitsEqual(gradient, plain.values(), "fp32 push values bit-exact");
  }

  @Test
  void taskMarksRoundTripInPushesAndQueries() {
    TestProbe<Object> probe = kit.createTestProbe();
    BlockProtocol.TaskMark mark = new BlockProtocol.TaskMark(2, 1, 96);
    PushGradient push = roundTrip(new PushGradient("t", 5, 4, 2, 32f, VALUES, 3, mark, probe.ref().unsafeUpcast()));
    assertEquals(mark, push.mark());
    assertEquals(3, push.generation());
    BlockProtocol.GetTaskMark get = new BlockProtocol.GetTaskMark(2, 1, probe.ref().unsafeUpcast());
    assertEquals(get, roundTrip(get));
    assertEquals(new BlockProtocol.TaskProgress(96, 5), roundTrip(new BlockProtocol.TaskProgress(96, 5)));
  }

  @Test
  void checkpointMessagesRoundTrip() {
    TestProbe<Object> probe = kit.createTestProbe();
    BlockProtocol.Checkpoint c = roundTrip(new BlockProtocol.Checkpoint(40, 30, probe.ref().unsafeUpcast()));
    assertEquals(List.of(40L, 30L), List.of(c.step(), c.keepFrom()));
    assertEquals(probe.ref(), c.replyTo());
    BlockProtocol.ReadCheckpoint r = roundTrip(new BlockProtocol.ReadCheckpoint(40, 2, probe.ref().unsafeUpcast()));
    assertEquals(List.of(40L, 2), List.of(r.step(), r.part()));
    BlockProtocol.RollBack b = roundTrip(new BlockProtocol.RollBack(30, 2, probe.ref().unsafeUpcast()));
    assertEquals(List.of(30L, 2L), List.of(b.step(), b.generation()));
    assertEquals(new BlockProtocol.Captured("w#1", 40, 39, 2, 1248), roundTrip(new BlockProtocol.Captured("w#1", 40, 39, 2, 1248)));
    assertEquals(new BlockProtocol.RolledBack(30), roundTrip(new BlockProtocol.RolledBack(30)));
    BlockProtocol.Resume resume = roundTrip(new BlockProtocol.Resume(new BlockEvents.Resumed(spec(), 40, VALUES,
        new float[][] {VALUES}, 39, 1248), probe.ref().unsafeUpcast()));
    assertEquals(List.of(spec(), 40L, 39L, 1248L),
        List.of(resume.state().spec(), resume.state().step(), resume.state().updates(), resume.state().examples()));
    assertBitsEqual(VALUES, resume.state().values(), "Resume values");
    assertBitsEqual(VALUES, resume.state().slots()[0], "Resume slot 0");
    assertEquals(probe.ref(), resume.replyTo());
    PushGradient push = roundTrip(new PushGradient("t", 5, 4, 2, 32f, VALUES, 3, probe.ref().unsafeUpcast()));
    assertEquals(3, push.generation());
  }

  @Test
  void aMessageFromANodeOfAnotherVersionIsRefusedNamingWhy() throws Exception {
    TestProbe<Object> probe = kit.createTestProbe();
    WireSerializer serializer = new WireSerializer(classic(kit));
    byte[] push = serializer.toBinary(new PushGradient("t", 3, 2, 1, 8f, VALUES, probe.ref().unsafeUpcast()));
    push[0] = 2;
    NotSerializableException e = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(push, "PushGradient"));
    assertTrue(e.getMessage().contains("PushGradient") && e.getMessage().contains("format version 2")
        && e.getMessage().contains("another version"), e.getMessage());

    // A node of an older version sends its wire messages under the journal serializer's id.
    byte[] ack = serializer.toBinary(new Applied(3));
    ack[0] = 6;
    Throwable old = SerializationExtension.get(classic(kit))
        .deserialize(ack, JournalSerializer.IDENTIFIER, "Applied").failed().get();
    assertTrue(old instanceof NotSerializableException && old.getMessage().contains("'Applied'"), old.toString());
  }

  @Test
  void malformedBytesFailNamingTheManifest() {
    WireSerializer serializer = new WireSerializer(classic(kit));
    byte[] bytes = serializer.toBinary(new BlockProtocol.Captured("w#1", 40, 39, 2, 1248));
    NotSerializableException truncated = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(Arrays.copyOf(bytes, bytes.length - 1), "Captured"));
    assertTrue(truncated.getMessage().contains("Captured") && truncated.getMessage().contains("truncated"),
        truncated.getMessage());
    NotSerializableException unknown = assertThrows(NotSerializableException.class,
        () -> serializer.fromBinary(bytes, "GradientReceived"));
    assertTrue(unknown.getMessage().contains("GradientReceived"), unknown.getMessage());
    assertThrows(IllegalArgumentException.class, () -> serializer.toBinary(new BlockEvents.StepApplied(1)));
  }

  @Test
  void wireMessagesCountInWireTimingsOnlyWhileTheyAreOnAndJournalEventsNever() throws Exception {
    TestProbe<Object> probe = kit.createTestProbe();
    WireSerializer wire = new WireSerializer(classic(kit));
    JournalSerializer journal = new JournalSerializer(classic(kit));
    PushGradient push = new PushGradient("t", 3, 2, 1, 8f, VALUES, probe.ref().unsafeUpcast());
    long sentBytes;
    WireTimings.reset();
    try {
      wire.fromBinary(wire.toBinary(push), "PushGradient");
      assertEquals(0, WireTimings.snapshot().get(WireTimings.Kind.SERIALIZE).calls(), "off: nothing counted");

      WireTimings.enable(true);
      byte[] pushBytes = wire.toBinary(push);
      wire.fromBinary(pushBytes, "PushGradient");
      byte[] appliedBytes = wire.toBinary(new Applied(4));
      sentBytes = pushBytes.length + appliedBytes.length;
      journal.fromBinary(journal.toBinary(new BlockEvents.StepApplied(12)), journal.manifest(
          new BlockEvents.StepApplied(12)));
    } finally {
      WireTimings.enable(false);
    }
    Map<WireTimings.Kind, WireTimings.Figure> t = WireTimings.snapshot();
    assertEquals(2, t.get(WireTimings.Kind.SERIALIZE).calls());
    assertEquals(1, t.get(WireTimings.Kind.DESERIALIZE).calls());
    assertTrue(t.get(WireTimings.Kind.SERIALIZE).nanos() > 0, t.toString());
    assertEquals(0, t.get(WireTimings.Kind.COPY_OUT).calls(), "no bulk frame was written");
    assertEquals(sentBytes, WireTimings.bytesSent(), "the two wire messages' bytes, not the journal event's");
  }
}
