package io.shardtrain.actors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.shardtrain.actors.sparse.SparseProtocol.RowsPage;
import java.util.List;
import org.junit.jupiter.api.Test;

class CtrModelReadTest {
  @Test
  void theShardsPagesMergeIntoOneAscendingOrderWithEachRowsValues() {
    List<RowsPage> shard0 = List.of(new RowsPage(0, 5, new long[] {2, 8}, new float[] {2, 2.5f, 8, 8.5f}, true),
        new RowsPage(0, 5, new long[] {9}, new float[] {9, 9.5f}, false));
    List<RowsPage> shard1 = List.of(new RowsPage(1, 5, new long[] {1, 3, 20}, new float[] {1, 1.5f, 3, 3.5f, 20, 20.5f},
        false));
    List<RowsPage> empty = List.of(new RowsPage(2, 5, new long[0], new float[0], false));
    CtrModelRead.Merged m = CtrModelRead.merge(List.of(shard0, shard1, empty), 2);
    assertArrayEquals(new long[] {1, 2, 3, 8, 9, 20}, m.ids());
    assertArrayEquals(new float[] {1, 1.5f, 2, 2.5f, 3, 3.5f, 8, 8.5f, 9, 9.5f, 20, 20.5f}, m.values());
  }
}
