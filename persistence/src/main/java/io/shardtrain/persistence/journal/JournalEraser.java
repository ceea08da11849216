package io.shardtrain.persistence.journal;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import akka.pattern.Patterns;
import akka.persistence.JournalProtocol;
import akka.persistence.Persistence;
import akka.persistence.SnapshotProtocol;
import akka.persistence.SnapshotSelectionCriteria;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Deletes the events and snapshots of persistent entities through the configured journal and
 * snapshot plugins, whichever they are (JDBC, in memory). A JDBC journal keeps one row per entity,
 * marked deleted, so its sequence numbers never repeat.
 */
public final class JournalEraser {
  private JournalEraser() {}

  /** Completes with the number of entities erased, or fails naming the first entity that could not be. */
  public static CompletionStage<Integer> erase(ActorSystem<?> system, List<String> persistenceIds, Duration timeout) {
    List<CompletableFuture<Object>> deletions = new ArrayList<>();
    for (String id : persistenceIds) {
      deletions.add(deleteEvents(system, id, Long.MAX_VALUE, timeout));
      deletions.add(deleteSnapshots(system, id, SnapshotSelectionCriteria.latest(), timeout));
    }
    return CompletableFuture.allOf(deletions.toArray(CompletableFuture[]::new)).thenApply(x -> persistenceIds.size());
  }

  /**
   * Deletes the events of {@code persistenceId} up to and including {@code sequenceNr}, and its
   * snapshots taken before it: what an entity whose snapshot at {@code sequenceNr} is whole never
   * reads again. Completes when both are deleted, or fails naming what could not be.
   */
  public static CompletionStage<Void> trim(ActorSystem<?> system, String persistenceId, long sequenceNr,
      Duration timeout) {
    return deleteEvents(system, persistenceId, sequenceNr, timeout)
        .thenCombine(deleteSnapshots(system, persistenceId,
            SnapshotSelectionCriteria.create(sequenceNr - 1, Long.MAX_VALUE), timeout), (a, b) -> null);
  }

  private static CompletableFuture<Object> deleteEvents(ActorSystem<?> system, String id, long toSequenceNr,
      Duration timeout) {
    akka.actor.ActorRef journal = Persistence.get(Adapter.toClassic(system)).journalFor("", ConfigFactory.empty());
    return Patterns.askWithReplyTo(journal, replyTo -> new JournalProtocol.DeleteMessagesTo(id, toSequenceNr, replyTo),
        timeout).toCompletableFuture().thenApply(reply -> check(id, "events", reply));
  }

  private static CompletableFuture<Object> deleteSnapshots(ActorSystem<?> system, String id,
      SnapshotSelectionCriteria criteria, Duration timeout) {
    akka.actor.ActorRef snapshots = Persistence.get(Adapter.toClassic(system)).snapshotStoreFor("", ConfigFactory.empty());
    return Patterns.ask(snapshots, new SnapshotProtocol.DeleteSnapshots(id, criteria), timeout).toCompletableFuture()
        .thenApply(reply -> check(id, "snapshots", reply));
  }

  private static Object check(String id, String what, Object reply) {
    if (reply instanceof akka.persistence.DeleteMessagesFailure f) {
      throw new IllegalStateException("deleting the " + what + " of " + id + " failed: " + f.cause().getMessage(),
          f.cause());
    }
    if (reply instanceof akka.persistence.DeleteSnapshotsFailure f) {
      throw new IllegalStateException("deleting the " + what + " of " + id + " failed: " + f.cause().getMessage(),
          f.cause());
    }
    return reply;
  }
}
