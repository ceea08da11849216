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
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.samples.local.LocalCluster;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * All-reduce mode when a member crashes in the middle of the job: the two survivors re-form the ring,
 * level at the newest step either of them applied, and train on; they end with bit-identical
 * replicas, and every example of every epoch is applied exactly once (the master settled the dead
 * member's task where the ring had applied it).
 */
class AllReduceFaultTest {
  static final int EPOCHS = 6;

  @Test
  void survivorsOfACrashedMemberEndWithIdenticalReplicasAndEveryExampleAppliedOnce() throws Exception {
    Dataset train = SyncEquivalenceTest.data(1);
    Config config = ClusterTestSupport.config("""
        shardtrain.train { hidden = [16], optimizer = momentum, lr = 0.1, lr-schedule = constant, batch = 8,
          steps = 0, epochs = %d, seed = 5 }
        shardtrain.ps.block-size = 40
        shardtrain.trainer.publish-every = 7
        shardtrain.trainer.failure-timeout = 3s
        """.formatted(EPOCHS));
    TrainSettings s = ClusterTestSupport.settings(config);

    CompletableFuture<Long> t3Crashed = new CompletableFuture<>();
    ReplicaRecorder recorder = new ReplicaRecorder(Set.of("t1", "t2")) {
      @Override
      public void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {
        // Thrown inside t3's actor, in the middle of its step 10: the trainer crashes there.
        if (trainerId.equals("t3") && step == 10 && t3Crashed.complete(step)) {
          throw new IllegalStateException("t3 crashes in step " + step + " (test)");
        }
      }
    };
    Mlp published = Mlp.create(CpuBackend.create(1), SyncEquivalenceTest.DIM, new int[] {16},
        SyncEquivalenceTest.CLASSES, Activation.RELU, 99);
    JobProtocol.JobStatus status;
    java.util.List<BlockProtocol.BlockStats> blocks;
    // Three trainers on three nodes (node 0 also holds the blocks and the master): t3 crashes.
    try (LocalCluster cluster = LocalCluster.start("allreduce-fault", 1, 3, config, Duration.ofSeconds(60))) {
      ShardTrain api = cluster.coordinator();
      ShardTrain.Plan plan = ShardTrain.plan(s, "allreduce-fault", train.dim(), train.size(), train.numClasses(),
          BlockSpec.Mode.ALLREDUCE, 3, 40, -1);
      api.submit(plan).toCompletableFuture().get(60, TimeUnit.SECONDS);
      for (int i = 0; i < 3; i++) {
        ShardTrain node = cluster.trainerNode(i);
        node.startTrainer(new Trainer.Setup("t" + (i + 1), node.master(), train, SyncEquivalenceTest.data(2),
            () -> CpuBackend.create(1), TrainerSettings.create(node.system()), recorder));
      }
      long crashedAt = t3Crashed.get(120, TimeUnit.SECONDS);
      // And its node goes down, as a crashed process's would.
      cluster.trainerNode(2).system().terminate();
      System.out.printf("allreduce-fault: t3 crashed in its step %d%n", crashedAt);

      assertTrue(recorder.await(120), "the survivors did not finish");
      assertEquals(Set.of("t3"), recorder.failures.keySet(), "failures: " + recorder.failures);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      do {
        status = api.status().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } while ((!status.done() || !status.members().isEmpty()) && System.nanoTime() < deadline && sleep());
      blocks = api.blockStats(plan.job()).toCompletableFuture().get(30, TimeUnit.SECONDS);
      api.pullInto(published, plan.job(), 0).toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    long examples = (long) EPOCHS * train.size();
    System.out.printf("allreduce-fault: survivors ended at steps %s; master counted %d examples; blocks hold %s%n",
        recorder.lastSteps, status.examplesReported(), blocks.stream().map(BlockProtocol.BlockStats::examplesApplied).toList());
    assertTrue(status.done(), "the job is done");
    assertEquals(recorder.lastSteps.get("t1"), recorder.lastSteps.get("t2"),
        "the survivors left after the same step");
    assertTrue(!recorder.lastSteps.containsKey("t3"), "t3 never left the ring: " + recorder.lastSteps);
    Map<String, float[]> first = recorder.replicas.get("t1");
    for (Map.Entry<String, float[]> e : first.entrySet()) {
      assertArrayEquals(e.getValue(), recorder.replicas.get("t2").get(e.getKey()), "replicas differ in " + e.getKey());
    }
    for (Parameter p : published.parameters()) {
      assertArrayEquals(first.get(p.name()), p.value().data(), "blocks differ from the replicas in " + p.name());
    }
    // Every example of every epoch once: the master's count of the tasks read, and what the replicas applied.
    assertEquals(examples, status.examplesReported());
    for (BlockProtocol.BlockStats b : blocks) assertEquals(examples, b.examplesApplied(), b.entityId());
  }

  private static boolean sleep() {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return true;
  }
}
