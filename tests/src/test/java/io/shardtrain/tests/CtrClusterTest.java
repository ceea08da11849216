package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.sparse.SparseClient;
import io.shardtrain.actors.trainer.StepProfile;
import io.shardtrain.actors.transport.WireTimings;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.compute.metrics.Auc;
import io.shardtrain.compute.nn.FactorizationMachine;
import io.shardtrain.compute.nn.FmBatch;
import io.shardtrain.samples.local.CtrData;
import io.shardtrain.samples.local.CtrTraining;
import io.shardtrain.samples.local.DistributedCtrTraining;
import io.shardtrain.samples.local.LocalCluster;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A factorization machine trained by two {@link io.shardtrain.actors.trainer.CtrTrainer}s against
 * two {@code ps} nodes: its dense part in parameter blocks, its id rows in a two-shard sparse table.
 * Every training example is applied once, the test AUC the master merged from the trainers' two
 * shares is the exact AUC of the final model's predictions, and it is as good as one process's.
 * Each trainer's step profile ({@code --profile}) covers every step it took.
 */
class CtrClusterTest {
  private static final String CONFIG = """
      shardtrain.train { optimizer = adagrad, lr = 0.05, lr-schedule = constant, batch = 256, epochs = 1, steps = 0,
        seed = 11 }
      shardtrain.train.ctr { examples = 30000, test-examples = 6000, vocabulary = 500, hash-space = 65536 }
      """;

  @Test
  void twoSyncTrainersApplyEveryExampleOnceAndTheMergedAucIsTheFinalModelsExactAuc() throws Exception {
    trainAndCheck(BlockSpec.Mode.SYNC);
  }

  @Test
  void twoAsyncTrainersApplyEveryExampleOnceAndTheMergedAucIsTheFinalModelsExactAuc() throws Exception {
    trainAndCheck(BlockSpec.Mode.ASYNC);
  }

  private static void trainAndCheck(BlockSpec.Mode mode) throws Exception {
    Config config = ClusterTestSupport.config(CONFIG);
    TrainSettings s = ClusterTestSupport.settings(config);
    CtrSettings ctr = CtrSettings.fromConfig(config);
    CtrData data = CtrData.load("ctr", ctr, s.seed());
    double single = new CtrTraining(s, ctr, ClusterTestSupport.quiet(), ClusterTestSupport.metrics())
        .run(data.train(), data.test()).testAuc();

    DistributedCtrTraining.Result r;
    double exact;
    try (LocalCluster cluster = LocalCluster.start("ctr-" + mode.name().toLowerCase(), 2, 2, config,
        Duration.ofSeconds(60))) {
      r = new DistributedCtrTraining(s, ctr, mode, 64, -1, ClusterTestSupport.quiet(), ClusterTestSupport.metrics(),
          true).run(cluster, data.train(), data.test());
      exact = exactAuc(cluster.coordinator(), r.job(), data.test());
    }
    assertEquals(data.train().size(), r.samples(), "every training example applied once");
    assertEquals(2, r.job().ctr().tableShards());
    assertTrue(r.job().blocks().size() > 1, "the dense part is cut into several blocks: " + r.job().blocks());
    assertEquals(data.test().size(), r.testAucExamples(), "both trainers' shares merged");
    assertEquals(exact, r.testAuc(), 1e-3, "merged histogram AUC against the exact AUC of the final model");
    assertEquals(single, r.testAuc(), 0.02, "against one process on the same data");
    assertTrue(r.testAuc() > 0.7, "learned something: " + r.testAuc());
    // Each example touches 26 ids (fewer distinct rows per batch): ids and 17-float rows move per pull and push.
    assertTrue(r.pullBytesPerExample() > 0 && r.pullBytesPerExample() < 26 * (8 + 4 * 17),
        "pull bytes per example " + r.pullBytesPerExample());
    assertEquals(java.util.List.of("trainer-1", "trainer-2"), java.util.List.copyOf(r.profiles().keySet()));
    long[] steps = r.profiles().values().stream().mapToLong(StepProfile::steps).toArray();
    long batches = (data.train().size() + 255) / 256;
    // Every step with data is profiled; sync trainers step together (one with an empty push when it has no
    // data), but for a last step without data that a trainer may take before it hears the job is done.
    assertTrue(steps[0] + steps[1] >= batches, "profiled steps " + Arrays.toString(steps) + " of " + batches);
    if (mode == BlockSpec.Mode.SYNC) {
      assertTrue(Math.abs(steps[0] - steps[1]) <= 1, "sync trainers step together: " + Arrays.toString(steps));
    }
    for (StepProfile p : r.profiles().values()) {
      assertTrue(p.computeNanos() > 0 && p.pushWaitNanos() + p.pullWaitNanos() > 0, "compute and waits: " + p);
    }
    assertTrue(r.wire().get(WireTimings.Kind.SERIALIZE).calls() > 0, "serialization timed: " + r.wire());
  }

  /** The sort-based AUC of the final model: dense part pulled from the blocks, rows from the table. */
  private static double exactAuc(ShardTrain api, JobSpec job, CtrDataset test) {
    FactorizationMachine fm = job.ctr().machine();
    float[] dense = new float[fm.denseSize()];
    for (BlockSlice slice : job.denseLayout()) {
      float[] v = api.pull(slice.entityId(), 0).toCompletableFuture().join().values();
      System.arraycopy(v, 0, dense, slice.offset(), v.length);
    }
    SparseClient rows = new SparseClient(api.system(), job.table(), "auc-check", Duration.ofSeconds(30));
    FmBatch batch = new FmBatch(fm);
    float[] probs = new float[test.size()];
    int chunk = 2000;
    for (int from = 0; from < test.size(); from += chunk) {
      int n = Math.min(chunk, test.size() - from);
      batch.index(Arrays.copyOfRange(test.ids(), from * fm.fields(), (from + n) * fm.fields()), n);
      long[] ids = batch.rowIds().ids();
      float[] values = rows.pull(ids, 0).toCompletableFuture().join().rows();
      System.arraycopy(values, 0, batch.rows(), 0, ids.length * fm.rowWidth());
      float[] out = new float[n];
      batch.predict(Arrays.copyOfRange(test.dense(), from * fm.denseDim(), (from + n) * fm.denseDim()), dense, out);
      System.arraycopy(out, 0, probs, from, n);
    }
    return Auc.exact(probs, test.labels());
  }
}
