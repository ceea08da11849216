package io.shardtrain.persistence.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The events of {@code shardtrain.persistence.journal = log}: an append-only log of segment files
 * in one directory, with an index in memory of where each persistence id's live events are.
 *
 * <p>Why a log: a parameter block journals every step and deletes what its snapshot covers every
 * few steps, so nearly everything written dies soon after. Appending costs a copy into the page
 * cache; a segment whose events are all deleted is removed as a whole file. H2 (the other embedded
 * journal) stores the same bytes as LOBs in a B-tree of pages it rewrites, and spent 3-4 CPU
 * seconds a GB doing so on two cores.
 *
 * <p>A segment file ({@link LogSegment}) starts with "STLG" and its format's version (1); then records, each
 * {@code [int length][int CRC32C of the body][body]}; the body starts with its type:
 * an event ({@link LogRecords#EVENT}) or a deletion ({@link LogRecords#DELETION}: events of an id up to a sequence
 * number are gone, and the highest sequence number it wrote). On open, every segment is read in
 * order to rebuild the index; a record cut short or failing its checksum at the end of the last
 * segment is what a process killed while writing leaves, and is cut off; anywhere else it is
 * corruption and opening fails, naming the file and offset.
 *
 * <p>Space: segments are removed oldest first, so a deletion can never be lost while an older
 * event it deleted is still on disk. When the files hold more than twice the live bytes plus a
 * segment, the oldest segment's live records (events not deleted, and each id's latest deletion
 * when it is that id's latest record) are appended again at the head and the segment removed:
 * the directory stays within about twice what is live plus two segments.
 *
 * <p>Durability: a write returns once its bytes are in the operating system's page cache, which
 * survives the process (kill -9) but not the machine; with {@code fsync} each write also waits for
 * the disk. One process at a time: the directory is locked while open ({@code lock} file). All
 * methods are synchronized; writes are expected from few threads.
 */
public final class EventLog implements AutoCloseable {

  /** An event as stored: the serialized payload and what Akka needs to rebuild it. */
  public record StoredEvent(String persistenceId, long sequenceNr, long timestamp, String writerUuid,
      String adapterManifest, int serializerId, String serializerManifest, byte[] payload) {}

  private record Location(LogSegment segment, long offset, int bytes) {}

  /** One persistence id: its live events by sequence number, its latest deletion if live, its highest. */
  private static final class Id {
    final NavigableMap<Long, Location> events = new TreeMap<>();
    Location deletion;
    long deletedTo;
    long highest;
  }

  private final Path dir;
  private final long segmentBytes;
  private final boolean fsync;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final TreeMap<Long, LogSegment> segments = new TreeMap<>();
  private final Map<String, Id> ids = new HashMap<>();
  private long totalBytes;
  private long liveBytes;
  private boolean closed;

  private EventLog(Path dir, long segmentBytes, boolean fsync, FileChannel lockChannel, FileLock lock) {
    this.dir = dir;
    this.segmentBytes = segmentBytes;
    this.fsync = fsync;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /**
   * Opens (creating it if needed) the log in {@code dir}, locking it against other processes, and
   * reads it back.
   *
   * @throws IllegalStateException if another process holds the directory, or a segment is corrupt
   * @throws UncheckedIOException if the directory cannot be created or read
   */
  public static EventLog open(Path dir, long segmentBytes, boolean fsync) {
    if (segmentBytes < 4096) throw new IllegalArgumentException("segment size must be at least 4096 bytes, got "
        + segmentBytes);
    FileChannel lockChannel = null;
    try {
      Files.createDirectories(dir);
      lockChannel = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = lockChannel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        throw new IllegalStateException("journal directory " + dir + " is in use by another process (or another"
            + " open log in this one): give each JVM its own shardtrain.persistence.log-dir, or share a journal"
            + " between JVMs with journal = postgres");
      }
      EventLog log = new EventLog(dir, segmentBytes, fsync, lockChannel, lock);
      try {
        log.recover();
      } catch (IOException | RuntimeException e) {
        log.close(); // the segments opened so far, and the lock
        throw e;
      }
      return log;
    } catch (IOException e) {
      closeQuietly(lockChannel);
      throw new UncheckedIOException("cannot open the journal log in " + dir + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      closeQuietly(lockChannel);
      throw e;
    }
  }

  /** A write of a sequence number at or below one its id already wrote (the log and the memory journal refuse it). */
  public static final class SequenceConflict extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    SequenceConflict(String id, long sequenceNr, long highest) {
      super("event " + sequenceNr + " of " + id + " written after event " + highest
          + ": two writers of one persistence id");
    }
  }

  /**
   * Appends {@code events} (each id's in increasing sequence order) in one write. Nothing is
   * written if any event is at or below its id's highest sequence number ({@link SequenceConflict}).
   */
  public synchronized void append(List<StoredEvent> events) throws IOException {
    checkOpen();
    Map<String, Long> highestAfter = new HashMap<>();
    for (StoredEvent e : events) {
      long highest = highestAfter.computeIfAbsent(e.persistenceId(), k -> {
        Id id = ids.get(k);
        return id == null ? 0L : id.highest;
      });
      if (e.sequenceNr() <= highest) throw new SequenceConflict(e.persistenceId(), e.sequenceNr(), highest);
      highestAfter.put(e.persistenceId(), e.sequenceNr());
    }
    List<ByteBuffer[]> records = new ArrayList<>(events.size());
    for (StoredEvent e : events) records.add(LogRecords.event(e));
    List<Location> at = write(records);
    for (int i = 0; i < events.size(); i++) {
      StoredEvent e = events.get(i);
      Id id = ids.computeIfAbsent(e.persistenceId(), k -> new Id());
      supersedeDeletion(id);
      id.events.put(e.sequenceNr(), at.get(i));
      id.highest = e.sequenceNr();
      addLive(at.get(i));
    }
    clean();
  }

  /** Deletes {@code persistenceId}'s events up to and including {@code toSequenceNr}; keeps its highest. */
  public synchronized void deleteTo(String persistenceId, long toSequenceNr) throws IOException {
    checkOpen();
    Id id = ids.get(persistenceId);
    if (id == null) return;
    long to = Math.min(toSequenceNr, id.highest);
    if (to <= id.deletedTo) return;
    List<ByteBuffer[]> record = new ArrayList<>();
    record.add(LogRecords.deletion(persistenceId, to, id.highest));
    Location at = write(record).get(0);
    NavigableMap<Long, Location> gone = id.events.headMap(to, true);
    for (Location l : gone.values()) removeLive(l);
    gone.clear();
    supersedeDeletion(id);
    id.deletion = at;
    id.deletedTo = to;
    addLive(at);
    clean();
  }

  /** The highest sequence number {@code persistenceId} wrote (deleted or not), 0 if none. */
  public synchronized long highestSequenceNr(String persistenceId) {
    Id id = ids.get(persistenceId);
    return id == null ? 0L : id.highest;
  }

  /** Live events of {@code persistenceId} from {@code from} to {@code to}, at most {@code max}, in order. */
  public synchronized List<StoredEvent> read(String persistenceId, long from, long to, long max) throws IOException {
    checkOpen();
    Id id = ids.get(persistenceId);
    List<StoredEvent> out = new ArrayList<>();
    if (id == null || from > to) return out;
    for (Location l : id.events.subMap(from, true, to, true).values()) {
      if (out.size() >= max) break;
      ByteBuffer body = readBody(l);
      body.get(); // type
      out.add(LogRecords.decodeEvent(body));
    }
    return out;
  }

  /** Bytes of the segment files. */
  public synchronized long fileBytes() {
    return totalBytes;
  }

  /** Bytes of the live records (events not deleted, and the deletions that must be kept). */
  public synchronized long liveBytes() {
    return liveBytes;
  }

  /** The number of segment files. */
  public synchronized int segmentCount() {
    return segments.size();
  }

  public Path directory() {
    return dir;
  }

  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    for (LogSegment s : segments.values()) s.close();
    try {
      lock.release();
    } catch (IOException e) {
      // the channel's close below releases it too
    }
    closeQuietly(lockChannel);
  }

  // ---- writing

  private List<Location> write(List<ByteBuffer[]> records) throws IOException {
    List<Location> at = new ArrayList<>(records.size());
    List<ByteBuffer> pending = new ArrayList<>();
    LogSegment active = segments.isEmpty() ? roll() : segments.lastEntry().getValue();
    long position = active.size;
    for (ByteBuffer[] r : records) {
      int bytes = 0;
      for (ByteBuffer b : r) bytes += b.remaining();
      if (position > LogSegment.FILE_HEADER && position + bytes > segmentBytes) {
        flush(active, pending, position);
        active = roll();
        position = LogSegment.FILE_HEADER;
      }
      at.add(new Location(active, position, bytes));
      pending.addAll(List.of(r));
      position += bytes;
    }
    flush(active, pending, position);
    return at;
  }

  /** Appends {@code pending} to {@code segment}, which then ends at {@code end}. */
  private void flush(LogSegment segment, List<ByteBuffer> pending, long end) throws IOException {
    if (pending.isEmpty()) return;
    long before = segment.size;
    try {
      segment.append(pending.toArray(ByteBuffer[]::new), end - before, fsync);
    } catch (LogSegment.Unrecoverable e) {
      closed = true; // the file's end is unknown: nothing more may be appended to it
      throw e;
    }
    totalBytes += end - before;
    pending.clear();
  }

  private LogSegment roll() throws IOException {
    long id = segments.isEmpty() ? 1 : segments.lastKey() + 1;
    LogSegment s = LogSegment.create(dir, id);
    if (fsync) forceDirectory();
    segments.put(id, s);
    totalBytes += s.size;
    return s;
  }

  // ---- space

  private void supersedeDeletion(Id id) {
    if (id.deletion != null) {
      removeLive(id.deletion);
      id.deletion = null;
    }
  }

  private void addLive(Location l) {
    l.segment.live += l.bytes;
    liveBytes += l.bytes;
  }

  private void removeLive(Location l) {
    l.segment.live -= l.bytes;
    liveBytes -= l.bytes;
  }

  /** Removes dead segments from the oldest, and moves the oldest's live records to the head while the files hold too much. */
  private void clean() throws IOException {
    int budget = segments.size();
    while (segments.size() > 1 && budget-- > 0) {
      LogSegment oldest = segments.firstEntry().getValue();
      if (oldest.live > 0) {
        if (totalBytes <= 2 * liveBytes + segmentBytes) return;
        relocate(oldest);
      }
      remove(oldest);
    }
  }

  private void relocate(LogSegment from) throws IOException {
    List<Id> owners = new ArrayList<>();
    List<Long> keys = new ArrayList<>();
    List<Location> olds = new ArrayList<>();
    for (Id id : ids.values()) {
      for (Map.Entry<Long, Location> e : id.events.entrySet()) {
        if (e.getValue().segment == from) {
          owners.add(id);
          keys.add(e.getKey());
          olds.add(e.getValue());
        }
      }
      if (id.deletion != null && id.deletion.segment == from) {
        owners.add(id);
        keys.add(null);
        olds.add(id.deletion);
      }
    }
    List<ByteBuffer[]> records = new ArrayList<>(olds.size());
    for (Location l : olds) records.add(new ByteBuffer[] {readRecord(l)});
    List<Location> news = write(records);
    for (int i = 0; i < olds.size(); i++) {
      removeLive(olds.get(i));
      addLive(news.get(i));
      if (keys.get(i) == null) owners.get(i).deletion = news.get(i);
      else owners.get(i).events.put(keys.get(i), news.get(i));
    }
  }

  private void remove(LogSegment s) throws IOException {
    segments.remove(s.id);
    totalBytes -= s.size;
    s.delete();
  }

  // ---- reading

  private ByteBuffer readRecord(Location l) throws IOException {
    return l.segment.read(l.offset, l.bytes);
  }

  private ByteBuffer readBody(Location l) throws IOException {
    ByteBuffer b = readRecord(l);
    b.position(LogRecords.HEADER);
    return b.slice();
  }

  // ---- recovery

  private void recover() throws IOException {
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = list.filter(p -> p.getFileName().toString().endsWith(LogSegment.SUFFIX)).sorted().toList();
    }
    for (Path p : files) {
      LogSegment s = LogSegment.open(p);
      segments.put(s.id, s);
    }
    Iterator<LogSegment> it = segments.values().iterator();
    while (it.hasNext()) {
      LogSegment s = it.next();
      s.scan(!it.hasNext(), (body, offset, bytes) -> apply(body, new Location(s, offset, bytes)));
      totalBytes += s.size;
    }
    clean();
  }

  private void apply(ByteBuffer body, Location at) {
    byte type = body.get();
    String pid = LogRecords.getString(body);
    Id id = ids.computeIfAbsent(pid, k -> new Id());
    if (type == LogRecords.EVENT) {
      long seq = body.getLong();
      if (seq <= id.deletedTo) return;
      Location before = id.events.put(seq, at);
      if (before != null) removeLive(before); // a record moved to the head: the later copy counts
      supersedeDeletion(id);
      id.highest = Math.max(id.highest, seq);
      addLive(at);
    } else if (type == LogRecords.DELETION) {
      long to = body.getLong();
      long highest = body.getLong();
      NavigableMap<Long, Location> gone = id.events.headMap(to, true);
      for (Location l : gone.values()) removeLive(l);
      gone.clear();
      supersedeDeletion(id);
      id.deletion = at;
      id.deletedTo = Math.max(id.deletedTo, to);
      id.highest = Math.max(id.highest, highest);
      addLive(at);
    } else {
      throw new IllegalStateException("journal log " + at.segment.path + ": unknown record type " + type + " at byte "
          + at.offset);
    }
  }

  // ---- helpers

  private void checkOpen() {
    if (closed) throw new IllegalStateException("journal log " + dir + " is closed");
  }

  private void forceDirectory() {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // not every file system lets a directory be opened and forced; the segment's own force still holds
    }
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch == null) return;
    try {
      ch.close();
    } catch (IOException ignored) {
      // closing after use or after a failure: nothing left to save
    }
  }
}
