package io.shardtrain.samples.api;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.trainer.StepListener;
import io.shardtrain.actors.trainer.Trainer;
import io.shardtrain.actors.trainer.TrainerSettings;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.persistence.journal.Journal;
import io.shardtrain.persistence.journal.JournalConfig;
import io.shardtrain.samples.local.SingleProcessTraining;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * ShardTrain as a library: one ActorSystem with every role, a job planned from settings, one
 * trainer, and the trained parameters read back. The README shows this file.
 */
public final class ApiExample {
  public static void main(String[] args) throws Exception {
    // First: on 2 cores, a thread per async callback otherwise (see Asks).
    Asks.poolAsyncCallbacks();
    System.out.printf("test accuracy %.3f%n", run());
  }

  /** Trains a small model on a synthetic 3-class problem and returns its test accuracy. */
  public static double run() throws Exception {
    Config config = ConfigFactory.parseString("""
            akka.cluster.roles = [ps, master, trainer]
            akka.remote.artery.canonical.port = 0
            shardtrain.persistence.journal = memory
            shardtrain.train { hidden = [32], optimizer = adam, lr = 0.01, steps = 300, epochs = 0 }
            """)
        .withFallback(ConfigFactory.parseResources("cluster.conf"))
        .withFallback(ConfigFactory.load());
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "example", JournalConfig.of(config));
    try {
      Cluster.get(system).manager().tell(Join.create(Cluster.get(system).selfMember().address()));
      Journal.start(system);
      ShardTrain shardTrain = ShardTrain.start(system);

      Dataset train = blobs(2000, 1);
      Dataset test = blobs(500, 2);
      TrainSettings settings = TrainSettings.fromConfig(system.settings().config());
      ShardTrain.Plan plan = ShardTrain.plan(settings, "example", train.dim(), train.size(), train.numClasses(),
          BlockSpec.Mode.SYNC, 1, 4096, -1);
      shardTrain.submit(plan).toCompletableFuture().join();

      CompletableFuture<Long> finished = new CompletableFuture<>();
      shardTrain.startTrainer(new Trainer.Setup("trainer-1", shardTrain.master(), train, test,
          () -> CpuBackend.create(1), TrainerSettings.create(system), new StepListener() {
            @Override
            public void onStep(String trainer, long step, float loss, int examples, long computeNanos) {}

            @Override
            public void onFinished(String trainer, long steps, long pushes, long pulls, long stale) {
              finished.complete(steps);
            }

            @Override
            public void onFailed(String trainer, String reason) {
              finished.completeExceptionally(new IllegalStateException(reason));
            }
          }));
      finished.join();
      shardTrain.pullInto(plan.model(), plan.job(), 0).toCompletableFuture().join();
      return SingleProcessTraining.evaluate(plan.model(), test);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().join();
    }
  }

  /** Three Gaussian blobs in 8 dimensions. */
  static Dataset blobs(int n, long seed) {
    Random rnd = new Random(seed);
    float[] x = new float[n * 8];
    int[] y = new int[n];
    for (int i = 0; i < n; i++) {
      y[i] = rnd.nextInt(3);
      for (int j = 0; j < 8; j++) x[i * 8 + j] = (float) rnd.nextGaussian() + (j % 3 == y[i] ? 2f : 0f);
    }
    return Dataset.classification(x, 8, y, 3);
  }
}
