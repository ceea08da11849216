package io.shardtrain.actors.metrics;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one node did since it started, for the {@code status} view: the examples its trainers
 * trained on, and the bytes its parameter blocks moved (the fp32 size of the gradients pushed to
 * them and of the values they answered pulls with, as {@link BlockMeters} counts them). Counted
 * whether or not metrics are served; a reader takes the rate between two {@link Counts} of a node.
 * {@link Read} and {@link Counts} go between nodes as CBOR (bound in reference.conf).
 */
public final class NodeTraffic {
  private final LongAdder examples = new LongAdder();
  private final LongAdder bytes = new LongAdder();
  private final long startNanos = System.nanoTime();

  /** Asks a node's {@link TrafficReporter} for its {@link Counts}. */
  public record Read() {}

  /** The counts of a node {@code uptimeNanos} after it started counting (its own monotonic clock). */
  public record Counts(long examples, long bytes, long uptimeNanos) {}

  void trained(long n) {
    examples.add(n);
  }

  void moved(long n) {
    bytes.add(n);
  }

  public Counts counts() {
    return new Counts(examples.sum(), bytes.sum(), System.nanoTime() - startNanos);
  }
}
