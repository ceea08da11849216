package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Three node JVMs started with no seed list form one cluster through Akka Management's Cluster
 * Bootstrap (config discovery of the three management endpoints) and train a short sync job; each
 * node's {@code /alive} answers from the start and its {@code /ready} only once the cluster exists.
 */
@Tag("multi-jvm") // starts node JVMs: the failsafe lane of mvn verify, not mvn test (tests/pom.xml)
class ClusterBootstrapTest {
  private static final Path DIR = Path.of("target", "failover-logs");
  private static final int STEPS = 20;
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @Test
  void threeNodesWithoutSeedsFormOneClusterByConfigDiscoveryAndTrainAJob() throws Exception {
    Assumptions.assumeTrue(NodeCluster.URL != null,
        "SHARDTRAIN_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL)");
    List<String> roles = List.of("ps,master", "ps,trainer", "trainer");
    // A short stable margin: the three contact points are all there from the start.
    String conf = "akka.management.cluster.bootstrap.contact-point-discovery.stable-margin = 2s\n";
    try (NodeCluster cluster = new NodeCluster(DIR.resolve("bootstrap"), conf, NodeFailoverTest.syncJob(STEPS))) {
      List<Integer> management = new ArrayList<>();
      for (int i = 0; i < 3; i++) management.add(cluster.newPort());
      String contacts = String.join(",", management.stream().map(p -> "127.0.0.1:" + p).toList());

      NodeProcess first = cluster.startBootstrapped("n1-ps-master", roles.get(0), management.get(0), contacts);
      awaitStatus(management.get(0), "/alive", 200, Duration.ofMinutes(2), cluster);
      // Alone it finds one of three contact points: it forms no cluster, so it is alive and not ready.
      assertEquals(500, get(management.get(0), "/ready"), "/ready of a node that is not a member yet");
      for (int i = 1; i < 3; i++) {
        cluster.startBootstrapped("n" + (i + 1) + "-" + roles.get(i).replace(',', '-'), roles.get(i),
            management.get(i), contacts);
      }
      long t0 = System.nanoTime();
      for (int port : management) awaitStatus(port, "/ready", 200, Duration.ofMinutes(3), cluster);
      System.out.printf("bootstrap: all three nodes ready %.1f s after the last JVM started%n",
          (System.nanoTime() - t0) / 1e9);
      assertTrue(first.log().contains("joining by Cluster Bootstrap (config discovery)"), first.log());
      // The launcher pooled the async callbacks before anything used the common pool (2 cores here).
      for (NodeProcess n : cluster.nodes) assertFalse(n.log().contains(ShardTrain.UNPOOLED_CALLBACKS), n.log());

      JobProtocol.JobStatus done = cluster.awaitStatus(JobProtocol.JobStatus::done, Duration.ofMinutes(4));
      Mlp model = Mlp.create(CpuBackend.create(1), 784, new int[] {64}, 10, Activation.RELU, 3);
      long version = cluster.client().api().pullInto(model, done.job(), STEPS).toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      // Sync mode: every block took one update per step of both trainers.
      assertEquals(STEPS, version, "blocks' version at the end of the job");
      SortedSet<String> members = new TreeSet<>();
      Cluster.get(cluster.client().system()).state().getMembers().forEach(m -> {
        if (m.status() == MemberStatus.up() && !m.hasRole("client")) members.add(m.address().toString());
      });
      assertEquals(3, members.size(), "Up node members " + members);
    }
  }

  private static int get(int port, String path) throws Exception {
    HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(5)).GET().build();
    return HTTP.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static void awaitStatus(int port, String path, int status, Duration timeout, NodeCluster cluster)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    int last = -1;
    while (System.nanoTime() < deadline) {
      try {
        last = get(port, path);
        if (last == status) return;
      } catch (java.io.IOException e) {
        // not listening yet
      }
      Thread.sleep(250);
    }
    throw new AssertionError(path + " on port " + port + " answered " + last + ", not " + status + " within "
        + timeout.toSeconds() + " s" + cluster.logTails());
  }
}
