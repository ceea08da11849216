package io.shardtrain.compute;

/**
 * Runs work over row ranges of a row-major {@code rows x columns} matrix that together cover
 * {@code [0, rows)}, possibly on several threads at once ({@code Backend::forEachRowSlice}).
 */
@FunctionalInterface
public interface RowSlices {

  void forEach(int rows, int columns, Range body);

  /** Work on the rows {@code [from, to)}. */
  @FunctionalInterface
  interface Range {
    void run(int from, int to);
  }
}
