package io.shardtrain.actors.metrics;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.Extension;
import akka.actor.typed.ExtensionId;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The meters of one node (ActorSystem): a Prometheus registry with the JVM's, GC's and cluster's
 * meters when {@code shardtrain.metrics.port} is set, else a registry without children, whose
 * meters do nothing. Blocks, trainers and sparse shards take their meters from here
 * ({@link BlockMeters}, {@link TrainerMeters}, {@link SparseMeters}); {@link MetricsServer} serves {@link #scrape()}.
 * Whatever the settings, it counts the node's {@link NodeTraffic} and starts its {@link TrafficReporter}.
 */
public final class NodeMetrics implements Extension {

  /** The extension id; use {@link NodeMetrics#get}. */
  public static final class Id extends ExtensionId<NodeMetrics> {
    static final Id INSTANCE = new Id();

    private Id() {}

    @Override
    public NodeMetrics createExtension(ActorSystem<?> system) {
      return new NodeMetrics(system, MetricsSettings.fromConfig(system.settings().config()));
    }
  }

  /** The one NodeMetrics of this ActorSystem. */
  public static NodeMetrics get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  private final MetricsSettings settings;
  private final MeterRegistry registry;
  /** Null when metrics are off. */
  private final PrometheusMeterRegistry prometheus;
  private final BarrierRows barriers;
  private final NodeTraffic traffic = new NodeTraffic();
  private final Map<String, TrainerMeters> trainers = new ConcurrentHashMap<>();
  private final Map<String, SparseMeters> sparseShards = new ConcurrentHashMap<>();
  /** How many times each block or shard started on this node: a retirement runs only if none started since. */
  private final Map<String, Long> lives = new ConcurrentHashMap<>();
  private final ActorSystem<?> system;

  private NodeMetrics(ActorSystem<?> system, MetricsSettings settings) {
    this.settings = settings;
    this.system = system;
    TrafficReporter.start(system, traffic);
    if (!settings.serves()) {
      prometheus = null;
      registry = new CompositeMeterRegistry();
      barriers = new BarrierRows(registry);
      return;
    }
    prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry = prometheus;
    // Several nodes may share one JVM (LocalCluster): the node tag tells their series apart.
    registry.config().commonTags("node", system.address().getHost().orElse("local") + ":"
        + system.address().getPort().map(String::valueOf).orElse("0"));
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    system.getWhenTerminated().thenRun(gc::close);
    if ("cluster".equals(system.settings().config().getString("akka.actor.provider"))) {
      ClusterMeters.bindTo(registry, system);
    }
    barriers = new BarrierRows(registry);
  }

  public MetricsSettings settings() {
    return settings;
  }

  /** Where blocks and trainers register their meters. */
  public MeterRegistry registry() {
    return registry;
  }

  /** The meters of trainer {@code id} on this node: one set per id, a restarted trainer's included. */
  public TrainerMeters trainer(String id) {
    return trainers.computeIfAbsent(id, t -> TrainerMeters.of(registry, traffic, t));
  }

  /** The meters of sparse table shard {@code id} on this node, one set per id (gauges hold their value). */
  public SparseMeters sparseShard(String id) {
    born("shard " + id);
    return sparseShards.computeIfAbsent(id, s -> SparseMeters.of(registry, s));
  }

  /** Shard {@code id} left this node (a hand-off, a passivation): it holds no rows here, and its series retire. */
  public void closeSparseShard(String id) {
    SparseMeters m = sparseShards.get(id);
    if (m == null) return;
    m.rows(0);
    retire("shard " + id, () -> {
      sparseShards.remove(id, m);
      m.close();
    });
  }

  /** Block or shard {@code key} started (again) on this node. */
  void born(String key) {
    lives.merge(key, 1L, Long::sum);
  }

  /**
   * {@code key} left this node: {@code remove} takes its series out of the export after
   * {@code shardtrain.metrics.retired-series-for} (so a last scrape still reads its final counts),
   * unless it started here again meanwhile. Without an endpoint, at once.
   */
  void retire(String key, Runnable remove) {
    Long life = lives.get(key);
    Runnable ifStillGone = () -> {
      if (life == null || lives.remove(key, life)) remove.run();
    };
    if (!settings.serves() || settings.retiredSeriesFor().isZero()) {
      ifStillGone.run();
    } else {
      system.scheduler().scheduleOnce(settings.retiredSeriesFor(), ifStillGone, system.executionContext());
    }
  }

  /** What this node's trainers trained on and its blocks moved, whether or not metrics are served. */
  public NodeTraffic traffic() {
    return traffic;
  }

  /** The barrier rows of this node's blocks ({@link BlockMeters}). */
  BarrierRows barriers() {
    return barriers;
  }

  /** Every meter of this node in Prometheus' text format (version 0.0.4); empty when metrics are off. */
  public String scrape() {
    if (prometheus == null) return "";
    barriers.refresh();
    return prometheus.scrape();
  }
}
