package io.shardtrain.actors.trainer;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sync job with one trainer on one node and the blocks and master on another: the trainer's
 * gradients and pulled values take the bulk channel when the block node has it, Artery when it
 * does not, and the trained parameters are the same bit for bit.
 */
class TrainerBulkTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private static Config config(String roles, boolean bulk) {
    return ConfigFactory.parseString(
            "akka.actor.provider = cluster\n"
                + "akka.remote.artery.canonical.port = 0\n"
                + "akka.remote.artery.canonical.hostname = 127.0.0.1\n"
                + "akka.cluster.roles = " + roles + "\n"
                + "akka.cluster.jmx.multi-mbeans-in-same-jvm = on\n"
                + "akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off\n"
                + "shardtrain.transport.bulk.enabled = " + bulk + "\n"
                + "shardtrain.transport.bulk.host = 127.0.0.1\n"
                + "shardtrain.transport.bulk.min-floats = 64\n"
                + "shardtrain.train.hidden = [16]\n"
                + "shardtrain.train.optimizer = momentum\n"
                + "shardtrain.train.batch = 16\n"
                + "shardtrain.train.steps = 6\n")
        .withFallback(PersistenceTestKitPlugin.config())
        .withFallback(PersistenceTestKitSnapshotPlugin.config());
  }

  private record Outcome(List<float[]> parameters, List<BlockProtocol.BlockStats> stats) {}

  private static Dataset data() {
    int n = 128;
    int dim = 20;
    float[] x = new float[n * dim];
    int[] y = new int[n];
    for (int i = 0; i < n; i++) {
      y[i] = i % 3;
      for (int j = 0; j < dim; j++) x[i * dim + j] = (float) Math.sin(i * 0.7 + j * 0.3) + (j % 3 == y[i] ? 1f : 0f);
    }
    return Dataset.classification(x, dim, y, 3);
  }

  private static Outcome train(String name, boolean bulkOnPs) throws Exception {
    ActorTestKit ps = ActorTestKit.create(name, config("[ps, master]", bulkOnPs));
    ActorTestKit node = ActorTestKit.create(name, config("[trainer]", true));
    try {
      Cluster cps = Cluster.get(ps.system());
      cps.manager().tell(Join.create(cps.selfMember().address()));
      Cluster.get(node.system()).manager().tell(Join.create(cps.selfMember().address()));
      ShardTrain.start(ps.system());
      ShardTrain st = ShardTrain.start(node.system());
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (Cluster.get(ps.system()).state().members().count(m -> m.status() == MemberStatus.up()) < 2) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("cluster did not form");
        Thread.sleep(50);
      }
      Dataset train = data();
      TrainSettings settings = TrainSettings.fromConfig(node.system().settings().config());
      // Blocks of at most 100 floats: 3 of the 20x16 weights' 4 blocks reach min-floats (64) and take
      // the bulk channel; their last block (20), the 16x3 weights and the biases stay inline.
      ShardTrain.Plan plan = ShardTrain.plan(settings, "job", train.dim(), train.size(), 3, BlockSpec.Mode.SYNC, 1,
          100, -1);
      st.submit(plan).toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      CompletableFuture<String> done = new CompletableFuture<>();
      st.startTrainer(new Trainer.Setup("t1", st.master(), train, train, () -> CpuBackend.create(1),
          TrainerSettings.create(node.system()), new StepListener() {
            @Override
            public void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {}

            @Override
            public void onFinished(String trainerId, long steps, long pushes, long pulls, long stale) {
              done.complete("finished after " + steps + " steps");
            }

            @Override
            public void onFailed(String trainerId, String reason) {
              done.complete("failed: " + reason);
            }
          }));
      assertEquals("finished after 6 steps", done.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
      Mlp model = Mlp.create(CpuBackend.create(1), train.dim(), settings.hidden(), 3, Activation.RELU, settings.seed());
      assertEquals(6L, st.pullInto(model, plan.job(), 6).toCompletableFuture().get(TIMEOUT.toMillis(),
          TimeUnit.MILLISECONDS));
      List<float[]> params = new ArrayList<>();
      for (Parameter p : model.parameters()) params.add(p.value().data().clone());
      return new Outcome(params, st.blockStats(plan.job()).toCompletableFuture().get(TIMEOUT.toMillis(),
          TimeUnit.MILLISECONDS));
    } finally {
      node.shutdownTestKit();
      ps.shutdownTestKit();
    }
  }

  private static long sum(List<BlockProtocol.BlockStats> stats, java.util.function.ToLongFunction<BlockProtocol.BlockStats> f) {
    return stats.stream().mapToLong(f).sum();
  }

  @Test
  void trainerUsesBulkWhereTheBlockNodeHasItFallsBackToInlineWhereNotAndTrainsTheSameParameters()
      throws Exception {
    Outcome bulk = train("TrainerBulkOn", true);
    Outcome inline = train("TrainerBulkOffOnPs", false);

    // 3 blocks of 100 floats: all 6 pushes of each go by letter (the pull after registration named
    // the block's actor and node), and so do their pulls of versions 0..6 and the final one.
    assertEquals(18, sum(bulk.stats(), BlockProtocol.BlockStats::bulkPushes));
    assertTrue(sum(bulk.stats(), BlockProtocol.BlockStats::bulkPulls) >= 24,
        "bulk pulls " + sum(bulk.stats(), BlockProtocol.BlockStats::bulkPulls));
    assertEquals(0, sum(inline.stats(), BlockProtocol.BlockStats::bulkPushes));
    assertEquals(0, sum(inline.stats(), BlockProtocol.BlockStats::bulkPulls));
    for (BlockProtocol.BlockStats s : inline.stats()) assertEquals(6, s.version(), s.entityId());

    assertEquals(bulk.parameters().size(), inline.parameters().size());
    for (int p = 0; p < bulk.parameters().size(); p++) {
      float[] a = bulk.parameters().get(p);
      float[] b = inline.parameters().get(p);
      assertEquals(a.length, b.length);
      for (int i = 0; i < a.length; i++) {
        assertEquals(Float.floatToRawIntBits(a[i]), Float.floatToRawIntBits(b[i]), "parameter " + p + "[" + i + "]");
      }
    }
  }
}
