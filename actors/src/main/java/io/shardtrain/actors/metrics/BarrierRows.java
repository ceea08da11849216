package io.shardtrain.actors.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The trainers each sync barrier of this node waits for, as {@code shardtrain_block_barrier_missing}
 * = 1 per (block, trainer): the rows change with every push, so blocks only publish their list here
 * and the gauge's rows are rebuilt when someone scrapes.
 */
final class BarrierRows {
  static final String NAME = "shardtrain.block.barrier.missing";

  private final Map<String, List<String>> missing = new ConcurrentHashMap<>();
  private final MultiGauge gauge;

  BarrierRows(MeterRegistry registry) {
    gauge = MultiGauge.builder(NAME)
        .description("1 for each trainer a block's sync barrier waits for")
        .register(registry);
  }

  /** {@code block} waits for {@code trainers} (empty: it waits for nobody). */
  void set(String block, List<String> trainers) {
    if (trainers.isEmpty()) {
      missing.remove(block);
    } else {
      missing.put(block, trainers);
    }
  }

  void refresh() {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    missing.forEach((block, trainers) -> {
      for (String t : trainers) rows.add(MultiGauge.Row.of(Tags.of("block", block, "trainer", t), 1));
    });
    gauge.register(rows, true);
  }
}
