package io.shardtrain.compute;

/**
 * Runs work over row ranges of a row-major {@code rows x columns} matrix that together cover
 * {@code [0, rows)}, possibly on several threads at once ({@code Backend::forEachRowSlice}).
 */
@FunctionalInterface
public interface RowSlices {

  /** All rows in one range, on the caller. */
  RowSlices WHOLE = (rows, columns, body) -> body.run(0, rows);

  void forEach(int rows, int columns, Range body);

  /** Work on the rows {@code [from, to)}. */
  @FunctionalInterface
  interface Range {
    void run(int from, int to);
  }
}
