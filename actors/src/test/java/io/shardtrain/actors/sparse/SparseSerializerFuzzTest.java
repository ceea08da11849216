package io.shardtrain.actors.sparse;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.shardtrain.actors.SerializerFuzzing;
import io.shardtrain.actors.SerializerFuzzing.Input;
import io.shardtrain.actors.sparse.SparseEvents.GradientApplied;
import io.shardtrain.actors.sparse.SparseEvents.RowsSaved;
import io.shardtrain.actors.sparse.SparseEvents.ShardHeader;
import io.shardtrain.actors.sparse.SparseEvents.ShardInitialized;
import io.shardtrain.actors.sparse.SparseEvents.SketchSaved;
import io.shardtrain.actors.sparse.SparseEvents.StepCommitted;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** {@link SparseSerializer} on hostile bytes: the sparse shards' messages, events and snapshot header. */
class SparseSerializerFuzzTest {
  private static ActorTestKit kit;
  private static List<SerializerFuzzing.Seed> seeds;

  @BeforeContainer
  static void start() {
    kit = ActorTestKit.create("SparseSerializerFuzzTest");
    ActorRef<Object> ref = kit.createTestProbe().ref();
    float[] values = {1.5f, -0f, 7f};
    TableSpec spec = new TableSpec("emb", 8, 1L << 40, 3, new RowInit(RowInit.Kind.NORMAL, 0.01f, -9),
        RowOptimizer.ftrl(0.05f, 0.001f, 0.2f, 1f), TableSpec.Mode.ASYNC, 4, 3, 2, 1 << 20, 500);
    seeds = SerializerFuzzing.seeds(kit.system(), List.of(
        new SparseProtocol.InitShard(spec, 2, ref.unsafeUpcast()),
        new SparseProtocol.PullRows(new long[] {3, 9}, 4, ref.unsafeUpcast()),
        new SparseProtocol.PushRows("a", 3, 2, 8f, new long[] {3}, values, ref.unsafeUpcast()),
        new SparseProtocol.Rows("emb", 2, 5, new long[] {3}, values),
        new SparseProtocol.Refused(SparseProtocol.Problem.values()[0], "no"),
        new ShardInitialized(spec, 5),
        new StepCommitted(7, 1, 3, new long[] {3, 9}, values, new int[] {1, 2}, 96, List.of("a", "b")),
        new GradientApplied("a", 4, 0, 1, 32f, new long[] {3}, values),
        new RowsSaved(3, new long[] {5}, values, new long[] {10}), new SketchSaved(3, 4096, new int[] {0, 1}),
        new ShardHeader(spec, 5, 12, 2, List.of("a", "b"), Map.of("a", 4L, "b", 7L), 96, 10, 20, 30, 3, 118)));
  }

  @AfterContainer
  static void stop() {
    kit.shutdownTestKit();
  }

  @Property
  void sparseMessagesAreReadOrRefused(@ForAll("sparse") Input in) {
    SerializerFuzzing.readsOrRefuses(in);
  }

  @Provide
  Arbitrary<Input> sparse() {
    return SerializerFuzzing.inputs(seeds);
  }
}
