package io.shardtrain.samples.local;

import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.trainer.StepListener;
import io.shardtrain.actors.trainer.StepProfile;
import io.shardtrain.actors.trainer.Trainer;
import io.shardtrain.actors.trainer.TrainerSettings;
import io.shardtrain.actors.transport.WireTimings;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProgressBar;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs one job on a {@link LocalCluster}: plans it, initialises the blocks, starts one trainer per
 * trainer node, follows their progress, evaluates the parameters on the test set while training
 * runs, and gathers what the report needs: with {@code timeWire}, also the serialization time of
 * the whole cluster while the trainers run ({@link WireTimings}).
 */
public final class DistributedTraining {

  /**
   * What a run produced, for the report; {@code profiles}: each trainer's, by id; {@code wire}: the
   * serialization time of every node while the trainers ran, empty unless timed.
   */
  public record Result(JobSpec job, long steps, long samples, double trainSeconds, double wallSeconds,
      double finalLoss, double testAccuracy, long pushes, long pulls, long stalePushes, long version,
      List<BlockProtocol.BlockStats> blockStats, Mlp model, Map<String, StepProfile> profiles,
      Map<WireTimings.Kind, WireTimings.Figure> wire) {
    public double samplesPerSec() {
      return trainSeconds > 0 ? samples / trainSeconds : 0;
    }
  }

  private final TrainSettings settings;
  private final BlockSpec.Mode mode;
  private final int blockSize;
  private final long maxStaleness;
  private final ProgressBar progress;
  private final MetricsLog metrics;
  private final boolean timeWire;

  public DistributedTraining(TrainSettings settings, BlockSpec.Mode mode, int blockSize, long maxStaleness,
      ProgressBar progress, MetricsLog metrics) {
    this(settings, mode, blockSize, maxStaleness, progress, metrics, false);
  }

  public DistributedTraining(TrainSettings settings, BlockSpec.Mode mode, int blockSize, long maxStaleness,
      ProgressBar progress, MetricsLog metrics, boolean timeWire) {
    this.timeWire = timeWire;
    this.settings = settings;
    this.mode = mode;
    this.blockSize = blockSize;
    this.maxStaleness = maxStaleness;
    this.progress = progress;
    this.metrics = metrics;
  }

  /** How long a finished job waits for the master to settle with the blocks before its cluster closes. */
  static final Duration SETTLE_WAIT = Duration.ofSeconds(10);

  public Result run(LocalCluster cluster, Dataset train, Dataset test) throws InterruptedException {
    long wallStart = System.nanoTime();
    int trainers = cluster.trainerCount();
    ShardTrain coordinator = cluster.coordinator();
    ShardTrain.Plan plan = ShardTrain.plan(settings, "job-" + System.currentTimeMillis(), train.dim(),
        train.size(), train.numClasses(), mode, trainers, blockSize, maxStaleness);
    JobSpec job = plan.job();
    coordinator.submit(plan).toCompletableFuture().join();

    CountDownLatch finished = new CountDownLatch(trainers);
    AtomicLong samples = new AtomicLong();
    AtomicLong stepsDone = new AtomicLong();
    AtomicLong pushes = new AtomicLong();
    AtomicLong pulls = new AtomicLong();
    AtomicLong stale = new AtomicLong();
    ConcurrentHashMap<String, String> failures = new ConcurrentHashMap<>();
    ConcurrentHashMap<String, StepProfile> profiles = new ConcurrentHashMap<>();
    long trainStart = System.nanoTime();
    long evalEvery = settings.evalEvery() > 0 ? settings.evalEvery() * trainers
        : Math.max(1, (long) Math.ceil((double) train.size() / job.batch()));
    Evaluator evaluator = new Evaluator(coordinator, job, test, metrics, progress);
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
        if (done % evalEvery == 0) evaluator.requestEvaluation(done);
      }

      @Override
      public void onProfile(String trainerId, StepProfile profile) {
        profiles.put(trainerId, profile);
      }

      @Override
      public void onFinished(String trainerId, long steps, long p, long q, long s) {
        pushes.addAndGet(p);
        pulls.addAndGet(q);
        stale.addAndGet(s);
        finished.countDown();
      }

      @Override
      public void onFailed(String trainerId, String reason) {
        failures.put(trainerId, reason);
        finished.countDown();
      }
    };
    Map<WireTimings.Kind, WireTimings.Figure> wire = trainTimed(timeWire, finished, () -> {
      for (int i = 0; i < trainers; i++) {
        ShardTrain node = cluster.trainerNode(i);
        int threads = settings.computeThreads();
        String backendName = settings.backend();
        node.startTrainer(new Trainer.Setup("trainer-" + (i + 1), node.master(), train, test,
            () -> Backends.create(backendName, threads).backend(), TrainerSettings.create(node.system()), listener));
      }
    });
    double trainSeconds = (System.nanoTime() - trainStart) / 1e9;
    progress.finish();
    evaluator.close();
    if (!failures.isEmpty()) {
      throw new IllegalStateException("training failed: " + failures);
    }
    Mlp model = job.newModel(CpuBackend.create(1));
    long version = coordinator.pullInto(model, job, 0).toCompletableFuture().join();
    double accuracy = SingleProcessTraining.evaluate(model, test);
    metrics.evaluation((System.nanoTime() - trainStart) / 1e9, stepsDone.get(), accuracy);
    List<BlockProtocol.BlockStats> stats = coordinator.blockStats(job).toCompletableFuture().join();
    JobProtocol.JobStatus settled = cluster.awaitSettled(job.jobId(), SETTLE_WAIT);
    // Periodic checkpoints go under the job's generated id: say where, or a user cannot resume from them.
    String checkpoint = settled.checkpointStep() < 0 ? ""
        : String.format(Locale.ROOT, "; last checkpoint: %s (step %d)", settled.checkpointDir(), settled.checkpointStep());
    progress.message(String.format(Locale.ROOT, "final: version %d, test accuracy %.4f%s", version, accuracy, checkpoint));
    return new Result(job, stepsDone.get() / trainers, samples.get(), trainSeconds,
        (System.nanoTime() - wallStart) / 1e9, lossEma[0], accuracy, pushes.get(), pulls.get(), stale.get(),
        version, stats, model, byTrainer(profiles), wire);
  }

  /**
   * Runs {@code startTrainers} and waits until {@code finished} opens; with {@code timeWire}, the
   * serialization time of the whole process meanwhile (else nothing).
   */
  static Map<WireTimings.Kind, WireTimings.Figure> trainTimed(boolean timeWire, CountDownLatch finished,
      Runnable startTrainers) throws InterruptedException {
    if (timeWire) {
      WireTimings.reset();
      WireTimings.enable(true);
    }
    try {
      startTrainers.run();
      finished.await();
    } finally {
      if (timeWire) WireTimings.enable(false);
    }
    return timeWire ? WireTimings.snapshot() : Map.of();
  }

  /** Trainer ids in their order: trainer-2 before trainer-10. */
  static Map<String, StepProfile> byTrainer(Map<String, StepProfile> profiles) {
    Map<String, StepProfile> sorted = new TreeMap<>(Comparator.comparingInt(String::length)
        .thenComparing(Comparator.naturalOrder()));
    sorted.putAll(profiles);
    return sorted;
  }

  /**
   * Evaluates the current parameters on the test set on a thread of its own, so trainers never
   * wait for it; requests that arrive while one runs are merged.
   */
  private static final class Evaluator implements AutoCloseable {
    private final ShardTrain api;
    private final JobSpec job;
    private final Dataset test;
    private final MetricsLog metrics;
    private final ProgressBar progress;
    private final java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
          Thread t = new Thread(r, "shardtrain-evaluator");
          t.setDaemon(true);
          return t;
        });
    private final java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean();
    private final long start = System.nanoTime();
    private Mlp model;

    Evaluator(ShardTrain api, JobSpec job, Dataset test, MetricsLog metrics, ProgressBar progress) {
      this.api = api;
      this.job = job;
      this.test = test;
      this.metrics = metrics;
      this.progress = progress;
    }

    void requestEvaluation(long stepsDone) {
      if (!busy.compareAndSet(false, true)) return;
      pool.execute(() -> {
        try {
          if (model == null) {
            model = job.newModel(CpuBackend.create(1));
          }
          long version = api.pullInto(model, job, 0).toCompletableFuture().get(60, TimeUnit.SECONDS);
          double acc = SingleProcessTraining.evaluate(model, test);
          metrics.evaluation((System.nanoTime() - start) / 1e9, stepsDone, acc);
          // The version says where the model is: a resumed job's blocks start at the checkpoint's step.
          progress.message(String.format(Locale.ROOT, "after %d trainer steps (blocks at version %d): test accuracy %.4f",
              stepsDone, version, acc));
        } catch (Exception e) {
          progress.message("evaluation skipped: " + e.getMessage());
        } finally {
          busy.set(false);
        }
      });
    }

    @Override
    public void close() throws InterruptedException {
      pool.shutdown();
      pool.awaitTermination(60, TimeUnit.SECONDS);
    }
  }
}
