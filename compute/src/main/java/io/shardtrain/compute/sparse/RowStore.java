package io.shardtrain.compute.sparse;

import java.util.Arrays;

/**
 * Rows of {@code width} floats keyed by long id, in primitive arrays: no object per row.
 *
 * <p>Rows are numbered 0..size-1 and lie in pages of {@value #PAGE_ROWS} rows: row {@code r}'s
 * floats are {@code page(r)[base(r), base(r) + width)}, and its id and the step it was last
 * touched at lie side by side in a long page ({@code meta}), so the touch that follows a lookup
 * writes the cache line the lookup's id check read. Pages are allocated one at a time, so the
 * slack is at most one page, and growing never copies the rows. An open-addressing index
 * (linear probing, ints holding row + 1, 0 = empty, at most 3/4 full) finds a row by id; it
 * doubles when full, and a removal shifts back the entries behind it instead of leaving
 * tombstones. Removing a row moves the last row into its place, so rows stay dense.
 *
 * <p>Per row: {@code 4 * width + 16} bytes plus 4 to 10.7 bytes of index: for 16 floats and no
 * slots at most 1.42x the raw floats.
 */
public final class RowStore {
  /** Rows per page; a power of two. */
  public static final int PAGE_ROWS = 1024;
  private static final int PAGE_SHIFT = 10;
  private static final int MIN_INDEX = 16;

  private final int width;
  private float[][] data = new float[0][];
  /** Per page: row r's id at {@code 2r}, the step it was last touched at at {@code 2r + 1}. */
  private long[][] meta = new long[0][];
  private int[] index;
  private int size;

  /** A store of rows of {@code width} floats (a row's values and its optimizer slots). */
  public RowStore(int width) {
    this(width, 0);
  }

  /** A store whose index takes {@code expectedRows} rows without doubling. */
  public RowStore(int width, int expectedRows) {
    if (width < 1) throw new IllegalArgumentException("row width must be >= 1, not " + width);
    if (expectedRows < 0 || expectedRows > 1 << 28) {
      throw new IllegalArgumentException("expected rows must be 0 to 2^28, not " + expectedRows);
    }
    this.width = width;
    // At most 3/4 full once it holds them.
    this.index = new int[Math.max(MIN_INDEX, Integer.highestOneBit(Math.max(1, expectedRows * 4 / 3)) << 1)];
  }

  public int width() {
    return width;
  }

  public int size() {
    return size;
  }

  /** The row of {@code id}, or -1. */
  public int find(long id) {
    int mask = index.length - 1;
    for (int i = bucket(id, mask); ; i = (i + 1) & mask) {
      int e = index[i];
      if (e == 0) return -1;
      if (id(e - 1) == id) return e - 1;
    }
  }

  /** Adds a row for {@code id}, which must be absent, last touched at {@code step}; its floats are zero. */
  public int insert(long id, long step) {
    if (size == Integer.MAX_VALUE - 1) throw new IllegalStateException("row store is full");
    if ((size + 1) * 4L > index.length * 3L) resize(index.length * 2);
    int row = size;
    int page = row >>> PAGE_SHIFT;
    if (page == data.length) addPage();
    size++;
    meta[page][2 * (row & (PAGE_ROWS - 1))] = id;
    meta[page][2 * (row & (PAGE_ROWS - 1)) + 1] = step;
    Arrays.fill(data[page], base(row), base(row) + width, 0f);
    int mask = index.length - 1;
    int i = bucket(id, mask);
    while (index[i] != 0) {
      if (id(index[i] - 1) == id) throw new IllegalArgumentException("row " + id + " is already stored");
      i = (i + 1) & mask;
    }
    index[i] = row + 1;
    return row;
  }

  /** Removes the row of {@code id}; false when there is none. The last row takes its number. */
  public boolean remove(long id) {
    int mask = index.length - 1;
    int i = bucket(id, mask);
    while (index[i] != 0 && id(index[i] - 1) != id) i = (i + 1) & mask;
    if (index[i] == 0) return false;
    int row = index[i] - 1;
    deleteAt(i, mask);
    int last = size - 1;
    if (row != last) {
      // Move the last row into the hole and repoint its index entry.
      long lastId = id(last);
      int j = bucket(lastId, mask);
      while (index[j] != last + 1) j = (j + 1) & mask;
      index[j] = row + 1;
      System.arraycopy(page(last), base(last), page(row), base(row), width);
      meta[row >>> PAGE_SHIFT][2 * (row & (PAGE_ROWS - 1))] = lastId;
      meta[row >>> PAGE_SHIFT][2 * (row & (PAGE_ROWS - 1)) + 1] = touched(last);
    }
    size--;
    // Free a page once the rows have left it, keeping one spare so a row in and out does not churn.
    int pagesNeeded = (size + PAGE_ROWS - 1) >>> PAGE_SHIFT;
    if (data.length > pagesNeeded + 1) {
      data = Arrays.copyOf(data, pagesNeeded + 1);
      meta = Arrays.copyOf(meta, pagesNeeded + 1);
    }
    return true;
  }

  /** Removes every row. */
  public void clear() {
    data = new float[0][];
    meta = new long[0][];
    index = new int[MIN_INDEX];
    size = 0;
  }

  /** The page holding row {@code row}'s floats. */
  public float[] page(int row) {
    return data[row >>> PAGE_SHIFT];
  }

  /** Where row {@code row}'s floats start in its page. */
  public int base(int row) {
    return (row & (PAGE_ROWS - 1)) * width;
  }

  public long id(int row) {
    return meta[row >>> PAGE_SHIFT][2 * (row & (PAGE_ROWS - 1))];
  }

  /** The step row {@code row} was last touched at. */
  public long touched(int row) {
    return meta[row >>> PAGE_SHIFT][2 * (row & (PAGE_ROWS - 1)) + 1];
  }

  public void touch(int row, long step) {
    meta[row >>> PAGE_SHIFT][2 * (row & (PAGE_ROWS - 1)) + 1] = step;
  }

  /** Bytes of the arrays this store holds (the page and index arrays' lengths; no object headers). */
  public long bytesAllocated() {
    long pages = data.length;
    return pages * PAGE_ROWS * (4L * width + 16) + 4L * index.length + pages * 2 * 8;
  }

  private void addPage() {
    int n = data.length + 1;
    data = Arrays.copyOf(data, n);
    meta = Arrays.copyOf(meta, n);
    data[n - 1] = new float[PAGE_ROWS * width];
    meta[n - 1] = new long[2 * PAGE_ROWS];
  }

  private void resize(int capacity) {
    int[] bigger = new int[capacity];
    int mask = capacity - 1;
    for (int row = 0; row < size; row++) {
      int i = bucket(id(row), mask);
      while (bigger[i] != 0) i = (i + 1) & mask;
      bigger[i] = row + 1;
    }
    index = bigger;
  }

  /** Empties slot {@code i}, moving back each entry behind it that would no longer be found. */
  private void deleteAt(int i, int mask) {
    int hole = i;
    for (int j = (i + 1) & mask; index[j] != 0; j = (j + 1) & mask) {
      int home = bucket(id(index[j] - 1), mask);
      // j's entry may fill the hole when its home is not cyclically within (hole, j].
      boolean between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!between) {
        index[hole] = index[j];
        hole = j;
      }
    }
    index[hole] = 0;
  }

  private static int bucket(long id, int mask) {
    return (int) RowHash.mix(id) & mask;
  }
}
