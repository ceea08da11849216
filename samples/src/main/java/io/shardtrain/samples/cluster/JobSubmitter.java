package io.shardtrain.samples.cluster;

import com.typesafe.config.Config;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.samples.local.CtrData;
import io.shardtrain.samples.local.DataSets;
import java.time.Duration;

/**
 * Submits a job described by {@code shardtrain.train.*} to a running cluster: plans it from the
 * data set's shape (a click-through data set: a factorization machine, its rows in a table of
 * {@code shardtrain.train.ctr.table-shards} shards, else {@code shardtrain.ps.min-nodes}),
 * initialises every parameter block (and table shard), hands the job to the master. Retries while
 * the cluster is still forming (blocks need a {@code ps} node, the job needs the master).
 */
public final class JobSubmitter {
  private JobSubmitter() {}

  public static JobSpec submit(ShardTrain api, Config config, Duration patience) throws Exception {
    TrainSettings s = TrainSettings.fromConfig(config);
    PsSettings ps = PsSettings.fromConfig(config);
    BlockSpec.Mode mode;
    try {
      mode = BlockSpec.Mode.parse(config.getString("shardtrain.train.mode"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("shardtrain.train." + e.getMessage());
    }
    int trainers = config.getInt("shardtrain.train.trainers");
    String jobId = config.getString("shardtrain.train.job-id");
    if (jobId.isBlank()) jobId = "job-" + System.currentTimeMillis();
    if (CtrData.isCtr(s.dataset())) {
      CtrSettings ctr = CtrSettings.fromConfig(config);
      CtrData data = CtrData.load(s.dataset(), ctr, s.seed());
      ShardTrain.CtrPlan plan = ShardTrain.planCtr(s, ctr, jobId, data.train(), mode, trainers, ps.blockSize(),
          ps.maxStaleness(), ctr.tableShards(ps.minNodes()));
      return retry(jobId, patience, () -> api.submit(plan), plan.job());
    }
    DataSets.TrainTest data = DataSets.load(s.dataset(), s.dataDir());
    ShardTrain.Plan plan = ShardTrain.plan(s, jobId, data.train().dim(), data.train().size(),
        data.train().numClasses(), mode, trainers, ps.blockSize(), ps.maxStaleness());
    return retry(jobId, patience, () -> api.submit(plan), plan.job());
  }

  private static JobSpec retry(String jobId, Duration patience,
      java.util.function.Supplier<java.util.concurrent.CompletionStage<akka.Done>> submit, JobSpec job)
      throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        submit.get().toCompletableFuture().get();
        return job;
      } catch (java.util.concurrent.ExecutionException e) {
        last = e;
        Throwable cause = e.getCause();
        // A refusal of the master or a block (a finished job's id, another spec) is final; timeouts
        // and too few ps nodes mean "not yet".
        if (cause instanceof akka.pattern.StatusReply.ErrorMessage) throw new IllegalStateException(cause.getMessage());
        Thread.sleep(1000);
      }
    }
    throw new IllegalStateException("job " + jobId + " could not be submitted within " + patience.toSeconds()
        + " s: " + (last == null ? "timeout" : last.getCause()));
  }
}
