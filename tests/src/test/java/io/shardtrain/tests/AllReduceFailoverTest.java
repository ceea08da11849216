package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * All-reduce mode with a trainer JVM killed by SIGKILL, on real JVMs and a PostgreSQL journal: the
 * same trainer id restarted at once on a new JVM joins the ring (the master drops the dead actor or
 * takes the new one in its place, whichever it notices first; the survivors settle the dead
 * actor's task from the ring's marks and hand the newcomer a replica), and when the job is done the
 * three hold bit-identical replicas and every example of every epoch was applied exactly once.
 */
@Tag("multi-jvm") // starts node JVMs: the failsafe lane of mvn verify, not mvn test (tests/pom.xml)
class AllReduceFailoverTest {
  // The restart comes in epoch 0; a second epoch cuts tasks again for the ring it joined.
  static final int EPOCHS = 2;
  static final int MNIST = 60_000;
  static final Pattern LEFT = Pattern.compile(
      "trainer (t\\d) leaves the ring after step (\\d+) with (\\d+) examples applied, replica hash (\\S+)");

  @BeforeEach
  void needsPostgres() {
    Assumptions.assumeTrue(NodeCluster.URL != null,
        "SHARDTRAIN_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL)");
  }

  @Test
  void killedMembersRestartJoinsTheRingAndAllEndIdenticalWithEveryExampleAppliedOnce() throws Exception {
    // Long enough that the job still runs when the restarted JVM has joined (5-20 s here); the ring
    // waits for it anyway unless the master dropped t3 first.
    String job = """
        shardtrain.train { dataset = mnist, trainers = 3, mode = allreduce, steps = 0, epochs = %d,
          hidden = [512, 256], optimizer = momentum, lr = 0.05, lr-schedule = constant, batch = 32, seed = 3,
          job-id = ring-kill }
        """.formatted(EPOCHS);
    Path logs = NodeFailoverTest.DIR.resolve("ring-killed");
    // The ring's replica checkpoints go beside the logs, not into the home directory.
    String nodeConf = """
        shardtrain.trainer.failure-timeout = 6s
        shardtrain.ps.min-nodes = 1
        shardtrain.checkpoint.dir = "%s"
        """.formatted(logs.resolve("checkpoints").toAbsolutePath());
    try (NodeCluster cluster = new NodeCluster(logs, nodeConf, job)) {
      NodeProcess n1 = cluster.start("n1-master-ps-trainer-t1", "master,ps,trainer", "--trainer-id", "t1");
      NodeProcess n2 = cluster.start("n2-trainer-t2", "trainer", "--trainer-id", "t2");
      NodeProcess n3 = cluster.start("n3-trainer-t3", "trainer", "--trainer-id", "t3");
      JobProtocol.JobStatus before = cluster.awaitStatus(s -> s.submitted() && s.examplesReported() >= 3 * 32 * 20,
          Duration.ofMinutes(4));
      long killedAt = System.nanoTime();
      n3.kill();
      NodeProcess n3b = cluster.startJoining("n3b-trainer-t3", "trainer", "--trainer-id", "t3");
      System.out.printf("ring-killed: killed t3 after %d examples, restarted it at once%n", before.examplesReported());

      // The master notices: t3 dropped (no heartbeat, or its node removed), or its restart registered
      // first (a new actor under the same id): either way a new membership epoch, and a new ring.
      JobProtocol.JobStatus noticed = cluster.awaitStatus(s -> s.membershipEpoch() > before.membershipEpoch(),
          Duration.ofMinutes(2));
      System.out.printf("ring-killed: membership epoch %d %s %.1f s after the kill%n", noticed.membershipEpoch(),
          noticed.members(), (System.nanoTime() - killedAt) / 1e9);
      Matcher took = TrainerAndMasterFailoverTest.awaitLog(n3b, Pattern.compile("took the replica of step (\\d+)"),
          Duration.ofMinutes(3));
      System.out.printf("ring-killed: the restarted t3 took a survivor's replica of step %s%n", took.group(1));

      JobProtocol.JobStatus done = cluster.awaitStatus(s -> s.done() && s.members().isEmpty(), Duration.ofMinutes(6));
      Map<String, String> left = new TreeMap<>();
      for (NodeProcess n : List.of(n1, n2, n3b)) {
        Matcher m = TrainerAndMasterFailoverTest.awaitLog(n, LEFT, Duration.ofMinutes(1));
        left.put(m.group(1), "step " + m.group(2) + ", " + m.group(3) + " examples, hash " + m.group(4));
      }
      List<BlockProtocol.BlockStats> blocks = cluster.blockStats(done, Duration.ofMinutes(1));
      System.out.printf("ring-killed: job done, %d examples reported; replicas %s; blocks applied %s%n",
          done.examplesReported(), left, blocks.stream().map(BlockProtocol.BlockStats::examplesApplied).toList());
      assertEquals(3, left.size(), left.toString());
      assertEquals(1, left.values().stream().distinct().count(), "replicas differ: " + left);
      long examples = (long) EPOCHS * MNIST;
      assertTrue(left.get("t1").contains(", " + examples + " examples"), left.get("t1"));
      assertEquals(examples, done.examplesReported());
      for (BlockProtocol.BlockStats b : blocks) assertEquals(examples, b.examplesApplied(), b.entityId());
    }
  }
}
