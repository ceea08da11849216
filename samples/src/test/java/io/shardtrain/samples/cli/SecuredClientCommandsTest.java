package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.NodeConfig;
import io.shardtrain.samples.testing.FreePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node started as {@code node --security node1.conf} does (Artery, bulk channel and gRPC API over
 * TLS), and {@code status} against it: with {@code --security client.conf} it answers; without it,
 * or with another token, it is refused and says so.
 */
class SecuredClientCommandsTest {
  /** The actors module's committed test stores (their README says how make-certs.sh made them). */
  static final Path STORES = Path.of("..", "actors", "src", "test", "resources", "tls", "cluster").toAbsolutePath();
  @TempDir static Path dir;
  static ClusterNode.Started node;
  static String grpc;

  static Path securityFile(String name, boolean withKey, String tokenFile) throws Exception {
    String password = Files.readString(STORES.resolve("password")).trim();
    Path f = dir.resolve(name);
    Files.writeString(f, "shardtrain.security {\n"
        + (withKey ? "  key-store = \"" + STORES.resolve("node1.p12") + "\"\n" : "")
        + (withKey ? "  key-store-password = \"" + password + "\"\n" : "")
        + "  trust-store = \"" + STORES.resolve("truststore.p12") + "\"\n"
        + "  trust-store-password = \"" + password + "\"\n"
        + "  token-file = \"" + tokenFile + "\"\n}\n");
    return f;
  }

  @BeforeAll
  static void startSecuredNode() throws Exception {
    SecurityOption option = new SecurityOption();
    option.file = securityFile("node1.conf", true, STORES.resolve("token").toString());
    Map<String, Object> flags = new HashMap<>(option.flags());
    flags.put("shardtrain.grpc.port", 0);
    var config = NodeConfig.build(List.of("ps", "master"), "127.0.0.1", FreePorts.one(), List.of(),
        "memory", null, flags);
    assertEquals("tls-tcp", config.getString("akka.remote.artery.transport"));
    node = ClusterNode.start(config);
    ClusterNode.awaitUp(node.system(), Duration.ofSeconds(30));
    grpc = "127.0.0.1:" + node.grpcPort();
  }

  @AfterAll
  static void stopNode() throws Exception {
    if (node != null) {
      node.system().terminate();
      node.system().getWhenTerminated().toCompletableFuture().get();
    }
  }

  @Test
  void statusWithTheClientSettingsAnswersOverTls() throws Exception {
    Path client = securityFile("client.conf", false, STORES.resolve("token").toString());
    GrpcClientCommandsTest.Run r = GrpcClientCommandsTest.run("status", "--grpc", grpc, "--security", client.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("members:") && r.out().contains("Up"), r.out());
  }

  @Test
  void statusWithoutSecurityOrWithAnotherTokenIsRefused() throws Exception {
    GrpcClientCommandsTest.Run plain = GrpcClientCommandsTest.run("status", "--grpc", grpc, "--connect-timeout", "3");
    assertNotEquals(0, plain.exit(), plain.out());
    assertTrue(plain.err().contains(grpc), plain.err());

    Path otherToken = Files.writeString(dir.resolve("other-token"), "not-the-cluster-token\n");
    Path client = securityFile("wrong.conf", false, otherToken.toString());
    GrpcClientCommandsTest.Run wrong = GrpcClientCommandsTest.run("status", "--grpc", grpc, "--security",
        client.toString());
    assertNotEquals(0, wrong.exit(), wrong.out());
    assertTrue(wrong.err().contains("UNAUTHENTICATED"), wrong.err());
  }
}
