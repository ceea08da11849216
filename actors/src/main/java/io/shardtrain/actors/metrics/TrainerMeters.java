package io.shardtrain.actors.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One trainer's meters, tagged with its id: the steps it completed with their time split into
 * compute, push wait, pull wait and master wait (the parts of its step profile, so a dashboard
 * can stack them), the examples it trained on (samples/s as their rate; also counted in the node's
 * {@link NodeTraffic}) and its last loss.
 */
public final class TrainerMeters {
  public static final String STEP = "shardtrain.trainer.step";
  public static final String EXAMPLES = "shardtrain.trainer.examples";
  public static final String LOSS = "shardtrain.trainer.loss";

  private final Timer compute;
  private final Timer pushWait;
  private final Timer pullWait;
  private final Timer masterWait;
  private final Counter examples;
  private final NodeTraffic traffic;
  /** The last loss' bits: a gauge reads it on the scraping thread. */
  private final AtomicLong lossBits = new AtomicLong(Double.doubleToLongBits(Double.NaN));

  private TrainerMeters(MeterRegistry registry, NodeTraffic traffic, String trainer) {
    this.traffic = traffic;
    compute = part(registry, trainer, "compute");
    pushWait = part(registry, trainer, "push_wait");
    pullWait = part(registry, trainer, "pull_wait");
    masterWait = part(registry, trainer, "master_wait");
    examples = Counter.builder(EXAMPLES).tag("trainer", trainer).description("examples the trainer trained on")
        .register(registry);
    Gauge.builder(LOSS, lossBits, b -> Double.longBitsToDouble(b.get())).tag("trainer", trainer)
        .description("the loss of the trainer's last step with data").strongReference(true).register(registry);
  }

  private static Timer part(MeterRegistry registry, String trainer, String part) {
    return Timer.builder(STEP).tags("trainer", trainer, "part", part)
        .description("a completed step's time in each part; the count is the steps").register(registry);
  }

  /** Registers trainer {@code trainer}'s meters; once per registry and id ({@link NodeMetrics#trainer}). */
  static TrainerMeters of(MeterRegistry registry, NodeTraffic traffic, String trainer) {
    return new TrainerMeters(registry, traffic, trainer);
  }

  /** Meters that record nothing, for a trainer's pieces tested alone. */
  public static TrainerMeters none() {
    return new TrainerMeters(new CompositeMeterRegistry(), new NodeTraffic(), "none");
  }

  /** A completed step's parts, in nanoseconds. */
  public void step(long computeNanos, long pushWaitNanos, long pullWaitNanos, long masterWaitNanos) {
    compute.record(computeNanos, TimeUnit.NANOSECONDS);
    pushWait.record(pushWaitNanos, TimeUnit.NANOSECONDS);
    pullWait.record(pullWaitNanos, TimeUnit.NANOSECONDS);
    masterWait.record(masterWaitNanos, TimeUnit.NANOSECONDS);
  }

  /** A step trained on {@code n} examples with loss {@code loss}. */
  public void trained(int n, float loss) {
    examples.increment(n);
    traffic.trained(n);
    lossBits.set(Double.doubleToLongBits(loss));
  }
}
