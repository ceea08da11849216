package io.shardtrain.actors.master;

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
final class JournalEraser {
  private JournalEraser() {}

  /** Completes with the number of entities erased, or fails naming the first entity that could not be. */
  static CompletionStage<Integer> erase(ActorSystem<?> system, List<String> persistenceIds, Duration timeout) {
    akka.actor.ActorSystem classic = Adapter.toClassic(system);
    Persistence persistence = Persistence.get(classic);
    akka.actor.ActorRef journal = persistence.journalFor("", ConfigFactory.empty());
    akka.actor.ActorRef snapshots = persistence.snapshotStoreFor("", ConfigFactory.empty());
    List<CompletableFuture<Object>> deletions = new ArrayList<>();
    for (String id : persistenceIds) {
      deletions.add(Patterns.askWithReplyTo(journal,
              replyTo -> new JournalProtocol.DeleteMessagesTo(id, Long.MAX_VALUE, replyTo), timeout)
          .toCompletableFuture().thenApply(reply -> check(id, "events", reply)));
      deletions.add(Patterns.ask(snapshots,
              new SnapshotProtocol.DeleteSnapshots(id, SnapshotSelectionCriteria.latest()), timeout)
          .toCompletableFuture().thenApply(reply -> check(id, "snapshots", reply)));
    }
    return CompletableFuture.allOf(deletions.toArray(CompletableFuture[]::new)).thenApply(x -> persistenceIds.size());
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
