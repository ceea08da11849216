package io.shardtrain.actors.ps;

import static io.shardtrain.actors.ps.SerializerTestSupport.VALUES;
import static io.shardtrain.actors.ps.SerializerTestSupport.spec;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.shardtrain.actors.SerializerFuzzing;
import io.shardtrain.actors.SerializerFuzzing.Input;
import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.WirePrecision;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The parameter server's serializers on hostile bytes: {@link WireSerializer} (what other nodes
 * send, over Artery or in bulk letters) and {@link JournalSerializer} (what a journal hands back).
 */
class PsSerializersFuzzTest {
  private static ActorTestKit kit;
  private static List<SerializerFuzzing.Seed> wire;
  private static List<SerializerFuzzing.Seed> journal;

  @BeforeContainer
  static void start() {
    kit = ActorTestKit.create("PsSerializersFuzzTest", BlockTestSupport.CONFIG);
    ActorRef<Object> ref = kit.createTestProbe().ref();
    TaskMark mark = new TaskMark(2, 1, 96);
    BulkAddress bulk = new BulkAddress("127.0.0.1", 25520);
    BlockProtocol.PushGradient push = new BlockProtocol.PushGradient("t-1", 42, 41, 3, 64f, VALUES, 2, mark,
        ref.unsafeUpcast(), WirePrecision.BF16);
    BlockProtocol.BlockValues values = new BlockProtocol.BlockValues("layer.w", 3, 786_432, 9, VALUES, bulk,
        ref.unsafeUpcast());
    wire = SerializerFuzzing.seeds(kit.system(), List.of(
        new BlockProtocol.Initialize(spec(), VALUES, ref.unsafeUpcast()), push,
        new BlockProtocol.Pull(17, bulk, ref.unsafeUpcast()),
        new BlockProtocol.UpdateMembership(5, List.of("a", "b"), ref.unsafeUpcast()),
        new BlockProtocol.Publish("t-1", 300, 4, 19_200, VALUES, ref.unsafeUpcast()),
        new BlockProtocol.Checkpoint(40, 30, ref.unsafeUpcast()), new BlockProtocol.ReadCheckpoint(40, 1, ref.unsafeUpcast()),
        new BlockProtocol.Applied(7), values,
        new BlockLetters.PushLetter(ref.unsafeUpcast(), bulk, push.withValues(null)),
        new BlockLetters.AckLetter(ref.unsafeUpcast(), new BlockProtocol.Stale(3)),
        new BlockLetters.ValuesLetter(ref.unsafeUpcast(), values.withValues(null))));
    journal = SerializerFuzzing.seeds(kit.system(), List.of(
        new Initialized(spec(), VALUES), new GradientReceived("a", 3, 2f, VALUES, mark),
        new GradientApplied("b", 10, 24f, VALUES, mark),
        new StepCommitted(4, VALUES, 96, List.of(new BlockEvents.Contributor("a", mark))),
        new MembershipUpdated(2, List.of("a", "b")),
        new CheckpointTaken(40, 30, VALUES, new float[][] {{1f, 2f, 3f, 4f, 5f}}, 39, 2496), state()));
  }

  private static BlockState state() {
    BlockState s = BlockState.restore(spec(), VALUES.clone(), new float[][] {VALUES.clone()}, 17, 9, 3,
        List.of("a", "b"), List.of(new BlockState.Contribution("a", 2f, VALUES.clone(), null)), Map.of("a", 10L), 576);
    BlockState.restore(s, Map.of(5L, new BlockState.Held(VALUES, new float[][] {VALUES}, 5, 64)), 4);
    return BlockState.restoreMarks(s, Map.of(BlockState.taskKey(2, 1), new BlockProtocol.TaskProgress(96, 5)));
  }

  @AfterContainer
  static void stop() {
    kit.shutdownTestKit();
  }

  @Property
  void wireMessagesAreReadOrRefused(@ForAll("wire") Input in) {
    SerializerFuzzing.readsOrRefuses(in);
  }

  @Provide
  Arbitrary<Input> wire() {
    return SerializerFuzzing.inputs(wire);
  }

  @Property
  void journalEntriesAreReadOrRefused(@ForAll("journal") Input in) {
    SerializerFuzzing.readsOrRefuses(in);
  }

  @Provide
  Arbitrary<Input> journal() {
    return SerializerFuzzing.inputs(journal);
  }
}
