package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.persistence.journal.JournalConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecoveryBenchmarkTest {
  @TempDir Path dir;

  /**
   * Two blocks (20,000 floats as 16,384 + 3,616), snapshot every 4 events: 6 updates after the
   * Initialized event make 7 events, so each block comes back from its snapshot at 4 and replays 3.
   */
  @Test
  void blocksRecoverOnANewSystemFromTheH2JournalReplayingTheEventsBehindTheirSnapshot() {
    RecoveryBenchmark.Result r = RecoveryBenchmark.run(20_000, 16_384, 4,
        JournalConfig.forUrl("jdbc:h2:" + dir.resolve("journal")));
    assertEquals(2, r.blocks());
    assertEquals(6, r.updates());
    assertEquals("h2", r.journal());
    // The snapshot at 4 is each block's first, so Akka cannot have skipped it.
    assertEquals(2 * 3, r.eventsReplayed(), r.summary());
    assertTrue(r.recoverySeconds() > 0, r.summary());
  }

  /** The same on the log journal: the second system reopens the log the first closed. */
  @Test
  void blocksRecoverOnANewSystemFromTheLogJournalReplayingTheEventsBehindTheirSnapshot() {
    RecoveryBenchmark.Result r = RecoveryBenchmark.run(20_000, 16_384, 4, com.typesafe.config.ConfigFactory.parseMap(
        java.util.Map.of("shardtrain.persistence.journal", "log", "shardtrain.persistence.log-dir",
            dir.resolve("log").toString())));
    assertEquals("log", r.journal());
    assertEquals(2 * 3, r.eventsReplayed(), r.summary());
    assertTrue(r.recoverySeconds() > 0, r.summary());
  }

  @Test
  void aSnapshotIntervalBelowOneIsRefusedNamingIt() {
    var e = assertThrows(IllegalArgumentException.class, () -> RecoveryBenchmark.run(10, 10, 0,
        JournalConfig.forUrl("jdbc:h2:" + dir.resolve("j"))));
    assertTrue(e.getMessage().contains("snapshot-every"), e.getMessage());
  }
}
