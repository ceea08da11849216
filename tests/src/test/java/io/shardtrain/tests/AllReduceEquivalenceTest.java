package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * All-reduce mode keeps invariant 1: trainers that average their gradients in a ring end with
 * bit-identical replicas, equal to a single process that trains on the concatenation of their
 * batches, and the blocks hold the replicas' values when the job is done.
 */
class AllReduceEquivalenceTest {
  static final int STEPS = SyncEquivalenceTest.STEPS;

  @Test
  void twoAllReduceTrainersHoldIdenticalReplicasEqualToOneProcessOnTheConcatenatedBatches() throws Exception {
    Dataset train = SyncEquivalenceTest.data(1);
    Config config = ClusterTestSupport.config("""
        shardtrain.train { hidden = [16], optimizer = sgd, lr = 0.2, lr-schedule = constant, batch = 8,
          steps = %d, epochs = 0, seed = 5 }
        shardtrain.ps.block-size = 40
        shardtrain.trainer.publish-every = 7
        """.formatted(STEPS));
    TrainSettings s = ClusterTestSupport.settings(config);

    ReplicaRecorder recorder = new ReplicaRecorder(java.util.Set.of("t1", "t2"));
    Mlp published = Mlp.create(CpuBackend.create(1), SyncEquivalenceTest.DIM, new int[] {16},
        SyncEquivalenceTest.CLASSES, Activation.RELU, 99);
    long version;
    // Trainers on two nodes: the chunks go between nodes, over the bulk channel.
    try (LocalCluster cluster = LocalCluster.start("allreduce", 1, 2, config, Duration.ofSeconds(60))) {
      ShardTrain api = cluster.coordinator();
      ShardTrain.Plan plan = ShardTrain.plan(s, "allreduce-job", train.dim(), train.size(), train.numClasses(),
          BlockSpec.Mode.ALLREDUCE, 2, 40, -1);
      api.submit(plan).toCompletableFuture().get(60, TimeUnit.SECONDS);
      for (int i = 0; i < 2; i++) {
        ShardTrain node = cluster.trainerNode(i);
        node.startTrainer(new Trainer.Setup("t" + (i + 1), node.master(), train, SyncEquivalenceTest.data(2),
            () -> CpuBackend.create(1), TrainerSettings.create(node.system()), recorder));
      }
      assertTrue(recorder.await(120), "trainers did not finish");
      assertTrue(recorder.failures.isEmpty(), "failures: " + recorder.failures);
      version = api.pullInto(published, plan.job(), 0).toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    assertEquals(Map.of("t1", (long) STEPS, "t2", (long) STEPS), recorder.lastSteps);
    Map<String, float[]> first = recorder.replicas.get("t1");
    for (Map.Entry<String, float[]> e : first.entrySet()) {
      assertArrayEquals(e.getValue(), recorder.replicas.get("t2").get(e.getKey()), "replicas differ in " + e.getKey());
    }
    // The blocks hold the last step, published by the two members, each its share.
    assertEquals(STEPS, version);
    for (Parameter p : published.parameters()) {
      assertArrayEquals(first.get(p.name()), p.value().data(), "blocks differ from the replicas in " + p.name());
    }

    Mlp reference = Mlp.create(CpuBackend.create(1), SyncEquivalenceTest.DIM, new int[] {16},
        SyncEquivalenceTest.CLASSES, Activation.RELU, 5);
    SyncEquivalenceTest.trainOnBothHalves(reference, train, SyncEquivalenceTest.N / 2, 8, 5 * 1_000_003L, STEPS,
        0.2f);
    Mlp initial = Mlp.create(CpuBackend.create(1), SyncEquivalenceTest.DIM, new int[] {16},
        SyncEquivalenceTest.CLASSES, Activation.RELU, 5);
    double error = SyncEquivalenceTest.relativeDistance(reference, published);
    double moved = SyncEquivalenceTest.relativeDistance(reference, initial);
    System.out.printf("all-reduce vs single process: relative error %.3g, parameters moved %.3g%n", error, moved);
    assertTrue(error < 1e-5, "relative error " + error);
    assertTrue(moved > 1e-2, "parameters moved only " + moved);
  }
}
