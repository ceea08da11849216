package io.shardtrain.samples.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProgressBar;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The single process's training loop: the same model on one compute thread and on two. */
class SingleProcessTrainingTest {

  /** Four classes of 300 features, each class a shifted blob: wide enough for two threads to cut every layer. */
  private static Dataset blobs(int rows, long seed) {
    int dim = 300;
    Random r = new Random(seed);
    float[] x = new float[rows * dim];
    int[] y = new int[rows];
    for (int i = 0; i < rows; i++) {
      y[i] = r.nextInt(4);
      for (int j = 0; j < dim; j++) x[i * dim + j] = (float) r.nextGaussian() + (j % 4 == y[i] ? 1f : 0f);
    }
    return Dataset.classification(x, dim, y, 4);
  }

  private static SingleProcessTraining.Result train(String optimizer, int threads) {
    TrainSettings settings = new TrainSettings("blobs", new int[] {300, 128}, "relu", optimizer, 0.01, "constant",
        0.0, 64, 0, 30, 42, 0, "cpu", threads, null, null, null);
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    try (CpuBackend backend = CpuBackend.create(threads)) {
      return new SingleProcessTraining(settings, backend, ProgressBar.messagesOnly(quiet), new MetricsLog())
          .run(blobs(1280, 1), blobs(256, 2));
    }
  }

  private static void twoThreadsTrainTheModelOfOne(String optimizer) {
    SingleProcessTraining.Result one = train(optimizer, 1);
    SingleProcessTraining.Result two = train(optimizer, 2);
    assertEquals(one.finalLoss(), two.finalLoss());
    assertEquals(one.testAccuracy(), two.testAccuracy());
    List<Parameter> a = one.model().parameters(), b = two.model().parameters();
    for (int i = 0; i < a.size(); i++) {
      assertArrayEquals(a.get(i).value().data(), b.get(i).value().data(), a.get(i).name());
    }
  }

  @Test
  void twoComputeThreadsTrainTheBitsOfOneWithSgd() {
    twoThreadsTrainTheModelOfOne("sgd");
  }

  @Test
  void twoComputeThreadsTrainTheBitsOfOneWithAdam() {
    twoThreadsTrainTheModelOfOne("adam");
  }

  @Test
  void twoComputeThreadsTrainTheBitsOfOneWithLarsWhichUpdatesWholeBlocks() {
    twoThreadsTrainTheModelOfOne("lars");
  }
}
