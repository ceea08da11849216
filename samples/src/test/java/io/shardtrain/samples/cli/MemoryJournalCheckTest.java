package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.compute.nn.Mlp;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MemoryJournalCheckTest {
  private static final long HEAP = 6_000_000_000L;

  private static PsSettings snapshotEvery(int n) {
    return new PsSettings(262_144, n, Duration.ofSeconds(30), Duration.ofSeconds(10),
        PsSettings.NonFinitePolicy.REJECT, -1, 1);
  }

  /**
   * MNIST's MLP keeps 43 MB of events and up to 13 MB of snapshots by default; with snapshot-every
   * 1000, 4.30 GB, over half of 6 GB.
   */
  @Test
  void aMemoryJournalThatCouldHoldMoreThanHalfTheHeapIsRefusedWithWhatToChange() {
    long mnist = Mlp.parameterCount(784, new int[] {512, 256}, 10);
    assertDoesNotThrow(() -> LocalRun.checkMemoryJournal(snapshotEvery(10), mnist, HEAP));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LocalRun.checkMemoryJournal(snapshotEvery(1000), mnist, HEAP));
    assertTrue(e.getMessage().contains("snapshot-every (1000)") && e.getMessage().contains("4.30 GB")
        && e.getMessage().contains("535818 floats") && e.getMessage().contains("6.00 GB"), e.getMessage());
    // Checkpoint durability journals no steps between checkpoints.
    assertDoesNotThrow(() -> LocalRun.checkMemoryJournal(
        snapshotEvery(1000).withDurability(PsSettings.Durability.CHECKPOINT), mnist, HEAP));
  }
}
