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
    serialization.verifySerialization(new RingLink.ChunkLetter(peer.ref(), 12, 3, 1, 128, true), true);

    float[] values = {1.5f, -0f, Float.MIN_VALUE, 3e38f};
    RingLink.ChunkArrived back = serialization.verifySerialization(
        new RingLink.ChunkArrived(12, 3, 2, 128, false, values), false);
    assertEquals("12 3 2 128 false", back.step() + " " + back.bucket() + " " + back.phase() + " " + back.examples()
        + " " + back.leaving());
    assertArrayEquals(values, back.values());
  }
}
