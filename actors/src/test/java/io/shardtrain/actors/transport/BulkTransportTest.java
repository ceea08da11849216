package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.pattern.StatusReply;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.job.CborSerializable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two ActorSystems over loopback, each with its bulk channel: letters between them (and from one
 * to itself), asks by letter, and what a node does with frames it cannot take.
 */
class BulkTransportTest {
  private static final Duration LONG = Duration.ofSeconds(10);
  private static ActorTestKit kitA;
  private static ActorTestKit kitB;
  private static BulkTransport a;
  private static BulkTransport b;

  /** A test letter: opens to {@link Opened}; a bounce tells {@code bounceTo} (may be null). */
  record Note(ActorRef<Object> to, String text, ActorRef<Object> bounceTo) implements BulkTransport.Letter,
      CborSerializable {
    @Override
    public ActorRef<?> recipient() {
      return to;
    }

    @Override
    public Object open(float[] values) {
      return new Opened(text, values, Thread.currentThread().getName());
    }

    @Override
    public void bounce(String reason) {
      if (bounceTo != null) bounceTo.tell(new Bounced(text, reason));
    }
  }

  /** A {@link Note} whose floats travel as bf16. */
  record HalfNote(ActorRef<Object> to, String text) implements BulkTransport.Letter, CborSerializable {
    @Override
    public ActorRef<?> recipient() {
      return to;
    }

    @Override
    public WirePrecision precision() {
      return WirePrecision.BF16;
    }

    @Override
    public Object open(float[] values) {
      return new Opened(text, values, Thread.currentThread().getName());
    }
  }

  /** A {@link Note} as its recipient gets it, and the thread that opened it. */
  record Opened(String text, float[] values, String thread) {}

  record Bounced(String text, String reason) {}

  /** A letter asking the {@link #replier} on its node to answer {@code text}. */
  record Ask(ActorRef<Object> to, String text, ActorRef<StatusReply<Integer>> replyTo)
      implements BulkTransport.Letter, CborSerializable {
    @Override
    public ActorRef<?> recipient() {
      return to;
    }

    @Override
    public Object open(float[] values) {
      return new Asked(text, values.length, replyTo);
    }
  }

  record Asked(String text, int floats, ActorRef<StatusReply<Integer>> replyTo) {}

  private static Config config(String extra) {
    return ConfigFactory.parseString("""
            akka.loglevel = WARNING
            akka.actor.provider = remote
            akka.remote.artery.canonical.hostname = 127.0.0.1
            akka.remote.artery.canonical.port = 0
            akka.remote.warn-about-direct-use = off
            akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
            shardtrain.transport.bulk.host = "127.0.0.1"
            """ + extra)
        .withFallback(ConfigFactory.load());
  }

  @BeforeAll
  static void start() {
    kitA = ActorTestKit.create("bulkA", config(""));
    // B: a small max-floats, so the size checks are quick to reach.
    kitB = ActorTestKit.create("bulkB", config("shardtrain.transport.bulk.max-floats = 1024\n"));
    a = BulkTransport.get(kitA.system());
    b = BulkTransport.get(kitB.system());
  }

  @AfterAll
  static void stop() {
    kitA.shutdownTestKit();
    kitB.shutdownTestKit();
  }

  /** {@code ref}, an actor of {@code owner}, as {@code viewer} knows it (over the network). */
  private static <T> ActorRef<T> seenFrom(ActorSystem<?> viewer, ActorSystem<?> owner, ActorRef<T> ref) {
    return ActorRefResolver.get(viewer).resolveActorRef(ActorRefResolver.get(owner).toSerializationFormat(ref));
  }

  private static ActorRef<Object> onB(TestProbe<Object> probe) {
    return seenFrom(kitA.system(), kitB.system(), probe.ref());
  }

  /** An actor on B that answers {@link Asked}: "ok" with its float count, "refuse" with an error, else not at all. */
  private static ActorRef<Object> replierOnB() {
    ActorRef<Object> replier = kitB.spawn(Behaviors.receive(Object.class)
        .onMessage(Asked.class, m -> {
          if (m.text().equals("ok")) m.replyTo().tell(StatusReply.success(m.floats()));
          if (m.text().equals("refuse")) m.replyTo().tell(StatusReply.error("refused " + m.text()));
          return Behaviors.same();
        })
        .build());
    return seenFrom(kitA.system(), kitB.system(), replier);
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(LONG.toSeconds(), TimeUnit.SECONDS);
  }

  private static Throwable failureOf(CompletionStage<?> stage) {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> stage.toCompletableFuture().get(LONG.toSeconds(), TimeUnit.SECONDS));
    return e.getCause();
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

  private static int unusedPort() throws IOException {
    try (ServerSocketChannel probe = ServerSocketChannel.open()) {
      probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return ((InetSocketAddress) probe.getLocalAddress()).getPort();
    }
  }

  @Test
  void aLetterIsOpenedOnTheReceivingNodesReaderWithOnlyItsSentRangeBitExact() throws Exception {
    TestProbe<Object> probe = kitB.createTestProbe();
    float[] values = awkwardFloats(900, 2);
    await(a.sendLetter(b.address(), new Note(onB(probe), "range", null), values, 100, 700));
    Opened opened = probe.expectMessageClass(Opened.class, LONG);
    assertEquals("range", opened.text());
    assertBitExact(Arrays.copyOfRange(values, 100, 800), opened.values());
    assertTrue(opened.thread().startsWith(b.threadPrefix() + "read-"), opened.thread());
  }

  @Test
  void lettersToOnePeerArriveInTheOrderTheyWereSent() throws Exception {
    TestProbe<Object> probe = kitB.createTestProbe();
    ActorRef<Object> to = onB(probe);
    List<CompletionStage<Void>> sent = new ArrayList<>();
    for (int i = 0; i < 20; i++) sent.add(a.sendLetter(b.address(), new Note(to, "n" + i, null), new float[] {i}, 0, 1));
    for (CompletionStage<Void> s : sent) await(s);
    for (int i = 0; i < 20; i++) {
      Opened o = probe.expectMessageClass(Opened.class, LONG);
      assertEquals("n" + i, o.text());
      assertEquals(i, o.values()[0]);
    }
  }

  @Test
  void manyLettersFromSeveralThreadsArriveIntact() throws Exception {
    // A sends to itself (a node may hold a trainer and blocks): B's max-floats is kept tiny.
    TestProbe<Object> probe = kitA.createTestProbe();
    int n = 64;
    float[][] payloads = new float[n][];
    for (int i = 0; i < n; i++) payloads[i] = awkwardFloats(5_000 + 997 * i, i);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<CompletableFuture<Void>> sends = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        sends.add(CompletableFuture.supplyAsync(() -> a.sendLetter(a.address(), new Note(probe.ref(), "p" + k, null),
            payloads[k], 0, payloads[k].length), pool).thenCompose(s -> s));
      }
      for (CompletableFuture<Void> s : sends) await(s);
    } finally {
      pool.shutdown();
    }
    Map<String, float[]> got = new HashMap<>();
    for (int i = 0; i < n; i++) {
      Opened o = probe.expectMessageClass(Opened.class, LONG);
      got.put(o.text(), o.values());
    }
    for (int i = 0; i < n; i++) assertBitExact(payloads[i], got.get("p" + i));
  }

  @Test
  void aLetterForAnActorThatIsGoneBouncesOnTheReceivingNodeNamingIt() throws Exception {
    ActorRef<Object> stopped = kitB.spawn(Behaviors.stopped(), "gone-recipient");
    kitB.createTestProbe().expectTerminated(stopped, LONG);
    TestProbe<Object> bounces = kitB.createTestProbe();
    await(a.sendLetter(b.address(), new Note(seenFrom(kitA.system(), kitB.system(), stopped), "lost", onB(bounces)),
        new float[3], 0, 3));
    Bounced bounced = bounces.expectMessageClass(Bounced.class, LONG);
    assertEquals("lost", bounced.text());
    assertTrue(bounced.reason().contains("gone-recipient"), bounced.reason());
  }

  @Test
  void askWithStatusCompletesWithTheReplyOrFailsWithTheErrorOrAtItsTimeout() throws Exception {
    ActorRef<Object> replier = replierOnB();
    assertEquals(700, (int) await(a.<Integer>askWithStatus(b.address(), r -> new Ask(replier, "ok", r),
        new float[900], 100, 700, LONG)));
    Throwable refused = failureOf(a.<Integer>askWithStatus(b.address(), r -> new Ask(replier, "refuse", r),
        new float[1], 0, 1, LONG));
    assertInstanceOf(StatusReply.ErrorMessage.class, refused);
    assertEquals("refused refuse", refused.getMessage());
    assertInstanceOf(TimeoutException.class, failureOf(a.<Integer>askWithStatus(b.address(),
        r -> new Ask(replier, "ignore", r), new float[1], 0, 1, Duration.ofMillis(300))));
  }

  @Test
  void aLetterOrAskToAPortNobodyListensOnFailsAtOnceNamingThePeer() throws Exception {
    int port = unusedPort();
    InetSocketAddress nobody = new InetSocketAddress("127.0.0.1", port);
    Note note = new Note(kitA.createTestProbe().ref(), "nowhere", null);
    Throwable cause = failureOf(a.sendLetter(nobody, note, new float[4], 0, 4));
    assertInstanceOf(IOException.class, cause);
    assertTrue(cause.getMessage().contains("127.0.0.1:" + port), cause.getMessage());
    long start = System.nanoTime();
    Throwable asked = failureOf(a.<Integer>askWithStatus(nobody, r -> new Ask(note.to(), "ok", r), new float[4], 0, 4,
        Duration.ofSeconds(30)));
    assertInstanceOf(IOException.class, asked);
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "failed at once, not at the ask's timeout");
  }

  @Test
  void anAskByLetterToAPeerWhoseSystemStopsFailsWithPeerGoneLongBeforeItsTimeout() throws Exception {
    ActorSystem<Void> d = ActorSystem.create(Behaviors.empty(), "bulkD", config(""));
    try {
      TestProbe<Object> silent = TestProbe.create(d);
      InetSocketAddress peer = BulkTransport.get(d).address();
      CompletionStage<Integer> ask = a.askWithStatus(peer,
          r -> new Ask(seenFrom(kitA.system(), d, silent.ref()), "ignore", r), new float[2], 0, 2,
          Duration.ofSeconds(60));
      silent.expectMessageClass(Asked.class, LONG); // delivered, and never answered
      d.terminate();
      // Within LONG (10 s) of a 60 s ask: the closed connection told, not the timeout.
      Throwable gone = failureOf(ask);
      assertInstanceOf(PeerGone.class, gone);
      assertTrue(gone.getMessage().contains(":" + peer.getPort()), gone.getMessage());
    } finally {
      d.terminate();
    }
  }

  @Test
  void lettersLargerThanMaxFloatsOrOutsideTheArrayAreRejected() {
    Note note = new Note(kitA.createTestProbe().ref(), "big", null);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> b.sendLetter(a.address(), note, new float[2000], 0, 1025));
    assertTrue(e.getMessage().contains("max-floats = 1024"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> a.sendLetter(b.address(), note, new float[10], 5, 6));
  }

  @Test
  void aBf16LetterArrivesAsTheRoundedFp32ValuesInAFrameOfTwoBytesPerValue() throws Exception {
    TestProbe<Object> probe = kitB.createTestProbe();
    float[] values = awkwardFloats(900, 3);
    await(a.sendLetter(b.address(), new HalfNote(onB(probe), "half"), values, 100, 700));
    Opened opened = probe.expectMessageClass(Opened.class, LONG);
    float[] expected = new float[700];
    for (int i = 0; i < 700; i++) expected[i] = Bf16.round(values[100 + i]);
    assertBitExact(expected, opened.values());

    // On the wire: the bf16 letter magic, then exactly 2 bytes per value after the message.
    try (ServerSocketChannel raw = ServerSocketChannel.open()) {
      raw.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      InetSocketAddress peer = (InetSocketAddress) raw.getLocalAddress();
      await(a.sendLetter(peer, new HalfNote(onB(probe), "raw"), values, 0, 900));
      try (SocketChannel ch = raw.accept()) {
        ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        ch.socket().setSoTimeout(5000);
        int total = 0;
        var in = ch.socket().getInputStream();
        byte[] chunk = new byte[4096];
        long deadline = System.nanoTime() + LONG.toNanos();
        while (total < BulkFrames.HEADER_BYTES + 4 || total < expectedBytes(buf, total)) {
          int n = in.read(chunk);
          if (n < 0 || System.nanoTime() > deadline) break;
          buf.put(total, chunk, 0, n);
          total += n;
        }
        assertEquals(BulkFrames.LETTER_BF16_MAGIC, buf.getInt(0));
        assertEquals(900, buf.getInt(12));
        int messageBytes = (int) buf.getLong(4);
        int manifestBytes = buf.getInt(16);
        assertEquals(BulkFrames.HEADER_BYTES + 4 + manifestBytes + messageBytes + 2 * 900, total);
      }
    }
  }

  /** The whole frame's byte count once its header and manifest length are in, else 0. */
  private static int expectedBytes(ByteBuffer buf, int got) {
    if (got < BulkFrames.HEADER_BYTES + 4) return 0;
    return BulkFrames.HEADER_BYTES + 4 + buf.getInt(16) + (int) buf.getLong(4) + 2 * buf.getInt(12);
  }

  @Test
  void anOversizeMalformedOrPlainFrameClosesOnlyThatConnection() throws Exception {
    // An oversize letter, a plain frame (no message: nothing to deliver it to) and garbage.
    for (int[] header : new int[][] {{BulkFrames.LETTER_MAGIC, 2000}, {BulkFrames.MAGIC, 10}, {0x12345678, 10}}) {
      try (SocketChannel ch = SocketChannel.open(b.address())) {
        ByteBuffer buf = ByteBuffer.allocate(BulkFrames.HEADER_BYTES + 64).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(header[0]).putLong(8L).putInt(header[1]).put(new byte[64]).flip();
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
    // Other connections keep working.
    TestProbe<Object> probe = kitB.createTestProbe();
    await(a.sendLetter(b.address(), new Note(onB(probe), "still", null), new float[] {5f}, 0, 1));
    Opened o = probe.expectMessageClass(Opened.class, LONG);
    assertEquals("still", o.text());
    assertEquals(5f, o.values()[0]);
  }

  @Test
  void shutdownFreesThePortStopsItsThreadsAndRefusesLaterLetters() throws Exception {
    ActorSystem<Void> c = ActorSystem.create(Behaviors.empty(), "bulkC", config(""));
    BulkTransport bulk = BulkTransport.get(c);
    InetSocketAddress address = bulk.address();
    TestProbe<Object> onA = kitA.createTestProbe();
    ActorRef<Object> onAFromC = seenFrom(c, kitA.system(), onA.ref());
    TestProbe<Object> onC = TestProbe.create(c);
    await(bulk.sendLetter(a.address(), new Note(onAFromC, "c", null), new float[] {1f}, 0, 1)); // an outbound writer
    await(a.sendLetter(address, new Note(seenFrom(kitA.system(), c, onC.ref()), "a", null), new float[] {2f}, 0, 1));
    assertEquals(2f, onC.expectMessageClass(Opened.class, LONG).values()[0]); // an inbound reader
    assertEquals(1f, onA.expectMessageClass(Opened.class, LONG).values()[0]);
    String prefix = bulk.threadPrefix();
    assertTrue(liveThreads(prefix) >= 3, "accept, read and write threads running");

    c.terminate();
    c.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);

    assertEquals(0, liveThreads(prefix), "threads named " + prefix + "* left running");
    try (ServerSocketChannel again = ServerSocketChannel.open()) {
      again.bind(address);
    }
    assertInstanceOf(IllegalStateException.class, failureOf(bulk.sendLetter(a.address(),
        new Note(onAFromC, "late", null), new float[] {3f}, 0, 1)));
  }

  private static long liveThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
        .count();
  }
}
