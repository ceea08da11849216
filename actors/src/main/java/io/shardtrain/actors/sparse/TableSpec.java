package io.shardtrain.actors.sparse;

import io.shardtrain.compute.sparse.RowHash;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.compute.sparse.SparseTable;

/**
 * A sparse table: {@code rows} ids ({@code [0, rows)}) of {@code dim} floats, cut by
 * {@link RowHash#shardOf} over {@code shards} shard entities named {@code name/shard}; how rows
 * start ({@code init}), the update rule ({@code optimizer}), sync or async steps (async pushes
 * whose base version lags by more than {@code maxStaleness} are refused as stale; -1: no bound),
 * admission after {@code admitAfter} sightings in a count-min sketch of {@code sketchDepth x
 * sketchWidth} counters (1: every row at once, no sketch) and expiry after {@code expireAfter}
 * untouched steps (0: never). It is journaled with the shard, so a replay runs by the same rules
 * whatever the settings of the node that replays it.
 */
public record TableSpec(String name, int shards, long rows, int dim, RowInit init, RowOptimizer optimizer, Mode mode,
    long maxStaleness, int admitAfter, int sketchDepth, int sketchWidth, long expireAfter) {

  /** How a table's shards take trainers' pushes. */
  public enum Mode {
    /** A barrier per step over the trainers of the membership; one update per step. */
    SYNC,
    /** Each push applied when it arrives. */
    ASYNC
  }

  public TableSpec {
    if (name == null || name.isBlank() || name.contains("/")) {
      throw new IllegalArgumentException("a table name must be non-blank and without '/', not '" + name + "'");
    }
    if (shards < 1) throw new IllegalArgumentException("table " + name + " needs at least 1 shard, not " + shards);
    if (rows < 1) throw new IllegalArgumentException("table " + name + " needs at least 1 row id, not " + rows);
    if (dim < 1) throw new IllegalArgumentException("table " + name + " needs rows of at least 1 float, not " + dim);
    if (init == null || optimizer == null || mode == null) {
      throw new IllegalArgumentException("table " + name + " needs an initializer, an optimizer and a mode");
    }
    if (maxStaleness < -1) throw new IllegalArgumentException("max staleness must be -1 (off) or >= 0, not " + maxStaleness);
    if (admitAfter < 1) throw new IllegalArgumentException("admission must be after >= 1 sighting, not " + admitAfter);
    if (expireAfter < 0) throw new IllegalArgumentException("expiry must be >= 0 steps (0 = never), not " + expireAfter);
    // Checked here, so a bad sketch is refused with the spec, not when a shard starts.
    if (admitAfter > 1 && (sketchDepth < 1 || sketchDepth > 16 || sketchWidth < 1 || Integer.bitCount(sketchWidth) != 1
        || (long) sketchDepth * sketchWidth > (1 << 28))) {
      throw new IllegalArgumentException("admission sketch must be 1 to 16 lines of a power-of-two width, at most 2^28"
          + " counters, not " + sketchDepth + " x " + sketchWidth);
    }
  }

  /** A sync table of {@code shards} shards, every row admitted at once and kept for ever. */
  public static TableSpec of(String name, int shards, long rows, int dim, RowInit init, RowOptimizer optimizer) {
    return new TableSpec(name, shards, rows, dim, init, optimizer, Mode.SYNC, -1, 1, 4, 1, 0);
  }

  /** This table with admission after {@code sightings} in a sketch of {@code depth x width}. */
  public TableSpec withAdmission(int sightings, int depth, int width) {
    return new TableSpec(name, shards, rows, dim, init, optimizer, mode, maxStaleness, sightings, depth, width,
        expireAfter);
  }

  /** This table with rows evicted after {@code steps} untouched steps. */
  public TableSpec withExpiry(long steps) {
    return new TableSpec(name, shards, rows, dim, init, optimizer, mode, maxStaleness, admitAfter, sketchDepth,
        sketchWidth, steps);
  }

  /** This table in {@code m} mode with staleness bound {@code staleness}. */
  public TableSpec withMode(Mode m, long staleness) {
    return new TableSpec(name, shards, rows, dim, init, optimizer, m, staleness, admitAfter, sketchDepth,
        sketchWidth, expireAfter);
  }

  /** The entity id of shard {@code shard}: {@code name/shard}. */
  public String entityId(int shard) {
    return name + "/" + shard;
  }

  /** The shard that holds row {@code id}. */
  public int shardOf(long id) {
    return RowHash.shardOf(id, shards);
  }

  /** Floats a stored row takes: its values and its optimizer slots. */
  public int rowWidth() {
    return dim * (1 + optimizer.slotCount());
  }

  /** A shard's empty rows. */
  SparseTable newTable() {
    return new SparseTable(dim, init, optimizer, admitAfter, sketchDepth, sketchWidth, expireAfter);
  }
}
