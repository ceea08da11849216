package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import io.shardtrain.actors.transport.BulkAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What ring members send each other crosses nodes intact. */
class RingLinkSerializationTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("RingLinkSerializationTest");
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void helloChunksAndChunkLettersSurviveSerialization() {
    TestProbe<Trainer.Command> peer = kit.createTestProbe();
    var serialization = kit.serializationTestKit();
    serialization.verifySerialization(new RingLink.Hello("t2", peer.ref(), new BulkAddress("127.0.0.1", 25521)), true);
    serialization.verifySerialization(new RingLink.Hello("t3", peer.ref(), null), true);
    long[] marks = {0, 1, 3, 640, 2, 1, 4, 96};
    RingLink.ChunkLetter letter = serialization.verifySerialization(
        new RingLink.ChunkLetter(peer.ref(), 5, 12, 3, 1, 128, true, marks), false);
    assertEquals(peer.ref(), letter.recipient());
    assertEquals("5 12 3 1 128 true", letter.epoch() + " " + letter.step() + " " + letter.bucket() + " "
        + letter.phase() + " " + letter.examples() + " " + letter.leaving());
    assertArrayEquals(marks, letter.marks());

    float[] values = {1.5f, -0f, Float.MIN_VALUE, 3e38f};
    RingLink.ChunkArrived back = serialization.verifySerialization(
        new RingLink.ChunkArrived(7, 12, 3, 2, 128, false, values, new long[0]), false);
    assertEquals("7 12 3 2 128 false", back.epoch() + " " + back.step() + " " + back.bucket() + " " + back.phase()
        + " " + back.examples() + " " + back.leaving());
    assertArrayEquals(values, back.values());
    assertEquals(0, back.marks().length);
  }

  @Test
  void syncsAndReplicaTransfersSurviveSerialization() {
    TestProbe<Trainer.Command> peer = kit.createTestProbe();
    var serialization = kit.serializationTestKit();
    serialization.verifySerialization(new RingLink.Sync(4, "t1", 310, true), true);
    serialization.verifySerialization(new RingLink.LeavesAfter("t1", 938), true);
    serialization.verifySerialization(new RingLink.AppliedUpTo("t2", 938), true);
    serialization.verifySerialization(new RingLink.PartLetter(peer.ref(), 4, 310, 2), true);
    float[] values = {0.25f, -7f};
    RingLink.TransferPart part = serialization.verifySerialization(new RingLink.TransferPart(4, 310, 2, values), false);
    assertEquals("4 310 2", part.epoch() + " " + part.step() + " " + part.index());
    assertArrayEquals(values, part.values());
    long[] marks = {1, 3, 640, 309};
    RingLink.TransferEnd end = serialization.verifySerialization(
        new RingLink.TransferEnd(4, 310, 6, 19_840, 310, false, java.util.List.of("t2"), marks), false);
    assertEquals("4 310 6 19840 310 false [t2]", end.epoch() + " " + end.step() + " " + end.parts() + " "
        + end.examplesApplied() + " " + end.updates() + " " + end.leaving() + " " + end.markTrainers());
    assertArrayEquals(marks, end.marks());
  }
}
