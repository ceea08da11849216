package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.nn.Mlp;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Nodes killed with SIGKILL in the middle of a sync job, with real JVMs and a real PostgreSQL
 * journal. A {@code ps} node: its blocks restart on the surviving {@code ps} node from the journal
 * and the trainers retry what was interrupted; the job ends with the same parameters as the same
 * job without the kill. Needs {@code SHARDTRAIN_TEST_POSTGRES_URL} (.ci/run starts PostgreSQL).
 */
class NodeFailoverTest {
  /** Node logs stay under target/ for a look after a failure. */
  final Path dir = Path.of("target", "failover-logs", String.valueOf(System.currentTimeMillis()));

  @Test
  void killedPsNodeLosesNothingAndTheJobEndsWithTheParametersOfARunWithoutTheKill() throws Exception {
    Assumptions.assumeTrue(ClusterJobs.URL != null,
        "SHARDTRAIN_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL)");
    Mlp killed = ClusterJobs.runJob(dir, "ps-killed", ClusterJobs.PS_VICTIM, "", 2, s -> true, null).model();
    double error = SyncEquivalenceTest.relativeDistance(ClusterJobs.cleanRun(dir).model(), killed);
    System.out.printf("parameters with a killed ps node vs without: relative error %.3g%n", error);
    assertTrue(error < 1e-5, "relative error " + error);
  }
}
