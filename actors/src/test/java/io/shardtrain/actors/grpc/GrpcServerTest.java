package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpHeader;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.headers.RawHeader;
import akka.http.javadsl.settings.ServerSettings;
import akka.stream.javadsl.Sink;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.SubmitJobRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

  /**
   * A status call from a client that accepts gzip only, as gRPC's Java client says: answered
   * uncompressed by default, gzipped with {@code compress-responses}.
   */
  @Test
  void answersAreUncompressedUnlessConfiguredThoughTheClientAcceptsGzip() throws Exception {
    GrpcApiTest.Node node = GrpcApiTest.startNode("GrpcServerCompressionTest");
    try {
      byte[] body = StatusRequest.getDefaultInstance().toByteArray();
      byte[] frame = new byte[5 + body.length]; // uncompressed flag, then the length, big-endian
      java.nio.ByteBuffer.wrap(frame, 1, 4).putInt(body.length);
      System.arraycopy(body, 0, frame, 5, body.length);
      HttpRequest request = HttpRequest.POST("/shardtrain.v1.ShardTrainApi/GetStatus")
          .addHeader(RawHeader.create(GrpcServer.ACCEPT_ENCODING, "gzip"))
          .withEntity(HttpEntities.create(ContentTypes.parse("application/grpc"), frame));
      List<String> encodings = new ArrayList<>();
      List<Integer> flags = new ArrayList<>();
      for (boolean compress : new boolean[] {false, true}) {
        GrpcSettings settings = new GrpcSettings("127.0.0.1", 0, Duration.ofSeconds(10), compress);
        HttpResponse r = GrpcServer.handler(node.api(), settings).apply(request).toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
        encodings.add(r.getHeader("grpc-encoding").map(HttpHeader::value).orElse("none"));
        byte[] answer = r.entity().toStrict(10_000, node.kit().system()).toCompletableFuture()
            .get(10, TimeUnit.SECONDS).getData().toArray();
        flags.add((int) answer[0]);
      }
      assertEquals(List.of("identity", "gzip"), encodings);
      assertEquals(List.of(0, 1), flags, "each answer's compressed flag");
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
