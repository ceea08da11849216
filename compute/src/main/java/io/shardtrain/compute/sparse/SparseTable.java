package io.shardtrain.compute.sparse;

/**
 * One shard's rows of a sparse table and what happens to them: lookups, lazy creation from the
 * table's {@link RowInit}, the {@link RowOptimizer} applied to a row where it lies, admission
 * (a row is created only once its id was seen {@code admitAfter} times in pushes, counted in a
 * {@link CountMinSketch}; with {@code admitAfter <= 1} there is no sketch) and expiry (rows no
 * push touched for {@code expireAfter} steps are evicted; 0: never). A pull of a row that is not
 * stored gets its initial values and creates nothing. Plain, single-threaded state.
 */
public final class SparseTable {
  private final int dim;
  private final RowInit init;
  private final RowOptimizer optimizer;
  private final int admitAfter;
  private final long expireAfter;
  private final RowStore store;
  private final CountMinSketch sketch;

  /** What an {@link #apply} did to its row. */
  public enum Applied {
    /** The row was stored and updated. */
    UPDATED,
    /** The row was created (admitted) and updated. */
    CREATED,
    /** The row is not admitted yet: its sighting was counted, its gradient dropped. */
    NOT_ADMITTED
  }

  public SparseTable(int dim, RowInit init, RowOptimizer optimizer, int admitAfter, int sketchDepth,
      int sketchWidth, long expireAfter) {
    if (dim < 1) throw new IllegalArgumentException("row dim must be >= 1, not " + dim);
    if (init == null || optimizer == null) throw new IllegalArgumentException("a table needs an initializer and an optimizer");
    if (admitAfter < 1) throw new IllegalArgumentException("admission after must be >= 1 sighting, not " + admitAfter);
    if (expireAfter < 0) throw new IllegalArgumentException("expiry must be >= 0 steps (0 = never), not " + expireAfter);
    this.dim = dim;
    this.init = init;
    this.optimizer = optimizer;
    this.admitAfter = admitAfter;
    this.expireAfter = expireAfter;
    this.store = new RowStore(dim * (1 + optimizer.slotCount()));
    this.sketch = admitAfter > 1 ? new CountMinSketch(sketchDepth, sketchWidth) : null;
  }

  public int dim() {
    return dim;
  }

  public RowStore store() {
    return store;
  }

  /** The admission sketch, or null when every row is admitted at once. */
  public CountMinSketch sketch() {
    return sketch;
  }

  public RowOptimizer optimizer() {
    return optimizer;
  }

  /** Writes row {@code id}'s values into {@code out} from {@code offset}: stored, or its initial values. */
  public void read(long id, float[] out, int offset) {
    int row = store.find(id);
    if (row < 0) {
      init.fill(id, out, offset, dim);
    } else {
      System.arraycopy(store.page(row), store.base(row), out, offset, dim);
    }
  }

  /**
   * Counts {@code sightings} of row {@code id} (the pushes that carried it) and, once it is
   * admitted, applies {@code grad[offset, offset + dim)} to it at {@code step}.
   */
  public Applied apply(long id, float[] grad, int offset, int sightings, long step) {
    int row = store.find(id);
    Applied what = Applied.UPDATED;
    if (row < 0) {
      if (sketch != null && sketch.add(id, sightings) < admitAfter) return Applied.NOT_ADMITTED;
      row = store.insert(id, step);
      float[] page = store.page(row);
      init.fill(id, page, store.base(row), dim);
      optimizer.initSlots(page, store.base(row), dim);
      what = Applied.CREATED;
    }
    optimizer.apply(store.page(row), store.base(row), dim, grad, offset);
    store.touch(row, step);
    return what;
  }

  /** The ids of the rows untouched for {@code expireAfter} steps at step {@code step}, in row order. */
  public long[] expiredAt(long step) {
    if (expireAfter == 0) return new long[0];
    int n = 0;
    long[] out = new long[16];
    for (int row = 0; row < store.size(); row++) {
      if (step - store.touched(row) >= expireAfter) {
        if (n == out.length) out = java.util.Arrays.copyOf(out, n * 2);
        out[n++] = store.id(row);
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  /** Evicts the rows of {@code ids}; returns how many were stored. */
  public int evict(long[] ids) {
    int n = 0;
    for (long id : ids) {
      if (store.remove(id)) n++;
    }
    return n;
  }

  /**
   * Stores row {@code id} with the values {@code values[offset, offset + dim)} and its optimizer
   * slots at their initial values, last touched at {@code touched}: a row a saved model starts.
   */
  public void load(long id, float[] values, int offset, long touched) {
    int row = store.find(id);
    if (row < 0) row = store.insert(id, touched);
    float[] page = store.page(row);
    int base = store.base(row);
    System.arraycopy(values, offset, page, base, dim);
    optimizer.initSlots(page, base, dim);
    store.touch(row, touched);
  }

  /** Stores row {@code id} as {@code data[offset, offset + width)} (values and slots), last touched at {@code touched}. */
  public void restoreRow(long id, float[] data, int offset, long touched) {
    int row = store.find(id);
    if (row < 0) row = store.insert(id, touched);
    System.arraycopy(data, offset, store.page(row), store.base(row), store.width());
    store.touch(row, touched);
  }
}
