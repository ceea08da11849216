package io.shardtrain.samples.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProgressBar;
import io.shardtrain.samples.testing.FreePorts;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code local --metrics-port P}: each node of the local cluster serves its own meters at port P + i,
 * as separate machines would. After a small sync job on two nodes (each holding blocks and running a
 * trainer), both endpoints answer, each counts its own trainer's examples, and together they count
 * every push the blocks took.
 */
class LocalClusterMetricsTest {

  @Test
  void eachNodeServesItsOwnMetersAtThePortAfterThePreviousNodes() throws Exception {
    int port = FreePorts.consecutive(2);
    Config config = ConfigFactory.parseString("""
        shardtrain.metrics.port = %d
        shardtrain.persistence.journal = memory
        shardtrain.train { hidden = [8], optimizer = sgd, lr = 0.1, lr-schedule = constant, batch = 16, steps = 20,
          epochs = 0, seed = 3 }
        """.formatted(port)).withFallback(ConfigFactory.load()).resolve();
    TrainSettings s = TrainSettings.fromConfig(config);
    String first;
    String second;
    DistributedTraining.Result r;
    try (LocalCluster cluster = LocalCluster.start("metrics", 2, 2, config, Duration.ofSeconds(60))) {
      r = new DistributedTraining(s, BlockSpec.Mode.SYNC, 64, -1, ProgressBar.messagesOnly(System.out),
          new MetricsLog()).run(cluster, data(), data());
      first = get(port);
      second = get(port + 1);
    }
    // Each node counts its own trainer's examples (20 steps of at most 16), and only those.
    double examples1 = sum(first, "shardtrain_trainer_examples_total");
    double examples2 = sum(second, "shardtrain_trainer_examples_total");
    assertTrue(examples1 > 200 && examples1 <= 320, "node 0: " + examples1);
    assertTrue(examples2 > 200 && examples2 <= 320, "node 1: " + examples2);
    assertEquals(r.samples(), examples1 + examples2, 1e-9);
    double pushes = sum(first, "shardtrain_block_pushes_total") + sum(second, "shardtrain_block_pushes_total");
    assertTrue(pushes >= 2 * 20, "pushes counted by the blocks of both nodes: " + pushes);
  }

  private static Dataset data() {
    Random r = new Random(5);
    float[] x = new float[400 * 4];
    int[] y = new int[400];
    for (int i = 0; i < y.length; i++) {
      y[i] = r.nextInt(2);
      for (int j = 0; j < 4; j++) x[i * 4 + j] = (float) r.nextGaussian() + y[i];
    }
    return Dataset.classification(x, 4, y, 2);
  }

  private static String get(int port) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode());
    return r.body();
  }

  /** The sum of every series of {@code name} in Prometheus text. */
  private static double sum(String text, String name) {
    Matcher m = Pattern.compile("(?m)^" + name + "(\\{[^}]*\\})? (\\S+)$").matcher(text);
    double total = 0;
    while (m.find()) total += Double.parseDouble(m.group(2));
    return total;
  }
}
