package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.ps.BlockProtocol;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TaskLeaseTest {
  // Two blocks hold the task's examples up to offsets 20 and 27 (a trainer pushed them and left).
  private final TaskLease lease = new TaskLease(1, 4, 50, 100, 16, Map.of("w#0", 20L, "w#1", 27L));

  @Test
  void aBatchEndsWhereABlockStopsHoldingTheTasksExamples() {
    assertEquals(4, lease.batchLimit(16, 8), "from 16 the batch ends at 20");
    assertEquals(7, lease.batchLimit(20, 8), "from 20 it ends at 27");
    assertEquals(8, lease.batchLimit(27, 8), "past every held offset a full batch");
    assertEquals(8, new TaskLease(0, 0, 0, 10, 0, Map.of()).batchLimit(0, 8));
  }

  @Test
  void aBlockHoldsABatchThatEndsAtOrBeforeItsOffset() {
    assertTrue(lease.holds("w#0", 20));
    assertFalse(lease.holds("w#0", 27));
    assertTrue(lease.holds("w#1", 27));
    assertFalse(lease.holds("b#0", 1), "a block the lease does not name holds nothing");
  }

  @Test
  void aBlockSeveralBatchesAheadGetsNothingForAnyOfThemAndTheBatchesStayWhole() {
    // w#0 holds 4 batches of 8 past the lease's offset 16; w#1 holds none.
    TaskLease ahead = new TaskLease(0, 0, 0, 100, 16, Map.of("w#0", 48L));
    for (long at = 16; at < 48; at += 8) {
      assertEquals(8, ahead.batchLimit(at, 8));
      assertTrue(ahead.holds("w#0", at + 8), "batch ending at " + (at + 8));
      assertFalse(ahead.holds("w#1", at + 8));
    }
    assertFalse(ahead.holds("w#0", 56), "past its examples w#0 gets the batch");
  }

  @Test
  void theReaderStartsAtTheLeasesOffsetAndTheMarkNamesTheTask() {
    io.shardtrain.compute.data.Dataset data = io.shardtrain.compute.data.Dataset.classification(
        new float[200], 2, new int[100], 2);
    var reader = lease.openReader(data, 8, 3);
    assertEquals(1, reader.position().epoch());
    assertEquals(16, reader.position().offset());
    assertEquals(50, reader.epochLength());
    assertEquals(new BlockProtocol.TaskMark(1, 4, 24), lease.mark(24));
  }
}
