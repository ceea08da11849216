package io.shardtrain.persistence.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The journal's append-only log, without Akka: what it reads back, after a reopen, a torn write, in bounded space. */
class EventLogTest {
  private static final long SEGMENT = 64 * 1024;

  @TempDir
  Path dir;

  private static EventLog.StoredEvent event(String pid, long seq, int bytes) {
    byte[] payload = new byte[bytes];
    Arrays.fill(payload, (byte) (seq * 31 + pid.hashCode()));
    return new EventLog.StoredEvent(pid, seq, 1_000 + seq, "writer-" + pid, "adapter", 17, "m" + seq, payload);
  }

  private static List<Long> sequenceNrs(List<EventLog.StoredEvent> events) {
    return events.stream().map(EventLog.StoredEvent::sequenceNr).toList();
  }

  private List<Path> segments() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
    }
  }

  @Test
  void eventsComeBackWhole_inOrder_afterTheLogIsReopened() throws IOException {
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      log.append(List.of(event("a", 1, 100), event("b", 1, 5), event("a", 2, 0)));
      log.append(List.of(event("a", 3, 70_000))); // larger than a segment: a segment of its own
    }
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      List<EventLog.StoredEvent> a = log.read("a", 1, Long.MAX_VALUE, Long.MAX_VALUE);
      assertEquals(List.of(1L, 2L, 3L), sequenceNrs(a));
      EventLog.StoredEvent first = a.get(0);
      EventLog.StoredEvent expected = event("a", 1, 100);
      assertArrayEquals(expected.payload(), first.payload());
      assertEquals("writer-a", first.writerUuid());
      assertEquals("adapter", first.adapterManifest());
      assertEquals(17, first.serializerId());
      assertEquals("m1", first.serializerManifest());
      assertEquals(1_001L, first.timestamp());
      assertEquals(0, a.get(1).payload().length);
      assertArrayEquals(event("a", 3, 70_000).payload(), a.get(2).payload());
      assertEquals(List.of(2L), sequenceNrs(log.read("a", 2, 2, 10)));
      assertEquals(List.of(1L, 2L), sequenceNrs(log.read("a", 1, 3, 2)));
      assertEquals(3L, log.highestSequenceNr("a"));
      assertEquals(1L, log.highestSequenceNr("b"));
      assertEquals(0L, log.highestSequenceNr("never"));
      assertEquals(2, log.segmentCount());
    }
  }

  @Test
  void aDeletionKeepsTheLaterEventsAndTheHighestSequenceNumber_acrossAReopen() throws IOException {
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      for (long s = 1; s <= 30; s++) log.append(List.of(event("block", s, 10)));
      log.deleteTo("block", 20);
      assertEquals(List.of(21L, 22L), sequenceNrs(log.read("block", 1, 22, 100)));
    }
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      assertEquals(10, log.read("block", 1, Long.MAX_VALUE, 100).size());
      log.deleteTo("block", Long.MAX_VALUE);
      assertEquals(List.of(), log.read("block", 1, Long.MAX_VALUE, 100));
      assertEquals(30L, log.highestSequenceNr("block"));
    }
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      assertEquals(30L, log.highestSequenceNr("block"));
      assertThrows(EventLog.SequenceConflict.class, () -> log.append(List.of(event("block", 30, 1))));
      log.append(List.of(event("block", 31, 1)));
      assertEquals(List.of(31L), sequenceNrs(log.read("block", 1, Long.MAX_VALUE, 100)));
    }
  }

  @Test
  void aSecondWriteOfASequenceNumberFailsTheWholeBatchAndWritesNothing() throws IOException {
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      log.append(List.of(event("block", 1, 10), event("block", 2, 10)));
      long bytes = log.fileBytes();
      EventLog.SequenceConflict e = assertThrows(EventLog.SequenceConflict.class,
          () -> log.append(List.of(event("other", 1, 10), event("block", 2, 10))));
      assertTrue(e.getMessage().contains("event 2 of block written after event 2"), e.getMessage());
      assertEquals(bytes, log.fileBytes());
      assertEquals(0L, log.highestSequenceNr("other"));
    }
  }

  @Test
  void aWriteCutShortAtTheEndIsDroppedOnOpen_andTheLogGoesOn() throws IOException {
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      log.append(List.of(event("block", 1, 1000), event("block", 2, 1000)));
    }
    Path segment = segments().get(0);
    long whole = Files.size(segment);
    try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
      f.setLength(whole - 300); // the second event's last 300 bytes never reached the file
    }
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      assertEquals(List.of(1L), sequenceNrs(log.read("block", 1, Long.MAX_VALUE, 100)));
      assertEquals(1L, log.highestSequenceNr("block"));
      log.append(List.of(event("block", 2, 1000)));
    }
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      assertArrayEquals(event("block", 2, 1000).payload(), log.read("block", 2, 2, 1).get(0).payload());
    }
  }

  @Test
  void aCorruptRecordBeforeTheEndFailsTheOpen_namingTheFileAndTheByte() throws IOException {
    try (EventLog log = EventLog.open(dir, 4096, false)) {
      for (long s = 1; s <= 6; s++) log.append(List.of(event("block", s, 3000)));
    }
    Path first = segments().get(0);
    try (RandomAccessFile f = new RandomAccessFile(first.toFile(), "rw")) {
      f.seek(2000);
      f.write(f.read() ^ 0x40);
    }
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> EventLog.open(dir, 4096, false));
    assertTrue(e.getMessage().contains(first.toString()) && e.getMessage().contains("at byte 8")
        && e.getMessage().contains("checksum"), e.getMessage());
  }

  @Test
  void aSegmentOfAnotherFormatVersionOrNoSegmentAtAllFailsTheOpenNamingIt() throws IOException {
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      log.append(List.of(event("block", 1, 10)));
    }
    Path segment = segments().get(0);
    try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
      f.seek(4);
      f.writeInt(2);
    }
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> EventLog.open(dir, SEGMENT, false));
    assertTrue(e.getMessage().contains(segment.toString()) && e.getMessage().contains("format version 2"),
        e.getMessage());
    Files.write(segment, "not a journal".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    e = assertThrows(IllegalStateException.class, () -> EventLog.open(dir, SEGMENT, false));
    assertTrue(e.getMessage().contains("is not a journal segment"), e.getMessage());
  }

  @Test
  void aSegmentCreatedAsTheProcessDiedIsTakenAsEmpty() throws IOException {
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      log.append(List.of(event("block", 1, 10)));
    }
    Files.write(dir.resolve(String.format("%020d", 2) + ".log"), new byte[3]); // its header cut short
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      assertEquals(List.of(1L), sequenceNrs(log.read("block", 1, 10, 10)));
      log.append(List.of(event("block", 2, 10)));
    }
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      assertEquals(List.of(1L, 2L), sequenceNrs(log.read("block", 1, 10, 10)));
    }
  }

  @Test
  void aLogOpenElsewhereCannotBeOpenedAgain() {
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> EventLog.open(dir, SEGMENT, false));
      assertTrue(e.getMessage().contains("in use"), e.getMessage());
    }
    EventLog.open(dir, SEGMENT, false).close(); // free again once closed
  }

  /**
   * Four blocks journal a step each and delete behind a snapshot every 10 steps, while one id's
   * first events are never deleted: the files stay within twice the live bytes plus two segments,
   * and the old events, moved forward, still read back after a reopen.
   */
  @Test
  void theFilesStayBoundedWhileEventsDie_andLongLivedEventsAreMovedForward() throws IOException {
    int bytes = 5_000;
    long most = 0;
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      log.append(List.of(event("master", 1, 300), event("master", 2, 300)));
      for (long step = 1; step <= 2_000; step++) {
        List<EventLog.StoredEvent> events = new ArrayList<>();
        for (int b = 0; b < 4; b++) events.add(event("block-" + b, step, bytes));
        log.append(events);
        if (step % 10 == 0) {
          for (int b = 0; b < 4; b++) log.deleteTo("block-" + b, step - 10);
        }
        assertTrue(log.fileBytes() <= 2 * log.liveBytes() + 2 * SEGMENT,
            "step " + step + ": " + log.fileBytes() + " bytes in files for " + log.liveBytes() + " live");
        most = Math.max(most, log.fileBytes());
      }
    }
    // 40 MB were written; at most what 20 steps of four blocks and two segments take stayed.
    assertTrue(most <= 2 * 20 * 4 * (bytes + 100) + 2 * SEGMENT, most + " bytes at most");
    try (EventLog log = EventLog.open(dir, SEGMENT, false)) {
      List<EventLog.StoredEvent> master = log.read("master", 1, Long.MAX_VALUE, 10);
      assertEquals(List.of(1L, 2L), sequenceNrs(master));
      assertArrayEquals(event("master", 2, 300).payload(), master.get(1).payload());
      assertEquals(List.of(1991L, 1992L), sequenceNrs(log.read("block-3", 1, 1992, 100)));
      assertEquals(2_000L, log.highestSequenceNr("block-0"));
    }
  }
}
