package io.shardtrain.compute.data;

/**
 * Where a {@link BatchReader} stands: the epoch, and how many examples of that epoch's order have
 * been handed out. This pair is what a trainer reports to the master and resumes from.
 */
public record ReaderPosition(long epoch, long offset) {
  public static final ReaderPosition START = new ReaderPosition(0, 0);

  public ReaderPosition {
    if (epoch < 0 || offset < 0) {
      throw new IllegalArgumentException("reader position needs epoch >= 0 and offset >= 0, got epoch "
          + epoch + ", offset " + offset);
    }
  }
}
