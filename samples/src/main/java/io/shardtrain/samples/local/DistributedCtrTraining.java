package io.shardtrain.samples.local;

import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.trainer.CtrTrainer;
import io.shardtrain.actors.trainer.StepListener;
import io.shardtrain.actors.trainer.StepProfile;
import io.shardtrain.actors.trainer.TrainerSettings;
import io.shardtrain.actors.transport.WireTimings;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.persistence.model.ModelSnapshot;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProgressBar;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;

/**
 * Runs one click-through job on a {@link LocalCluster}: plans it (the dense part in blocks, the id
 * rows in a table of one shard per {@code ps} node), starts one {@link CtrTrainer} per trainer node,
 * follows their progress, and reads the test AUC the master merged from the shares of the test set
 * the trainers predicted. With {@code timeWire} it also gathers what {@code --profile} shows, as
 * {@link DistributedTraining} does.
 */
public final class DistributedCtrTraining {

  /**
   * What a run produced; the bytes are sparse payload per training example, averaged over the
   * trainers; {@code testAucExamples}: the test examples the master's AUC merged; {@code profiles}:
   * each trainer's step profile, by id; {@code wire}: the serialization time while they ran (empty
   * unless timed); {@code model}: the trained model, read from the cluster when asked for (else null).
   */
  public record Result(JobSpec job, long steps, long samples, double trainSeconds, double wallSeconds,
      double finalLoss, double testAuc, long testAucExamples, double pullBytesPerExample,
      double pushBytesPerExample, Map<String, StepProfile> profiles, Map<WireTimings.Kind, WireTimings.Figure> wire,
      ModelSnapshot model) {
    public double samplesPerSec() {
      return trainSeconds > 0 ? samples / trainSeconds : 0;
    }
  }

  private final TrainSettings settings;
  private final CtrSettings ctr;
  private final BlockSpec.Mode mode;
  private final int blockSize;
  private final long maxStaleness;
  private final ProgressBar progress;
  private final MetricsLog metrics;
  private final boolean timeWire;

  public DistributedCtrTraining(TrainSettings settings, CtrSettings ctr, BlockSpec.Mode mode, int blockSize,
      long maxStaleness, ProgressBar progress, MetricsLog metrics, boolean timeWire) {
    if (mode == BlockSpec.Mode.ALLREDUCE) {
      throw new IllegalArgumentException("--mode allreduce trains MLPs; a click-through job's table needs a"
          + " parameter server: use --mode sync or async");
    }
    this.settings = settings;
    this.ctr = ctr;
    this.mode = mode;
    this.blockSize = blockSize;
    this.maxStaleness = maxStaleness;
    this.progress = progress;
    this.metrics = metrics;
    this.timeWire = timeWire;
  }

  public Result run(LocalCluster cluster, CtrDataset train, CtrDataset test) throws InterruptedException {
    return run(cluster, train, test, false);
  }

  /** {@link #run(LocalCluster, CtrDataset, CtrDataset)}, and with {@code keepModel} the trained model read from the cluster at the end. */
  public Result run(LocalCluster cluster, CtrDataset train, CtrDataset test, boolean keepModel)
      throws InterruptedException {
    long wallStart = System.nanoTime();
    int trainers = cluster.trainerCount();
    ShardTrain coordinator = cluster.coordinator();
    ShardTrain.CtrPlan plan = ShardTrain.planCtr(settings, ctr, "ctr-" + System.currentTimeMillis(), train, mode,
        trainers, blockSize, maxStaleness, ctr.tableShards(cluster.psCount()));
    coordinator.submit(plan).toCompletableFuture().join();

    CountDownLatch finished = new CountDownLatch(trainers);
    AtomicLong samples = new AtomicLong();
    AtomicLong stepsDone = new AtomicLong();
    DoubleAdder pullBytes = new DoubleAdder();
    DoubleAdder pushBytes = new DoubleAdder();
    ConcurrentHashMap<String, String> failures = new ConcurrentHashMap<>();
    ConcurrentHashMap<String, StepProfile> profiles = new ConcurrentHashMap<>();
    long trainStart = System.nanoTime();
    double[] lossEma = {Double.NaN};
    StepListener listener = new StepListener() {
      @Override
      public synchronized void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {
        long n = samples.addAndGet(examples);
        long done = stepsDone.incrementAndGet();
        lossEma[0] = Double.isNaN(lossEma[0]) ? loss : 0.98 * lossEma[0] + 0.02 * loss;
        double seconds = (System.nanoTime() - trainStart) / 1e9;
        metrics.step(seconds, trainerId, step, examples, loss);
        progress.update(done, n / seconds, lossEma[0]);
      }

      @Override
      public void onSparseTraffic(String trainerId, double pull, double push) {
        pullBytes.add(pull / trainers);
        pushBytes.add(push / trainers);
      }

      @Override
      public void onProfile(String trainerId, StepProfile profile) {
        profiles.put(trainerId, profile);
      }

      @Override
      public void onFinished(String trainerId, long steps, long pushes, long pulls, long stale) {
        finished.countDown();
      }

      @Override
      public void onFailed(String trainerId, String reason) {
        failures.put(trainerId, reason);
        finished.countDown();
      }
    };
    Map<WireTimings.Kind, WireTimings.Figure> wire = DistributedTraining.trainTimed(timeWire, finished, () -> {
      for (int i = 0; i < trainers; i++) {
        ShardTrain node = cluster.trainerNode(i);
        node.startTrainer(new CtrTrainer.Setup("trainer-" + (i + 1), node.master(), train, test,
            TrainerSettings.create(node.system()), listener));
      }
    });
    double trainSeconds = (System.nanoTime() - trainStart) / 1e9;
    progress.finish();
    if (!failures.isEmpty()) throw new IllegalStateException("training failed: " + failures);
    // The trainers send their AUC shares just before leaving: wait until the master merged them all.
    JobProtocol.JobStatus status = cluster.awaitStatus(plan.job().jobId(), st -> !Double.isNaN(st.testAuc()),
        Duration.ofSeconds(10));
    ModelSnapshot model = keepModel ? coordinator.ctrModel(plan.job()).toCompletableFuture().join() : null;
    cluster.awaitSettled(plan.job().jobId(), DistributedTraining.SETTLE_WAIT);
    metrics.aucEvaluation((System.nanoTime() - trainStart) / 1e9, stepsDone.get(), status.testAuc());
    progress.message(String.format(Locale.ROOT, "final: test_auc %.4f over %d examples (merged from %d trainers)",
        status.testAuc(), status.testAucExamples(), trainers));
    return new Result(plan.job(), stepsDone.get() / trainers, samples.get(), trainSeconds,
        (System.nanoTime() - wallStart) / 1e9, lossEma[0], status.testAuc(), status.testAucExamples(),
        pullBytes.sum(), pushBytes.sum(), DistributedTraining.byTrainer(profiles), wire, model);
  }
}
