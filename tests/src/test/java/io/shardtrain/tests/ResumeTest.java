package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.trainer.StepListener;
import io.shardtrain.actors.trainer.Trainer;
import io.shardtrain.actors.trainer.TrainerSettings;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.persistence.model.CheckpointFiles;
import io.shardtrain.samples.local.DistributedTraining;
import io.shardtrain.samples.local.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sync job stopped after a checkpoint (its cluster terminated) and resumed from that checkpoint
 * on a fresh cluster and journal ends with the same parameters, bit for bit, as the same job run
 * without a stop: the resumed blocks continue from the checkpoint's values, Adam's slots and update
 * counts, and the cosine schedule's position, and the master from its reader offsets, across an
 * epoch boundary.
 */
class ResumeTest {
  static final long STEPS = 100;
  /** 400 examples over 2 trainers in batches of 8: an epoch is 25 steps. */
  static final String JOB = """
      shardtrain.train { hidden = [16], optimizer = adam, lr = 0.01, lr-schedule = cosine, batch = 8,
        steps = %d, epochs = 0, seed = 5 }
      shardtrain.ps.block-size = 40
      """.formatted(STEPS);

  @TempDir
  Path tmp;

  @Test
  void aJobStoppedAtACheckpointAndResumedOnAFreshClusterEndsBitForBitAsTheUninterruptedJob() throws Exception {
    Dataset train = SyncEquivalenceTest.data(1);
    Dataset test = SyncEquivalenceTest.data(2);
    Config config = ClusterTestSupport.config(JOB);
    TrainSettings s = ClusterTestSupport.settings(config);

    DistributedTraining.Result uninterrupted;
    long uninterruptedExamples;
    try (LocalCluster cluster = LocalCluster.start("resume-whole", 2, 2, config, Duration.ofSeconds(60))) {
      uninterrupted = run(cluster, s, train, test);
      uninterruptedExamples = status(cluster).examplesReported();
    }

    Path dir = tmp.resolve("checkpoint");
    long step = stopAfterACheckpoint(config, s, train, test, dir);
    assertTrue(step > 25 && step < STEPS, "the checkpoint should be past the first epoch, before the end: " + step);
    System.out.printf("stopped after the checkpoint at step %d of %d%n", step, STEPS);

    Config resumed = ConfigFactory.parseString("shardtrain.train.resume-from = \"" + dir + "\"").withFallback(config);
    DistributedTraining.Result r;
    long resumedExamples;
    try (LocalCluster cluster = LocalCluster.start("resume-rest", 2, 2, resumed, Duration.ofSeconds(60))) {
      r = run(cluster, ClusterTestSupport.settings(resumed), train, test);
      resumedExamples = status(cluster).examplesReported();
    }

    assertEquals(STEPS, uninterrupted.version());
    assertEquals(STEPS, r.version());
    // The resumed trainers took only the steps after the checkpoint.
    assertEquals(STEPS - step, r.steps());
    assertEquals(STEPS * 2 * 8, uninterruptedExamples);
    assertEquals(uninterruptedExamples, resumedExamples);
    // The resumed job has an id of its own, so its blocks other entity ids: resume matches them by parameter.
    assertTrue(!uninterrupted.job().jobId().equals(r.job().jobId()));
    for (int i = 0; i < uninterrupted.blockStats().size(); i++) {
      BlockProtocol.BlockStats a = uninterrupted.blockStats().get(i);
      BlockProtocol.BlockStats b = r.blockStats().get(i);
      assertEquals(List.of(local(a.entityId()), STEPS, STEPS, uninterruptedExamples),
          List.of(local(b.entityId()), b.version(), b.updates(), b.examplesApplied()), "block " + a.entityId());
    }
    assertBitForBitEqual(uninterrupted.model(), r.model());
    Mlp initial = Mlp.create(CpuBackend.create(1), SyncEquivalenceTest.DIM, new int[] {16}, SyncEquivalenceTest.CLASSES,
        io.shardtrain.compute.nn.Activation.RELU, 5);
    assertTrue(SyncEquivalenceTest.relativeDistance(initial, r.model()) > 1e-2, "training moved the parameters");
  }

  private static DistributedTraining.Result run(LocalCluster cluster, TrainSettings s, Dataset train, Dataset test)
      throws InterruptedException {
    return new DistributedTraining(s, BlockSpec.Mode.SYNC, 40, -1, ClusterTestSupport.quiet(),
        ClusterTestSupport.metrics()).run(cluster, train, test);
  }

  /** A block's entity id without its job's namespace: {@code parameter#index}. */
  private static String local(String entityId) {
    return entityId.substring(entityId.indexOf('/') + 1);
  }

  private static JobProtocol.JobStatus status(LocalCluster cluster) {
    return cluster.coordinator().status().toCompletableFuture().join();
  }

  /**
   * Runs the job until a trainer passed step 30, checkpoints it into {@code dir}, then terminates
   * the whole cluster while the trainers still run (slowed from step 30 on, so they do); returns the
   * checkpoint's step.
   */
  static long stopAfterACheckpoint(Config config, TrainSettings s, Dataset train, Dataset test, Path dir)
      throws Exception {
    try (LocalCluster cluster = LocalCluster.start("resume-stopped", 2, 2, config, Duration.ofSeconds(60))) {
      ShardTrain coordinator = cluster.coordinator();
      ShardTrain.Plan plan = ShardTrain.plan(s, "stopped", train.dim(), train.size(), train.numClasses(),
          BlockSpec.Mode.SYNC, 2, 40, -1);
      coordinator.submit(plan).toCompletableFuture().join();
      CompletableFuture<Void> past30 = new CompletableFuture<>();
      AtomicBoolean failed = new AtomicBoolean();
      StepListener listener = new StepListener() {
        @Override
        public void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {
          if (step < 30) return;
          past30.complete(null);
          // Slow the trainers from here: the job's last 70 steps took less than the checkpoint and the status
          // checks in some runs, which then found the job done. Sync steps do not depend on timing.
          try {
            Thread.sleep(20);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }

        @Override
        public void onFinished(String trainerId, long steps, long pushes, long pulls, long stalePushes) {}

        @Override
        public void onFailed(String trainerId, String reason) {
          failed.set(true);
        }
      };
      for (int i = 0; i < 2; i++) {
        ShardTrain node = cluster.trainerNode(i);
        node.startTrainer(new Trainer.Setup("trainer-" + (i + 1), node.master(), train, test,
            () -> CpuBackend.create(1), TrainerSettings.create(node.system()), listener));
      }
      past30.get(60, TimeUnit.SECONDS);
      JobProtocol.CheckpointWritten written = coordinator.checkpoint(dir.toString()).toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      assertTrue(CheckpointFiles.isCheckpoint(dir));
      assertTrue(status(cluster).checkpointStep() < STEPS && !status(cluster).done(), "stopped before the end");
      assertTrue(!failed.get(), "no trainer failed");
      return written.step();
    }
  }

  static void assertBitForBitEqual(Mlp expected, Mlp actual) {
    List<Parameter> a = expected.parameters();
    List<Parameter> b = actual.parameters();
    assertEquals(a.size(), b.size());
    for (int i = 0; i < a.size(); i++) {
      float[] x = a.get(i).value().data();
      float[] y = b.get(i).value().data();
      assertEquals(x.length, y.length, a.get(i).name());
      for (int j = 0; j < x.length; j++) {
        if (Float.floatToRawIntBits(x[j]) != Float.floatToRawIntBits(y[j])) {
          throw new AssertionError(a.get(i).name() + "[" + j + "]: uninterrupted " + x[j] + ", resumed " + y[j]);
        }
      }
    }
  }
}
