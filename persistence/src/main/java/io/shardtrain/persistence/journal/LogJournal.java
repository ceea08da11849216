package io.shardtrain.persistence.journal;

import akka.dispatch.Futures;
import akka.persistence.AtomicWrite;
import akka.persistence.PersistentRepr;
import akka.persistence.journal.Tagged;
import akka.persistence.journal.japi.AsyncWriteJournal;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.serialization.Serializers;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import scala.concurrent.Future;
import scala.concurrent.Promise;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The journal of {@code shardtrain.persistence.journal = log}: events serialized with Akka's
 * serialization into an {@link EventLog} in {@code shardtrain.persistence.log-dir}. The ActorSystems
 * of one JVM that name the same directory share one open log (a local cluster's nodes, so a block
 * that moves between them finds its events). Writes, deletions and replays of one system run in
 * order on one thread of their own, off the actors' dispatcher. Tags are not kept (no query reads
 * them).
 */
public final class LogJournal extends AsyncWriteJournal {
  private static final Map<Path, Shared> OPEN = new HashMap<>();

  private record Shared(EventLog log, int users) {}

  private final Path dir;
  private final EventLog log;
  private final Serialization serialization;
  private final ExecutorService io;

  public LogJournal() {
    JournalSettings settings = JournalSettings.fromConfig(context().system().settings().config());
    dir = settings.logDir();
    log = acquire(dir, settings.logSegmentBytes(), settings.logFsync());
    serialization = SerializationExtension.get(context().system());
    io = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "shardtrain-journal-log");
      t.setDaemon(true);
      return t;
    });
  }

  /** The open log of {@code dir} in this JVM, opened on first use. */
  static synchronized EventLog acquire(Path dir, long segmentBytes, boolean fsync) {
    Shared s = OPEN.get(dir);
    EventLog log = s == null ? EventLog.open(dir, segmentBytes, fsync) : s.log();
    OPEN.put(dir, new Shared(log, s == null ? 1 : s.users() + 1));
    return log;
  }

  /** Closes {@code dir}'s log when its last user releases it. */
  static synchronized void release(Path dir) {
    Shared s = OPEN.get(dir);
    if (s == null) return;
    if (s.users() > 1) {
      OPEN.put(dir, new Shared(s.log(), s.users() - 1));
    } else {
      OPEN.remove(dir);
      s.log().close();
    }
  }

  @Override
  public void postStop() throws Exception {
    io.shutdown();
    // Writes already queued finish before the log may close under them.
    io.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
    release(dir);
    super.postStop();
  }

  @Override
  public Future<Iterable<Optional<Exception>>> doAsyncWriteMessages(Iterable<AtomicWrite> messages) {
    return on(() -> {
      long now = System.currentTimeMillis();
      List<EventLog.StoredEvent> events = new ArrayList<>();
      List<Optional<Exception>> results = new ArrayList<>();
      for (AtomicWrite write : messages) {
        // An event that cannot be serialized rejects its own write only, as Akka's journals do.
        List<EventLog.StoredEvent> these = new ArrayList<>();
        Optional<Exception> result = Optional.empty();
        for (PersistentRepr p : CollectionConverters.asJava(write.payload())) {
          try {
            these.add(stored(p, now));
          } catch (Exception e) {
            result = Optional.of(e);
            these.clear();
            break;
          }
        }
        events.addAll(these);
        results.add(result);
      }
      log.append(events);
      return (Iterable<Optional<Exception>>) results;
    });
  }

  private EventLog.StoredEvent stored(PersistentRepr p, long now) {
    Object payload = p.payload() instanceof Tagged t ? t.payload() : p.payload();
    Serializer serializer = serialization.findSerializerFor(payload);
    String manifest = Serializers.manifestFor(serializer, payload);
    byte[] bytes = serialization.serialize(payload).get();
    return new EventLog.StoredEvent(p.persistenceId(), p.sequenceNr(), now, p.writerUuid(), p.manifest(),
        serializer.identifier(), manifest, bytes);
  }

  @Override
  public Future<Void> doAsyncDeleteMessagesTo(String persistenceId, long toSequenceNr) {
    return on(() -> {
      log.deleteTo(persistenceId, toSequenceNr);
      return null;
    });
  }

  @Override
  public Future<Void> doAsyncReplayMessages(String persistenceId, long fromSequenceNr, long toSequenceNr, long max,
      Consumer<PersistentRepr> replayCallback) {
    return on(() -> {
      for (EventLog.StoredEvent e : log.read(persistenceId, fromSequenceNr, toSequenceNr, max)) {
        Object payload = serialization.deserialize(e.payload(), e.serializerId(), e.serializerManifest()).get();
        replayCallback.accept(PersistentRepr.apply(payload, e.sequenceNr(), e.persistenceId(), e.adapterManifest(),
            false, akka.actor.ActorRef.noSender(), e.writerUuid()).withTimestamp(e.timestamp()));
      }
      return null;
    });
  }

  @Override
  public Future<Long> doAsyncReadHighestSequenceNr(String persistenceId, long fromSequenceNr) {
    return on(() -> log.highestSequenceNr(persistenceId));
  }

  /** Runs {@code work} on this journal's thread; its exception fails the future. */
  private <T> Future<T> on(Callable<T> work) {
    Promise<T> promise = Futures.promise();
    try {
      io.execute(() -> {
        try {
          promise.success(work.call());
        } catch (IOException e) {
          promise.failure(new IOException("journal log " + dir + ": " + e.getMessage(), e));
        } catch (Throwable e) {
          promise.failure(e);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      promise.failure(new IllegalStateException("journal log " + dir + " is stopping"));
    }
    return promise.future();
  }
}
