package io.shardtrain.actors.master;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shardtrain.actors.SerializerFuzzing;
import io.shardtrain.actors.SerializerFuzzing.Input;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.TrainerNotice;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The control messages, events and snapshots in Akka's Jackson CBOR serializer, on hostile bytes.
 * Jackson refuses with assorted exceptions (parse errors, mismatched input, a record's own check),
 * which Artery and the journal log and drop; what must never happen is an Error (a stack overflow,
 * no memory) or a large allocation.
 */
class CborFuzzTest {
  private static ActorTestKit kit;
  private static List<SerializerFuzzing.Seed> seeds;

  @BeforeContainer
  static void start() {
    kit = ActorTestKit.create("CborFuzzTest");
    var committed = new MasterState.CommittedCheckpoint(40, "/tmp/ckpt", List.of(new MasterState.TaskOffset(0, 1, 640)),
        0, 1280, Map.of("a", 40L));
    seeds = SerializerFuzzing.seeds(kit.system(), List.of(
        new JobProtocol.Registration(MasterTest.job(), 3, List.of("a", "b"), 42, 1),
        new JobProtocol.Lease(1, 0, 0, 50, 20, Map.of("w#0", 28L)),
        new JobProtocol.JobStatus("job-1", true, true, false, false, 1, 4, List.of("a"), 120, List.of("1/0@20 -> a"),
            List.of(new JobProtocol.TrainerProgress("a", kit.<TrainerNotice>createTestProbe().ref(), 1, 0, 20, 50, 3)),
            MasterTest.job(), 40, "/tmp/ckpt/job-1/step-40", 1, 0.75, 300, false),
        new TrainerNotice.RollBack(40, 2),
        new JobProtocol.ReportProgress("a", 0, 1, List.of(new JobProtocol.StepOffset(4, 32)), 2,
            kit.<akka.pattern.StatusReply<akka.Done>>createTestProbe().ref()),
        new Master.ProgressRecorded(0, 1, 30, "a", 3, List.of(new JobProtocol.StepOffset(1, 10))),
        new Master.CheckpointCommitted(committed), new Master.TaskSettled(1, 0, "a", 20, 3, Map.of("w#0", 28L))));
  }

  @AfterContainer
  static void stop() {
    kit.shutdownTestKit();
  }

  @Property
  void cborMessagesAreReadOrRefused(@ForAll("cbor") Input in) {
    SerializerFuzzing.readsOrRefuses(in, List.of(Exception.class));
  }

  @Provide
  Arbitrary<Input> cbor() {
    return SerializerFuzzing.inputs(seeds);
  }
}
