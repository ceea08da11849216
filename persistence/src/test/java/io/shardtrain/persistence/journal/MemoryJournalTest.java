package io.shardtrain.persistence.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.persistence.JournalProtocol;
import akka.persistence.PersistentRepr;
import akka.persistence.SnapshotMetadata;
import akka.persistence.SnapshotProtocol;
import akka.persistence.SnapshotSelectionCriteria;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.compute.Tensor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The in-memory journal and snapshot store, spoken to as Akka's persistence speaks to them. */
class MemoryJournalTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Config MEMORY = ConfigFactory.parseString("""
      shardtrain.persistence.journal = memory
      akka.actor.provider = local
      akka.loglevel = WARNING
      akka.log-dead-letters = off
      """);

  private ActorTestKit kit;
  private JournalProtocolClient client;
  private akka.actor.ActorRef snapshots;
  private TestProbe<Object> probe;
  private akka.actor.ActorRef probeRef;

  @BeforeEach
  void start() {
    kit = ActorTestKit.create("MemoryJournalTest", JournalConfig.of(MEMORY));
    client = new JournalProtocolClient(kit);
    snapshots = client.snapshots;
    probe = client.probe;
    probeRef = client.probeRef;
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static PersistentRepr event(String pid, long seqNr) {
    return PersistentRepr.apply("event " + seqNr, seqNr, pid, "", false, akka.actor.ActorRef.noSender(), "writer");
  }

  /** Writes events {@code from..to} of {@code pid}, one atomic write each; returns the journal's reply to the batch. */
  private Object write(String pid, long from, long to) {
    List<PersistentRepr> events = new ArrayList<>();
    for (long s = from; s <= to; s++) events.add(event(pid, s));
    return write(events);
  }

  private Object write(List<PersistentRepr> events) {
    return client.write(events);
  }

  /** Replays {@code pid} from 1: the payloads replayed, then the highest sequence number as the last element. */
  private List<Object> replay(String pid) {
    JournalProtocolClient.Replay r = client.replay(pid);
    List<Object> out = new ArrayList<>();
    for (PersistentRepr p : r.events()) out.add(p.payload());
    out.add(r.highest());
    return out;
  }

  @Test
  void deletingBehindASnapshotLeavesTheLaterEventsAndTheHighestSequenceNumber() {
    assertTrue(write("block", 1, 30) instanceof JournalProtocol.WriteMessagesSuccessful$);
    assertEquals(new akka.persistence.DeleteMessagesSuccess(20), client.deleteTo("block", 20));
    List<Object> replayed = replay("block");
    assertEquals(11, replayed.size());
    assertEquals("event 21", replayed.get(0));
    assertEquals("event 30", replayed.get(9));
    assertEquals(30L, replayed.get(10));

    // Everything deleted: nothing to replay, and the next event still follows 30.
    assertEquals(new akka.persistence.DeleteMessagesSuccess(30), client.deleteTo("block", 30));
    assertEquals(List.of(30L), replay("block"));
    assertTrue(write("block", 31, 31) instanceof JournalProtocol.WriteMessagesSuccessful$);
    assertEquals(List.of("event 31", 31L), replay("block"));
    assertEquals(List.of(0L), replay("never-written"));
  }

  @Test
  void aSecondWriteOfASequenceNumberFailsItsWholeBatchAndKeepsTheFirst() {
    assertTrue(write("block", 1, 3) instanceof JournalProtocol.WriteMessagesSuccessful$);
    // Another id's event first in the batch: it is not kept either, as a database's transaction.
    Object failed = write(List.of(event("other", 1), event("block", 3)));
    assertTrue(failed instanceof JournalProtocol.WriteMessagesFailed, "got " + failed);
    String reason = ((JournalProtocol.WriteMessagesFailed) failed).cause().getMessage();
    assertTrue(reason.contains("event 3 of block written after event 3"), reason);
    assertEquals(List.of("event 1", "event 2", "event 3", 3L), replay("block"));
    assertEquals(List.of(0L), replay("other"));
  }

  @Test
  void snapshotsComeBackDeserializedAndTheNewestMatchingOneIsLoaded() {
    float[] values = {1.5f, -2.25f, 3f};
    Tensor first = Tensor.of(values.clone(), 3);
    Tensor second = Tensor.of(new float[] {4f, 5f, 6f}, 3);
    snapshots.tell(new SnapshotProtocol.SaveSnapshot(new SnapshotMetadata("block", 10, 1), first), probeRef);
    assertTrue(probe.receiveMessage(WAIT) instanceof akka.persistence.SaveSnapshotSuccess);
    snapshots.tell(new SnapshotProtocol.SaveSnapshot(new SnapshotMetadata("block", 20, 2), second), probeRef);
    assertTrue(probe.receiveMessage(WAIT) instanceof akka.persistence.SaveSnapshotSuccess);
    // Stored serialized: a change to the saved state after the save does not reach the snapshot.
    first.data()[0] = 99f;

    assertArrayEquals(new float[] {4f, 5f, 6f}, load("block", SnapshotSelectionCriteria.Latest()).data());
    Tensor older = load("block", SnapshotSelectionCriteria.create(15, Long.MAX_VALUE));
    assertArrayEquals(values, older.data());
    assertNotSame(first, older);

    snapshots.tell(new SnapshotProtocol.DeleteSnapshots("block", SnapshotSelectionCriteria.create(15, Long.MAX_VALUE)),
        probeRef);
    assertTrue(probe.receiveMessage(WAIT) instanceof akka.persistence.DeleteSnapshotsSuccess);
    assertArrayEquals(new float[] {4f, 5f, 6f}, load("block", SnapshotSelectionCriteria.Latest()).data());
    snapshots.tell(new SnapshotProtocol.DeleteSnapshot(new SnapshotMetadata("block", 20, 0)), probeRef);
    assertTrue(probe.receiveMessage(WAIT) instanceof akka.persistence.DeleteSnapshotSuccess);
    snapshots.tell(new SnapshotProtocol.LoadSnapshot("block", SnapshotSelectionCriteria.Latest(), Long.MAX_VALUE),
        probeRef);
    SnapshotProtocol.LoadSnapshotResult none = (SnapshotProtocol.LoadSnapshotResult) probe.receiveMessage(WAIT);
    assertTrue(none.snapshot().isEmpty());
  }

  private Tensor load(String pid, SnapshotSelectionCriteria criteria) {
    snapshots.tell(new SnapshotProtocol.LoadSnapshot(pid, criteria, Long.MAX_VALUE), probeRef);
    SnapshotProtocol.LoadSnapshotResult r = (SnapshotProtocol.LoadSnapshotResult) probe.receiveMessage(WAIT);
    return (Tensor) r.snapshot().get().snapshot();
  }
}
