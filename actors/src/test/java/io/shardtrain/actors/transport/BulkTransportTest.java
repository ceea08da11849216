package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BulkTransportTest {
  private static final Duration LONG = Duration.ofSeconds(5);
  private static ActorTestKit kitA;
  private static ActorTestKit kitB;
  private static BulkTransport a;
  private static BulkTransport b;

  private static Config config(String extra) {
    return ConfigFactory.parseString("akka.loglevel = WARNING\nshardtrain.transport.bulk.host = \"127.0.0.1\"\n" + extra)
        .withFallback(ConfigFactory.load());
  }

  @BeforeAll
  static void start() {
    kitA = ActorTestKit.create("bulkA", config(""));
    // B: small limits, so expiry and size checks are quick to reach.
    kitB = ActorTestKit.create("bulkB", config("""
        shardtrain.transport.bulk.max-floats = 1024
        shardtrain.transport.bulk.max-unclaimed-floats = 4096
        shardtrain.transport.bulk.claim-timeout = 1s
        """));
    a = BulkTransport.get(kitA.system());
    b = BulkTransport.get(kitB.system());
  }

  @AfterAll
  static void stop() {
    kitA.shutdownTestKit();
    kitB.shutdownTestKit();
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static Throwable failureOf(CompletionStage<?> stage) {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> stage.toCompletableFuture().get(10, TimeUnit.SECONDS));
    return e.getCause();
  }

  private static void eventually(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
      Thread.sleep(10);
    }
  }

  /** Awkward bit patterns: NaN payloads, -0, subnormals, extremes. */
  private static float[] awkwardFloats(int n, int seed) {
    int[] special = {0x7fc00001, 0xffc12345, 0x80000000, 0x00000001, 0x007fffff, 0x7f7fffff, 0xff800000, 0x3f800000};
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = i < special.length ? Float.intBitsToFloat(special[i]) : (float) Math.sin(seed * 31.0 + i) * (i % 97);
    }
    return v;
  }

  private static void assertBitExact(float[] expected, float[] actual) {
    assertEquals(expected.length, actual.length, "length");
    for (int i = 0; i < expected.length; i++) {
      assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]), "float " + i);
    }
  }

  @Test
  void payloadArrivingBeforeReceiveIsHeldAndHandedOverBitExact() throws Exception {
    float[] values = awkwardFloats(1000, 1);
    long id = a.newTransferId();
    int before = b.unclaimedTransfers();
    await(a.send(b.address(), id, values, 0, values.length));
    eventually(() -> b.unclaimedTransfers() > before, "the payload to arrive unclaimed");
    assertBitExact(values, await(b.receive(id, LONG)));
  }

  @Test
  void receiveWaitingBeforeThePayloadCompletesWhenItArrivesWithOnlyTheSentRange() throws Exception {
    float[] values = awkwardFloats(900, 2);
    long id = a.newTransferId();
    CompletionStage<float[]> received = b.receive(id, LONG);
    Thread.sleep(50);
    assertTrue(!received.toCompletableFuture().isDone());
    await(a.send(b.address(), id, values, 100, 700));
    assertBitExact(java.util.Arrays.copyOfRange(values, 100, 800), await(received));
  }

  @Test
  void manyConcurrentTransfersFromSeveralThreadsArriveIntact() throws Exception {
    // A sends to itself (a node may hold a trainer and blocks): B's max-floats is kept tiny.
    int n = 64;
    long[] ids = new long[n];
    float[][] payloads = new float[n][];
    List<CompletionStage<float[]>> received = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids[i] = a.newTransferId();
      payloads[i] = awkwardFloats(5_000 + 997 * i, i);
    }
    // Half the receives are registered before the sends, half after.
    for (int i = 0; i < n / 2; i++) received.add(a.receive(ids[i], LONG));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<CompletableFuture<Void>> sends = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        sends.add(CompletableFuture.supplyAsync(() -> a.send(a.address(), ids[k], payloads[k], 0, payloads[k].length), pool)
            .thenCompose(s -> s));
      }
      for (CompletableFuture<Void> s : sends) await(s);
    } finally {
      pool.shutdown();
    }
    for (int i = n / 2; i < n; i++) received.add(a.receive(ids[i], LONG));
    for (int i = 0; i < n; i++) assertBitExact(payloads[i], await(received.get(i)));
  }

  @Test
  void transferIdsAreUniqueAndCarryANodePrefix() {
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 10_000; i++) assertTrue(seen.add(a.newTransferId()));
    assertNotEquals(a.newTransferId() >>> 32, b.newTransferId() >>> 32, "node prefixes (1 in 2^32 chance to clash)");
  }

  @Test
  void receiveOfATransferThatNeverArrivesTimesOutNamingTheId() {
    long id = a.newTransferId();
    Throwable cause = failureOf(b.receive(id, Duration.ofMillis(150)));
    assertInstanceOf(TimeoutException.class, cause);
    assertTrue(cause.getMessage().contains(Long.toString(id)), cause.getMessage());
  }

  @Test
  void aSecondReceiveOfTheSameIdIsRefused() {
    long id = a.newTransferId();
    CompletionStage<float[]> first = b.receive(id, Duration.ofMillis(300));
    assertInstanceOf(IllegalStateException.class, failureOf(b.receive(id, Duration.ofMillis(300))));
    assertInstanceOf(TimeoutException.class, failureOf(first));
  }

  @Test
  void unclaimedPayloadIsDiscardedAfterTheClaimTimeout() throws Exception {
    long id = a.newTransferId();
    await(a.send(b.address(), id, new float[] {1f, 2f, 3f}, 0, 3));
    Thread.sleep(1000 + 2 * 250 + 300); // claim-timeout plus two sweep periods and slack
    assertInstanceOf(TimeoutException.class, failureOf(b.receive(id, Duration.ofMillis(100))));
  }

  @Test
  void arrivalsBeyondTheUnclaimedBoundAreDropped() throws Exception {
    // B holds at most 4096 unclaimed floats: five unclaimed 1000-float payloads cannot all stay.
    long[] ids = new long[5];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = a.newTransferId();
      await(a.send(b.address(), ids[i], awkwardFloats(1000, i), 0, 1000));
    }
    long first = ids[0];
    eventually(() -> b.unclaimedTransfers() >= 4, "four payloads to arrive");
    Thread.sleep(100);
    int claimed = 0;
    for (long id : ids) {
      try {
        await(b.receive(id, Duration.ofMillis(100)));
        claimed++;
      } catch (ExecutionException e) {
        assertInstanceOf(TimeoutException.class, e.getCause());
      }
    }
    assertEquals(4, claimed, "payloads kept of " + ids.length + " (first id " + first + ")");
  }

  @Test
  void sendToAPortNobodyListensOnFailsNamingThePeer() throws Exception {
    int port;
    try (ServerSocketChannel probe = ServerSocketChannel.open()) {
      probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      port = ((InetSocketAddress) probe.getLocalAddress()).getPort();
    }
    InetSocketAddress nobody = new InetSocketAddress("127.0.0.1", port);
    Throwable cause = failureOf(a.send(nobody, a.newTransferId(), new float[4], 0, 4));
    assertInstanceOf(IOException.class, cause);
    assertTrue(cause.getMessage().contains("127.0.0.1:" + port), cause.getMessage());
  }

  @Test
  void sendLargerThanMaxFloatsOrOutsideTheArrayIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> b.send(a.address(), 1L, new float[2000], 0, 1025));
    assertTrue(e.getMessage().contains("max-floats = 1024"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> a.send(b.address(), 2L, new float[10], 5, 6));
  }

  @Test
  void oversizeOrMalformedFrameClosesOnlyThatConnection() throws Exception {
    for (int[] header : new int[][] {{BulkFrames.MAGIC, 2000}, {0x12345678, 10}}) {
      try (SocketChannel ch = SocketChannel.open(b.address())) {
        ByteBuffer buf = ByteBuffer.allocate(BulkFrames.HEADER_BYTES + 64).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(header[0]).putLong(77L).putInt(header[1]).put(new byte[64]).flip();
        while (buf.hasRemaining()) ch.write(buf);
        ch.socket().setSoTimeout(5000);
        int read;
        try {
          read = ch.socket().getInputStream().read();
        } catch (java.net.SocketException reset) {
          read = -1; // closed with our unread bytes pending: the peer sees a reset instead of EOF
        }
        assertEquals(-1, read, "B closes the connection");
      }
    }
    assertInstanceOf(TimeoutException.class, failureOf(b.receive(77L, Duration.ofMillis(100))));
    // Other connections keep working.
    long id = a.newTransferId();
    await(a.send(b.address(), id, new float[] {5f}, 0, 1));
    assertArrayEquals(new float[] {5f}, await(b.receive(id, LONG)));
  }

  @Test
  void shutdownFailsPendingReceivesFreesThePortAndStopsItsThreads() throws Exception {
    ActorSystem<Void> c = ActorSystem.create(Behaviors.empty(), "bulkC", config(""));
    BulkTransport bulk = BulkTransport.get(c);
    InetSocketAddress address = bulk.address();
    long id = bulk.newTransferId();
    await(bulk.send(a.address(), id, new float[] {1f}, 0, 1)); // an outbound writer
    await(a.send(address, 9L, new float[] {2f}, 0, 1)); // an inbound reader
    assertArrayEquals(new float[] {2f}, await(bulk.receive(9L, LONG)));
    CompletionStage<float[]> pending = bulk.receive(10L, Duration.ofSeconds(30));
    String prefix = bulk.threadPrefix();
    assertTrue(liveThreads(prefix) >= 3, "accept, read and write threads running");

    c.terminate();
    c.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);

    assertInstanceOf(IllegalStateException.class, failureOf(pending));
    assertEquals(0, liveThreads(prefix), "threads named " + prefix + "* left running");
    try (ServerSocketChannel again = ServerSocketChannel.open()) {
      again.bind(address);
    }
    assertArrayEquals(new float[] {1f}, await(a.receive(id, LONG)));
  }

  private static long liveThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
        .count();
  }
}
