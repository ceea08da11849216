package io.shardtrain.samples.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.shardtrain.samples.testing.FreePorts;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A node's Akka Management settings: how {@code shardtrain.management} becomes Akka's management
 * and Cluster Bootstrap configuration, which combinations are refused, and a {@code ps} node's
 * {@code /alive} and {@code /ready} answers.
 */
class ManagementEndpointTest {
  @Test
  void configDiscoveryLeavesTheSeedListEmptyAndListsTheContactPointsForBootstrap() {
    Config c = NodeConfig.build(List.of("ps", "master"), "127.0.0.1", 25601, List.of(),
        List.of("127.0.0.1:8601", "127.0.0.1:8602", "10.0.0.3:8603"), "memory", null,
        Map.of("shardtrain.management.port", 8601, "shardtrain.management.discovery", "config"));
    assertEquals(List.of(), c.getStringList("akka.cluster.seed-nodes"));
    assertEquals(8601, c.getInt("akka.management.http.port"));
    assertEquals("127.0.0.1", c.getString("akka.management.http.hostname"));
    String boot = "akka.management.cluster.bootstrap.contact-point-discovery.";
    assertEquals("config", c.getString(boot + "discovery-method"));
    assertEquals("shardtrain", c.getString(boot + "service-name"));
    assertEquals(3, c.getInt(boot + "required-contact-point-nr"));
    assertEquals(false, c.getBoolean("akka.management.cluster.bootstrap.contact-point.filter-on-fallback-port"));
    var endpoints = c.getConfigList("akka.discovery.config.services.shardtrain.endpoints");
    assertEquals(List.of("127.0.0.1:8601", "127.0.0.1:8602", "10.0.0.3:8603"),
        endpoints.stream().map(e -> e.getString("host") + ":" + e.getInt("port")).toList());
  }

  @Test
  void withoutDiscoveryTheNodeJoinsItsSeedsOrItself() {
    Config c = NodeConfig.build(List.of("ps"), "127.0.0.1", 25602, List.of(), "memory", null, Map.of());
    assertEquals(List.of("akka://shardtrain@127.0.0.1:25602"), c.getStringList("akka.cluster.seed-nodes"));
    assertEquals(0, ManagementSettings.fromConfig(c).port());
  }

  @Test
  void discoveryWithoutAManagementPortOrWithSeedsIsRefused() {
    var noPort = assertThrows(IllegalArgumentException.class, () -> NodeConfig.build(List.of("ps"), "127.0.0.1",
        25603, List.of(), "memory", null, Map.of("shardtrain.management.discovery", "config")));
    assertEquals("shardtrain.management.discovery = config needs shardtrain.management.port (--management-port)",
        noPort.getMessage());
    var both = assertThrows(IllegalArgumentException.class, () -> NodeConfig.build(List.of("ps"), "127.0.0.1",
        25603, List.of("127.0.0.1:25600"), "memory", null,
        Map.of("shardtrain.management.port", 8604, "shardtrain.management.discovery", "config")));
    assertEquals("give either seed nodes or a discovery method, not both", both.getMessage());
    var unknown = assertThrows(IllegalArgumentException.class, () -> NodeConfig.build(List.of("ps"), "127.0.0.1",
        25603, List.of(), "memory", null,
        Map.of("shardtrain.management.port", 8604, "shardtrain.management.discovery", "dns")));
    assertTrue(unknown.getMessage().startsWith("shardtrain.management.discovery must be"), unknown.getMessage());
  }

  @Test
  void aPsNodeIsAliveAtOnceAndReadyOnceItIsUpWithItsBlockRegionKnownToTheCoordinator() throws Exception {
    int management = FreePorts.one();
    Config config = NodeConfig.build(List.of("ps", "master"), "127.0.0.1", FreePorts.one(), List.of(), "memory", null,
        Map.of("shardtrain.management.port", management));
    ClusterNode.Started node = ClusterNode.start(config);
    try {
      assertEquals(management, node.managementPort());
      assertEquals(200, get(management, "/alive").statusCode());
      HttpResponse<String> ready = null;
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (System.nanoTime() < deadline) {
        ready = get(management, "/ready");
        if (ready.statusCode() == 200) break;
        Thread.sleep(100);
      }
      assertEquals(200, ready.statusCode(), ready.body());
      assertTrue(new NodeReadiness(node.system().classicSystem()).get().toCompletableFuture().get(),
          "NodeReadiness of an Up ps node");
      // Read-only routes: the members are listed, and no HTTP client can down one.
      HttpResponse<String> members = get(management, "/cluster/members");
      assertEquals(200, members.statusCode());
      assertTrue(members.body().contains("127.0.0.1"), members.body());
    } finally {
      node.system().terminate();
      node.system().getWhenTerminated().toCompletableFuture().get();
    }
  }

  private static HttpResponse<String> get(int port, String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
