package io.shardtrain.persistence.journal;

import akka.dispatch.Futures;
import akka.persistence.SelectedSnapshot;
import akka.persistence.SnapshotMetadata;
import akka.persistence.SnapshotSelectionCriteria;
import akka.persistence.snapshot.japi.SnapshotStore;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.serialization.Serializers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import scala.concurrent.Future;

/**
 * The snapshot store of {@code shardtrain.persistence.journal = memory}: one ActorSystem's
 * snapshots, lost with it. Each is kept serialized, as a database keeps it, so a snapshot is
 * detached from the state it was taken of and every snapshot goes through its serializer; it is
 * read back only when an entity recovers. Akka 2.8 has no in-memory store outside its testkit;
 * its local store wrote each snapshot to a file and deleted the older ones, a block's megabyte
 * every few steps through the file system.
 */
public final class MemorySnapshotStore extends SnapshotStore {
  /** A snapshot as stored: its metadata and its serialized form. */
  private record Stored(SnapshotMetadata metadata, int serializerId, String manifest, byte[] bytes) {}

  private final Serialization serialization = SerializationExtension.get(context().system());
  /** Each persistence id's snapshots, oldest first. */
  private final Map<String, List<Stored>> byId = new ConcurrentHashMap<>();

  @Override
  public Future<Optional<SelectedSnapshot>> doLoadAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
    Stored found = null;
    List<Stored> stored = byId.get(persistenceId);
    if (stored != null) {
      synchronized (stored) {
        for (int i = stored.size() - 1; i >= 0 && found == null; i--) {
          if (criteria.matches(stored.get(i).metadata())) found = stored.get(i);
        }
      }
    }
    if (found == null) return Futures.successful(Optional.empty());
    try {
      Object snapshot = serialization.deserialize(found.bytes(), found.serializerId(), found.manifest()).get();
      return Futures.successful(Optional.of(SelectedSnapshot.create(found.metadata(), snapshot)));
    } catch (Exception e) {
      return Futures.failed(e);
    }
  }

  @Override
  public Future<Void> doSaveAsync(SnapshotMetadata metadata, Object snapshot) {
    Stored s;
    try {
      Serializer serializer = serialization.findSerializerFor(snapshot);
      s = new Stored(metadata, serializer.identifier(), Serializers.manifestFor(serializer, snapshot),
          serialization.serialize(snapshot).get());
    } catch (Exception e) {
      return Futures.failed(e);
    }
    List<Stored> stored = byId.computeIfAbsent(metadata.persistenceId(), id -> new ArrayList<>());
    synchronized (stored) {
      stored.removeIf(o -> o.metadata().sequenceNr() == metadata.sequenceNr());
      int at = stored.size();
      while (at > 0 && stored.get(at - 1).metadata().sequenceNr() > metadata.sequenceNr()) at--;
      stored.add(at, s);
    }
    return Futures.successful(null);
  }

  @Override
  public Future<Void> doDeleteAsync(SnapshotMetadata metadata) {
    List<Stored> stored = byId.get(metadata.persistenceId());
    if (stored != null) {
      synchronized (stored) {
        // Timestamp 0: any snapshot at that sequence number, as the other stores read it.
        stored.removeIf(o -> o.metadata().sequenceNr() == metadata.sequenceNr()
            && (metadata.timestamp() == 0 || o.metadata().timestamp() == metadata.timestamp()));
      }
    }
    return Futures.successful(null);
  }

  @Override
  public Future<Void> doDeleteAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
    List<Stored> stored = byId.get(persistenceId);
    if (stored != null) {
      synchronized (stored) {
        stored.removeIf(o -> criteria.matches(o.metadata()));
      }
    }
    return Futures.successful(null);
  }
}
