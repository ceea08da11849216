package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.shardtrain.actors.master.Master;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cli.ShardTrainCli;
import io.shardtrain.samples.cluster.NodeConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
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
import java.util.function.Predicate;

/**
 * Runs one small sync MNIST job on three node JVMs sharing a PostgreSQL journal, optionally
 * SIGKILLing one node mid-job, and returns the final parameters: the machinery of the failover
 * tests. Needs {@code SHARDTRAIN_TEST_POSTGRES_URL}.
 */
final class ClusterJobs {
  static final String URL = System.getenv("SHARDTRAIN_TEST_POSTGRES_URL");
  static final String USER = System.getenv().getOrDefault("SHARDTRAIN_POSTGRES_USER", "shardtrain");
  static final String PASSWORD = System.getenv().getOrDefault("SHARDTRAIN_POSTGRES_PASSWORD", "");
  static final int STEPS = 40;
  /** Node 3 holds only parameter blocks: killing it takes blocks, not the master or a trainer. */
  static final List<String> PS_VICTIM = List.of("master,trainer", "ps,trainer", "ps");

  private ClusterJobs() {}

  /** The job's end: the parameters pulled at its last step and the master's last status. */
  record Result(Mlp model, Master.JobStatus status) {}

  /** Something to do on the cluster once the job is done, before its parameters are pulled. */
  interface AtEnd {
    void run(String seed, Path nodeConf, ClusterNode.Started client) throws Exception;
  }

  /** The clean run: its parameters, and what {@code shardtrain checkpoint} printed and wrote at its end. */
  record Clean(Mlp model, String checkpointOutput, Path checkpoint) {}

  private static Clean clean;

  /**
   * The job without any failure (exact durability), run once per test JVM: sync results depend
   * neither on placement nor on durability, which only decides what the journal holds. At its end
   * {@code shardtrain checkpoint} (the command line, joining as a client) checkpoints it.
   */
  static synchronized Clean cleanRun(Path dir) throws Exception {
    if (clean == null) {
      Path checkpoint = dir.resolve("clean-checkpoint").toAbsolutePath();
      StringWriter out = new StringWriter();
      Mlp model = runJob(dir, "clean", PS_VICTIM, "", -1, s -> true, (seed, conf, client) -> {
        StringWriter err = new StringWriter();
        int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true),
            "checkpoint", "--contact", seed, "--config", conf.toString(), "--dir", checkpoint.toString());
        assertEquals(0, exit, out + "\n" + err);
      }).model();
      System.out.print(out);
      clean = new Clean(model, out.toString(), checkpoint);
    }
    return clean;
  }

  /**
   * Runs the job on three node JVMs with these roles and {@code nodeConf} added to their
   * configuration, killing node {@code victim} (-1: none) once {@code killWhen} holds; runs
   * {@code atEnd} (if not null) when the job is done.
   */
  static Result runJob(Path dir, String name, List<String> roles, String nodeConf, int victim,
      Predicate<Master.JobStatus> killWhen, AtEnd atEnd) throws Exception {
    resetJournal();
    Path logs = Files.createDirectories(dir.resolve(name));
    Path conf = logs.resolve("node.conf");
    Files.writeString(conf, """
        akka.cluster.split-brain-resolver.stable-after = 4s
        # Two cores carry three node JVMs here: a late decision is load, not a flapping network.
        akka.cluster.split-brain-resolver.down-all-when-unstable = off
        akka.cluster.failure-detector.acceptable-heartbeat-pause = 4s
        akka.cluster.role.ps.min-nr-of-members = 2
        # Other builds share the two cores: a JVM may take a while to get its logger going.
        akka.logger-startup-timeout = 30s
        shardtrain.trainer { ask-timeout = 6s, pull-timeout = 20s, failure-timeout = 120s }
        shardtrain.ps { snapshot-every = 15, block-size = 16384 }
        """ + nodeConf);
    Path job = logs.resolve("job.conf");
    Files.writeString(job, """
        shardtrain.train { dataset = mnist, trainers = 2, mode = sync, steps = %d, epochs = 0, hidden = [64],
          optimizer = sgd, lr = 0.05, lr-schedule = constant, batch = 32, seed = 3, job-id = failover }
        """.formatted(STEPS));
    int p1 = freePort(), p2 = freePort(), p3 = freePort();
    if (p3 < p2) {
      // The two ps nodes become Up together (min-nr-of-members), older in address order: node 2
      // must be the older one, so the shard coordinator lives there and not on the victim. A
      // coordinator that moves waits for two ps regions before it allocates any shard again.
      int t = p2;
      p2 = p3;
      p3 = t;
    }
    String seed = "127.0.0.1:" + p1;
    List<String> env = List.of("SHARDTRAIN_POSTGRES_USER=" + USER, "SHARDTRAIN_POSTGRES_PASSWORD=" + PASSWORD,
        "SHARDTRAIN_LOG_LEVEL=INFO");
    List<NodeProcess> nodes = new ArrayList<>();
    int[] ports = {p1, p2, p3};
    try {
      for (int i = 0; i < 3; i++) {
        List<String> args = new ArrayList<>(List.of("node", "--roles", roles.get(i), "--port", "" + ports[i],
            "--seeds", seed, "--journal", URL, "--config", conf.toString()));
        if (i == 0) args.addAll(List.of("--job", job.toString()));
        nodes.add(NodeProcess.start("n" + (i + 1) + "-" + roles.get(i).replace(',', '-'), logs, env,
            args.toArray(String[]::new)));
      }

      ClusterNode.Started client = ClusterNode.start(
          NodeConfig.build(List.of("client"), "127.0.0.1", 0, List.of(seed), "memory", null,
              Map.of("akka.logger-startup-timeout", "30s")));
      try {
        ClusterNode.awaitUp(client.system(), Duration.ofMinutes(3));
        Master.JobStatus status = awaitStatus(client,
            s -> s.submitted() && s.examplesReported() >= 2 * 32 * 12 && killWhen.test(s), Duration.ofMinutes(4), nodes);
        if (victim >= 0) {
          nodes.get(victim).kill();
          System.out.println(name + ": killed " + nodes.get(victim).name() + " after " + status.examplesReported()
              + " examples");
        }
        status = awaitStatus(client, Master.JobStatus::done, Duration.ofMinutes(6), nodes);
        if (atEnd != null) atEnd.run(seed, conf, client);
        Mlp model = Mlp.create(CpuBackend.create(1), 784, new int[] {64}, 10, Activation.RELU, 3);
        long version = client.api().pullInto(model, status.job(), STEPS).toCompletableFuture().get(60, TimeUnit.SECONDS);
        System.out.println(name + ": job done at version " + version);
        // Both trainers took every step together: the job started only once both were registered.
        assertEquals(STEPS, version, name + ": blocks at version " + version);
        return new Result(model, status);
      } finally {
        client.system().terminate();
        client.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } finally {
      for (NodeProcess n : nodes) n.close();
    }
  }

  static Master.JobStatus awaitStatus(ClusterNode.Started client, Predicate<Master.JobStatus> done,
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
