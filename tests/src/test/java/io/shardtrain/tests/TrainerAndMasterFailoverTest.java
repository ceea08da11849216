package io.shardtrain.tests;

import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.samples.local.DataSets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A trainer node and the master's node killed with SIGKILL, on real JVMs and a PostgreSQL journal
 * (docs/ARCHITECTURE.md, "Invariants"). Sync, trainer killed: the barrier drops it, its task is re-leased
 * where every block holds it (its last reported offset, or further when every block got steps it
 * could not report), the restarted trainer resumes there on the latest parameters, and every block
 * applied every example exactly once. Async, the node of the master and of half the blocks killed: the master moves to the other
 * {@code master} node and recovers from the journal, no acknowledged push is lost, the job ends.
 */
@Tag("multi-jvm") // starts node JVMs: the failsafe lane of mvn verify, not mvn test (tests/pom.xml)
class TrainerAndMasterFailoverTest {
  static final int BATCH = 32;
  static final Pattern LEASE = Pattern.compile("(\\d+)/(\\d+)@(\\d+) -> (\\S+)");
  static final Pattern RESUMED = Pattern.compile(
      "trainer t2 resumes task (\\d+)/(\\d+) at offset (\\d+) after step (\\d+) \\(parameters pulled at version (\\d+)\\)");

  @BeforeEach
  void needsPostgres() {
    Assumptions.assumeTrue(NodeCluster.URL != null,
        "SHARDTRAIN_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL)");
  }

  @Test
  void killedTrainerIsDroppedResumesWhereEveryBlockHoldsItsTaskAndEveryExampleIsAppliedExactlyOnce()
      throws Exception {
    // Enough steps that t1, training alone, is still at it when the restarted t2 is back: t1 alone
    // runs about 10 steps a second here, and the restarted t2 pulled its parameters at step 167-192
    // at the higher priority NodeCluster.startJoining gives it (313-333 without it, when a 200-step
    // job once finished before t2 was back).
    int steps = 300;
    String job = """
        shardtrain.train { dataset = mnist, trainers = 2, mode = sync, steps = %d, epochs = 0, hidden = [64],
          optimizer = sgd, lr = 0.05, lr-schedule = constant, batch = %d, seed = 3, job-id = trainer-kill }
        """.formatted(steps, BATCH);
    try (NodeCluster cluster = new NodeCluster(NodeFailoverTest.DIR.resolve("trainer-killed"),
        "shardtrain.trainer.failure-timeout = 6s\n", job)) {
      cluster.start("n1-master-ps", "master,ps");
      cluster.start("n2-ps-trainer-t1", "ps,trainer", "--trainer-id", "t1");
      NodeProcess t2 = cluster.start("n3-trainer-t2", "trainer", "--trainer-id", "t2");
      JobProtocol.JobStatus before = cluster.awaitStatus(s -> s.submitted() && s.examplesReported() >= 2 * BATCH * 10,
          Duration.ofMinutes(4));
      long killedAt = System.nanoTime();
      t2.kill();
      System.out.printf("trainer-killed: killed t2 after %d examples, its lease %s%n", before.examplesReported(),
          before.leases());

      // The master drops t2 (no heartbeat for failure-timeout); the blocks' barrier lets t1 go on alone.
      JobProtocol.JobStatus dropped = cluster.awaitStatus(s -> !s.members().contains("t2"), Duration.ofMinutes(2));
      double dropSeconds = (System.nanoTime() - killedAt) / 1e9;
      long examplesAtDrop = dropped.examplesReported();
      assertEquals(List.of("t1"), dropped.members());
      assertFalse(leaseOf(dropped, "t2") != null, "t2's task is back in the pool: " + dropped.leases());
      long[] lastLease = leaseOf(before, "t2");
      assertTrue(lastLease != null, "t2 held a lease before the kill: " + before.leases());

      // The same trainer id on a new node JVM, started at once: t1 trains alone meanwhile.
      long versionBeforeRestart = cluster.blockStats(dropped, Duration.ofMinutes(1)).stream()
          .mapToLong(BlockProtocol.BlockStats::version).min().orElseThrow();
      NodeProcess restarted = cluster.startJoining("n3b-trainer-t2", "trainer", "--trainer-id", "t2");
      JobProtocol.JobStatus alone = cluster.awaitStatus(s -> s.examplesReported() >= examplesAtDrop + 3 * BATCH,
          Duration.ofMinutes(2));
      double goOnSeconds = (System.nanoTime() - killedAt) / 1e9;
      System.out.printf("trainer-killed: master dropped t2 %.1f s after the kill (failure-timeout 6 s), membership"
          + " epoch %d %s; t1 stepped on alone (%d examples reported) %.1f s after the kill%n", dropSeconds,
          dropped.membershipEpoch(), dropped.members(), alone.examplesReported(), goOnSeconds);
      JobProtocol.JobStatus rejoined = cluster.awaitStatus(s -> leaseOf(s, "t2") != null || s.done(), Duration.ofMinutes(3));
      long[] newLease = leaseOf(rejoined, "t2");
      Matcher resumed = awaitLog(restarted, RESUMED, Duration.ofMinutes(1));
      long resumedOffset = Long.parseLong(resumed.group(3));
      long pulledVersion = Long.parseLong(resumed.group(5));
      System.out.printf("trainer-killed: restarted t2 resumes task %s/%s at offset %d (lease before the kill: offset"
          + " %d; status now %s), on parameters pulled at version %d (blocks were at >= %d before the restart)%n",
          resumed.group(1), resumed.group(2), resumedOffset, lastLease[2], rejoined.leases(), pulledVersion,
          versionBeforeRestart);
      assertEquals(lastLease[1], Long.parseLong(resumed.group(2)), "t2 got its own task back");
      assertTrue(resumedOffset >= lastLease[2] && resumedOffset > 0, "resumed at " + resumedOffset);
      // The status may be read after t2 reported steps from the resumed offset: the master's offset
      // for that task is there or whole batches further, never behind it.
      if (newLease != null && newLease[1] == Long.parseLong(resumed.group(2))) {
        assertTrue(newLease[2] >= resumedOffset && (newLease[2] - resumedOffset) % BATCH == 0,
            "the master's offset for t2's task is " + newLease[2] + ", t2 resumed at " + resumedOffset);
      }
      assertTrue(pulledVersion >= versionBeforeRestart, "pulled version " + pulledVersion);

      JobProtocol.JobStatus done = cluster.awaitStatus(JobProtocol.JobStatus::done, Duration.ofMinutes(6));
      Mlp model = Mlp.create(CpuBackend.create(1), 784, new int[] {64}, 10, Activation.RELU, 3);
      assertEquals(steps, cluster.client().api().pullInto(model, done.job(), steps).toCompletableFuture()
          .get(60, TimeUnit.SECONDS));
      // Both trainers left the job after their last report: every report is in.
      long reported = cluster.awaitStatus(s -> s.done() && s.members().isEmpty(), Duration.ofMinutes(1))
          .examplesReported();
      List<BlockProtocol.BlockStats> stats = cluster.blockStats(done, Duration.ofMinutes(1));
      long minApplied = Long.MAX_VALUE;
      long maxApplied = 0;
      for (BlockProtocol.BlockStats b : stats) {
        assertEquals(steps, b.version(), b.entityId());
        minApplied = Math.min(minApplied, b.examplesApplied());
        maxApplied = Math.max(maxApplied, b.examplesApplied());
      }
      System.out.printf("trainer-killed: %d examples reported to the master; blocks applied %d to %d examples%n",
          reported, minApplied, maxApplied);
      for (BlockProtocol.BlockStats b : stats) assertEquals(reported, b.examplesApplied(), b.entityId());
    }
  }

  @Test
  void killedMasterNodeMovesTheMasterAndAsyncTrainingKeepsEveryAcknowledgedPush() throws Exception {
    int steps = 60;
    String job = """
        shardtrain.train { dataset = mnist, trainers = 2, mode = async, steps = %d, epochs = 0, hidden = [64],
          optimizer = sgd, lr = 0.1, lr-schedule = constant, batch = %d, seed = 3, job-id = master-kill }
        """.formatted(steps, BATCH);
    try (NodeCluster cluster = new NodeCluster(NodeFailoverTest.DIR.resolve("master-killed"), "", job)) {
      NodeProcess master = cluster.start("n1-master-ps", "master,ps");
      cluster.start("n2-master-ps-trainer-t1", "master,ps,trainer", "--trainer-id", "t1");
      cluster.start("n3-trainer-t2", "trainer", "--trainer-id", "t2");
      JobProtocol.JobStatus before = cluster.awaitStatus(s -> s.submitted() && s.examplesReported() >= 2 * BATCH * 10,
          Duration.ofMinutes(4));
      Map<String, Long> acknowledged = new HashMap<>();
      for (BlockProtocol.BlockStats b : cluster.blockStats(before, Duration.ofMinutes(1))) {
        acknowledged.put(b.entityId(), b.version());
      }
      long killedAt = System.nanoTime();
      master.kill();
      System.out.printf("master-killed: killed the master's node (also a ps node) after %d examples; block"
          + " versions %s%n", before.examplesReported(), acknowledged);

      JobProtocol.JobStatus back = cluster.awaitStatus(s -> s.submitted(), Duration.ofMinutes(3));
      double moveSeconds = (System.nanoTime() - killedAt) / 1e9;
      List<BlockProtocol.BlockStats> recovered = cluster.blockStats(back, Duration.ofMinutes(2));
      double blocksSeconds = (System.nanoTime() - killedAt) / 1e9;
      System.out.printf("master-killed: the master answered from its new node %.1f s after the kill (%d examples"
          + " reported, %s); every block answered %.1f s after%n", moveSeconds, back.examplesReported(),
          back.leases(), blocksSeconds);
      assertTrue(back.examplesReported() >= before.examplesReported(), "the master recovered its offsets");
      for (BlockProtocol.BlockStats b : recovered) {
        assertTrue(b.version() >= acknowledged.get(b.entityId()), b.entityId() + " went back from version "
            + acknowledged.get(b.entityId()) + " to " + b.version());
      }

      JobProtocol.JobStatus done = cluster.awaitStatus(JobProtocol.JobStatus::done, Duration.ofMinutes(6));
      Mlp model = Mlp.create(CpuBackend.create(1), 784, new int[] {64}, 10, Activation.RELU, 3);
      long version = cluster.client().api().pullInto(model, done.job(), 0).toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      // Async: a block's version counts the pushes it applied; each trainer pushed once per step.
      List<BlockProtocol.BlockStats> end = cluster.blockStats(done, Duration.ofMinutes(1));
      double accuracy = accuracy(model);
      System.out.printf("master-killed: job done, %d examples reported; block versions %s (2 trainers x %d steps);"
          + " test accuracy %.4f%n", done.examplesReported(), end.stream().map(BlockProtocol.BlockStats::version)
          .toList(), steps, accuracy);
      for (BlockProtocol.BlockStats b : end) assertEquals(2L * steps, b.version(), b.entityId());
      assertEquals(2L * steps, version);
      assertTrue(accuracy >= 0.7, "test accuracy " + accuracy);
    }
  }

  /** {epoch, task, offset} of the task leased to {@code trainer}, or null. */
  static long[] leaseOf(JobProtocol.JobStatus s, String trainer) {
    for (String l : s.leases()) {
      Matcher m = LEASE.matcher(l);
      if (m.matches() && m.group(4).equals(trainer)) {
        return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3))};
      }
    }
    return null;
  }

  static Matcher awaitLog(NodeProcess node, Pattern p, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      Matcher m = p.matcher(node.log());
      if (m.find()) return m;
      Thread.sleep(250);
    }
    throw new AssertionError(node.name() + " never logged " + p + "\n" + node.log());
  }

  static double accuracy(Mlp model) throws Exception {
    Dataset test = DataSets.load("mnist", Path.of(ConfigFactory.load().getString("shardtrain.data-dir"))).test();
    Tensor x = Tensor.zeros(test.size(), test.dim());
    float[] data = x.data();
    for (int i = 0; i < test.size(); i++) {
      for (int j = 0; j < test.dim(); j++) data[i * test.dim() + j] = test.feature(i, j);
    }
    int[] predicted = model.predict(x);
    int right = 0;
    for (int i = 0; i < test.size(); i++) if (predicted[i] == test.label(i)) right++;
    return right / (double) test.size();
  }
}
