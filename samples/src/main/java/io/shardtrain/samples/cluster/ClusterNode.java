package io.shardtrain.samples.cluster;

import akka.actor.ActorSelection;
import akka.actor.Address;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.MemberStatus;
import akka.cluster.sharding.ShardRegion;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.management.cluster.bootstrap.ClusterBootstrap;
import akka.management.javadsl.AkkaManagement;
import akka.pattern.Patterns;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.grpc.GrpcServer;
import io.shardtrain.actors.grpc.GrpcSettings;
import io.shardtrain.actors.metrics.MetricsServer;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.security.Exposure;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.persistence.journal.Journal;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Starts one node of a ShardTrain cluster: its ActorSystem, the journal, ShardTrain's roles, the
 * gRPC API when {@code shardtrain.grpc.port} is set, the metrics endpoint when
 * {@code shardtrain.metrics.port} is, and the Akka Management endpoint (health checks, Cluster
 * Bootstrap) when {@code shardtrain.management.port} is.
 */
public final class ClusterNode {
  private ClusterNode() {}

  /**
   * {@code grpcPort}: the port the node's gRPC API is bound to, -1 if it serves none;
   * {@code metricsPort}: its metrics endpoint's, 0 if it serves none; {@code managementPort}: its
   * Akka Management endpoint's, 0 if it serves none.
   */
  public record Started(ActorSystem<Void> system, ShardTrain api, int grpcPort, int metricsPort,
      int managementPort) {}

  public static Started start(Config config) {
    // Read before the system starts, so a bad value fails before any role, or its journal, does.
    GrpcSettings.fromConfig(config.withFallback(ConfigFactory.defaultReference()));
    List<String> roles = config.getStringList("akka.cluster.roles");
    // Blocks and the master persist; a trainer- or client-only node never touches the journal.
    boolean persists = roles.contains("ps") || roles.contains("master");
    // A log journal that cannot be opened fails here, before any of the system's actors start.
    Runnable early = persists ? Journal.openLogBeforeStart(config) : () -> { };
    ActorSystem<Void> system;
    try {
      system = ActorSystem.create(Behaviors.empty(), NodeConfig.SYSTEM_NAME, config);
    } catch (RuntimeException e) {
      early.run();
      throw e;
    }
    try {
      if (persists) Journal.start(system);
      early.run();
      joinSelfWithoutSeeds(system);
      // Before the roles start, so the first blocks and trainers already count.
      int metricsPort = MetricsServer.startIfConfigured(system).map(MetricsServer::port).orElse(0);
      ShardTrain api = ShardTrain.start(system);
      int grpcPort = -1;
      var binding = GrpcServer.startIfConfigured(api);
      if (binding.isPresent()) {
        GrpcSettings g = GrpcSettings.create(system);
        try {
          grpcPort = binding.get().toCompletableFuture().get(30, TimeUnit.SECONDS).localAddress().getPort();
        } catch (Exception e) {
          throw new IllegalStateException("cannot serve the gRPC API at " + g.host() + ":" + g.port() + ": "
              + (e.getCause() == null ? e : e.getCause()).getMessage(), e);
        }
      }
      int managementPort = startManagement(system);
      warnIfExposed(system, grpcPort, metricsPort, managementPort);
      return new Started(system, api, grpcPort, metricsPort, managementPort);
    } catch (RuntimeException e) {
      early.run();
      system.terminate();
      throw e;
    }
  }

  /**
   * A node given no seed nodes and no Cluster Bootstrap (its own seed on a port Artery chose) joins
   * its own address, as a node that is its own seed does through the seed list.
   */
  private static void joinSelfWithoutSeeds(ActorSystem<?> system) {
    Config c = system.settings().config();
    if (!c.getStringList("akka.cluster.seed-nodes").isEmpty() || ManagementSettings.fromConfig(c).bootstraps()) return;
    Cluster cluster = Cluster.get(system);
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
  }

  /** Logs one warning line when a listener of this node is bound beyond loopback without TLS. */
  private static void warnIfExposed(ActorSystem<?> system, int grpcPort, int metricsPort, int managementPort) {
    Config c = system.settings().config();
    boolean tls = SecuritySettings.create(system).enabled();
    List<Exposure.Listener> listeners = new ArrayList<>();
    String artery = c.getString("akka.remote.artery.bind.hostname");
    if (artery.isEmpty()) artery = c.getString("akka.remote.artery.canonical.hostname");
    listeners.add(new Exposure.Listener("Artery", InetSocketAddress.createUnresolved(artery,
        system.address().getPort().orElse(0)), tls));
    BulkTransport bulk = BulkTransport.get(system);
    if (bulk.isEnabled()) listeners.add(new Exposure.Listener("bulk channel", bulk.address(), tls));
    if (grpcPort >= 0) {
      listeners.add(new Exposure.Listener("gRPC API", InetSocketAddress.createUnresolved(
          GrpcSettings.create(system).host(), grpcPort), tls));
    }
    if (metricsPort > 0) {
      listeners.add(new Exposure.Listener("metrics", InetSocketAddress.createUnresolved(
          c.getString("shardtrain.metrics.host"), metricsPort), false));
    }
    if (managementPort > 0) {
      listeners.add(new Exposure.Listener("Akka Management", InetSocketAddress.createUnresolved(
          ManagementSettings.fromConfig(c).host(), managementPort), false));
    }
    Exposure.warning(listeners).ifPresent(line -> system.log().warn(line));
  }

  /**
   * Serves Akka Management when {@code shardtrain.management.port} is set and, with a discovery
   * method, starts Cluster Bootstrap (after the roles, so a node is never reported ready before its
   * regions exist). Returns the bound port, 0 if none.
   */
  private static int startManagement(ActorSystem<?> system) {
    ManagementSettings m = ManagementSettings.fromConfig(system.settings().config());
    if (!m.serves()) return 0;
    try {
      akka.http.javadsl.model.Uri uri = AkkaManagement.get(system.classicSystem()).start()
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      if (m.bootstraps()) ClusterBootstrap.get(system.classicSystem()).start();
      return uri.port();
    } catch (Exception e) {
      throw new IllegalStateException("cannot serve Akka Management at " + m.host() + ":" + m.port() + ": "
          + (e.getCause() == null ? e : e.getCause()).getMessage(), e);
    }
  }

  /**
   * A node of its own cluster on loopback (a free Akka port, the in-memory journal) serving the gRPC
   * API on a free port, with {@code roles} and {@code settings} over its configuration; returns once
   * it is Up. For the benchmarks and tools that drive a node in their own JVM.
   */
  public static Started startOnLoopback(List<String> roles, Map<String, Object> settings) throws Exception {
    Map<String, Object> flags = new java.util.HashMap<>();
    flags.put("shardtrain.grpc.port", 0);
    flags.putAll(settings);
    // Artery binds a free port itself and the node then joins its own address: a port found free
    // and closed beforehand could be taken by another process before Artery binds it.
    Started node = start(NodeConfig.build(roles, "127.0.0.1", 0, List.of(), "memory", null, flags));
    awaitUp(node.system(), Duration.ofSeconds(60));
    return node;
  }

  /** Waits until this node is an Up member of the cluster. */
  public static void awaitUp(ActorSystem<?> system, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (Cluster.get(system).selfMember().status() == MemberStatus.up()) return;
      Thread.sleep(100);
    }
    ManagementSettings m = ManagementSettings.fromConfig(system.settings().config());
    throw new IllegalStateException("could not join the cluster within " + timeout.toSeconds() + " s: "
        + (m.bootstraps() ? "did Cluster Bootstrap (" + m.discovery() + " discovery) find "
            + m.requiredContactPoints() + " contact points?"
            : "is a seed node running at " + system.settings().config().getStringList("akka.cluster.seed-nodes") + "?"));
  }

  /**
   * The parameter blocks that the shard region of {@code ps} node {@code node} holds now (what
   * {@code shardtrain status} prints); fails when the node does not answer within {@code timeout}.
   */
  public static SortedSet<String> blocksOf(ActorSystem<?> system, Address node, Duration timeout) throws Exception {
    ActorSelection region = system.classicSystem()
        .actorSelection(node + "/system/sharding/" + ParameterBlock.ENTITY_KEY.name());
    Object reply = Patterns.ask(region, ShardRegion.getShardRegionStateInstance(), timeout)
        .toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    SortedSet<String> blocks = new TreeSet<>();
    for (ShardRegion.ShardState s : ((ShardRegion.CurrentShardRegionState) reply).getShards()) {
      blocks.addAll(s.getEntityIds());
    }
    return blocks;
  }
}
