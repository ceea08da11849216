package io.shardtrain.actors.trainer;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.shardtrain.actors.SerializerFuzzing;
import io.shardtrain.actors.SerializerFuzzing.Input;
import io.shardtrain.actors.transport.BulkAddress;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** {@link RingSerializer} on hostile bytes: what all-reduce ring members send each other. */
class RingSerializerFuzzTest {
  private static ActorTestKit kit;
  private static List<SerializerFuzzing.Seed> seeds;

  @BeforeContainer
  static void start() {
    kit = ActorTestKit.create("RingSerializerFuzzTest");
    ActorRef<Trainer.Command> peer = kit.<Trainer.Command>createTestProbe().ref();
    float[] values = {1.5f, -0f, 3f};
    long[] marks = {1, 2, 3};
    seeds = SerializerFuzzing.seeds(kit.system(), List.of(
        new RingLink.Hello("t2", peer, new BulkAddress("127.0.0.1", 25521)),
        new RingLink.ChunkLetter(peer, 5, 12, 3, 1, 128, true, marks),
        new RingLink.ChunkArrived(7, 12, 3, 2, 128, false, values, marks), new RingLink.Sync(4, "t1", 310, true),
        new RingLink.PartLetter(peer, 4, 310, 2), new RingLink.TransferPart(4, 310, 2, values),
        new RingLink.TransferEnd(4, 310, 6, 19_840, 310, false, List.of("t2"), marks)));
  }

  @AfterContainer
  static void stop() {
    kit.shutdownTestKit();
  }

  @Property
  void ringMessagesAreReadOrRefused(@ForAll("ring") Input in) {
    SerializerFuzzing.readsOrRefuses(in);
  }

  @Provide
  Arbitrary<Input> ring() {
    return SerializerFuzzing.inputs(seeds);
  }
}
