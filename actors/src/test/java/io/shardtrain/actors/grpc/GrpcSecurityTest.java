package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.grpc.GrpcClientSettings;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import akka.stream.javadsl.Sink;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.actors.security.TlsTestStores;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.PushRequest;
import io.shardtrain.grpc.ShardTrainApiClient;
import io.shardtrain.grpc.StatusRequest;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gRPC API of a node with {@code shardtrain.security.enabled}: served over TLS, and every call
 * needs the cluster's bearer token; without it, or with another, the call ends with
 * {@code UNAUTHENTICATED} and never reaches the service. A plaintext client gets nothing.
 */
class GrpcSecurityTest {
  private static ActorTestKit kit;
  private static ShardTrainApiClient client;
  private static int port;
  private static String token;

  @BeforeAll
  static void startSecuredNode() throws Exception {
    kit = ActorTestKit.create("GrpcSecurityTest", SecuritySettings.withArtery(ConfigFactory.parseString("""
          akka.actor.provider = cluster
          akka.remote.artery.canonical.port = 0
          akka.remote.artery.canonical.hostname = 127.0.0.1
          akka.cluster.roles = [ps, master]
          akka.cluster.jmx.multi-mbeans-in-same-jvm = on
          akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
          shardtrain.grpc.port = 0
          """).withFallback(TlsTestStores.config("cluster", "node1"))
        .withFallback(PersistenceTestKitPlugin.config()).withFallback(PersistenceTestKitSnapshotPlugin.config())
        .withFallback(ConfigFactory.load())));
    ShardTrain st = ShardTrain.start(kit.system());
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (cluster.selfMember().status() != MemberStatus.up()) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("cluster did not form");
      Thread.sleep(50);
    }
    port = GrpcServer.startIfConfigured(st).orElseThrow().toCompletableFuture().get(10, TimeUnit.SECONDS)
        .localAddress().getPort();
    token = TlsTestStores.token("cluster");
    client = ShardTrainApiClient.create(GrpcClientSettings.connectToServiceAt("127.0.0.1", port, kit.system())
        .withSslContext(TlsTestStores.settings("cluster", null).sslContext(false)), kit.system());
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) client.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
    if (kit != null) kit.shutdownTestKit();
  }

  @Test
  void aCallOverTlsWithTheClusterTokenIsServed() throws Exception {
    ClusterStatus status = GrpcApiTest.get(client.getStatus().addHeader("authorization", "Bearer " + token)
        .invoke(StatusRequest.getDefaultInstance()));
    assertEquals(1, status.getMembersCount());
    assertTrue(status.getMembers(0).getAddress().contains("127.0.0.1"), status.toString());
  }

  @Test
  void everyCallWithoutTheTokenOrWithAnotherGetsUnauthenticated() throws Exception {
    Status none = GrpcApiTest.failure(client.getStatus(StatusRequest.getDefaultInstance()));
    assertEquals(Status.Code.UNAUTHENTICATED, none.getCode());
    assertTrue(none.getDescription().contains("no bearer token"), none.toString());

    Status wrong = GrpcApiTest.failure(client.getStatus().addHeader("authorization", "Bearer " + token + "x")
        .invoke(StatusRequest.getDefaultInstance()));
    assertEquals(Status.Code.UNAUTHENTICATED, wrong.getCode());
    assertTrue(wrong.getDescription().contains("wrong bearer token"), wrong.toString());

    // A push and a streaming pull are refused the same way, before the service sees them.
    Status push = GrpcApiTest.failure(client.pushGradient(PushRequest.newBuilder().setJobId("any").build()));
    assertEquals(Status.Code.UNAUTHENTICATED, push.getCode());
    Status pull = GrpcApiTest.failure(client.pullParameters(PullRequest.newBuilder().setJobId("any").build())
        .runWith(Sink.seq(), kit.system()));
    assertEquals(Status.Code.UNAUTHENTICATED, pull.getCode());
  }

  @Test
  void aPlaintextClientIsNotServed() throws Exception {
    ShardTrainApiClient plain = ShardTrainApiClient.create(GrpcClientSettings.connectToServiceAt("127.0.0.1", port,
        kit.system()).withTls(false).withDeadline(Duration.ofSeconds(5)), kit.system());
    try {
      Status s = GrpcApiTest.failure(plain.getStatus().addHeader("authorization", "Bearer " + token)
          .invoke(StatusRequest.getDefaultInstance()));
      assertNotEquals(Status.Code.OK, s.getCode());
    } finally {
      plain.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
