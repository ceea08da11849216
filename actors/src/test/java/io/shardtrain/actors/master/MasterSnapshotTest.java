package io.shardtrain.actors.master;

import akka.Done;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockProtocol;
import akka.actor.typed.javadsl.Adapter;
import akka.japi.Pair;
import akka.persistence.testkit.SnapshotMeta;
import akka.persistence.testkit.javadsl.SnapshotTestKit;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The master's snapshots. A snapshot store may hold or serialize the object it is handed after the
 * master went on applying events: the persistence testkit's store, as configured by
 * {@link EventSourcedBehaviorTestKit#config()}, keeps the object itself (snapshots.serialize = off).
 */
class MasterSnapshotTest {
  static ActorTestKit kit;
  /** A snapshot every 3 events. */
  static final MasterSettings SNAPSHOT_EVERY_3 =
      new MasterSettings(Duration.ofSeconds(60), Duration.ofMillis(100), Duration.ofSeconds(1), 3);

  @BeforeEach
  void startKit() {
    kit = ActorTestKit.create("MasterSnapshotTest",
        EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()));
  }

  @AfterEach
  void stopKit() {
    kit.shutdownTestKit();
  }

  @Test
  void aSnapshotKeepsTheStateOfItsEventWhileTheMasterAppliesLaterEvents() {
    var blocks = kit.spawn(MasterTest.ackingBlocks(kit.<ShardingEnvelope<BlockProtocol.Command>>createTestProbe()));
    EventSourcedBehaviorTestKit<JobProtocol.Command, Master.Event, MasterState> tk =
        EventSourcedBehaviorTestKit.create(kit.system(), Master.create(SNAPSHOT_EVERY_3, blocks));
    tk.clear();
    assertTrue(
        tk.<StatusReply<Done>>runCommand(r -> new JobProtocol.SubmitJob(MasterTest.job(), r)).reply().isSuccess());
    MasterTest.Setup s = new MasterTest.Setup(tk, null);
    MasterTest.register(s, "a", kit.createTestProbe());
    MasterTest.register(s, "b", kit.createTestProbe()); // event 3: snapshotted
    MasterTest.register(s, "c", kit.createTestProbe()); // event 4: after the snapshot
    JobProtocol.JobStatus before = tk.getState().status();
    assertEquals(3, before.membershipEpoch());

    List<Pair<SnapshotMeta, Object>> stored =
        SnapshotTestKit.create(kit.system()).persistedInStorage("shardtrain-master");
    assertEquals(1, stored.size());
    assertEquals(3, stored.get(0).first().getSequenceNr());
    JobProtocol.JobStatus snapshotted = ((MasterState) stored.get(0).second()).status();
    assertEquals(2, snapshotted.membershipEpoch(), "the membership as of event 3");
    assertEquals(List.of("a", "b"), snapshotted.members());

    // Recovery starts from the snapshot of event 3 and replays event 4 once.
    tk.restart();
    assertEquals(before, tk.getState().status());
    tk.restart();
    assertEquals(before, tk.getState().status(), "a second recovery from the same snapshot");
  }

  @Test
  void aCopySerializesToTheBytesOfTheStateItCopies() {
    MasterState s = new MasterState().submitted(MasterTest.job(), null);
    s.joined("a", kit.<TrainerNotice>createTestProbe().ref());
    s.joined("b", kit.<TrainerNotice>createTestProbe().ref());
    s.started(2);
    s.leased(0, 0, "a");
    s.progressed(0, 0, 20, "a", 2);
    s.leased(0, 1, "b");
    s.left("b");
    s.settled(0, 1, "b", 8, 1, Map.of("w#1", 16L));
    s.checkpointCommitted(s.checkpointAt(2, "/tmp/ckpt"));
    s.progressed(0, 0, 30, "a", 3);
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
    assertArrayEquals(serialization.serialize(s).get(), serialization.serialize(s.copy()).get());
  }
}
