package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.sparse.RowOptimizer;
import org.junit.jupiter.api.Test;

class SparseMemoryBenchmarkTest {

  @Test
  void rowsOfSixteenFloatsWithAdagradStayWithinOneAndAHalfTimesTheirValuesPlusTheirSlots() {
    SparseMemoryBenchmark.Result r = SparseMemoryBenchmark.run(50_000, 16, RowOptimizer.Kind.ADAGRAD);
    // 50,000 ids drawn from 2^40 collide with probability ~1e-3: all rows stored, or one fewer.
    assertTrue(r.rows() >= 49_999 && r.rows() <= 50_000, r.summary());
    assertEquals("adagrad", r.optimizer());
    // Values and slots are 128 bytes; the bound is 1.5 x 64 + 64.
    assertTrue(r.bytesPerRow() >= 128 && r.bytesPerRow() <= 1.5 * 64 + 64, r.summary());
    assertTrue(r.createSeconds() > 0 && r.updateSeconds() > 0 && r.readSeconds() > 0, r.summary());
  }

  @Test
  void noRowsIsRefusedNamingIt() {
    var e = assertThrows(IllegalArgumentException.class, () -> SparseMemoryBenchmark.run(0, 16, RowOptimizer.Kind.SGD));
    assertTrue(e.getMessage().contains("rows"), e.getMessage());
  }
}
