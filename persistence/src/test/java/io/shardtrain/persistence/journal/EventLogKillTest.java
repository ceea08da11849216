package io.shardtrain.persistence.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a JVM killed with SIGKILL while it writes leaves in the log: every event whose write had
 * returned is there, whole, when another process opens it; while the writer lived, the other
 * process could not open the directory.
 */
class EventLogKillTest {
  private static final int BYTES = 100_000;

  @TempDir Path dir;

  private static byte[] payload(long seq) {
    byte[] b = new byte[BYTES];
    Arrays.fill(b, (byte) seq);
    b[0] = (byte) (seq >> 8);
    return b;
  }

  /** Appends events of two ids for ever, deleting behind every 10, printing each sequence number once its write returned. */
  public static void main(String[] args) throws Exception {
    try (EventLog log = EventLog.open(Path.of(args[0]), 1 << 20, false)) {
      for (long seq = 1; ; seq++) {
        log.append(List.of(new EventLog.StoredEvent("a", seq, seq, "w", "", 1, "", payload(seq)),
            new EventLog.StoredEvent("b", seq, seq, "w", "", 1, "", payload(seq + 1))));
        if (seq % 10 == 0) log.deleteTo("a", seq - 10);
        System.out.println("written " + seq);
        System.out.flush();
      }
    }
  }

  @Test
  void everyEventWrittenBeforeSigkillIsThereWhenTheNextProcessOpensTheLog() throws Exception {
    Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), EventLogKillTest.class.getName(), dir.toString())
        .redirectErrorStream(true).start();
    long written = 0;
    try (BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(),
        StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        if (!line.startsWith("written ")) throw new AssertionError("writer said: " + line);
        written = Long.parseLong(line.substring("written ".length()));
        if (written == 20) {
          IllegalStateException e = assertThrows(IllegalStateException.class, () -> EventLog.open(dir, 1 << 20, false));
          assertTrue(e.getMessage().contains("in use by another process"), e.getMessage());
        }
        if (written >= 300) break;
      }
      writer.destroyForcibly(); // SIGKILL: no shutdown hook, no close
      assertTrue(writer.waitFor(30, TimeUnit.SECONDS));
    }
    assertTrue(written >= 300, "the writer stopped after " + written + " events");
    try (EventLog log = EventLog.open(dir, 1 << 20, false)) {
      long highest = log.highestSequenceNr("b");
      // What the writer reported is there, and what it wrote after the report was read, up to the kill.
      assertTrue(highest >= written, highest + " after " + written + " reported");
      List<EventLog.StoredEvent> b = log.read("b", 1, Long.MAX_VALUE, Long.MAX_VALUE);
      assertEquals(highest, b.size());
      for (EventLog.StoredEvent e : b) assertArrayEquals(payload(e.sequenceNr() + 1), e.payload());
      List<EventLog.StoredEvent> a = log.read("a", 1, Long.MAX_VALUE, Long.MAX_VALUE);
      assertTrue(a.size() >= 10 && a.size() <= 20, a.size() + " events of a");
      for (EventLog.StoredEvent e : a) assertArrayEquals(payload(e.sequenceNr()), e.payload());
      // The log goes on after the last event.
      log.append(List.of(new EventLog.StoredEvent("b", highest + 1, 0, "w", "", 1, "", payload(0))));
    }
  }
}
