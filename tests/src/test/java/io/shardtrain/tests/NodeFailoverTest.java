package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.master.Master;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.NodeConfig;
import java.net.ServerSocket;
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
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Nodes killed with SIGKILL in the middle of a sync job, with real JVMs and a real PostgreSQL
 * journal. A {@code ps} node: its blocks restart on the surviving {@code ps} node from the journal
 * and the trainers retry what was interrupted; the job ends with the same parameters as the same
 * job without the kill. Needs {@code SHARDTRAIN_TEST_POSTGRES_URL} (.ci/run starts PostgreSQL).
 */
class NodeFailoverTest {
  static final String URL = System.getenv("SHARDTRAIN_TEST_POSTGRES_URL");
  static final String USER = System.getenv().getOrDefault("SHARDTRAIN_POSTGRES_USER", "shardtrain");
  static final String PASSWORD = System.getenv().getOrDefault("SHARDTRAIN_POSTGRES_PASSWORD", "");
  static final int STEPS = 40;

  /** Node logs stay under target/ for a look after a failure. */
  final Path dir = Path.of("target", "failover-logs", String.valueOf(System.currentTimeMillis()));

  /** The job without any failure, run once for both tests: sync results do not depend on placement. */
  private static Mlp clean;

  static final List<String> PS_VICTIM = List.of("master,trainer", "ps,trainer", "ps");

  Mlp cleanRun() throws Exception {
    if (clean == null) clean = runJob("clean", PS_VICTIM, -1);
    return clean;
  }

  @Test
  void killedPsNodeLosesNothingAndTheJobEndsWithTheParametersOfARunWithoutTheKill() throws Exception {
    Assumptions.assumeTrue(URL != null, "SHARDTRAIN_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL)");
    Mlp killed = runJob("ps-killed", PS_VICTIM, 2);
    double error = SyncEquivalenceTest.relativeDistance(cleanRun(), killed);
    System.out.printf("parameters with a killed ps node vs without: relative error %.3g%n", error);
    assertTrue(error < 1e-5, "relative error " + error);
  }

  /** Runs the job on three node JVMs with these roles, killing node {@code victim} (-1: none) mid-job. */
  Mlp runJob(String name, List<String> roles, int victim) throws Exception {
    return runJob(name, roles, STEPS, (cluster, client, status) -> {
      if (victim < 0) return;
      cluster.nodes().get(victim).kill();
      System.out.println(name + ": killed " + cluster.nodes().get(victim).name() + " after "
          + status.examplesReported() + " examples");
    });
  }

  /** What a run does once the job has made some progress (a quarter of its examples). */
  interface MidJob {
    void run(Cluster cluster, ClusterNode.Started client, Master.JobStatus progress) throws Exception;
  }

  /** The node JVMs of a run, and how to start one more like them. */
  record Cluster(Path logs, Path nodeConf, String seed, List<String> env, List<NodeProcess> nodes) {
    /** Starts node {@code nodes().size() + 1} with {@code roles} on a free port. */
    NodeProcess startNode(String roles, String... extraArgs) throws Exception {
      int port = nodes.isEmpty() ? Integer.parseInt(seed.substring(seed.indexOf(':') + 1)) : freePort();
      List<String> args = new ArrayList<>(List.of("node", "--roles", roles, "--port", "" + port,
          "--seeds", seed, "--journal", URL, "--config", nodeConf.toString()));
      args.addAll(List.of(extraArgs));
      NodeProcess node = NodeProcess.start("n" + (nodes.size() + 1) + "-" + roles.replace(',', '-'), logs, env,
          args.toArray(String[]::new));
      nodes.add(node);
      return node;
    }
  }

  /** Runs the job for {@code steps} on three node JVMs with these roles; {@code midJob} acts once it made progress. */
  Mlp runJob(String name, List<String> roles, int steps, MidJob midJob) throws Exception {
    resetJournal();
    Path logs = Files.createDirectories(dir.resolve(name));
    Path nodeConf = logs.resolve("node.conf");
    Files.writeString(nodeConf, """
        akka.cluster.split-brain-resolver.stable-after = 4s
        # Two cores carry three node JVMs here: a late decision is load, not a flapping network.
        akka.cluster.split-brain-resolver.down-all-when-unstable = off
        akka.cluster.failure-detector.acceptable-heartbeat-pause = 4s
        akka.cluster.role.ps.min-nr-of-members = 2
        # A JVM that starts while the cores are busy may need more than 5 s to start its logger.
        akka.logger-startup-timeout = 30s
        shardtrain.trainer { ask-timeout = 6s, pull-timeout = 20s, failure-timeout = 120s }
        shardtrain.ps { snapshot-every = 15, block-size = 16384 }
        """);
    Path job = logs.resolve("job.conf");
    Files.writeString(job, """
        shardtrain.train { dataset = mnist, trainers = 2, mode = sync, steps = %d, epochs = 0, hidden = [64],
          optimizer = sgd, lr = 0.05, lr-schedule = constant, batch = 32, seed = 3, job-id = failover }
        """.formatted(steps));
    String seed = "127.0.0.1:" + freePort();
    List<String> env = List.of("SHARDTRAIN_POSTGRES_USER=" + USER, "SHARDTRAIN_POSTGRES_PASSWORD=" + PASSWORD,
        "SHARDTRAIN_LOG_LEVEL=INFO");
    List<NodeProcess> nodes = new ArrayList<>();
    Cluster cluster = new Cluster(logs, nodeConf, seed, env, nodes);
    try {
      for (int i = 0; i < 3; i++) {
        if (i == 0) {
          cluster.startNode(roles.get(i), "--job", job.toString());
        } else {
          cluster.startNode(roles.get(i));
        }
      }

      ClusterNode.Started client = ClusterNode.start(
          NodeConfig.build(List.of("client"), "127.0.0.1", 0, List.of(seed), "memory", null,
              Map.of("akka.logger-startup-timeout", "30s")));
      try {
        ClusterNode.awaitUp(client.system(), Duration.ofSeconds(90));
        Master.JobStatus status = awaitStatus(client, s -> s.submitted() && s.examplesReported() >= 2 * 32 * 12,
            Duration.ofMinutes(4), nodes);
        midJob.run(cluster, client, status);
        status = awaitStatus(client, Master.JobStatus::done, Duration.ofMinutes(6), nodes);
        Mlp model = Mlp.create(CpuBackend.create(1), 784, new int[] {64}, 10, Activation.RELU, 3);
        long version = client.api().pullInto(model, status.job(), steps).toCompletableFuture().get(60, TimeUnit.SECONDS);
        System.out.println(name + ": job done at version " + version);
        // Both trainers took every step together: the job started only once both were registered.
        assertEquals(steps, version, name + ": blocks at version " + version);
        return model;
      } finally {
        client.system().terminate();
        client.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } finally {
      for (NodeProcess n : nodes) n.close();
    }
  }

  static Master.JobStatus awaitStatus(ClusterNode.Started client, java.util.function.Predicate<Master.JobStatus> done,
      Duration timeout, List<NodeProcess> nodes) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    Master.JobStatus last = null;
    while (System.nanoTime() < deadline) {
      try {
        last = client.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS);
        if (done.test(last)) return last;
      } catch (Exception e) {
        // the master may be starting or moving
      }
      Thread.sleep(500);
    }
    StringBuilder logs = new StringBuilder();
    for (NodeProcess n : nodes) {
      String log = n.log();
      logs.append("\n--- ").append(n.name()).append(" ---\n").append(log, Math.max(0, log.length() - 3000), log.length());
    }
    throw new AssertionError("timed out waiting; last status " + last + logs);
  }

  static void resetJournal() throws Exception {
    try (Connection c = DriverManager.getConnection(URL, USER, PASSWORD); Statement s = c.createStatement()) {
      for (String table : List.of("event_tag", "event_journal", "snapshot", "durable_state")) {
        s.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
      }
    }
  }

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
