package io.shardtrain.compute.sparse;

/**
 * How often each row id was seen, in {@code depth x width} int counters (Cormode and Muthukrishnan
 * 2005): an id adds to one counter per line and its count is the least of them, which is never
 * below the true count and above it only when every line collides; counters saturate at
 * {@link Integer#MAX_VALUE}. With width w and depth d, an estimate exceeds the true count by more
 * than {@code e * N / w} (N: all sightings) with probability at most {@code e^-d}.
 */
public final class CountMinSketch {
  private final int depth;
  private final int width;
  private final int[] counters;

  /** {@code width} must be a power of two. */
  public CountMinSketch(int depth, int width) {
    if (depth < 1 || depth > 16) throw new IllegalArgumentException("sketch depth must be 1 to 16, not " + depth);
    if (width < 1 || Integer.bitCount(width) != 1) {
      throw new IllegalArgumentException("sketch width must be a power of two, not " + width);
    }
    if ((long) depth * width > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("sketch of " + depth + " x " + width + " counters is too large");
    }
    this.depth = depth;
    this.width = width;
    this.counters = new int[depth * width];
  }

  public int depth() {
    return depth;
  }

  public int width() {
    return width;
  }

  /** Adds {@code times} sightings of {@code id}; returns its estimated count after them. */
  public int add(long id, int times) {
    if (times < 0) throw new IllegalArgumentException("sightings must be >= 0, not " + times);
    int min = Integer.MAX_VALUE;
    for (int line = 0; line < depth; line++) {
      int i = slot(id, line);
      long c = Math.min((long) counters[i] + times, Integer.MAX_VALUE);
      counters[i] = (int) c;
      min = Math.min(min, (int) c);
    }
    return min;
  }

  /** The estimated count of {@code id}. */
  public int estimate(long id) {
    int min = Integer.MAX_VALUE;
    for (int line = 0; line < depth; line++) min = Math.min(min, counters[slot(id, line)]);
    return min;
  }

  /** The counters, line by line (read-only use: snapshots). */
  public int[] counters() {
    return counters;
  }

  /** Sets counters {@code [offset, offset + values.length)} (restoring a snapshot). */
  public void restore(int offset, int[] values) {
    System.arraycopy(values, 0, counters, offset, values.length);
  }

  private int slot(long id, int line) {
    long h = RowHash.mix(id + 0x632be59bd9b4e019L * (line + 1));
    return line * width + ((int) (h >>> 17) & (width - 1));
  }
}
