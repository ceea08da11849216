package io.shardtrain.actors.master;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.javadsl.Adapter;
import akka.pattern.StatusReply;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.TrainerNotice;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The master's messages over the wire, and its events and snapshots in the journal, in Jackson
 * CBOR. Events and snapshots are read back by their class names, so those stay where they are.
 */
class MasterSerializationTest {
  static ActorTestKit kit;

  @BeforeAll
  static void startKit() {
    kit = ActorTestKit.create("MasterSerializationTest");
  }

  @AfterAll
  static void stopKit() {
    kit.shutdownTestKit();
  }

  @Test
  void repliesRoundTripThroughCborSerialization() {
    var serialization = kit.serializationTestKit();
    serialization.verifySerialization(new JobProtocol.Registration(MasterTest.job(), 3, List.of("a", "b"), 42, 1), true);
    JobSpec torchInit = MasterTest.job();
    torchInit = new JobSpec(torchInit.jobId(), torchInit.dataset(), torchInit.trainExamples(), torchInit.inputDim(),
        torchInit.classes(), torchInit.hidden(), torchInit.activation(), torchInit.seed(), torchInit.mode(),
        torchInit.trainers(), torchInit.batch(), torchInit.epochs(), torchInit.steps(), torchInit.optimizer(),
        torchInit.lr(), torchInit.lrSchedule(), torchInit.weightDecay(), torchInit.maxStaleness(), torchInit.blockSize(),
        torchInit.blocks(), null, "pytorch");
    serialization.verifySerialization(new Master.JobSubmitted(torchInit, null), true);
    serialization.verifySerialization(new JobProtocol.Lease(1, 0, 0, 50, 20), true);
    serialization.verifySerialization(new JobProtocol.Lease(1, 0, 0, 50, 20, Map.of("w#0", 28L)), true);
    serialization.verifySerialization(new Master.TaskSettled(1, 0, "a", 20, 3, Map.of("w#0", 28L)), true);
    serialization.verifySerialization(new JobProtocol.NoTask(true), true);
    serialization.verifySerialization(new JobProtocol.WaitForTrainers(1, 2), true);
    serialization.verifySerialization(new JobProtocol.JobStatus("job-1", true, true, false, false, 1, 4, List.of("a"), 120,
        List.of("1/0@20 -> a"), List.of(new JobProtocol.TrainerProgress("a", kit.<TrainerNotice>createTestProbe().ref(),
            1, 0, 20, 50, 3)), MasterTest.job(), 40, "/tmp/ckpt/job-1/step-40", 1, 0.75, 300, true), true);
    serialization.verifySerialization(new JobProtocol.CheckpointWritten("job-1", 40, "/tmp/ckpt"), true);
    serialization.verifySerialization(new TrainerNotice.RollBack(40, 2), true);
    serialization.verifySerialization(new JobProtocol.RollBackToCheckpoint("ps node lost", -1, "a"), true);
    serialization.verifySerialization(new Master.ProgressRecorded(0, 1, 30, "a", 3,
        List.of(new JobProtocol.StepOffset(1, 10), new JobProtocol.StepOffset(2, 20))), true);
    serialization.verifySerialization(new Master.ProgressRecorded(0, 1, 30, "a", 3, List.of()), true);
    var committed = new MasterState.CommittedCheckpoint(40, "/tmp/ckpt", List.of(new MasterState.TaskOffset(0, 1, 640)),
        0, 1280, Map.of("a", 40L));
    serialization.verifySerialization(new Master.CheckpointCommitted(committed), true);
    serialization.verifySerialization(new Master.RolledBackToCheckpoint(40, 2, "ps node lost"), true);
    serialization.verifySerialization(new Master.JobCancelled(), true);
    serialization.verifySerialization(new TrainerNotice.Cancelled("job-1"), true);
  }

  @Test
  void aRegistrationRoundTripsWithTheTrainersNoticeReference() {
    kit.serializationTestKit().verifySerialization(new JobProtocol.RegisterTrainer("a",
        kit.<TrainerNotice>createTestProbe().ref(), kit.<StatusReply<JobProtocol.Registration>>createTestProbe().ref()),
        true);
  }

  @Test
  void aCommandForOneJobRoundTripsWithTheCommandInside() {
    var probe = kit.<StatusReply<akka.Done>>createTestProbe().ref();
    var serialization = kit.serializationTestKit();
    serialization.verifySerialization(new JobProtocol.ToJob("job-2", new JobProtocol.ReportProgress("a", 0, 1,
        List.of(new JobProtocol.StepOffset(4, 32)), 0, probe)), true);
    serialization.verifySerialization(new JobProtocol.ToJob("job-2", new JobProtocol.Heartbeat("a")), true);
    serialization.verifySerialization(new JobProtocol.ToJob("job-2", new JobProtocol.RingCheckpointed("a", 1, 20,
        "/tmp/ckpt/job-2/ring-step-20", List.of(new JobProtocol.RingMark("b", 0, 1, 64, 19)))), true);
    serialization.verifySerialization(new JobProtocol.JobList(List.of(new JobProtocol.JobEntry("job-1", false),
        new JobProtocol.JobEntry("job-2", true), new JobProtocol.JobEntry("job-3", false, true))), true);
    serialization.verifySerialization(new JobProtocol.JobDeleted("job-1", 9), true);
    serialization.verifySerialization(new JobDirectory.JobOpened("job-2"), true);
    serialization.verifySerialization(new JobDirectory.JobFinished("job-2", true), true);
    serialization.verifySerialization(new JobDirectory.JobErased("job-2"), true);
  }

  @Test
  void aProgressReportOfSeveralStepsRoundTrips() {
    kit.serializationTestKit().verifySerialization(new JobProtocol.ReportProgress("a", 0, 1,
        List.of(new JobProtocol.StepOffset(4, 32), new JobProtocol.StepOffset(5, 40)), 2,
        kit.<StatusReply<akka.Done>>createTestProbe().ref()), true);
  }

  /** A progress event as the master journaled them one step each. */
  static final String PROGRESS_RECORDED =
      "bf6565706f636800647461736b00666f66667365741469747261696e657249646161647374657002ff";

  @Test
  void aProgressEventJournaledForOneStepIsReadBackAsThatStep() {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
    int cbor = serialization.findSerializerFor(new Master.JobStarted(1)).identifier();
    Master.ProgressRecorded e = (Master.ProgressRecorded) read(serialization, cbor,
        "io.shardtrain.actors.master.Master$ProgressRecorded", PROGRESS_RECORDED);
    assertEquals(new Master.ProgressRecorded(0, 0, 20, "a", 2, List.of()), e);
    assertEquals(List.of(new JobProtocol.StepOffset(2, 20)), ReportedSteps.all(e));
    assertEquals(PROGRESS_RECORDED.substring(0, PROGRESS_RECORDED.length() - 2) + "676561726c69657280ff",
        HexFormat.of().formatHex(serialization.serialize(e).get()), "written with an empty list of earlier steps");
  }

  /** CBOR of the events and the state below as the master journaled them while JobSpec was in this package. */
  static final String JOB_SUBMITTED =
      "bf636a6f62bf656a6f624964656a6f622d31676461746173657464746573746d747261696e4578616d706c6573186468"
      + "696e70757444696d0467636c6173736573026668696464656e81036a61637469766174696f6e6472656c756473656564"
      + "07646d6f64656453594e4368747261696e657273026562617463680a6665706f6368730265737465707300696f707469"
      + "6d697a657263736764626c72fa3dcccccd6a6c725363686564756c6568636f6e7374616e746b77656967687444656361"
      + "79fa000000006c6d61785374616c656e6573732069626c6f636b53697a651066626c6f636b73826377233063772331ff"
      + "ff";
  static final String CHECKPOINT_COMMITTED =
      "bf6a636865636b706f696e74bf6473746570182863646972692f746d702f636b7074676f66667365747381bf6565706f"
      + "636800647461736b01666f6666736574190280ff6a65706f636873446f6e6500686578616d706c65731905006c747261"
      + "696e65725374657073bf61611828ffffff";
  static final String TASK_SETTLED =
      "bf6565706f636801647461736b0069747261696e657249646161666f66667365741464737465700364736b6970bf6377"
      + "2330181cffff";
  static final String STATE =
      "bf636a6f62bf656a6f624964656a6f622d31676461746173657464746573746d747261696e4578616d706c6573186468"
      + "696e70757444696d0467636c6173736573026668696464656e81036a61637469766174696f6e6472656c756473656564"
      + "07646d6f64656453594e4368747261696e657273026562617463680a6665706f6368730265737465707300696f707469"
      + "6d697a657263736764626c72fa3dcccccd6a6c725363686564756c6568636f6e7374616e746b77656967687444656361"
      + "79fa000000006c6d61785374616c656e6573732069626c6f636b53697a651066626c6f636b73826377233063772331ff"
      + "6f6d656d6265727368697045706f636800676d656d62657273bfff6e66697273744f70656e45706f636800657461736b"
      + "7384bf6565706f63680065696e646578006466726f6d0062746f1832666f666673657414686c6561736564546f61616b"
      + "736574746c696e67466f72f664736b6970bfff6866696e6973686564f46e66696e697368656441745374657000676869"
      + "73746f7279818202146b666c6f6f724f66667365740069666c6f6f725374657000ffbf6565706f63680065696e646578"
      + "016466726f6d183262746f1864666f666673657400686c6561736564546ff66b736574746c696e67466f72f664736b69"
      + "70bfff6866696e6973686564f46e66696e69736865644174537465700067686973746f7279806b666c6f6f724f666673"
      + "65740069666c6f6f725374657000ffbf6565706f63680165696e646578006466726f6d0062746f1832666f6666736574"
      + "00686c6561736564546ff66b736574746c696e67466f72f664736b6970bfff6866696e6973686564f46e66696e697368"
      + "65644174537465700067686973746f7279806b666c6f6f724f66667365740069666c6f6f725374657000ffbf6565706f"
      + "63680165696e646578016466726f6d183262746f1864666f666673657400686c6561736564546ff66b736574746c696e"
      + "67466f72f664736b6970bfff6866696e6973686564f46e66696e69736865644174537465700067686973746f7279806b"
      + "666c6f6f724f66667365740069666c6f6f725374657000ff706578616d706c65735265706f7274656414686c61737453"
      + "746570bf616102ff6773746172746564f46a636865636b706f696e74f66a67656e65726174696f6e00ff";

  @Test
  void eventsAndSnapshotsJournaledBeforeJobSpecMovedAreReadBack() {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
    int cbor = serialization.findSerializerFor(new Master.JobStarted(1)).identifier();
    assertEquals(new Master.JobSubmitted(MasterTest.job(), null),
        read(serialization, cbor, "io.shardtrain.actors.master.Master$JobSubmitted", JOB_SUBMITTED));
    var committed = new MasterState.CommittedCheckpoint(40, "/tmp/ckpt", List.of(new MasterState.TaskOffset(0, 1, 640)),
        0, 1280, Map.of("a", 40L));
    assertEquals(new Master.CheckpointCommitted(committed),
        read(serialization, cbor, "io.shardtrain.actors.master.Master$CheckpointCommitted", CHECKPOINT_COMMITTED));
    assertEquals(new Master.TaskSettled(1, 0, "a", 20, 3, Map.of("w#0", 28L)),
        read(serialization, cbor, "io.shardtrain.actors.master.Master$TaskSettled", TASK_SETTLED));

    MasterState expected = new MasterState().submitted(MasterTest.job(), null);
    expected.leased(0, 0, "a");
    expected.progressed(0, 0, 20, "a", 2);
    MasterState state = (MasterState) read(serialization, cbor, "io.shardtrain.actors.master.MasterState", STATE);
    assertEquals(expected.status(), state.status());
    assertEquals(expected.registration("a"), state.registration("a"));
    assertEquals(expected.lease(expected.task(0, 0)), state.lease(state.task(0, 0)));
    assertEquals(HexFormat.of().formatHex(serialization.serialize(expected).get()), STATE, "written as before");
    // A job's end journaled before cancels existed reads as not cancelled.
    byte[] withoutCancelled = serialization.serialize(new JobDirectory.JobOpened("job-1")).get();
    assertEquals(new JobDirectory.JobFinished("job-1", false), serialization.deserialize(withoutCancelled, cbor,
        "io.shardtrain.actors.master.JobDirectory$JobFinished").get());
    // A cancelled job's snapshot says so.
    MasterState cancelled = (MasterState) serialization.deserialize(serialization.serialize(expected.cancel()).get(),
        cbor, "io.shardtrain.actors.master.MasterState").get();
    assertTrue(cancelled.cancelled() && cancelled.done());
  }

  static Object read(Serialization serialization, int serializer, String manifest, String hex) {
    return serialization.deserialize(HexFormat.of().parseHex(hex), serializer, manifest).get();
  }
}
