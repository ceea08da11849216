package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.http.javadsl.settings.ServerSettings;
import akka.stream.javadsl.Sink;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.SubmitJobRequest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class GrpcServerTest {
  static ServerSettings listener(String hocon) {
    Config config = ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve();
    return GrpcServer.listenerSettings(config);
  }

  @Test
  void theListenersIdleTimeoutOutlastsACheckpointsWaitSoTheCallsOwnErrorArrivesFirst() {
    // Akka HTTP's default 60 s against a checkpoint's 120 s + 20 s (the defaults): raised to 150 s.
    ServerSettings defaults = listener("");
    assertEquals(150_000, defaults.getTimeouts().idleTimeout().toMillis());
    assertTrue(defaults.http2Enabled(), "gRPC needs HTTP/2");
    ServerSettings shortWaits = listener("""
        akka.http.server.idle-timeout = 1s
        shardtrain.checkpoint.timeout = 3s
        shardtrain.trainer.ask-timeout = 2s
        """);
    assertEquals(15_000, shortWaits.getTimeouts().idleTimeout().toMillis());
  }

  @Test
  void aCallThatWaitsLongerThanTheConfiguredIdleTimeoutEndsWithItsOwnError() throws Exception {
    // Idle after 1 s, but a pull waits 3 s for a version no block reaches.
    GrpcApiTest.Node node = GrpcApiTest.startNode("GrpcServerTest", """
        akka.http.server.idle-timeout = 1s
        shardtrain.trainer.ask-timeout = 3s
        """);
    try {
      GrpcApiTest.get(node.client().submitJob(SubmitJobRequest.newBuilder().setJobConfig(GrpcApiTest.JOB)
          .setShape(GrpcApiTest.SHAPE).build()));
      long start = System.nanoTime();
      Status s = GrpcApiTest.failure(node.client().pullParameters(PullRequest.newBuilder().setJobId("grpc-job")
          .setMinVersion(99).build()).runWith(Sink.seq(), node.kit().system()));
      double seconds = (System.nanoTime() - start) / 1e9;
      assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
      assertTrue(s.getDescription() != null && s.getDescription().contains("block"), "the server's own error: " + s);
      assertTrue(seconds >= 2.5, "ended after " + seconds + " s: " + s);
    } finally {
      node.client().close().toCompletableFuture().get(10, TimeUnit.SECONDS);
      node.kit().shutdownTestKit();
    }
  }

  @Test
  void aLongerOrInfiniteIdleTimeoutIsKept() {
    assertEquals(600_000, listener("akka.http.server.idle-timeout = 10m").getTimeouts().idleTimeout().toMillis());
    assertFalse(listener("akka.http.server.idle-timeout = infinite").getTimeouts().idleTimeout().isFinite());
  }
}
