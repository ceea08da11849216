package io.shardtrain.actors.metrics;

import akka.actor.typed.ActorSystem;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One parameter block's meters, tagged with its id: pushes and pulls with their bytes (the values'
 * fp32 size, 4 bytes a value, whatever precision the wire carried), how long applying an update
 * and writing the journal took, how long a sync barrier stayed open, and whom it waits for. The
 * bytes also count in the node's {@link NodeTraffic}.
 * Counters and timers only: recording takes no lock the block's actor could wait on.
 */
public final class BlockMeters {
  public static final String PUSHES = "shardtrain.block.pushes";
  public static final String PUSH_BYTES = "shardtrain.block.push.bytes";
  public static final String PULLS = "shardtrain.block.pulls";
  public static final String PULL_BYTES = "shardtrain.block.pull.bytes";
  public static final String APPLY = "shardtrain.block.apply";
  public static final String JOURNAL_WRITE = "shardtrain.block.journal.write";
  public static final String BARRIER_WAIT = "shardtrain.block.barrier.wait";
  public static final String BARRIER_MISSING = BarrierRows.NAME;

  private final String block;
  private final Counter pushes;
  private final Counter pushBytes;
  private final Counter pulls;
  private final Counter pullBytes;
  private final Timer apply;
  private final Timer journalWrite;
  private final Timer barrierWait;
  private final BarrierRows barriers;
  private final NodeTraffic traffic;
  private final MeterRegistry registry;
  /** The node that retires this block's series later; null: at once (a plain registry). */
  private final NodeMetrics node;

  private BlockMeters(MeterRegistry registry, BarrierRows barriers, NodeTraffic traffic, String block,
      NodeMetrics node) {
    this.block = block;
    this.barriers = barriers;
    this.traffic = traffic;
    this.registry = registry;
    this.node = node;
    if (node != null) node.born("block " + block);
    pushes = Counter.builder(PUSHES).tag("block", block).description("gradient pushes the block received")
        .register(registry);
    pushBytes = Counter.builder(PUSH_BYTES).tag("block", block).baseUnit("bytes")
        .description("fp32 size of the gradients pushed to the block").register(registry);
    pulls = Counter.builder(PULLS).tag("block", block).description("pulls the block answered with its values")
        .register(registry);
    pullBytes = Counter.builder(PULL_BYTES).tag("block", block).baseUnit("bytes")
        .description("fp32 size of the values the block answered pulls with").register(registry);
    apply = Timer.builder(APPLY).tag("block", block)
        .description("time to apply one update (a sync step or an async gradient) to the block's values")
        .register(registry);
    journalWrite = Timer.builder(JOURNAL_WRITE).tag("block", block)
        .description("time from handing events to the journal until they were written").register(registry);
    barrierWait = Timer.builder(BARRIER_WAIT).tag("block", block)
        .description("time a sync step stayed open, from the first contribution to the last").register(registry);
  }

  /** The meters of block {@code block} on {@code system}'s node. */
  public static BlockMeters of(ActorSystem<?> system, String block) {
    NodeMetrics node = NodeMetrics.get(system);
    return new BlockMeters(node.registry(), node.barriers(), node.traffic(), block, node);
  }

  /** Meters that record nothing, for a block's pieces tested alone. */
  public static BlockMeters none() {
    MeterRegistry nowhere = new CompositeMeterRegistry();
    return new BlockMeters(nowhere, new BarrierRows(nowhere), new NodeTraffic(), "none", null);
  }

  /** On a plain registry, without a node (tests). */
  static BlockMeters of(MeterRegistry registry, BarrierRows barriers, NodeTraffic traffic, String block) {
    return new BlockMeters(registry, barriers, traffic, block, null);
  }

  /** A push of {@code floats} values arrived. */
  public void pushed(int floats) {
    pushes.increment();
    pushBytes.increment(4.0 * floats);
    traffic.moved(4L * floats);
  }

  /** A pull was answered with {@code floats} values. */
  public void pulled(int floats) {
    pulls.increment();
    pullBytes.increment(4.0 * floats);
    traffic.moved(4L * floats);
  }

  public void applied(long nanos) {
    apply.record(nanos, TimeUnit.NANOSECONDS);
  }

  public void journaled(long nanos) {
    journalWrite.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** A sync step that had been open {@code nanos} completed. */
  public void barrierClosed(long nanos) {
    barrierWait.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The trainers the block's barrier waits for now; empty when it waits for nobody. */
  public void waitingFor(List<String> trainers) {
    barriers.set(block, trainers);
  }

  /**
   * The block left this node (passivated, handed off): its barrier row goes at once, its series
   * after {@code shardtrain.metrics.retired-series-for} unless it comes back ({@link NodeMetrics#retire});
   * otherwise the export would keep every block that ever lived here. A block that comes back
   * after that counts from 0 again, which Prometheus reads as a reset.
   */
  public void close() {
    barriers.set(block, List.of());
    Runnable remove = () -> {
      for (Meter m : List.of(pushes, pushBytes, pulls, pullBytes, apply, journalWrite, barrierWait)) registry.remove(m);
    };
    if (node == null) {
      remove.run();
    } else {
      node.retire("block " + block, remove);
    }
  }
}
