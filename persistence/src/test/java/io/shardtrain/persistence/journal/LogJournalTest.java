package io.shardtrain.persistence.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The log journal spoken to as Akka's persistence speaks to it: across a restart, and shared by two systems. */
class LogJournalTest {
  private static final Duration WAIT = JournalProtocolClient.WAIT;

  @TempDir
  Path dir;

  private Config config() {
    return JournalConfig.of(ConfigFactory.parseString("""
        shardtrain.persistence.journal = log
        akka.actor.provider = local
        akka.loglevel = WARNING
        akka.log-dead-letters = off
        """).withFallback(ConfigFactory.parseMap(java.util.Map.of("shardtrain.persistence.log-dir", dir.toString()))));
  }

  /** One ActorSystem's view of the journal and snapshot store. */
  private final class Node implements AutoCloseable {
    final ActorTestKit kit;
    final JournalProtocolClient client;
    final akka.actor.ActorRef snapshots;
    final TestProbe<Object> probe;
    final akka.actor.ActorRef probeRef;

    Node(String name) {
      kit = ActorTestKit.create(name, config());
      client = new JournalProtocolClient(kit);
      snapshots = client.snapshots;
      probe = client.probe;
      probeRef = client.probeRef;
    }

    Object write(String pid, long from, long to) {
      List<PersistentRepr> events = new ArrayList<>();
      for (long s = from; s <= to; s++) {
        Tensor t = Tensor.of(new float[] {s, -s, s / 3f}, 3);
        events.add(PersistentRepr.apply(t, s, pid, "", false, akka.actor.ActorRef.noSender(), "w"));
      }
      return client.write(events);
    }

    /** The replayed tensors' first values, then the highest sequence number. */
    List<Object> replay(String pid) {
      JournalProtocolClient.Replay r = client.replay(pid);
      List<Object> out = new ArrayList<>();
      for (PersistentRepr p : r.events()) {
        Tensor t = (Tensor) p.payload();
        float s = t.data()[0];
        assertArrayEquals(new float[] {s, -s, s / 3f}, t.data());
        assertEquals("w", p.writerUuid());
        out.add((long) s);
      }
      out.add(r.highest());
      return out;
    }

    @Override
    public void close() {
      kit.shutdownTestKit();
    }
  }

  @Test
  void eventsDeletionsAndSnapshotsOutliveTheActorSystem() {
    try (Node node = new Node("LogJournalTestFirst")) {
      assertTrue(node.write("block", 1, 5) instanceof JournalProtocol.WriteMessagesSuccessful$);
      assertEquals(new akka.persistence.DeleteMessagesSuccess(2), node.client.deleteTo("block", 2));
      node.snapshots.tell(new SnapshotProtocol.SaveSnapshot(new SnapshotMetadata("block", 2, 1),
          Tensor.of(new float[] {7f, 8f}, 2)), node.probeRef);
      assertTrue(node.probe.receiveMessage(WAIT) instanceof akka.persistence.SaveSnapshotSuccess);
    }
    try (Node node = new Node("LogJournalTestSecond")) {
      assertEquals(List.of(3L, 4L, 5L, 5L), node.replay("block"));
      node.snapshots.tell(new SnapshotProtocol.LoadSnapshot("block", SnapshotSelectionCriteria.latest(),
          Long.MAX_VALUE), node.probeRef);
      SnapshotProtocol.LoadSnapshotResult r = (SnapshotProtocol.LoadSnapshotResult) node.probe.receiveMessage(WAIT);
      assertEquals(2L, r.snapshot().get().metadata().sequenceNr());
      assertArrayEquals(new float[] {7f, 8f}, ((Tensor) r.snapshot().get().snapshot()).data());
      // A second write of a sequence number fails, as a database's key would.
      Object failed = node.write("block", 5, 5);
      assertTrue(failed instanceof JournalProtocol.WriteMessagesFailed, "got " + failed);
      assertTrue(((JournalProtocol.WriteMessagesFailed) failed).cause().getMessage()
          .contains("event 5 of block written after event 5"));
    }
  }

  @Test
  void aNodeOpensTheLogBeforeItsSystem_aHeldDirectoryFailsThen_andTheHandleLetsGoOnce() {
    Config c = config();
    try (EventLog held = EventLog.open(dir, 1 << 20, false)) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> Journal.openLogBeforeStart(c));
      assertTrue(e.getMessage().contains(dir + " is in use"), e.getMessage());
    }
    Runnable first = Journal.openLogBeforeStart(c);
    Runnable second = Journal.openLogBeforeStart(c);
    first.run();
    first.run(); // a second run of one handle lets nothing more go: the log stays open for the other
    assertThrows(IllegalStateException.class, () -> EventLog.open(dir, 1 << 20, false));
    second.run();
    EventLog.open(dir, 1 << 20, false).close();
  }

  @Test
  void twoActorSystemsOfOneJvmShareTheDirectory_asALocalClustersNodesDo() {
    try (Node first = new Node("LogJournalTestA"); Node second = new Node("LogJournalTestB")) {
      assertTrue(first.write("block", 1, 3) instanceof JournalProtocol.WriteMessagesSuccessful$);
      // The block moved to the second node: it finds the events and goes on after them.
      assertEquals(List.of(1L, 2L, 3L, 3L), second.replay("block"));
      assertTrue(second.write("block", 4, 4) instanceof JournalProtocol.WriteMessagesSuccessful$);
      assertEquals(List.of(1L, 2L, 3L, 4L, 4L), first.replay("block"));
    }
    try (Node again = new Node("LogJournalTestC")) {
      assertEquals(List.of(1L, 2L, 3L, 4L, 4L), again.replay("block"));
    }
  }
}
