package io.shardtrain.actors.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/** One sparse table shard's meters, tagged with its id: the rows it holds in this node's memory. */
public final class SparseMeters {
  public static final String ROWS = "shardtrain.sparse.rows";

  private final AtomicLong rows = new AtomicLong();
  private final MeterRegistry registry;
  private final Gauge gauge;

  private SparseMeters(MeterRegistry registry, String shard) {
    this.registry = registry;
    gauge = Gauge.builder(ROWS, rows, AtomicLong::get).tag("shard", shard)
        .description("rows the sparse table shard holds on this node").strongReference(true).register(registry);
  }

  /** The shard left this node: its series leave the export ({@link NodeMetrics#closeSparseShard}). */
  void close() {
    registry.remove(gauge);
  }

  /** Registers shard {@code shard}'s meters; once per registry and id ({@link NodeMetrics#sparseShard}). */
  static SparseMeters of(MeterRegistry registry, String shard) {
    return new SparseMeters(registry, shard);
  }

  /** The shard holds {@code n} rows now (0 once it stopped here). */
  public void rows(long n) {
    rows.set(n);
  }
}
