package io.shardtrain.bench;

import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.compute.sparse.SparseTable;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * What one sparse table shard's rows cost: {@code rows} rows of {@code dim} floats are created by
 * pushes (one optimizer apply each, ids spread over the id space as hashed categorical features
 * are), then every row is updated once more and read once. Memory is the store's arrays, counted
 * from their lengths ({@link io.shardtrain.compute.sparse.RowStore#bytesAllocated}), next to the
 * raw floats of the values and of values plus optimizer slots; and, as a check of that count, the
 * heap the JVM reports in use after a GC, before and after. Also the median of 5 expiry scans (what
 * a shard with an expiry does at each version: every row's last step looked at).
 */
public final class SparseMemoryBenchmark {
  private SparseMemoryBenchmark() {}

  /** One measurement. */
  public record Result(int rows, int dim, String optimizer, long bytes, double bytesPerRow, double toRawValues,
      double toRawWithSlots, long heapBytes, double createSeconds, double updateSeconds, double readSeconds,
      double expiryScanSeconds) {

    public String summary() {
      return String.format(Locale.ROOT,
          "%d rows of %d floats (%s): %.1f bytes per row, %.3fx the raw values, %.3fx values and slots"
              + " (heap in use grew by %.1f bytes per row); create %.0f rows/s, update %.0f rows/s, read %.0f rows/s;"
              + " an expiry scan of all rows %.1f ms",
          rows, dim, optimizer, bytesPerRow, toRawValues, toRawWithSlots, (double) heapBytes / rows,
          rows / createSeconds, rows / updateSeconds, rows / readSeconds, expiryScanSeconds * 1e3);
    }
  }

  public static Result run(int rows, int dim, RowOptimizer.Kind kind) {
    if (rows < 1) throw new IllegalArgumentException("rows must be at least 1, got " + rows);
    if (dim < 1) throw new IllegalArgumentException("dim must be at least 1, got " + dim);
    RowOptimizer optimizer = switch (kind) {
      case SGD -> RowOptimizer.sgd(0.05f);
      case ADAGRAD -> RowOptimizer.adagrad(0.05f, 0.1f);
      case FTRL -> RowOptimizer.ftrl(0.05f, 0.001f, 0.001f, 1f);
    };
    long heapBefore = usedHeap();
    // An expiry no row reaches, so the scan a shard runs at each version looks at every row and evicts none.
    SparseTable table = new SparseTable(dim, new RowInit(RowInit.Kind.UNIFORM, 0.01f, 42), optimizer, 1, 1, 1,
        1_000_000);
    float[] grad = new float[dim];
    for (int j = 0; j < dim; j++) grad[j] = 0.001f * (j + 1);
    long[] ids = new long[rows];
    SplittableRandom rnd = new SplittableRandom(7);
    for (int i = 0; i < rows; i++) ids[i] = rnd.nextLong() >>> 24;
    long t0 = System.nanoTime();
    for (int i = 0; i < rows; i++) table.apply(ids[i], grad, 0, 1, 1);
    long t1 = System.nanoTime();
    for (int i = 0; i < rows; i++) table.apply(ids[i], grad, 0, 1, 2);
    long t2 = System.nanoTime();
    float[] out = new float[dim];
    float sink = 0;
    for (int i = 0; i < rows; i++) {
      table.read(ids[i], out, 0);
      sink += out[0];
    }
    long t3 = System.nanoTime();
    if (Float.isNaN(sink)) throw new IllegalStateException("a row read NaN");
    double[] scans = new double[5];
    for (int i = 0; i < scans.length; i++) {
      long s0 = System.nanoTime();
      if (table.expiredAt(3).length != 0) throw new IllegalStateException("a row expired");
      scans[i] = (System.nanoTime() - s0) / 1e9;
    }
    java.util.Arrays.sort(scans);
    int stored = table.store().size();
    long heap = usedHeap() - heapBefore - 8L * rows;
    long bytes = table.store().bytesAllocated();
    double raw = 4.0 * dim;
    double perRow = (double) bytes / stored;
    // Keeps the table reachable until the heap was measured.
    if (table.store().size() != stored) throw new IllegalStateException();
    return new Result(stored, dim, optimizer.kind().name().toLowerCase(Locale.ROOT), bytes, perRow, perRow / raw,
        perRow / (raw * (1 + optimizer.slotCount())), heap, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9,
        scans[scans.length / 2]);
  }

  private static long usedHeap() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) System.gc();
    return rt.totalMemory() - rt.freeMemory();
  }
}
