package io.shardtrain.tests;

import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.NodeConfig;
import io.shardtrain.samples.testing.FreePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Node JVMs of one test cluster on a fresh PostgreSQL journal ({@code SHARDTRAIN_TEST_POSTGRES_URL}),
 * their logs under {@code target/failover-logs}, and a client node that reads the master's status
 * and the blocks' stats. The first node started is the seed and submits the job.
 */
final class NodeCluster implements AutoCloseable {
  static final String URL = System.getenv("SHARDTRAIN_TEST_POSTGRES_URL");
  static final String USER = System.getenv().getOrDefault("SHARDTRAIN_POSTGRES_USER", "shardtrain");
  static final String PASSWORD = System.getenv().getOrDefault("SHARDTRAIN_POSTGRES_PASSWORD", "");

  /** The block size of the failover runs: the model's 7 blocks spread over both ps nodes. */
  static final int BLOCK_SIZE = 16384;

  /** Settings every failover run shares; a run's own lines come after and override them. */
  static final String BASE_CONF = """
      akka.cluster.split-brain-resolver.stable-after = 4s
      # Two cores carry three node JVMs here: a late decision is load, not a flapping network.
      akka.cluster.split-brain-resolver.down-all-when-unstable = off
      akka.cluster.failure-detector.acceptable-heartbeat-pause = 4s
      # A node that starts before the seed listens loses its first InitJoin: ask again after 2 s, not 5.
      akka.cluster.seed-node-timeout = 2s
      # A JVM starting on a machine busy with other builds can take longer than 5 s for this.
      akka.logger-startup-timeout = 30s
      shardtrain.trainer { ask-timeout = 6s, pull-timeout = 20s, failure-timeout = 120s }
      # Blocks spread over both ps nodes (not akka.cluster.role.ps.min-nr-of-members: that stalls a
      # shard coordinator restarted on the last ps node).
      shardtrain.ps { snapshot-every = 15, block-size = %d, min-nodes = 2 }
      """.formatted(BLOCK_SIZE);

  final Path logs;
  private final Path nodeConf;
  private final Path job;
  private final List<String> env = List.of("SHARDTRAIN_POSTGRES_USER=" + USER,
      "SHARDTRAIN_POSTGRES_PASSWORD=" + PASSWORD, "SHARDTRAIN_LOG_LEVEL=INFO");
  final List<NodeProcess> nodes = new ArrayList<>();
  private String seed;
  private String grpc;
  private ClusterNode.Started client;

  NodeCluster(Path logs, String nodeConfLines, String jobConf) throws Exception {
    resetJournal();
    this.logs = Files.createDirectories(logs);
    nodeConf = logs.resolve("node.conf");
    Files.writeString(nodeConf, BASE_CONF + nodeConfLines);
    job = logs.resolve("job.conf");
    Files.writeString(job, jobConf);
  }

  /** Starts a node JVM; the first one is the seed and submits the job. */
  NodeProcess start(String name, String roles, String... extra) throws Exception {
    int port = newPort();
    if (seed == null) seed = "127.0.0.1:" + port;
    return start(name, roles, port, List.of("--seeds", seed), false, extra);
  }

  /**
   * Starts a node JVM that joins while the job runs: at a higher CPU priority than the job's until
   * it is up ({@link NodeProcess#start}), so it is in sooner and the job needs fewer steps to wait.
   */
  NodeProcess startJoining(String name, String roles, String... extra) throws Exception {
    return start(name, roles, newPort(), List.of("--seeds", seed), true, extra);
  }

  /**
   * Starts a node JVM with no seed list: it joins through Cluster Bootstrap, finding the others'
   * management endpoints {@code contactPoints} by config discovery, and serves its own at
   * {@code managementPort}. The first one started submits the job (and the client joins through it).
   */
  NodeProcess startBootstrapped(String name, String roles, int managementPort, String contactPoints)
      throws Exception {
    int port = newPort();
    if (seed == null) seed = "127.0.0.1:" + port;
    return start(name, roles, port, List.of("--management-port", "" + managementPort, "--discovery", "config",
        "--contact-points", contactPoints), false);
  }

  private NodeProcess start(String name, String roles, int port, List<String> join, boolean joining,
      String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("node", "--roles", roles, "--port", "" + port));
    args.addAll(join);
    args.addAll(List.of("--journal", URL, "--config", nodeConf.toString()));
    if (nodes.isEmpty()) {
      grpc = "127.0.0.1:" + newPort();
      args.addAll(List.of("--job", job.toString(), "--grpc-port", grpc.substring(grpc.indexOf(':') + 1)));
    }
    args.addAll(List.of(extra));
    NodeProcess n = NodeProcess.start(name, logs, env, joining, args.toArray(String[]::new));
    nodes.add(n);
    return n;
  }

  /** The seed node's HOST:PORT. */
  String seed() {
    return seed;
  }

  /** The seed node's gRPC API, HOST:PORT, for a command-line client's {@code --grpc}. */
  String grpc() {
    return grpc;
  }

  /** The nodes' configuration file, for a command-line client's {@code --config}. */
  Path nodeConf() {
    return nodeConf;
  }

  /**
   * The client node: joins through the seed and waits until it is up. It reads the nodes'
   * configuration: as a member it may lead the cluster, and then its split-brain resolver decides.
   */
  ClusterNode.Started client() throws Exception {
    if (client == null) {
      client = ClusterNode.start(
          NodeConfig.build(List.of("client"), "127.0.0.1", 0, List.of(seed), "memory", nodeConf, Map.of()));
      ClusterNode.awaitUp(client.system(), Duration.ofSeconds(90));
    }
    return client;
  }

  /** Polls the master's status until {@code done} holds; fails with the nodes' log tails on timeout. */
  JobProtocol.JobStatus awaitStatus(Predicate<JobProtocol.JobStatus> done, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    JobProtocol.JobStatus last = null;
    while (System.nanoTime() < deadline) {
      try {
        last = client().api().status().toCompletableFuture().get(10, TimeUnit.SECONDS);
        if (done.test(last)) return last;
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        // the master may be starting or moving
      }
      Thread.sleep(250);
    }
    throw new AssertionError("timed out waiting; last status " + last + logTails());
  }

  /** Every block's stats (retried while a block moves). */
  List<BlockProtocol.BlockStats> blockStats(JobProtocol.JobStatus status, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        return client().api().blockStats(status.job()).toCompletableFuture().get(15, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        last = e;
        Thread.sleep(500);
      }
    }
    throw new AssertionError("no block stats within " + timeout.toSeconds() + " s: " + last + logTails());
  }

  String logTails() {
    StringBuilder out = new StringBuilder();
    for (NodeProcess n : nodes) {
      String log = n.log();
      out.append("\n--- ").append(n.name()).append(" ---\n").append(log, Math.max(0, log.length() - 3000), log.length());
    }
    return out.toString();
  }

  @Override
  public void close() throws Exception {
    try {
      if (client != null) {
        client.system().terminate();
        client.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } finally {
      for (NodeProcess n : nodes) n.killNow();
      for (NodeProcess n : nodes) n.close();
    }
  }

  static void resetJournal() throws Exception {
    try (Connection c = DriverManager.getConnection(URL, USER, PASSWORD); Statement s = c.createStatement()) {
      for (String table : List.of("event_tag", "event_journal", "snapshot", "durable_state")) {
        s.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
      }
    }
  }

  int newPort() {
    return FreePorts.one();
  }
}
