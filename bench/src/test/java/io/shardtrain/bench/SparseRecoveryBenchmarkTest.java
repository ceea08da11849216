package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.persistence.journal.JournalConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SparseRecoveryBenchmarkTest {
  @TempDir Path dir;

  /**
   * 12,000 rows of 4 floats with AdaGrad (48 bytes with id and step) in events of at most 128 KiB
   * (124 KiB of rows: 2,645 a chunk): the snapshot is 5 row chunks and its seal, and 2 pushes
   * follow it, so the recovery replays 8 events.
   */
  @Test
  void aShardComesBackOnANewSystemFromItsChunkedSnapshotInTheH2Journal() {
    SparseRecoveryBenchmark.Result r = SparseRecoveryBenchmark.run(12_000, 4, 3_000, 2, 128 * 1024,
        JournalConfig.forUrl("jdbc:h2:" + dir.resolve("journal")));
    assertEquals(12_000, r.rowsRecovered(), r.summary());
    assertEquals("h2", r.journal());
    assertEquals(8, r.eventsReplayed(), r.summary());
    assertTrue(r.recoverySeconds() > 0, r.summary());
  }
}
