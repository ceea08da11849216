package io.shardtrain.samples.local;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.metrics.MetricsServer;
import io.shardtrain.persistence.journal.Journal;
import io.shardtrain.persistence.journal.JournalConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;

/**
 * A ShardTrain cluster inside this JVM: one ActorSystem per node, joined through Akka Cluster on
 * loopback ports, as separate machines would be. {@link Layout#COLOCATED} (the default) gives each
 * node a trainer and a share of the blocks, as each process of PyTorch DDP holds a model replica:
 * a trainer exchanges arrays with the blocks of its own node by reference, and only the others'
 * cross the network. {@link Layout#SEPARATE} keeps parameter servers and trainers on nodes of their
 * own. Either way node 0 also runs the master.
 */
public final class LocalCluster implements AutoCloseable {

  /** Where trainers run relative to the parameter blocks. */
  public enum Layout {
    /** Node {@code i} holds blocks if {@code i < ps} and runs a trainer if {@code i < trainers}. */
    COLOCATED,
    /** {@code ps} nodes holding blocks, then {@code trainers} nodes running one trainer each. */
    SEPARATE
  }

  private final List<ActorSystem<Void>> psNodes = new ArrayList<>();
  private final List<ActorSystem<Void>> trainerNodes = new ArrayList<>();
  private final List<ShardTrain> psShardTrain = new ArrayList<>();
  private final List<ShardTrain> trainerShardTrain = new ArrayList<>();

  private LocalCluster() {}

  /** {@link #start(String, int, int, Config, Duration, Layout)} with trainers and blocks colocated. */
  public static LocalCluster start(String name, int ps, int trainers, Config base, Duration timeout) {
    return start(name, ps, trainers, base, timeout, Layout.COLOCATED);
  }

  /**
   * Starts {@code ps} parameter-server roles and {@code trainers} trainer roles, laid out on nodes
   * as {@code layout} says, over {@code base} (the effective ShardTrain configuration, whose
   * {@code shardtrain.persistence} section picks the journal), and waits until all are members.
   */
  public static LocalCluster start(String name, int ps, int trainers, Config base, Duration timeout, Layout layout) {
    if (ps < 1) throw new IllegalArgumentException("--ps must be at least 1, got " + ps);
    if (trainers < 1) throw new IllegalArgumentException("--trainers must be at least 1, got " + trainers);
    LocalCluster c = new LocalCluster();
    try {
      // One journal layer for every node: with the in-memory journal each node still keeps its own
      // events and snapshots (the plugins belong to one ActorSystem), so a shard that moves finds
      // neither of its old node's, never a snapshot whose events stayed behind.
      Config common = JournalConfig.of(ConfigFactory.parseResources("cluster.conf").withFallback(base));
      if (layout == Layout.COLOCATED) {
        for (int i = 0; i < Math.max(ps, trainers); i++) {
          List<String> roles = new ArrayList<>();
          if (i < ps) roles.add("ps");
          if (i < trainers) roles.add("trainer");
          if (i == 0) roles.add("master");
          ActorSystem<Void> s = node(name, roles, common, i);
          if (i < ps) c.psNodes.add(s);
          if (i < trainers) c.trainerNodes.add(s);
        }
      } else {
        for (int i = 0; i < ps; i++) {
          c.psNodes.add(node(name, i == 0 ? List.of("ps", "master") : List.of("ps"), common, i));
        }
        for (int i = 0; i < trainers; i++) c.trainerNodes.add(node(name, List.of("trainer"), common, ps + i));
      }
      var seed = Cluster.get(c.psNodes.get(0)).selfMember().address();
      for (ActorSystem<Void> s : c.all()) Cluster.get(s).manager().tell(Join.create(seed));
      c.awaitUp(timeout);
      Journal.start(c.psNodes.get(0));
      for (ActorSystem<Void> s : c.psNodes) c.psShardTrain.add(ShardTrain.start(s));
      for (ActorSystem<Void> s : c.trainerNodes) {
        // A colocated node's API is started once, with its blocks.
        int i = indexOf(c.psNodes, s);
        c.trainerShardTrain.add(i >= 0 ? c.psShardTrain.get(i) : ShardTrain.start(s));
      }
      c.awaitRegions(ps, timeout);
      return c;
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /**
   * Node {@code index}: with {@code shardtrain.metrics.port} P set, it serves its meters at port
   * P + index (one endpoint per node, as on separate machines).
   */
  private static ActorSystem<Void> node(String name, List<String> roles, Config common, int index) {
    Map<String, Object> own = new java.util.HashMap<>(Map.of(
        "akka.cluster.roles", roles,
        "akka.remote.artery.canonical.port", 0,
        "akka.remote.artery.canonical.hostname", "127.0.0.1"));
    int metricsPort = common.getInt("shardtrain.metrics.port");
    if (metricsPort > 0) own.put("shardtrain.metrics.port", metricsPort + index);
    Config config = ConfigFactory.parseMap(own).withFallback(common);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), name, config);
    // Before the roles start, so the first blocks and trainers already count.
    MetricsServer.startIfConfigured(system);
    return system;
  }

  private List<ActorSystem<Void>> all() {
    List<ActorSystem<Void>> all = new ArrayList<>(psNodes);
    for (ActorSystem<Void> t : trainerNodes) {
      if (indexOf(all, t) < 0) all.add(t);
    }
    return all;
  }

  /** By identity: systems of one cluster share a name, and an ActorSystem equals any other of its name. */
  private static int indexOf(List<ActorSystem<Void>> systems, ActorSystem<Void> s) {
    for (int i = 0; i < systems.size(); i++) {
      if (systems.get(i) == s) return i;
    }
    return -1;
  }

  private void awaitUp(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    int expected = all().size();
    while (System.nanoTime() < deadline) {
      boolean up = true;
      for (ActorSystem<Void> s : all()) {
        long members = 0;
        for (var m : Cluster.get(s).state().getMembers()) {
          if (m.status() == MemberStatus.up()) members++;
        }
        up &= members == expected;
      }
      if (up) return;
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while forming the local cluster", e);
      }
    }
    throw new IllegalStateException("the local cluster of " + expected + " nodes did not form within " + timeout);
  }

  /**
   * Waits until sharding's coordinator knows every ps node's region: blocks are placed when the
   * job is submitted, and a region that registers later would get its share by rebalancing, which
   * moves blocks, and with the in-memory journal (one per node) loses them.
   */
  private void awaitRegions(int ps, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    int known = 0;
    while (System.nanoTime() < deadline) {
      try {
        known = coordinator().psNodes().toCompletableFuture().join();
      } catch (CompletionException e) {
        // The coordinator is still starting; ask again.
      }
      if (known >= ps) return;
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the ps nodes' shard regions", e);
      }
    }
    throw new IllegalStateException("sharding knew " + known + " of " + ps + " ps nodes' regions after " + timeout);
  }

  /** The API on the first ps node, which also runs the master. */
  public ShardTrain coordinator() {
    return psShardTrain.get(0);
  }

  /** The API on trainer node {@code i}. */
  public ShardTrain trainerNode(int i) {
    return trainerShardTrain.get(i);
  }

  /**
   * Waits until the master waits for nothing from the blocks for job {@code jobId}
   * ({@link JobProtocol.JobStatus#settled}), at most {@code timeout}: the last trainers' leaves make
   * the master settle their tasks and send every block the new membership, which blocks closed in
   * the meantime would drop while handing off, with a warning. Returns the last status asked.
   */
  public JobProtocol.JobStatus awaitSettled(String jobId, Duration timeout) throws InterruptedException {
    return awaitStatus(jobId, JobProtocol.JobStatus::settled, timeout);
  }

  /** Job {@code jobId}'s status once {@code until} holds for it, or the last one asked after {@code timeout}. */
  public JobProtocol.JobStatus awaitStatus(String jobId, Predicate<JobProtocol.JobStatus> until, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      JobProtocol.JobStatus status = coordinator().status(jobId).toCompletableFuture().join();
      if (until.test(status) || System.nanoTime() > deadline) return status;
      Thread.sleep(20);
    }
  }

  public int psCount() {
    return psNodes.size();
  }

  public int trainerCount() {
    return trainerNodes.size();
  }

  @Override
  public void close() {
    // One node at a time, node 0 (the master's) last: each leaves the cluster before the next goes,
    // so the others see an orderly exit instead of a lost connection.
    List<ActorSystem<Void>> all = all();
    java.util.Collections.reverse(all);
    for (ActorSystem<Void> s : all) {
      s.terminate();
      try {
        s.getWhenTerminated().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
      } catch (Exception e) {
        // Best effort: a node that does not stop in time is left to the JVM's exit.
      }
    }
  }
}
