package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.trainer.Trainer;
import io.shardtrain.actors.trainer.TrainerSettings;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.samples.local.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * All-reduce mode when every trainer of a running job dies: the ring's first member wrote the replica
 * (values, optimizer slots, counters, task marks) every few steps, the master rolled back to the last
 * such checkpoint when its membership emptied, and the trainers that join next restore it and finish
 * the job: every example of every epoch is applied once in the final model.
 */
class AllReduceResumeTest {
  static final int EPOCHS = 1;
  static final long CRASH_STEP = 13;

  @TempDir
  Path checkpoints;

  /** What a run ended with: the replicas of the trainers that finished, the master's status, the blocks' counts. */
  record Outcome(Map<String, Map<String, float[]>> replicas, JobProtocol.JobStatus status, long rolledBackTo,
      List<Long> blockExamples) {}

  @Test
  void aJobWhoseOnlyTrainerCrashedResumesFromTheRingCheckpointWithTheUninterruptedRunsBits() throws Exception {
    Outcome plain = run("ar-plain", 1, -1);
    Outcome resumed = run("ar-resumed", 1, CRASH_STEP);

    long examples = (long) EPOCHS * SyncEquivalenceTest.N;
    System.out.printf("allreduce-resume (1 trainer): rolled back to step %d; master counted %d examples%n",
        resumed.rolledBackTo(), resumed.status().examplesReported());
    assertTrue(resumed.rolledBackTo() > 0 && resumed.rolledBackTo() <= CRASH_STEP, "rolled back to "
        + resumed.rolledBackTo());
    // One trainer reads the same batches in the same order either way: the same bits at the end only if the
    // restored replica had the checkpoint's values, momentum and counters exactly.
    Map<String, float[]> expected = plain.replicas().get("t1");
    Map<String, float[]> actual = resumed.replicas().get("t2");
    for (Map.Entry<String, float[]> e : expected.entrySet()) {
      assertArrayEquals(e.getValue(), actual.get(e.getKey()), "resumed run differs in " + e.getKey());
    }
    for (Outcome o : List.of(plain, resumed)) {
      assertEquals(examples, o.status().examplesReported());
      for (long b : o.blockExamples()) assertEquals(examples, b);
    }
  }

  @Test
  void aJobWhoseTrainersAllCrashedResumesOnNewTrainersWithEveryExampleAppliedOnce() throws Exception {
    Outcome resumed = run("ar-resumed-2", 2, CRASH_STEP);

    long examples = (long) EPOCHS * SyncEquivalenceTest.N;
    System.out.printf("allreduce-resume (2 trainers): rolled back to step %d; master counted %d examples;"
        + " blocks hold %s%n", resumed.rolledBackTo(), resumed.status().examplesReported(), resumed.blockExamples());
    assertTrue(resumed.rolledBackTo() > 0 && resumed.rolledBackTo() <= CRASH_STEP, "rolled back to "
        + resumed.rolledBackTo());
    assertEquals(Set.of("t3", "t4"), resumed.replicas().keySet());
    for (Map.Entry<String, float[]> e : resumed.replicas().get("t3").entrySet()) {
      assertArrayEquals(e.getValue(), resumed.replicas().get("t4").get(e.getKey()), "replicas differ in " + e.getKey());
    }
    assertEquals(examples, resumed.status().examplesReported());
    for (long b : resumed.blockExamples()) assertEquals(examples, b);
  }

  /**
   * Job {@code job} with {@code n} trainers; with {@code crashAt} > 0 they all crash in that step, and
   * {@code n} new ones (other ids, on the same nodes) join once the master rolled back.
   */
  private Outcome run(String job, int n, long crashAt) throws Exception {
    Dataset train = SyncEquivalenceTest.data(1);
    Config config = ClusterTestSupport.config("""
        shardtrain.train { hidden = [16], optimizer = momentum, lr = 0.1, lr-schedule = constant, batch = 8,
          steps = 0, epochs = %d, seed = 5 }
        shardtrain.ps.block-size = 40
        shardtrain.trainer.publish-every = 7
        shardtrain.trainer.checkpoint-every = 5
        shardtrain.trainer.failure-timeout = 3s
        shardtrain.checkpoint.dir = "%s"
        """.formatted(EPOCHS, checkpoints.toString().replace("\\", "/")));
    TrainSettings s = ClusterTestSupport.settings(config);
    Set<String> first = ids(1, n);
    Set<String> second = ids(n + 1, n);
    AtomicReference<ShardTrain> coordinator = new AtomicReference<>();
    ReplicaRecorder recorder = new ReplicaRecorder(crashAt > 0 ? second : first) {
      @Override
      public void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {
        if (step == crashAt && first.contains(trainerId)) {
          // Only once the master committed a checkpoint: on a busy machine its file may be written late.
          try {
            awaitStatus(coordinator.get(), x -> x.checkpointStep() > 0);
          } catch (Exception e) {
            throw new IllegalStateException("no ring checkpoint was committed", e);
          }
          throw new IllegalStateException(trainerId + " crashes in step " + step + " (test)");
        }
      }
    };
    try (LocalCluster cluster = LocalCluster.start(job, 1, n, config, Duration.ofSeconds(60))) {
      ShardTrain api = cluster.coordinator();
      coordinator.set(api);
      ShardTrain.Plan plan = ShardTrain.plan(s, job, train.dim(), train.size(), train.numClasses(),
          BlockSpec.Mode.ALLREDUCE, n, 40, -1);
      api.submit(plan).toCompletableFuture().get(60, TimeUnit.SECONDS);
      start(cluster, first, train, recorder);
      long rolledBackTo = -1;
      if (crashAt > 0) {
        JobProtocol.JobStatus st = awaitStatus(api, x -> x.generation() == 1 && x.members().isEmpty());
        assertEquals(first, recorder.failures.keySet(), "failures: " + recorder.failures);
        rolledBackTo = st.checkpointStep();
        start(cluster, second, train, recorder);
      }
      assertTrue(recorder.await(120), "the trainers did not finish");
      JobProtocol.JobStatus status = awaitStatus(api, x -> x.done() && x.members().isEmpty());
      List<Long> blocks = api.blockStats(plan.job()).toCompletableFuture().get(30, TimeUnit.SECONDS).stream()
          .map(BlockProtocol.BlockStats::examplesApplied).toList();
      return new Outcome(Map.copyOf(recorder.replicas), status, rolledBackTo, blocks);
    }
  }

  private static Set<String> ids(int from, int n) {
    return IntStream.range(from, from + n).mapToObj(i -> "t" + i).collect(Collectors.toCollection(
        java.util.TreeSet::new));
  }

  private static void start(LocalCluster cluster, Set<String> ids, Dataset train, ReplicaRecorder recorder) {
    int i = 0;
    for (String id : ids) {
      ShardTrain node = cluster.trainerNode(i++);
      node.startTrainer(new Trainer.Setup(id, node.master(), train, SyncEquivalenceTest.data(2),
          () -> CpuBackend.create(1), TrainerSettings.create(node.system()), recorder));
    }
  }

  private static JobProtocol.JobStatus awaitStatus(ShardTrain api,
      java.util.function.Predicate<JobProtocol.JobStatus> until) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    JobProtocol.JobStatus status;
    do {
      status = api.status().toCompletableFuture().get(30, TimeUnit.SECONDS);
      if (until.test(status)) return status;
      Thread.sleep(100);
    } while (System.nanoTime() < deadline);
    throw new AssertionError("the job did not get there: " + status);
  }
}
