package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorSystem;
import akka.cluster.typed.Cluster;
import akka.management.javadsl.AkkaManagement;
import com.typesafe.config.Config;
import io.shardtrain.actors.grpc.GrpcServer;
import io.shardtrain.actors.grpc.GrpcSettings;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.samples.local.DistributedTraining;
import io.shardtrain.samples.local.LocalCluster;
import io.shardtrain.samples.testing.FreePorts;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Random and truncated bytes to every port a node listens on (Artery TCP, the bulk channel, gRPC,
 * the metrics and the Akka Management HTTP endpoints), then a sync job on the same cluster: it must
 * train to the end as if nothing had happened, and the HTTP endpoints must still answer.
 */
class HostilePortsTest {
  static final int CONNECTIONS_PER_PORT = 60;
  static final int STEPS = 20;

  @Test
  void aNodeThatWasSentGarbageOnEveryPortStillTrains() throws Exception {
    // The local cluster serves node i's meters at this port + i.
    int metricsPort = FreePorts.consecutive(2);
    Config config = ClusterTestSupport.config("""
        shardtrain.train { hidden = [16], optimizer = sgd, lr = 0.2, lr-schedule = constant, batch = 8,
          steps = %d, epochs = 0, seed = 5 }
        shardtrain.ps.block-size = 40
        shardtrain.metrics.port = %d
        akka.management.http.hostname = "127.0.0.1"
        akka.management.http.port = 0
        """.formatted(STEPS, metricsPort));
    try (LocalCluster cluster = LocalCluster.start("hostile", 2, 2, config, Duration.ofSeconds(60))) {
      ActorSystem<?> node = cluster.coordinator().system();
      int managementPort = AkkaManagement.get(node.classicSystem()).start().toCompletableFuture()
          .get(30, TimeUnit.SECONDS).port();
      int grpcPort = GrpcServer.start(cluster.coordinator(), new GrpcSettings("127.0.0.1", 0, Duration.ofSeconds(10)))
          .toCompletableFuture().get(30, TimeUnit.SECONDS).localAddress().getPort();

      Map<String, Integer> ports = new LinkedHashMap<>();
      ports.put("artery", Cluster.get(node).selfMember().address().getPort().get());
      ports.put("bulk", BulkTransport.get(node).address().getPort());
      ports.put("grpc", grpcPort);
      ports.put("metrics", metricsPort);
      ports.put("management", managementPort);
      Map<String, Function<Random, byte[]>> inputs = Map.of("artery", HostilePortsTest::notAkka,
          "bulk", HostilePortsTest::bulk, "grpc", HostilePortsTest::http2, "metrics", HostilePortsTest::http1,
          "management", HostilePortsTest::http1);
      ExecutorService pool = Executors.newFixedThreadPool(ports.size());
      try {
        List<Future<?>> sent = new ArrayList<>();
        long seed = 42;
        for (var p : ports.entrySet()) {
          Random r = new Random(seed++);
          sent.add(pool.submit(() -> {
            for (int i = 0; i < CONNECTIONS_PER_PORT; i++) send(p.getValue(), inputs.get(p.getKey()).apply(r));
            return null;
          }));
        }
        for (Future<?> f : sent) f.get(60, TimeUnit.SECONDS);
      } finally {
        pool.shutdownNow();
      }

      DistributedTraining.Result r = new DistributedTraining(ClusterTestSupport.settings(config), BlockSpec.Mode.SYNC,
          40, -1, ClusterTestSupport.quiet(), ClusterTestSupport.metrics())
          .run(cluster, SyncEquivalenceTest.data(1), SyncEquivalenceTest.data(2));
      assertEquals(STEPS, r.version(), "every step applied");
      assertTrue(r.testAccuracy() > 0.6, "test accuracy " + r.testAccuracy());
      assertEquals(200, get("http://127.0.0.1:" + metricsPort + "/metrics"));
      assertEquals(200, get("http://127.0.0.1:" + managementPort + "/alive"));
    }
  }

  /** Writes {@code bytes} on a new connection, half-closes it and reads what comes back for a moment. */
  private static void send(int port, byte[] bytes) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
      s.setSoTimeout(50);
      OutputStream out = s.getOutputStream();
      out.write(bytes);
      out.flush();
      s.shutdownOutput();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[4096];
      while (in.read(buf) >= 0) {
        // drained
      }
    } catch (IOException e) {
      // A reset or a timeout: the server gave up on the connection, which is what it should do.
    }
  }

  private static int get(String url) throws IOException {
    HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
    c.setConnectTimeout(5000);
    c.setReadTimeout(10_000);
    try {
      return c.getResponseCode();
    } finally {
      c.disconnect();
    }
  }

  private static byte[] random(Random r, int max) {
    byte[] b = new byte[r.nextInt(max)];
    r.nextBytes(b);
    return b;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /** A prefix of {@code b}, cut anywhere. */
  private static byte[] truncated(Random r, byte[] b) {
    return Arrays.copyOf(b, r.nextInt(b.length + 1));
  }

  /**
   * Random bytes that do not start with Artery's magic "AKKA": one 13-byte frame after the magic
   * (a stream id, a length of 0x7fffffff, zeros) sends Akka 2.8.5's Artery into an endless error
   * loop that no setting stops; TLS (issue 15, item 3) is what keeps strangers from reaching it.
   */
  private static byte[] notAkka(Random r) {
    byte[] b = random(r, 64 << 10);
    if (b.length >= 4 && b[0] == 'A' && b[1] == 'K' && b[2] == 'K' && b[3] == 'A') b[0] = 'B';
    return b;
  }

  /** Random bytes, or a letter frame's header (fp32 or bf16) with garbage or nothing after it. */
  private static byte[] bulk(Random r) {
    if (r.nextInt(3) == 0) return random(r, 64 << 10);
    ByteBuffer h = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
    h.putInt(r.nextBoolean() ? 0x4C425453 : 0x48425453).putLong(((long) r.nextInt() << 32) | r.nextInt(1 << 17))
        .putInt(r.nextInt(1 << 25)).putInt(r.nextInt(300));
    return concat(truncated(r, h.array()), random(r, 4096));
  }

  private static final byte[] HTTP2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  /** Random bytes, or HTTP/2's preface (whole or cut) with random frames after it. */
  private static byte[] http2(Random r) {
    if (r.nextInt(3) == 0) return random(r, 64 << 10);
    byte[] frames = random(r, 8192);
    // Now and then a frame header declaring the largest length HTTP/2 allows.
    if (frames.length >= 9 && r.nextBoolean()) {
      frames[0] = (byte) 0xff;
      frames[1] = (byte) 0xff;
      frames[2] = (byte) 0xff;
    }
    return concat(truncated(r, HTTP2_PREFACE), frames);
  }

  /** Random bytes, or an HTTP/1.1 request cut short, with an absurd length or line, or garbage after it. */
  private static byte[] http1(Random r) {
    String[] starts = {"GET /metrics HTTP/1.1\r\nHost: x\r\n", "GET /alive HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n",
        "GET /" + "a".repeat(70_000) + " HTTP/1.1\r\n", "GET /cluster/members HTTP/1.1\r\nX: " + "b".repeat(20_000)};
    byte[] start = starts[r.nextInt(starts.length)].getBytes(StandardCharsets.US_ASCII);
    return r.nextInt(3) == 0 ? random(r, 64 << 10) : concat(truncated(r, start), random(r, 1024));
  }
}
