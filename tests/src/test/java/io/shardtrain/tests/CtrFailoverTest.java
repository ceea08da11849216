package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.sparse.SparseClient;
import io.shardtrain.compute.sparse.BatchRows;
import io.shardtrain.samples.local.CtrData;
import io.shardtrain.samples.local.DistributedCtrTraining;
import io.shardtrain.samples.local.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A {@code ps} JVM holding shards of a click-through job's sparse table (and maybe its dense block)
 * is killed with SIGKILL in the middle of a sync job on PostgreSQL: its shards recover on the other
 * {@code ps} node from their journal (chunked snapshots and the steps after them) and the trainers
 * send again what was not acknowledged. No acknowledged row update is lost and none is applied
 * twice: the job ends with the rows and dense values of the same job run without the kill (in this
 * JVM; sync results depend neither on placement nor on the journal).
 */
@Tag("multi-jvm") // starts node JVMs: the failsafe lane of mvn verify, not mvn test (tests/pom.xml)
class CtrFailoverTest {
  private static final Path DIR = Path.of("target", "failover-logs", "ctr-" + System.currentTimeMillis());
  private static final String CTR = """
      shardtrain.train.ctr { examples = 16000, test-examples = 2000, vocabulary = 300, hash-space = 65536,
        table-shards = 2 }
      # Snapshots (chunked) every few steps, so the recovered shard reads one and the steps after it.
      shardtrain.sparse.snapshot-every = 4
      """;
  private static final String JOB = """
      shardtrain.train { dataset = ctr, trainers = 2, mode = sync, epochs = 1, steps = 0, optimizer = adagrad,
        lr = 0.05, lr-schedule = constant, batch = 128, seed = 5, job-id = ctr-failover }
      """ + CTR;

  /** The dense part and the rows of every id the training set touches, as one run ended. */
  record Values(float[] dense, float[] rows) {}

  @Test
  void killedPsNodeWithTableShardsLosesNoRowUpdateAndTheJobEndsAsWithoutTheKill() throws Exception {
    Assumptions.assumeTrue(NodeCluster.URL != null,
        "SHARDTRAIN_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL)");
    Config config = ClusterTestSupport.config(JOB);
    TrainSettings s = ClusterTestSupport.settings(config);
    CtrData data = CtrData.load("ctr", CtrSettings.fromConfig(config), s.seed());
    long[] ids = touched(data);

    Values killed;
    JobProtocol.JobStatus end;
    try (NodeCluster cluster = new NodeCluster(DIR.resolve("ps-killed"), CTR, JOB)) {
      for (int i = 0; i < 3; i++) {
        String roles = NodeFailoverTest.PS_VICTIM.get(i);
        cluster.start("n" + (i + 1) + "-" + roles.replace(',', '-'), roles);
      }
      cluster.awaitStatus(st -> st.submitted() && st.examplesReported() >= 2 * 128 * 10, Duration.ofMinutes(4));
      NodeFailoverTest.killAndTimeRecovery("ctr-ps-killed", cluster, 2);
      end = cluster.awaitStatus(JobProtocol.JobStatus::done, Duration.ofMinutes(6));
      killed = values(cluster.client().api(), end.job(), ids);
    }
    assertEquals(data.train().size(), end.examplesReported(), "every example reported once");
    assertTrue(killed.dense()[0] != 0f, "the bias (it starts at 0) was trained");

    Values clean;
    try (LocalCluster cluster = LocalCluster.start("ctr-clean", 2, 2, config, Duration.ofSeconds(60))) {
      DistributedCtrTraining.Result r = new DistributedCtrTraining(s, CtrSettings.fromConfig(config),
          BlockSpec.Mode.SYNC, 16384, -1, ClusterTestSupport.quiet(), ClusterTestSupport.metrics(), false)
          .run(cluster, data.train(), data.test());
      clean = values(cluster.coordinator(), r.job(), ids);
    }
    double dense = relativeDistance(clean.dense(), killed.dense());
    double rows = relativeDistance(clean.rows(), killed.rows());
    System.out.printf("click-through job with a killed ps node vs without: relative error dense %.3g, rows %.3g"
        + " (%d rows)%n", dense, rows, ids.length);
    assertTrue(dense < 1e-5, "dense relative error " + dense);
    assertTrue(rows < 1e-5, "rows relative error " + rows);
  }

  /** Every id the training set holds, once. */
  private static long[] touched(CtrData data) {
    BatchRows rows = new BatchRows();
    rows.index(data.train().ids(), data.train().ids().length);
    return rows.ids();
  }

  private static Values values(ShardTrain api, JobSpec job, long[] ids) {
    float[] dense = new float[job.ctr().machine().denseSize()];
    for (BlockSlice slice : job.denseLayout()) {
      float[] v = api.pull(slice.entityId(), 0).toCompletableFuture().join().values();
      System.arraycopy(v, 0, dense, slice.offset(), v.length);
    }
    SparseClient client = new SparseClient(api.system(), job.table(), "failover-check", Duration.ofSeconds(60));
    int width = job.ctr().machine().rowWidth();
    float[] rows = new float[ids.length * width];
    for (int from = 0; from < ids.length; from += 4096) {
      long[] chunk = Arrays.copyOfRange(ids, from, Math.min(ids.length, from + 4096));
      float[] got = client.pull(chunk, 0).toCompletableFuture().join().rows();
      System.arraycopy(got, 0, rows, from * width, got.length);
    }
    return new Values(dense, rows);
  }

  private static double relativeDistance(float[] a, float[] b) {
    double diff = 0;
    double norm = 0;
    for (int i = 0; i < a.length; i++) {
      diff += (double) (a[i] - b[i]) * (a[i] - b[i]);
      norm += (double) a[i] * a[i];
    }
    return Math.sqrt(diff / Math.max(norm, 1e-30));
  }
}
