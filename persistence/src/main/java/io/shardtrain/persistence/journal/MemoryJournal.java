package io.shardtrain.persistence.journal;

import akka.dispatch.Futures;
import akka.persistence.AtomicWrite;
import akka.persistence.PersistentRepr;
import akka.persistence.journal.Tagged;
import akka.persistence.journal.japi.AsyncWriteJournal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The journal of {@code shardtrain.persistence.journal = memory}: one ActorSystem's events, kept
 * by reference and lost with the system, as Akka's own in-memory journal keeps them. Akka's deletes
 * an id's events one sequence number at a time from 1, each time filtering what the id holds, so a
 * block that snapshots every few steps paid for every event it ever wrote at each snapshot: 3% of a
 * 10,000-step run's CPU at its end, and growing with the run. Here each id's events stay in
 * sequence order and a deletion drops the prefix it covers, in time proportional to what it drops.
 *
 * <p>Writes come from the journal actor; replays may run on other threads (Akka replays after a
 * future), so each id's events are guarded by their own lock.
 */
public final class MemoryJournal extends AsyncWriteJournal {
  private final Map<String, Events> byId = new ConcurrentHashMap<>();

  /** One persistence id's events, oldest first, and the highest sequence number it ever wrote. */
  private static final class Events {
    private final ArrayDeque<PersistentRepr> kept = new ArrayDeque<>();
    private long highest;

    synchronized void append(PersistentRepr p) {
      kept.addLast(p);
      highest = p.sequenceNr();
    }

    synchronized List<PersistentRepr> range(long from, long to, long max) {
      List<PersistentRepr> out = new ArrayList<>();
      for (PersistentRepr p : kept) {
        if (out.size() >= max || p.sequenceNr() > to) break;
        if (p.sequenceNr() >= from) out.add(p);
      }
      return out;
    }

    synchronized void deleteTo(long to) {
      while (!kept.isEmpty() && kept.peekFirst().sequenceNr() <= to) kept.pollFirst();
    }

    synchronized long highest() {
      return highest;
    }
  }

  @Override
  public Future<Iterable<Optional<Exception>>> doAsyncWriteMessages(Iterable<AtomicWrite> messages) {
    // A database refuses a second write of a key, and the whole batch with it; so does this, rather
    // than keep two histories of one id. Checked before anything is kept: writes come one batch at
    // a time from the journal actor.
    Map<String, Long> highestAfter = new HashMap<>();
    for (AtomicWrite write : messages) {
      String id = write.persistenceId();
      long highest = highestAfter.computeIfAbsent(id, k -> {
        Events events = byId.get(k);
        return events == null ? 0L : events.highest();
      });
      if (write.lowestSequenceNr() <= highest) {
        return Futures.failed(new EventLog.SequenceConflict(id, write.lowestSequenceNr(), highest));
      }
      highestAfter.put(id, write.highestSequenceNr());
    }
    long now = System.currentTimeMillis();
    List<Optional<Exception>> results = new ArrayList<>();
    for (AtomicWrite write : messages) {
      Events events = byId.computeIfAbsent(write.persistenceId(), id -> new Events());
      for (PersistentRepr p : CollectionConverters.asJava(write.payload())) {
        Object payload = p.payload() instanceof Tagged t ? t.payload() : p.payload();
        events.append(p.withPayload(payload).withTimestamp(now));
      }
      results.add(Optional.empty());
    }
    return Futures.successful(results);
  }

  @Override
  public Future<Void> doAsyncDeleteMessagesTo(String persistenceId, long toSequenceNr) {
    Events events = byId.get(persistenceId);
    if (events != null) events.deleteTo(toSequenceNr);
    return Futures.successful(null);
  }

  @Override
  public Future<Void> doAsyncReplayMessages(String persistenceId, long fromSequenceNr, long toSequenceNr, long max,
      Consumer<PersistentRepr> replayCallback) {
    Events events = byId.get(persistenceId);
    if (events != null) events.range(fromSequenceNr, toSequenceNr, max).forEach(replayCallback);
    return Futures.successful(null);
  }

  @Override
  public Future<Long> doAsyncReadHighestSequenceNr(String persistenceId, long fromSequenceNr) {
    Events events = byId.get(persistenceId);
    return Futures.successful(events == null ? 0L : events.highest());
  }
}
