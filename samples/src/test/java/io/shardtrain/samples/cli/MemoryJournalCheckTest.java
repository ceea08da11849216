package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
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

  /** 784 inputs to 2,000,000 hidden units: 1.59e9 floats, 25.4 GB for the single process's four copies. */
  @Test
  void aModelTooLargeForTheHeapIsRefusedBeforeItIsMade() {
    long mnist = Mlp.parameterCount(784, new int[] {512, 256}, 10);
    assertDoesNotThrow(() -> LocalRun.checkModelFits(mnist, 0, HEAP));
    assertDoesNotThrow(() -> LocalRun.checkModelFits(mnist, 2, HEAP));
    long huge = Mlp.parameterCount(784, new int[] {2_000_000}, 10);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LocalRun.checkModelFits(huge, 0, HEAP));
    assertEquals("the model's 1590000010 floats need about 25.44 GB here (values, gradients and optimizer slots),"
        + " more than the JVM's 6.00 GB heap; use narrower --hidden layers or a larger heap"
        + " (SHARDTRAIN_JAVA_OPTS=-Xmx...)", e.getMessage());
    // A local cluster keeps each trainer's copies in the same JVM: 100M floats fit one process, not two trainers.
    assertDoesNotThrow(() -> LocalRun.checkModelFits(100_000_000L, 0, 2_000_000_000L));
    assertThrows(IllegalArgumentException.class, () -> LocalRun.checkModelFits(100_000_000L, 2, 2_000_000_000L));
  }
}
