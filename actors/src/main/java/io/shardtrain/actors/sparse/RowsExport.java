package io.shardtrain.actors.sparse;

import io.shardtrain.compute.sparse.RowStore;
import io.shardtrain.compute.sparse.SparseTable;
import java.util.Arrays;

/**
 * A shard's stored rows in pages of ascending id, for saving a model: each page starts after the
 * last id of the one before, so a shard that restarts between pages (and stores its rows in
 * another order) still gives every row once. The sorted ids are kept between pages, sorted again
 * only when the table changed (another version or row count), and dropped after the last page.
 * Plain state of one shard.
 */
public final class RowsExport {
  /** Rows of {@code dim} values each: {@code values[k * dim, (k + 1) * dim)} is row {@code ids[k]}; {@code more}: rows follow. */
  public record Page(long[] ids, float[] values, boolean more) {}

  private long[] sorted = new long[0];
  private long sortedVersion = -1;
  private int sortedSize = -1;

  /** Rows of {@code dim} values (and their ids) that fit 1 MiB: a page that passes the cluster's 2 MiB frames. */
  public static int pageRows(int dim) {
    return Math.max(1, (1 << 20) / (8 + 4 * dim));
  }

  /** Every stored row of {@code table}, ids ascending (a single process's table, saved whole). */
  public static Page all(SparseTable table) {
    return new RowsExport().page(table, 0, -1, Math.max(1, table.store().size()));
  }

  /** The first {@code limit} stored rows with an id above {@code after} (-1: from the first), values only (no optimizer slots). */
  Page page(SparseTable table, long version, long after, int limit) {
    RowStore store = table.store();
    if (version != sortedVersion || store.size() != sortedSize) {
      sorted = new long[store.size()];
      for (int r = 0; r < sorted.length; r++) sorted[r] = store.id(r);
      Arrays.sort(sorted);
      sortedVersion = version;
      sortedSize = store.size();
    }
    int from = Arrays.binarySearch(sorted, after);
    from = from >= 0 ? from + 1 : -from - 1;
    int to = (int) Math.min(sorted.length, (long) from + Math.max(1, limit));
    int dim = table.dim();
    long[] ids = Arrays.copyOfRange(sorted, from, to);
    float[] values = new float[ids.length * dim];
    for (int k = 0; k < ids.length; k++) {
      int row = store.find(ids[k]);
      System.arraycopy(store.page(row), store.base(row), values, k * dim, dim);
    }
    boolean more = to < sorted.length;
    // The last page: the sorted ids (8 bytes a row) need not stay in the shard's memory.
    if (!more) forget();
    return new Page(ids, values, more);
  }

  private void forget() {
    sorted = new long[0];
    sortedVersion = -1;
    sortedSize = -1;
  }
}
