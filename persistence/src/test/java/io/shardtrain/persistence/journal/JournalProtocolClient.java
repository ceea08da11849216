package io.shardtrain.persistence.journal;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.Adapter;
import akka.persistence.AtomicWrite;
import akka.persistence.JournalProtocol;
import akka.persistence.Persistence;
import akka.persistence.PersistentEnvelope;
import akka.persistence.PersistentRepr;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import scala.jdk.javaapi.CollectionConverters;

/** A test's side of Akka's journal and snapshot protocols, on one ActorSystem's configured plugins. */
final class JournalProtocolClient {
  static final Duration WAIT = Duration.ofSeconds(10);

  final akka.actor.ActorRef journal;
  final akka.actor.ActorRef snapshots;
  final TestProbe<Object> probe;
  final akka.actor.ActorRef probeRef;

  /** What a replay gave: the events in order, then the highest sequence number. */
  record Replay(List<PersistentRepr> events, long highest) {}

  JournalProtocolClient(ActorTestKit kit) {
    Persistence persistence = Persistence.get(Adapter.toClassic(kit.system()));
    journal = persistence.journalFor("", ConfigFactory.empty());
    snapshots = persistence.snapshotStoreFor("", ConfigFactory.empty());
    probe = kit.createTestProbe();
    probeRef = Adapter.toClassic(probe.getRef());
  }

  /** Writes {@code events} in one batch, one atomic write each; returns the journal's reply to the batch. */
  Object write(List<PersistentRepr> events) {
    List<PersistentEnvelope> writes = new ArrayList<>();
    for (PersistentRepr e : events) writes.add(AtomicWrite.apply(e));
    journal.tell(new JournalProtocol.WriteMessages(CollectionConverters.asScala(writes).toList(), probeRef, 1),
        akka.actor.ActorRef.noSender());
    // The batch's reply, then one per event.
    Object batch = null;
    for (int i = 0; i <= writes.size(); i++) {
      Object m = probe.receiveMessage(WAIT);
      if (m instanceof JournalProtocol.WriteMessagesSuccessful$ || m instanceof JournalProtocol.WriteMessagesFailed) {
        batch = m;
      }
    }
    return batch;
  }

  /** Replays every event of {@code pid}. */
  Replay replay(String pid) {
    journal.tell(new JournalProtocol.ReplayMessages(1, Long.MAX_VALUE, Long.MAX_VALUE, pid, probeRef),
        akka.actor.ActorRef.noSender());
    List<PersistentRepr> events = new ArrayList<>();
    while (true) {
      Object m = probe.receiveMessage(WAIT);
      if (m instanceof JournalProtocol.ReplayedMessage r) {
        events.add(r.persistent());
      } else if (m instanceof JournalProtocol.RecoverySuccess s) {
        return new Replay(events, s.highestSequenceNr());
      } else {
        throw new AssertionError("unexpected reply to a replay: " + m);
      }
    }
  }

  /** Deletes {@code pid}'s events up to {@code to}; returns the journal's reply. */
  Object deleteTo(String pid, long to) {
    journal.tell(new JournalProtocol.DeleteMessagesTo(pid, to, probeRef), akka.actor.ActorRef.noSender());
    return probe.receiveMessage(WAIT);
  }
}
