package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.data.ReaderPosition;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.Sgd;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import io.shardtrain.samples.local.DistributedTraining;
import io.shardtrain.samples.local.LocalCluster;
import org.junit.jupiter.api.Test;

/**
 * Invariant 1 of docs/ARCHITECTURE.md: two trainers in sync mode end with the same parameters as a single
 * process that trains on the concatenation of their batches.
 */
class SyncEquivalenceTest {
  static final int N = 400;
  static final int DIM = 12;
  static final int CLASSES = 3;
  static final int STEPS = 20;

  static Dataset data(long seed) {
    Random rnd = new Random(seed);
    float[] x = new float[N * DIM];
    int[] y = new int[N];
    for (int i = 0; i < N; i++) {
      y[i] = rnd.nextInt(CLASSES);
      for (int j = 0; j < DIM; j++) x[i * DIM + j] = (float) rnd.nextGaussian() + (j % CLASSES == y[i] ? 1.5f : 0f);
    }
    return Dataset.classification(x, DIM, y, CLASSES);
  }

  @Test
  void twoSyncTrainersEqualOneProcessOnTheConcatenatedBatches() throws Exception {
    Dataset train = data(1);
    Config config = ClusterTestSupport.config("""
        shardtrain.train { hidden = [16], optimizer = sgd, lr = 0.2, lr-schedule = constant, batch = 8,
          steps = %d, epochs = 0, seed = 5 }
        shardtrain.ps.block-size = 40
        """.formatted(STEPS));
    TrainSettings s = ClusterTestSupport.settings(config);

    Mlp distributed;
    try (LocalCluster cluster = LocalCluster.start("equivalence", 2, 2, config, Duration.ofSeconds(60))) {
      DistributedTraining.Result r = new DistributedTraining(s, BlockSpec.Mode.SYNC, 40, -1,
          ClusterTestSupport.quiet(), ClusterTestSupport.metrics()).run(cluster, train, data(2));
      assertEquals(STEPS, r.version());
      assertTrue(r.job().blocks().size() > 4, "parameters should span several blocks: " + r.job().blocks());
      distributed = r.model();
    }

    // The same model, seed and data tasks, trained in one process on both trainers' batches at once.
    Mlp reference = Mlp.create(CpuBackend.create(1), DIM, new int[] {16}, CLASSES, Activation.RELU, 5);
    trainOnBothHalves(reference, train, N / 2, 8, 5 * 1_000_003L, STEPS, 0.2f);

    Mlp initial = Mlp.create(CpuBackend.create(1), DIM, new int[] {16}, CLASSES, Activation.RELU, 5);
    double error = relativeDistance(reference, distributed);
    double moved = relativeDistance(reference, initial);
    System.out.printf("sync vs single process: relative error %.3g, parameters moved %.3g%n", error, moved);
    // The two differ only in float summation order (mean of two batch means vs one mean).
    assertTrue(error < 1e-5, "relative error " + error);
    // Training really changed the parameters, so the comparison is not between two initial models.
    assertTrue(moved > 1e-2, "parameters moved only " + moved);
  }

  /** Largest over parameters of ||a - b|| / ||a||. */
  /**
   * Trains {@code model} in one process as two sync trainers would together: each step one SGD
   * update (rate {@code lr}) on the next batch of each half of {@code train} at once, the halves
   * split at {@code half} and read with the seeds the master gives tasks 0 and 1 of epoch 0.
   */
  static void trainOnBothHalves(Mlp model, Dataset train, int half, int batch, long seed, int steps, float lr) {
    BatchReader first = new BatchReader(train, 0, half, batch, seed, true, false, new ReaderPosition(0, 0));
    BatchReader second = new BatchReader(train, half, train.size(), batch, seed + 1, true, false,
        new ReaderPosition(0, 0));
    Sgd sgd = new Sgd(0f);
    int dim = train.dim();
    for (int step = 1; step <= steps; step++) {
      Batch a = first.next();
      Batch b = second.next();
      Tensor x = Tensor.zeros(a.size() + b.size(), dim);
      System.arraycopy(a.features(), 0, x.data(), 0, a.size() * dim);
      System.arraycopy(b.features(), 0, x.data(), a.size() * dim, b.size() * dim);
      int[] labels = new int[a.size() + b.size()];
      System.arraycopy(a.labels(), 0, labels, 0, a.size());
      System.arraycopy(b.labels(), 0, labels, a.size(), b.size());
      model.forwardBackward(x, labels, p -> { });
      for (Parameter p : model.parameters()) sgd.apply(p.value().data(), p.grad().data(), new float[0][], step, lr);
    }
  }

  static double relativeDistance(Mlp a, Mlp b) {
    List<Parameter> pa = a.parameters();
    List<Parameter> pb = b.parameters();
    double max = 0;
    for (int i = 0; i < pa.size(); i++) {
      float[] x = pa.get(i).value().data();
      float[] y = pb.get(i).value().data();
      double num = 0, den = 0;
      for (int j = 0; j < x.length; j++) {
        num += (x[j] - y[j]) * (double) (x[j] - y[j]);
        den += x[j] * (double) x[j];
      }
      max = Math.max(max, Math.sqrt(num / Math.max(den, 1e-30)));
    }
    return max;
  }
}
